-- Crashes beyond the limit stop the restarts, with one message naming :PrewriteRestart; clean stops
-- (:LspStop's vim.lsp.stop_client, :PrewriteStop) are never taken for crashes; edits made while
-- stopped reach the server :PrewriteRestart starts. The real server is killed as soon as it is
-- initialized. Run by tests/editor_clients/test_neovim.py.
local t = require("harness")
local prewrite = require("prewrite")
local session = require("session")

local scenario = vim.fn.json_decode(table.concat(vim.fn.readfile(os.getenv("PREWRITE_SCENARIO")), "\n"))
local START_MS = 60000 -- starting Python and the server on two shared cores
local MODEL_MS = 180000 -- loading and running the model on two shared cores
local QUIET_MS = 3000 -- how long no restart is looked for: 60 times the back-off below

local notes = {}
vim.notify = function(msg, level)
  notes[#notes + 1] = { msg = msg, level = level }
end

local function restart_notes()
  local found = {}
  for _, note in ipairs(notes) do
    if note.msg:find(":PrewriteRestart", 1, true) then
      found[#found + 1] = note
    end
  end
  return found
end

-- An edit while no server runs (only the plugin's placeholder client is attached).
local function edit_while_stopped(bufnr, what)
  vim.api.nvim_buf_set_lines(bufnr, -1, -1, false, { "# edited while " .. what })
end

-- The plugin's current client once its server is initialized.
local function live_client()
  local id = prewrite.state().client_id
  local c = id and vim.lsp.get_client_by_id(id)
  return c and c.initialized and c or nil
end

local function wait_live(other_than)
  assert(t.wait_for(function()
    local c = live_client()
    return c ~= nil and c.id ~= other_than
  end, START_MS), "no server initialized: " .. vim.inspect(prewrite.status_lines()))
  return live_client()
end

local function wait_gone(c)
  assert(t.wait_for(function()
    return vim.lsp.get_client_by_id(c.id) == nil
  end, START_MS), "client " .. c.id .. " did not exit")
end

-- True when no server runs for QUIET_MS (the condition waited for is a server running again).
local function stays_down()
  return not t.wait_for(function()
    return prewrite.state().running
  end, QUIET_MS)
end

t.run(function()
  prewrite.setup({
    python = os.getenv("PREWRITE_PYTHON"),
    settings = scenario.settings,
    restart = { delay_ms = 50, max_crashes = 2 },
  })
  vim.cmd("edit " .. vim.fn.fnameescape(os.getenv("PREWRITE_FILE")))
  local bufnr = vim.api.nvim_get_current_buf()

  local first = wait_live()
  vim.loop.kill(session.server_pid(first), "sigkill")
  local second = wait_live(first.id)
  t.check("the first crash restarts", second.id ~= first.id and vim.lsp.buf_is_attached(bufnr, second.id),
    prewrite.state())
  t.check("one crash counted", prewrite.state().restart.crashes == 1, prewrite.state())

  vim.loop.kill(session.server_pid(second), "sigkill")
  t.check("the second crash stops the restarts", t.wait_for(function()
    return prewrite.state().restart.halted == "crashed"
  end, 10000), prewrite.state())
  t.check("no restart after the limit", stays_down(), prewrite.status_lines())
  local said = restart_notes()
  t.data.message = said[1]
  t.check("said once, as an error, with the way out", #said == 1 and said[1].level == vim.log.levels.ERROR
    and said[1].msg:find("crashed 2 times", 1, true) ~= nil, notes)
  t.data.halted = prewrite.status_lines()
  t.check("status says stopped after crashing",
    t.data.halted[1]:find("prewrite: stopped after crashing (signal 9", 1, true) ~= nil, t.data.halted)
  edit_while_stopped(bufnr, "the restarts were stopped")

  vim.cmd("PrewriteRestart")
  local third = wait_live(second.id)
  t.check(":PrewriteRestart starts it again, crashes forgotten", vim.lsp.buf_is_attached(bufnr, third.id)
    and prewrite.state().restart.crashes == 0 and prewrite.state().restart.halted == nil, prewrite.state())

  -- :LspStop (nvim-lspconfig) and :lsp stop stop a client this way: shutdown, then exit.
  vim.lsp.stop_client(third.id)
  wait_gone(third)
  t.check("vim.lsp.stop_client is a clean stop: no restart", stays_down(), prewrite.status_lines())
  t.data.lsp_stopped = prewrite.status_lines()
  t.check("status says stopped", t.data.lsp_stopped[1]:find("prewrite: stopped;", 1, true) ~= nil,
    t.data.lsp_stopped)
  edit_while_stopped(bufnr, "stopped by vim.lsp.stop_client")

  vim.cmd("PrewriteRestart")
  local fourth = wait_live(third.id)
  vim.cmd("PrewriteStop")
  wait_gone(fourth)
  t.check(":PrewriteStop is a clean stop: no restart", stays_down(), prewrite.status_lines())
  t.check("status says stopped", prewrite.state().restart.halted == "stopped"
    and prewrite.status_lines()[1]:find("prewrite: stopped;", 1, true) ~= nil, prewrite.status_lines())
  t.check("no further message", #restart_notes() == 1, notes)
  edit_while_stopped(bufnr, "stopped by :PrewriteStop")

  -- The server started now gets every edit: those made while stopped in its didOpen, the later
  -- ones as changes. It is left running for the quit: the test checks that none outlives Neovim.
  vim.cmd("PrewriteRestart")
  wait_live(fourth.id)
  t.check("model ready", t.wait_for(function()
    return prewrite.state().server == "ready"
  end, MODEL_MS), prewrite.state())
  session.type_at_end(scenario.typed)
  t.input("<M-\\>")
  t.check("a trigger is answered", t.wait_for(session.suggestion_shown(false), MODEL_MS), prewrite.state())
  session.check_in_sync(bufnr)
  t.input("<Esc>")
end, 400000)
