-- A tiny asynchronous test harness for headless Neovim: steps run in a coroutine that yields to
-- the event loop while it waits, so typed keys, LSP messages and timers are processed as in use.
local M = { steps = {}, data = {} }

local co
local result_path = assert(os.getenv("PREWRITE_RESULT"), "PREWRITE_RESULT must name the result file")

local function write_and_quit(failed)
  local ok = not failed
  for _, step in ipairs(M.steps) do
    ok = ok and step.ok
  end
  M.data.nvim = tostring(vim.version().major) .. "." .. vim.version().minor .. "." .. vim.version().patch
  vim.fn.writefile({ vim.fn.json_encode({ ok = ok, steps = M.steps, data = M.data }) }, result_path)
  vim.cmd(ok and "qall!" or "cquit! 1")
end

--- Record a check: `ok` with a detail shown when it fails.
function M.check(name, ok, detail)
  M.steps[#M.steps + 1] = { name = name, ok = ok and true or false, detail = detail ~= nil and vim.inspect(detail) or "" }
  return ok
end

--- Wait (yielding) until `cond()` is true or `timeout_ms` passes; returns whether it became true.
function M.wait_for(cond, timeout_ms)
  local deadline = vim.loop.now() + timeout_ms
  while not cond() do
    if vim.loop.now() > deadline then
      return false
    end
    vim.defer_fn(function()
      assert(coroutine.resume(co))
    end, 20)
    coroutine.yield()
  end
  return true
end

--- Feed keys as if typed (keycodes like <CR> allowed; a literal "<" must be written <lt>).
function M.input(keys)
  vim.api.nvim_input(keys)
end

--- Run `body` as the test; its errors become a failed step; a watchdog ends a hung run.
function M.run(body, timeout_ms)
  local watchdog = vim.loop.new_timer()
  watchdog:start(timeout_ms, 0, vim.schedule_wrap(function()
    M.check("finished within " .. timeout_ms .. " ms", false, "watchdog fired")
    write_and_quit(true)
  end))
  co = coroutine.create(function()
    local ok, err = xpcall(body, debug.traceback)
    watchdog:stop()
    if not ok then
      M.check("no Lua error", false, err)
    end
    write_and_quit(not ok)
  end)
  vim.schedule(function()
    assert(coroutine.resume(co))
  end)
end

return M
