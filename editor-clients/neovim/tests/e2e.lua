-- End to end against the real server: Tab fallback, live draft preview, trigger key, ghost text,
-- dismiss on typing, idle trigger, accept, and :PrewriteStatus. Run by tests/editor_clients/test_neovim.py.
local t = require("harness")
local prewrite = require("prewrite")
local session = require("session")

local scenario = vim.fn.json_decode(table.concat(vim.fn.readfile(os.getenv("PREWRITE_SCENARIO")), "\n"))
local MODEL_MS = 180000 -- loading and running the model on two shared cores

local ghost_text, buffer_text, type_chunks = session.ghost_text, session.buffer_text, session.type_chunks
local suggestion_shown = session.suggestion_shown

t.run(function()
  prewrite.setup({
    python = os.getenv("PREWRITE_PYTHON"),
    settings = scenario.settings,
    draft_preview = true,
    auto_trigger = false, -- the trigger key first; the idle trigger below
  })
  vim.cmd("edit " .. vim.fn.fnameescape(os.getenv("PREWRITE_FILE")))
  t.check("filetype is python", vim.bo.filetype == "python", vim.bo.filetype)
  t.check("client attached", t.wait_for(function()
    return prewrite.state().running
  end, 10000), prewrite.state())

  -- Nothing shown yet: Tab is a plain Tab.
  t.input("Go")
  t.input("<Tab>")
  t.check("Tab inserts a tab when no ghost text is shown", t.wait_for(function()
    return vim.api.nvim_get_current_line() == "\t"
  end, 5000), vim.api.nvim_get_current_line())
  t.input("<BS>")
  assert(t.wait_for(function()
    return vim.api.nvim_get_current_line() == ""
  end, 5000))

  t.check("model ready", t.wait_for(function()
    return prewrite.state().server == "ready"
  end, MODEL_MS), prewrite.state())
  local base = buffer_text()
  local typed = type_chunks(scenario.typed, base)

  t.check("live draft preview drawn at the end of the spec", t.wait_for(suggestion_shown(true), MODEL_MS), prewrite.state())
  t.data.preview = ghost_text()

  t.input("<M-\\>")
  t.check("trigger key draws the answer as ghost text", t.wait_for(suggestion_shown(false), MODEL_MS), prewrite.state())
  local shown, marks = ghost_text()
  t.data.ghost = shown
  t.data.answer = prewrite.state().last
  t.check("one extmark", marks == 1, marks)
  t.check("extmark shows the answer", shown == prewrite.state().suggestion, { shown = shown, state = prewrite.state() })
  t.check("answer has a body after the docstring", shown ~= nil and shown:find("\n%s*%S") ~= nil, shown)
  t.check("ghost text is not in the buffer", buffer_text() == typed, buffer_text())

  t.input("x")
  t.check("typing clears the ghost text", t.wait_for(function()
    return ghost_text() == nil
  end, 5000), ghost_text())
  -- Reconfigured to ask by itself after an idle pause: deleting the x asks again.
  prewrite.setup({
    python = os.getenv("PREWRITE_PYTHON"),
    settings = scenario.settings,
    draft_preview = true,
    auto_trigger = true,
    idle_ms = 200,
  })
  t.input("<BS>")
  assert(t.wait_for(function()
    return buffer_text() == typed
  end, 5000))
  t.check("an idle pause draws the answer without a key", t.wait_for(suggestion_shown(false), MODEL_MS), prewrite.state())
  local answer = prewrite.state().suggestion
  t.input("<Tab>")
  t.check("Tab accepts: the buffer holds the typed docstring and the answer", t.wait_for(function()
    return buffer_text() == typed .. answer
  end, 5000), { buffer = buffer_text(), expected = typed .. answer })
  t.check("accepting clears the ghost text", ghost_text() == nil, ghost_text())
  local cursor = vim.api.nvim_win_get_cursor(0)
  local last = vim.api.nvim_buf_line_count(0)
  t.check("cursor after the inserted text", cursor[1] == last and cursor[2] == #vim.fn.getline(last),
    { cursor = cursor, last = last })
  t.data.buffer = buffer_text()

  local line = vim.api.nvim_get_current_line()
  t.input("<Tab>")
  t.check("Tab after accepting is a plain Tab again", t.wait_for(function()
    return vim.api.nvim_get_current_line() == line .. "\t"
  end, 5000), vim.api.nvim_get_current_line())

  t.input("<Esc>")
  local status = prewrite.status_lines()
  t.data.status = status
  t.check(":PrewriteStatus reports ready", status[1]:find("prewrite: ready", 1, true) ~= nil, status)
  t.check(":PrewriteStatus runs", pcall(vim.cmd, "PrewriteStatus"))
end, 400000)
