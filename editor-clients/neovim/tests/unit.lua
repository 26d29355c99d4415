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

  -- The restart policy: what is a crash, the doubling back-off, the limit within the window.
  local restart = require("prewrite.restart")
  t.check("SIGKILL and SIGSEGV are crashes", restart.is_crash(0, 9) and restart.is_crash(0, 11))
  t.check("a non-zero exit is a crash", restart.is_crash(1, 0))
  t.check("exit 0 and SIGTERM are clean stops", not restart.is_crash(0, 0) and not restart.is_crash(0, 15))
  local options = config.resolve({ restart = { max_delay_ms = 3000 } }).restart
  t.check("restart options merge",
    options.delay_ms == 1000 and options.max_crashes == 5 and options.window_ms == 180000, options)
  local policy = restart.new(options)
  local delays = {}
  for i = 1, 5 do
    delays[i] = restart.crashed(policy, i * 1000) or "stop"
  end
  t.check("back-off doubles up to max_delay_ms, the 5th crash stops",
    vim.deep_equal(delays, { 1000, 2000, 3000, 3000, "stop" }), delays)
  t.check("the status names the count and the limit", restart.summary(policy, { code = 0, signal = 11 })
    == "signal 11; 5 crashes within 180 s (restarts stop at 5)", restart.summary(policy, { code = 0, signal = 11 }))
  local message = restart.give_up_message(policy, 0, 11)
  t.check("the give-up message says the way out", message:find(":PrewriteRestart", 1, true) ~= nil, message)
  -- Crashes older than the window are forgotten: the back-off starts over.
  t.check("a crash after the window waits delay_ms again", restart.crashed(policy, 5000 + 180000) == 1000,
    policy.crashes)
  t.check("only crashes within the window count", restart.count(policy) == 1, policy.crashes)
  restart.crashed(policy, 185500)
  restart.reset(policy)
  t.check("reset forgets the crashes", restart.count(policy) == 0 and restart.crashed(policy, 186000) == 1000)
  local off = restart.new(config.resolve({ restart = false }).restart)
  t.check("restart = false never restarts", restart.crashed(off, 0) == nil
    and restart.give_up_message(off, 1, 0):find("restarts are off", 1, true) ~= nil, restart.give_up_message(off, 1, 0))
  t.check("no delay: the server command itself", vim.deep_equal(restart.command({ "prewrite", "serve" }, 0),
    { "prewrite", "serve" }))
  local waited = restart.command({ "prewrite", "serve" }, 1500)
  t.check("a delay: sh waits, then execs the server", vim.deep_equal(waited,
    { "sh", "-c", 'sleep "$0"; exec "$@"', "1.500", "prewrite", "serve" }), waited)
  vim.fn.system({ "sleep", waited[4] })
  t.check("sleep takes the fractional seconds", vim.v.shell_error == 0, vim.v.shell_error)
  local out = vim.fn.system(restart.command({ "echo", "ran" }, 50))
  t.check("the wrapped command runs after the wait", vim.v.shell_error == 0 and out == "ran\n",
    { out = out, code = vim.v.shell_error })

  -- Accepting a word or a line, and typing through the ghost text.
  t.check("next word: leading space and a word", ghost.next_word("  return x") == "  return")
  t.check("next word: a run of punctuation", ghost.next_word('"""\n    return') == '"""')
  t.check("next word: across a line break", ghost.next_word("\n    return x") == "\n    return")
  t.check("next line: up to the break", ghost.next_line('"""\n    return x') == '"""')
  t.check("next line: at a break, the break and the next line",
    ghost.next_line("\n    return x\n    y") == "\n    return x")
  t.check("next line: the last line whole", ghost.next_line("x + 1") == "x + 1")
  vim.api.nvim_buf_set_lines(0, 0, -1, false, { "def f(x):", '    """Double x.', "# end" })
  vim.api.nvim_win_set_cursor(0, { 2, 16 })
  s = ghost.suggestion(bufnr, { insertText = '"""\n    return 2 * x' }, 1, 16, "utf-16")
  ghost.show(s, "Comment")
  s = ghost.accept_part(s, #ghost.next_word(s.shown))
  lines = vim.api.nvim_buf_get_lines(0, 0, -1, false)
  t.check("a word accepted", vim.deep_equal(lines, { "def f(x):", '    """Double x."""', "# end" }), lines)
  t.check("the rest is current at the cursor", s and ghost.current(s) and s.shown == "\n    return 2 * x"
    and vim.deep_equal(vim.api.nvim_win_get_cursor(0), { 2, 19 }), { s = s, cursor = vim.api.nvim_win_get_cursor(0) })
  vim.api.nvim_buf_set_text(0, 1, 19, 1, 19, { "", "    ret" }) -- a line break typed: not on the line
  t.check("a new line is not typed through", ghost.typed_through(s) == nil)
  vim.api.nvim_buf_set_lines(0, 0, -1, false, { "def f(x):", '    """Double x."""', "# end" })
  vim.api.nvim_win_set_cursor(0, { 2, 19 })
  s.tick, s.line = vim.api.nvim_buf_get_changedtick(bufnr), vim.api.nvim_get_current_line()
  s = ghost.accept_part(s, #ghost.next_line(s.shown))
  lines = vim.api.nvim_buf_get_lines(0, 0, -1, false)
  t.check("a line accepted", vim.deep_equal(lines, { "def f(x):", '    """Double x."""', "    return 2 * x", "# end" })
    and s == nil, { lines = lines, s = s })
  vim.api.nvim_buf_set_lines(0, 0, -1, false, { "y = f(", "# end" })
  vim.api.nvim_win_set_cursor(0, { 1, 6 })
  s = ghost.suggestion(bufnr, { insertText = "x + 1)" }, 0, 6, "utf-16")
  vim.api.nvim_buf_set_text(0, 0, 6, 0, 6, { "x +" })
  vim.api.nvim_win_set_cursor(0, { 1, 9 })
  local n = ghost.typed_through(s)
  t.check("typed through: the typed characters counted", n == 3, n)
  local rest = n and ghost.advance(s, n, 0, 9)
  t.check("the rest is left to show", rest and rest.shown == " 1)" and ghost.current(rest), rest)
  vim.api.nvim_buf_set_text(0, 0, 9, 0, 9, { "-" })
  vim.api.nvim_win_set_cursor(0, { 1, 10 })
  t.check("a character that differs is no typing through", ghost.typed_through(rest) == nil)

  -- Which filetypes are served: the server's ids, a list, a map, switches.
  local languages = require("prewrite.languages")
  local ids = languages.from_result({ capabilities = { experimental = { prewrite = {
    languageIds = { "python", "csharp", "objective-c", 3 } } } } })
  t.check("language ids read from initialize", vim.deep_equal(ids, { "python", "csharp", "objective-c" }), ids)
  t.check("no ids from a server without them", languages.from_result({ capabilities = {} }) == nil
    and languages.from_result(nil) == nil)
  t.check("LSP ids as filetypes", vim.deep_equal(languages.filetypes(ids), { "python", "cs", "objc" }))
  t.check("default: the server's", languages.served("cs", nil, ids, {}) == true
    and languages.served("markdown", nil, ids, {}) == false)
  t.check("unknown until the server says", languages.served("python", nil, nil, {}) == nil)
  t.check("a list: exactly those", languages.served("lua", { "lua" }, nil, {}) == true
    and languages.served("python", { "lua" }, ids, {}) == false)
  t.check("a map switches some", languages.served("python", { python = false }, ids, {}) == false
    and languages.served("lua", { lua = true }, ids, {}) == true and languages.served("cs", { lua = true }, ids, {}))
  t.check("a map with * = false serves only its own", languages.served("cs", { ["*"] = false, lua = true }, ids, {})
    == false and not languages.needs_ids({ ["*"] = false }) and languages.needs_ids({ lua = true }))
  t.check("a switch wins", languages.served("python", { "python" }, ids, { python = false }) == false)
end, 20000)
