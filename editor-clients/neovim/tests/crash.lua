-- Crash recovery end to end: the server is killed with SIGKILL while the docstring is typed; the
-- plugin shows that it restarts, attaches the buffer to the new server (edits made meanwhile
-- included), and the next trigger is answered. Run by tests/editor_clients/test_neovim.py.
local t = require("harness")
local prewrite = require("prewrite")
local session = require("session")

local scenario = vim.fn.json_decode(table.concat(vim.fn.readfile(os.getenv("PREWRITE_SCENARIO")), "\n"))
local MODEL_MS = 180000 -- loading and running the model on two shared cores

local function ms_since(start)
  return (vim.loop.hrtime() - start) / 1e6
end

t.run(function()
  prewrite.setup({ python = os.getenv("PREWRITE_PYTHON"), settings = scenario.settings })
  vim.cmd("edit " .. vim.fn.fnameescape(os.getenv("PREWRITE_FILE")))
  local bufnr = vim.api.nvim_get_current_buf()
  t.check("model ready", t.wait_for(function()
    return prewrite.state().server == "ready"
  end, MODEL_MS), prewrite.state())
  local typed = session.type_at_end({ unpack(scenario.typed, 1, 3) })

  local old = vim.lsp.get_client_by_id(prewrite.state().client_id)
  local pid = session.server_pid(old)
  local crashed = vim.loop.hrtime()
  vim.loop.kill(pid, "sigkill")
  t.check("status shows restarting", t.wait_for(function()
    local first = prewrite.status_lines()[1]
    return prewrite.state().restart.restarting and first:find("prewrite: restarting", 1, true) ~= nil
  end, 10000), prewrite.status_lines())
  t.data.restarting = prewrite.status_lines()
  local new_id = prewrite.state().client_id
  t.check("a new client", new_id ~= nil and new_id ~= old.id, { old = old.id, new = new_id })
  t.check("the buffer is attached to the new client", vim.lsp.buf_is_attached(bufnr, new_id))

  -- Typed while the restart waits: the new server's didOpen carries it.
  typed = session.type_chunks({ scenario.typed[4] }, typed)
  t.data.typed_while_restarting = prewrite.state().restart.restarting

  t.check("ready again", t.wait_for(function()
    return prewrite.state().server == "ready" and not prewrite.state().restart.restarting
  end, MODEL_MS), prewrite.status_lines())
  t.data.crash_to_ready_ms = ms_since(crashed)
  t.data.ready = prewrite.status_lines()
  t.check("the old client is gone", vim.lsp.get_client_by_id(old.id) == nil)
  t.check("still the new client, attached",
    prewrite.state().client_id == new_id and vim.lsp.buf_is_attached(bufnr, new_id), prewrite.state())
  t.check("status tells of the crash", vim.tbl_contains(t.data.ready,
    "restarted after a crash (signal 9; 1 crash within 180 s (restarts stop at 5))"), t.data.ready)

  -- Typed after the restart: Neovim sends the edit to the new server.
  typed = session.type_chunks({ scenario.typed[5] }, typed)
  t.input("<M-\\>")
  t.check("a trigger after the restart is answered", t.wait_for(session.suggestion_shown(false), MODEL_MS),
    prewrite.state())
  t.data.crash_to_answer_ms = ms_since(crashed)
  t.data.ghost = session.ghost_text()
  t.data.answer = prewrite.state().last
  t.check("ghost text shows the answer", t.data.ghost ~= nil and t.data.ghost == prewrite.state().suggestion,
    { ghost = t.data.ghost, state = prewrite.state() })
  t.check("the buffer holds what was typed", session.buffer_text() == typed, session.buffer_text())

  session.check_in_sync(bufnr)
  t.input("<Esc>")
end, 400000)
