-- A draft's examples fed to the plugin's prewrite/draft handler, no server: the label's virtual
-- text after the ghost text or alone at the end of the spec line, its highlight, the statusline,
-- and what clears it. Run by tests/editor_clients/test_neovim.py.
local t = require("harness")
local prewrite = require("prewrite")
local compat = require("prewrite.compat")
local ghost = require("prewrite.ghost")

local SPEC = { "def double(x):", '    """Double x.', "", "    >>> double(2)", "    4" }
local FAILED = { passed = 1, failed = 2, total = 3, firstFailure = "double(2) returned 5,\n  expected 4" }
local PASSED = { passed = 3, failed = 0, total = 3 } -- firstFailure null: absent once decoded

-- The virtual text on each of the buffer's rows, as { [row] = "text{hl}text{hl}" }: inline and
-- overlay text first, then eol text, as they are drawn.
local function drawn(bufnr)
  local rows = {}
  local marks = vim.api.nvim_buf_get_extmarks(bufnr, ghost.ns, 0, -1, { details = true })
  table.sort(marks, function(a, b)
    return (a[4].virt_text_pos == "eol" and 1 or 0) < (b[4].virt_text_pos == "eol" and 1 or 0)
  end)
  for _, mark in ipairs(marks) do
    for _, chunk in ipairs(mark[4].virt_text or {}) do
      local row = mark[2]
      rows[row] = (rows[row] or "") .. chunk[1] .. (chunk[2] and "{" .. chunk[2] .. "}" or "")
    end
  end
  return rows
end

-- How many marks draw virtual text on a row.
local function texts_on(bufnr, row)
  local marks = vim.api.nvim_buf_get_extmarks(bufnr, ghost.ns, { row, 0 }, { row, -1 }, { details = true })
  return #vim.tbl_filter(function(mark)
    return mark[4].virt_text ~= nil
  end, marks)
end

t.run(function()
  -- A placeholder server (it never answers): the buffer is served, and the test is the server.
  prewrite.setup({ cmd = { "sh", "-c", "exec cat >/dev/null" }, filetypes = { "python" }, draft_preview = true })
  vim.cmd("edit double.py")
  local bufnr = vim.api.nvim_get_current_buf()
  vim.api.nvim_buf_set_lines(bufnr, 0, -1, false, SPEC)
  local ctx = { client_id = prewrite.state().client_id }
  t.check("a client for the buffer", ctx.client_id ~= nil, prewrite.state())
  prewrite.handlers["prewrite/status"](nil, { state = "ready", model = "m", message = "" }, ctx)
  vim.api.nvim_win_set_cursor(0, { 5, 0 })
  t.input("A") -- insert mode at the end of the spec's last line, where the draft goes
  t.check("insert mode", t.wait_for(function()
    return vim.api.nvim_get_mode().mode == "i"
  end, 5000), vim.api.nvim_get_mode())

  -- The buffer's version as the plugin sent it (its changedtick where Neovim keeps none).
  local function version()
    return (vim.lsp.util.buf_versions or {})[bufnr] or vim.api.nvim_buf_get_changedtick(bufnr)
  end

  -- Feed the handler a draft of the buffer's text as it is (unless overridden); what is drawn.
  local function draft(examples, overrides)
    local params = {
      uri = vim.uri_from_bufnr(bufnr),
      version = version(),
      status = "verified",
      text = '\n    """\n    return 2 * x',
      position = { line = 4, character = 5 },
      examples = examples,
    }
    prewrite.handlers["prewrite/draft"](nil, vim.tbl_extend("force", params, overrides or {}), ctx)
    return drawn(bufnr)
  end

  local rows = draft(vim.NIL)
  t.check("the preview drawn, no examples yet", rows[4] == nil and prewrite.state().preview, rows)
  rows = draft(FAILED)
  t.check("examples after the ghost text: the count and the first failure on one line",
    rows[4] == "  examples 1/3: double(2) returned 5, expected 4{PrewriteExamplesFailed}"
      and prewrite.state().preview, rows)
  t.check("statusline: the counts", prewrite.statusline() == "prewrite: draft ready · examples 1/3",
    prewrite.statusline())
  t.check("failures read as warnings", vim.fn.execute("highlight PrewriteExamplesFailed"):find("DiagnosticWarn") ~= nil,
    vim.fn.execute("highlight PrewriteExamplesFailed"))
  -- searchOnFailure found a sampled answer that passes them: named after the failure, and in
  -- the statusline; the suggestion the server offers first is that answer (not drawn here)
  rows = draft(FAILED, { alternative = { passed = 3, total = 3, seed = 2, drawn = 2, text = "\n    return 4" } })
  t.check("an alternative that passes them",
    rows[4] == "  examples 1/3: double(2) returned 5, expected 4 · alternative 3/3{PrewriteExamplesFailed}", rows)
  t.check("statusline: the alternative's counts",
    prewrite.statusline() == "prewrite: draft ready · examples 1/3 · alternative 3/3", prewrite.statusline())
  rows = draft(FAILED, { alternative = vim.NIL })
  t.check("a draft without one drops it", rows[4] == "  examples 1/3: double(2) returned 5, expected 4{PrewriteExamplesFailed}"
    and prewrite.statusline() == "prewrite: draft ready · examples 1/3", rows)
  rows = draft(PASSED)
  t.check("all passed", rows[4] == "  examples 3/3{PrewriteExamplesPassed}", rows)
  rows = draft(nil)
  t.check("a draft without examples clears them, the ghost text stays", rows[4] == nil and prewrite.state().preview,
    rows)
  t.check("statusline without examples", prewrite.statusline() == "prewrite: draft ready", prewrite.statusline())
  -- Ghost text on the spec's line (the docstring closed there): the examples follow it.
  rows = draft(PASSED, { text = '"""\n    return 2 * x' })
  t.check("after the ghost text's first line", rows[4] == '"""{PrewriteGhost}  examples 3/3{PrewriteExamplesPassed}',
    rows)
  -- Before 0.10 that line is drawn past the line's end, where another mark's eol text would
  -- overlap it: there the examples are the ghost text's own last chunks.
  t.check("one mark before inline virtual text, two with it", texts_on(bufnr, 4) == (compat.inline_virt_text and 2 or 1),
    texts_on(bufnr, 4))
  prewrite.dismiss()
  t.check("dismissed with the ghost text", vim.tbl_isempty(drawn(bufnr)), drawn(bufnr))

  -- The cursor elsewhere: no ghost text, the examples alone at the end of the spec line.
  vim.api.nvim_win_set_cursor(0, { 2, 4 })
  rows = draft(FAILED)
  t.check("alone at the end of the spec line",
    vim.deep_equal(rows, { [4] = "  examples 1/3: double(2) returned 5, expected 4{PrewriteExamplesFailed}" })
      and not prewrite.state().suggestion, rows)
  rows = draft(FAILED, { version = version() - 1 })
  t.check("a draft of older text changes nothing", rows[4] ~= nil and prewrite.state().examples ~= nil, rows)
  rows = draft(vim.NIL, { uri = vim.uri_from_fname(vim.fn.getcwd() .. "/other.py") })
  t.check("another buffer's draft changes nothing", rows[4] ~= nil, rows)
  rows = draft(vim.NIL, { status = "regenerating" })
  t.check("a newer draft without examples clears them", vim.tbl_isempty(rows), rows)
  draft(PASSED)
  t.input("x")
  t.check("typing clears them", t.wait_for(function()
    return vim.tbl_isempty(drawn(bufnr)) and prewrite.state().examples == nil
  end, 5000), drawn(bufnr))
end, 20000)
