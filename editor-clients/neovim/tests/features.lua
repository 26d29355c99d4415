-- End to end against the real server, with the defaults: filetypes from the server, the
-- automatic trigger, the draft status in the statusline, typing through the ghost text (no
-- request), accepting a word and a line, and switching one language off. Run by
-- tests/editor_clients/test_neovim.py.
local t = require("harness")
local prewrite = require("prewrite")
local session = require("session")

local scenario = vim.fn.json_decode(table.concat(vim.fn.readfile(os.getenv("PREWRITE_SCENARIO")), "\n"))
local MODEL_MS = 180000 -- loading and running the model on two shared cores
local QUIET_MS = 1500 -- ten automatic-trigger pauses (idle_ms 150): time enough for a request

local ghost_text, buffer_text = session.ghost_text, session.buffer_text

-- Wait until the buffer reads `expected`; fails the run otherwise.
local function buffer_becomes(expected, what)
  return t.check(what, t.wait_for(function()
    return buffer_text() == expected
  end, 5000), { buffer = buffer_text(), expected = expected })
end

-- No inline completion is asked for `QUIET_MS` (an idle trigger would have gone out by then).
local function no_request(what, before)
  local asked = t.wait_for(function()
    return prewrite.state().requests ~= before or prewrite.state().request ~= nil
  end, QUIET_MS)
  return t.check(what, not asked, { before = before, state = prewrite.state() })
end

t.run(function()
  prewrite.setup({ python = os.getenv("PREWRITE_PYTHON"), settings = scenario.settings })
  vim.cmd("edit " .. vim.fn.fnameescape(os.getenv("PREWRITE_FILE")))
  local bufnr = vim.api.nvim_get_current_buf()
  t.check("python is served: the server listed it", t.wait_for(function()
    return prewrite.state().running
  end, 30000), prewrite.state())
  t.data.language_ids = prewrite.state().language_ids
  t.check("the server's languages include typescript", vim.tbl_contains(t.data.language_ids or {}, "typescript"))
  t.check("model ready", t.wait_for(function()
    return prewrite.state().server == "ready"
  end, MODEL_MS), prewrite.state())

  -- Typing the docstring: the automatic trigger draws the answer after the pause.
  local requests = prewrite.state().requests
  local typed = session.type_at_end(scenario.typed)
  local last_key = vim.loop.hrtime()
  t.check("the automatic trigger draws the answer", t.wait_for(session.suggestion_shown(false), MODEL_MS),
    prewrite.state())
  t.data.last_key_to_ghost_ms = (vim.loop.hrtime() - last_key) / 1e6
  t.check("the automatic trigger asked", prewrite.state().requests > requests, prewrite.state().requests)
  t.check("statusline: the draft is ready for the text", t.wait_for(function()
    return prewrite.statusline() == "prewrite: draft ready"
  end, MODEL_MS), { statusline = prewrite.statusline(), state = prewrite.state() })
  local answer = prewrite.state().suggestion
  t.data.answer = answer
  local trigger = session.last_trigger(bufnr)

  -- Typing the ghost text's first three characters keeps the rest shown and asks nothing.
  requests = prewrite.state().requests
  local head = answer:sub(1, 3)
  t.input(head:gsub("<", "<lt>"))
  typed = typed .. head
  buffer_becomes(typed, "the typed characters are in the buffer")
  t.check("typed through: the rest stays shown", ghost_text() == answer:sub(4), { ghost = ghost_text() })
  no_request("typed through: no request", requests)
  local after = session.last_trigger(bufnr)
  t.check("the server got no trigger either", after and trigger and after.version == trigger.version,
    { before = trigger, after = after })

  -- Accept the next word, then the rest of the line, with the default keys.
  local shown = prewrite.state().suggestion
  local word = require("prewrite.ghost").next_word(shown)
  t.input("<M-Right>")
  typed = typed .. word
  buffer_becomes(typed, "accept word inserts the next word")
  t.check("the rest is still shown", ghost_text() == shown:sub(#word + 1), { ghost = ghost_text(), word = word })
  shown = shown:sub(#word + 1)
  local line = require("prewrite.ghost").next_line(shown)
  t.input("<M-C-Right>")
  typed = typed .. line
  buffer_becomes(typed, "accept line inserts the rest of the line")
  local left = shown:sub(#line + 1)
  t.check("what is left is shown", ghost_text() == (left ~= "" and left or nil), { ghost = ghost_text(), left = left })
  local cursor = vim.api.nvim_win_get_cursor(0)
  t.check("cursor after the inserted text", cursor[1] == vim.api.nvim_buf_line_count(0)
    and cursor[2] == #vim.api.nvim_get_current_line(), cursor)
  no_request("accepting parts asks nothing", requests)

  -- Python switched off: no request, no ghost text, the statusline says so.
  t.input("<C-]>")
  t.input("<Esc>")
  vim.cmd("PrewriteDisable python")
  requests = prewrite.state().requests
  t.check("statusline: off for python", prewrite.statusline() == "prewrite: off for python", prewrite.statusline())
  t.input("o# x")
  t.check("typing in python", t.wait_for(function()
    return vim.api.nvim_get_current_line():match("# x$") ~= nil
  end, 5000), vim.api.nvim_get_current_line())
  t.input("<M-\\>")
  no_request("python off: neither typing nor the trigger key asks", requests)
  t.check("python off: no ghost text", ghost_text() == nil, ghost_text())

  -- ... while a JavaScript buffer still asks.
  t.input("<Esc>")
  vim.cmd("edit " .. vim.fn.fnameescape(os.getenv("PREWRITE_JS")))
  t.check("javascript attached", t.wait_for(function()
    return vim.lsp.buf_is_attached(0, prewrite.state().client_id or -1)
  end, 5000), prewrite.state())
  t.input("Go// Return the sum of a and b.")
  t.check("javascript still asks", t.wait_for(function()
    return prewrite.state().requests > requests
  end, 5000), prewrite.state())
  t.check("statusline in javascript: not off", prewrite.statusline():find("off", 1, true) == nil, prewrite.statusline())

  -- Python on again: its trigger key is answered.
  t.input("<Esc>")
  vim.cmd("PrewriteEnable python")
  vim.cmd("buffer " .. bufnr)
  requests = prewrite.state().requests
  t.input("GA<M-\\>")
  t.check("python on again: it asks", t.wait_for(function()
    return prewrite.state().requests > requests
  end, 5000), prewrite.state())
  t.input("<Esc>")
end, 400000)
