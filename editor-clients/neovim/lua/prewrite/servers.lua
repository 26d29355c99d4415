-- Which prewrite client serves each buffer: starting servers, restarting crashed ones, stopping.
--
-- While the plugin serves a buffer it always has a prewrite client attached: the server, a
-- restart waiting out its back-off, or, once stopped, a placeholder. Neovim (0.7 to 0.12) stops
-- tracking a buffer's changes for good when the buffer is edited while no client is attached to
-- it: no later client would get its edits.
local compat = require("prewrite.compat")
local restart = require("prewrite.restart")

local M = {}

-- Reads Neovim's initialize request and never answers: it holds the buffers until restart().
local PLACEHOLDER = { "sh", "-c", "exec cat >/dev/null" }

local s = {
  make_config = nil, -- function(root, cmd): the client config
  server_cmd = nil, -- the server command line
  on_current = nil, -- called when the current client changes (its id, or nil)
  policy = restart.new(false),
  current = nil, -- id of the client answering requests (the last one started or attached)
  roots = {}, -- client id -> root folder, for each live client the plugin started
  placeholders = {}, -- client id -> true for the placeholders among them
  served = {}, -- bufnr -> root folder, for each buffer the plugin attached
  stopping = {}, -- client id -> true: an exit the plugin asked for, never a crash
  exiting = false, -- Neovim is quitting: no exit is a crash then
  crash = nil, -- the last crash: { code, signal }
  restarting = nil, -- { client_id, delay_ms, since }: from a crash until the new server is initialized
  halted = nil, -- "crashed" (restarts stopped) or "stopped": only placeholders until restart()
}

local function set_current(id)
  if s.current ~= id then
    s.current = id
    s.on_current(id)
  end
end

--- Set up: `make_config(root, cmd)` gives a client config, `server_cmd` the server's command,
--- `restart_options` the resolved `restart` option, `on_current(id)` hears of a new current client.
function M.setup(make_config, server_cmd, restart_options, on_current)
  s.make_config, s.server_cmd, s.on_current = make_config, server_cmd, on_current
  s.policy = restart.new(restart_options)
  local group = vim.api.nvim_create_augroup("prewrite_servers", { clear = true })
  vim.api.nvim_create_autocmd("VimLeavePre", {
    group = group,
    callback = function()
      s.exiting = true -- the servers' exits while quitting are no crashes
    end,
  })
end

--- The current server's client while it runs (also while a restart waits), else nil.
function M.current()
  local c = s.current and vim.lsp.get_client_by_id(s.current)
  if c and not compat.is_stopped(c) then
    return c
  end
  return nil
end

-- The plugin's client for `root` (server or placeholder), if any; one being stopped does not count.
local function client_for(root)
  for id, r in pairs(s.roots) do
    local c = vim.lsp.get_client_by_id(id)
    if r == root and c and not s.stopping[id] and not compat.is_stopped(c) then
      return c
    end
  end
  return nil
end

local server_exited -- below: it starts clients whose exits it handles

-- Start a client running `cmd` for `root`, attached to the loaded buffers served there.
local function start(root, cmd, placeholder)
  local buffers = {}
  for bufnr, r in pairs(s.served) do
    if not vim.api.nvim_buf_is_valid(bufnr) then
      s.served[bufnr] = nil
    elseif r == root and vim.api.nvim_buf_is_loaded(bufnr) then
      buffers[#buffers + 1] = bufnr
    end
  end
  local config = s.make_config(root, cmd)
  local on_init = config.on_init
  config.on_init = function(c, result)
    if s.restarting and s.restarting.client_id == c.id then
      s.restarting = nil
    end
    if on_init then
      on_init(c, result)
    end
  end
  config.on_exit = function(code, signal, client_id)
    -- Called from a libuv callback (no editor API there), before Neovim forgets the client.
    vim.schedule(function()
      server_exited(code, signal, client_id)
    end)
  end
  local id = buffers[1] and compat.start(config, buffers[1])
  if not id then
    return nil
  end
  for i = 2, #buffers do
    vim.lsp.buf_attach_client(buffers[i], id)
  end
  s.roots[id], s.placeholders[id] = root, placeholder or nil
  set_current(not placeholder and id or nil)
  return id
end

-- Stop the restarts or serving for `root`: a placeholder holds its buffers until restart().
local function halt(root, why)
  s.halted = s.halted or why
  local c = client_for(root)
  if not (c and s.placeholders[c.id]) then
    start(root, PLACEHOLDER, true)
  end
end

-- A client exited. A crashed server is restarted after the policy's back-off, or the restarts
-- stop; a server that stopped by itself or by :LspStop leaves its buffers to a placeholder.
server_exited = function(code, signal, id)
  local root, asked, placeholder = s.roots[id], s.stopping[id], s.placeholders[id]
  s.roots[id], s.stopping[id], s.placeholders[id] = nil, nil, nil
  if s.current == id then
    set_current(nil)
  end
  if s.restarting and s.restarting.client_id == id then
    s.restarting = nil -- it crashed again while waiting or starting
  end
  if asked or placeholder or s.exiting or not root then
    return
  end
  if not restart.is_crash(code, signal) then
    halt(root, "stopped")
    return
  end
  s.crash = { code = code, signal = signal }
  local delay = restart.crashed(s.policy, vim.loop.now())
  if delay then
    local new = start(root, restart.command(s.server_cmd(), delay))
    s.restarting = new and { client_id = new, delay_ms = delay, since = vim.loop.now() } or nil
    return
  end
  if s.halted ~= "crashed" then
    vim.notify(restart.give_up_message(s.policy, code, signal), vim.log.levels.ERROR)
  end
  halt(root, "crashed")
end

--- Serve a buffer of `root`: attach it to the client there, or start one.
function M.attach(bufnr, root)
  s.served[bufnr] = root
  local c = client_for(root)
  if c then
    vim.lsp.buf_attach_client(bufnr, c.id)
    if not s.placeholders[c.id] then
      set_current(c.id)
    end
  elseif s.halted then
    halt(root, s.halted)
  else
    start(root, s.server_cmd())
  end
end

-- The roots of the served buffers.
local function served_roots()
  local roots = {}
  for _, root in pairs(s.served) do
    roots[root] = true
  end
  return roots
end

--- Stop the servers (a clean stop, never taken for a crash); none starts until restart().
function M.stop()
  local old = vim.deepcopy(s.roots)
  s.restarting = nil
  for root in pairs(served_roots()) do
    halt(root, "stopped") -- attached first, so no buffer is left without a client
  end
  for id in pairs(old) do
    local c = vim.lsp.get_client_by_id(id)
    if c and not s.placeholders[id] then
      s.stopping[id] = true
      compat.stop(c)
    end
  end
end

--- Start new servers for the served buffers and forget past crashes; the old servers and
--- placeholders stop once the new clients are attached.
function M.restart()
  restart.reset(s.policy)
  s.halted, s.crash, s.restarting = nil, nil, nil
  local old = vim.deepcopy(s.roots)
  for root in pairs(served_roots()) do
    start(root, s.server_cmd())
  end
  for id in pairs(old) do
    local c = vim.lsp.get_client_by_id(id)
    if c then
      s.stopping[id] = true
      compat.stop(c, true) -- SIGTERM: a hung server is the usual reason to restart
    end
  end
end

--- The restart state, as plain data.
function M.state()
  local r = s.restarting
  return {
    restarting = r ~= nil, -- after a crash: waiting out the back-off, or starting
    restart_in_ms = r and math.max(0, r.delay_ms - (vim.loop.now() - r.since)) or nil,
    crash = s.crash, -- the last crash since setup or restart(): { code, signal }
    crashes = restart.count(s.policy), -- within the window, as of the last one
    halted = s.halted, -- "crashed" (restarts stopped) / "stopped" / nil
  }
end

--- The status line while no server answers (restarting or halted), else nil.
function M.down_line()
  if s.restarting then
    local wait = M.state().restart_in_ms
    wait = wait > 0 and string.format(" in %.1f s", wait / 1000) or ""
    return string.format("prewrite: restarting%s after a crash (%s)", wait, restart.summary(s.policy, s.crash))
  elseif s.halted == "crashed" then
    return string.format("prewrite: stopped after crashing (%s); :PrewriteRestart starts it again",
      restart.summary(s.policy, s.crash))
  elseif s.halted == "stopped" then
    return "prewrite: stopped; :PrewriteRestart starts it again"
  end
  return nil
end

--- A status line telling of the last crash once the server runs again, else nil.
function M.crash_line()
  if s.crash and not s.restarting and not s.halted then
    return "restarted after a crash (" .. restart.summary(s.policy, s.crash) .. ")"
  end
  return nil
end

return M
