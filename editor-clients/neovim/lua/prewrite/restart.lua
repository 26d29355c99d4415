-- When a crashed server is started again: what counts as a crash, the back-off, the limit.
local M = {}

local SIGTERM = 15

--- Whether an exit is a crash: a signal other than SIGTERM, or a non-zero exit code. A server that
--- followed shutdown/exit ends with code 0; Neovim's forced stop (and `kill`) send SIGTERM.
function M.is_crash(code, signal)
  if signal ~= 0 then
    return signal ~= SIGTERM
  end
  return code ~= 0
end

--- A restart policy for the resolved `restart` option (a table, or false for no restarts).
function M.new(options)
  return { options = options, crashes = {} } -- crashes: times (ms) of those within the window
end

--- Record a crash at `now_ms`; returns the delay (ms) before the restart, or nil: restart no more.
function M.crashed(policy, now_ms)
  local o = policy.options
  local recent = {}
  for _, at in ipairs(policy.crashes) do
    if o and now_ms - at < o.window_ms then
      recent[#recent + 1] = at
    end
  end
  recent[#recent + 1] = now_ms
  policy.crashes = recent
  if not o or #recent >= o.max_crashes then
    return nil
  end
  -- The n-th crash within the window waits delay_ms * 2^(n-1): 1 s, 2 s, 4 s, ... by default.
  return math.min(o.delay_ms * 2 ^ (#recent - 1), o.max_delay_ms)
end

--- Crashes within the window (as of the last one recorded).
function M.count(policy)
  return #policy.crashes
end

--- Forget the crashes (the user restarted the server).
function M.reset(policy)
  policy.crashes = {}
end

--- The server command that first waits `delay_ms`. The restarted client is attached at once and
--- its server starts after the wait: a buffer edited while no client is attached never sends its
--- later edits to any client (Neovim 0.7 to 0.12 drop its change tracking then), so there is
--- never such a gap.
function M.command(cmd, delay_ms)
  if delay_ms <= 0 then
    return cmd
  end
  -- exec keeps the pid: the process Neovim spawned is the server once the wait is over.
  local wrapped = { "sh", "-c", 'sleep "$0"; exec "$@"', string.format("%.3f", delay_ms / 1000) }
  return vim.list_extend(wrapped, cmd)
end

--- "signal 9" or "exit code 1".
function M.describe(code, signal)
  if signal ~= 0 then
    return "signal " .. signal
  end
  return "exit code " .. code
end

--- The last crash and the count, for the status: "signal 9; 2 crashes within 180 s (restarts stop at 5)".
function M.summary(policy, crash)
  local o, n = policy.options, M.count(policy)
  local text = M.describe(crash.code, crash.signal)
  if not o then
    return text .. "; restarts are off"
  end
  return string.format("%s; %d crash%s within %d s (restarts stop at %d)", text, n, n == 1 and "" or "es",
    o.window_ms / 1000, o.max_crashes)
end

--- The message shown once when the restarts stop.
function M.give_up_message(policy, code, signal)
  local o = policy.options
  local why
  if not o then
    why = "crashed (" .. M.describe(code, signal) .. "); restarts are off (restart = false)"
  else
    why = string.format("crashed %d times within %d s (last: %s); not restarting it", M.count(policy),
      o.window_ms / 1000, M.describe(code, signal))
  end
  return "prewrite: the server " .. why .. ". :PrewriteRestart starts it again."
end

return M
