-- Ghost text geometry without a server: drawing, prefix stripping, ranges, accepting, fallback.
local t = require("harness")
local ghost = require("prewrite.ghost")

local function marks()
  return vim.api.nvim_buf_get_extmarks(0, ghost.ns, 0, -1, { details = true })
end

t.run(function()
  vim.o.virtualedit = "onemore" -- the cursor may sit after the last character, as in insert mode
  vim.api.nvim_buf_set_lines(0, 0, -1, false, { "def f(x):", '    """Double x.' })
  vim.api.nvim_win_set_cursor(0, { 2, 16 })
  local bufnr = vim.api.nvim_get_current_buf()

  local s = ghost.suggestion(bufnr, { insertText = '"""\n    return 2 * x\n' }, 1, 16, "utf-16")
  ghost.show(s, "Comment")
  local m = marks()
  t.check("one extmark at the cursor", #m == 1 and m[1][2] == 1 and m[1][3] == 16, m)
  local d = m[1] and m[1][4] or {}
  t.check("first line as virtual text", d.virt_text and d.virt_text[1][1] == '"""', d.virt_text)
  t.check("other lines as virtual lines", d.virt_lines and #d.virt_lines == 2
    and d.virt_lines[1][1][1] == "    return 2 * x" and d.virt_lines[2][1][1] == "", d.virt_lines)
  t.check("buffer unchanged while shown", vim.api.nvim_buf_line_count(0) == 2)
  t.check("current while nothing moved", ghost.current(s))

  ghost.accept(s)
  local lines = vim.api.nvim_buf_get_lines(0, 0, -1, false)
  t.check("accept inserts the text", vim.deep_equal(lines, { "def f(x):", '    """Double x."""', "    return 2 * x", "" }), lines)
  t.check("accept clears the marks", #marks() == 0)
  t.check("cursor after the insertion", vim.deep_equal(vim.api.nvim_win_get_cursor(0), { 4, 0 }), vim.api.nvim_win_get_cursor(0))

  -- A range starting before the cursor: what is typed is not drawn again, and is replaced.
  vim.api.nvim_buf_set_lines(0, 0, -1, false, { "    ret" })
  local item = {
    insertText = "    return x",
    range = { start = { line = 0, character = 0 }, ["end"] = { line = 0, character = 7 } },
  }
  s = ghost.suggestion(bufnr, item, 0, 7, "utf-16")
  t.check("typed prefix stripped", s and s.shown == "urn x", s)
  ghost.accept(s)
  t.check("range replaced", vim.api.nvim_buf_get_lines(0, 0, -1, false)[1] == "    return x")

  -- Tabs are drawn as spaces to the next tab stop; an empty answer draws nothing.
  vim.bo.tabstop = 4
  vim.api.nvim_buf_set_lines(0, 0, -1, false, { "x" })
  s = ghost.suggestion(bufnr, { insertText = "\n\tif x:\n\t\treturn 1" }, 0, 1, "utf-16")
  ghost.show(s, "Comment")
  d = marks()[1][4]
  t.check("no virtual text when the first line is empty", d.virt_text == nil or #d.virt_text == 0, d.virt_text)
  t.check("tabs expanded", d.virt_lines[1][1][1] == "    if x:" and d.virt_lines[2][1][1] == "        return 1", d.virt_lines)
  t.check("empty answer is no suggestion", ghost.suggestion(bufnr, { insertText = "" }, 0, 1, "utf-16") == nil)

  -- Typing after the suggestion was made makes it stale.
  vim.api.nvim_buf_set_lines(0, 0, -1, false, { "xy" })
  t.check("stale after an edit", not ghost.current(s))
  ghost.clear(bufnr)

  -- Multi-byte text before the cursor: LSP utf-16 characters map to byte columns.
  vim.api.nvim_buf_set_lines(0, 0, -1, false, { "s = 'héllo'" })
  item = { insertText = "!", range = { start = { line = 0, character = 11 }, ["end"] = { line = 0, character = 11 } } }
  s = ghost.suggestion(bufnr, item, 0, 12, "utf-16")
  ghost.accept(s)
  t.check("utf-16 range on a multi-byte line", vim.api.nvim_buf_get_lines(0, 0, -1, false)[1] == "s = 'héllo'!",
    vim.api.nvim_buf_get_lines(0, 0, -1, false))

  local config = require("prewrite.config")
  t.check("server command from python", vim.deep_equal(config.command(config.resolve({ python = "/v/bin/python" })),
    { "/v/bin/python", "-m", "lsp_server.cli", "serve" }))
  t.check("server command default", vim.deep_equal(config.command(config.resolve({})), { "prewrite", "serve" }))
  local resolved = config.resolve({ keys = { accept = "<C-y>" }, settings = { model = "m" } })
  t.check("options merge", resolved.keys.accept == "<C-y>" and resolved.keys.trigger == config.defaults.keys.trigger
    and vim.deep_equal(resolved.settings, { model = "m" }), resolved)
end, 20000)
