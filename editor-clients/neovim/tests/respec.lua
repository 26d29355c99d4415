-- A changed docstring of a function that has a body, against the real server: the Hint appears,
-- `vim.lsp.buf.code_action()` lists prewrite's action, choosing it updates the body (the
-- person's lines stay), and the Hint goes. Run by tests/editor_clients/test_neovim.py.
local t = require("harness")
local prewrite = require("prewrite")
local session = require("session")

local MODEL_MS = 180000 -- loading the model, then re-verifying the body on two shared cores
local SENTENCE = " Raise ValueError when size is not positive."

local function prewrite_hints(bufnr)
  local hints = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    if d.source == "prewrite" then
      hints[#hints + 1] = d
    end
  end
  return hints
end

t.run(function()
  prewrite.setup({
    python = os.getenv("PREWRITE_PYTHON"),
    settings = { model = os.getenv("PREWRITE_MODEL"), respecIdleMs = 300, drafting = false },
  })
  vim.cmd("edit " .. vim.fn.fnameescape(os.getenv("PREWRITE_FILE")))
  local bufnr = vim.api.nvim_get_current_buf()
  local before = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
  t.check("model ready", t.wait_for(function()
    return prewrite.state().server == "ready"
  end, MODEL_MS), prewrite.state())

  -- Append the sentence to the docstring's first line, as typed.
  local row = vim.fn.search("in order\\.$")
  t.check("the docstring's line is found", row > 0, row)
  vim.api.nvim_win_set_cursor(0, { row, 0 })
  t.input("A" .. SENTENCE .. "<Esc>")
  t.check("the sentence is typed", t.wait_for(function()
    return vim.api.nvim_buf_get_lines(bufnr, row - 1, row, false)[1]:find(SENTENCE, 1, true) ~= nil
  end, 5000), vim.api.nvim_buf_get_lines(bufnr, row - 1, row, false))

  t.check("a Hint from prewrite appears", t.wait_for(function()
    return #prewrite_hints(bufnr) > 0
  end, MODEL_MS), vim.diagnostic.get(bufnr))
  local hint = prewrite_hints(bufnr)[1]
  t.data.hint = hint and hint.message
  t.check("its severity is Hint", hint and hint.severity == vim.diagnostic.severity.HINT, hint)

  -- The user asks for code actions on the Hint's line and picks prewrite's.
  local offered
  vim.ui.select = function(items, opts, on_choice)
    for i, item in ipairs(items) do
      local action = item.action or item[2]
      if action and action.title and action.title:find("^prewrite:") then
        offered = action.title
        return on_choice(item, i)
      end
    end
    on_choice(nil, nil)
  end
  vim.api.nvim_win_set_cursor(0, { hint.lnum + 1, 0 })
  vim.lsp.buf.code_action()
  t.check("the code action is offered", t.wait_for(function()
    return offered ~= nil
  end, 10000), offered)
  t.data.title = offered
  t.check("choosing it updates the body", t.wait_for(function()
    return session.buffer_text():find("raise ValueError", 1, true) ~= nil
  end, 10000), session.buffer_text())
  local after = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
  t.data.buffer = session.buffer_text()
  -- every line of the file before (the docstring's line aside) is still there, in order
  local i = 1
  for _, line in ipairs(after) do
    if i <= #before and (line == before[i] or (i == row and line == before[i] .. SENTENCE)) then
      i = i + 1
    end
  end
  t.check("the person's lines are all kept, in order", i > #before, { kept = i - 1, of = #before })
  t.check("the Hint goes once the body changed", t.wait_for(function()
    return #prewrite_hints(bufnr) == 0
  end, 10000), prewrite_hints(bufnr))
end, 400000)
