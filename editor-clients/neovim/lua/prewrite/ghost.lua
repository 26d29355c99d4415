-- Ghost text: draws a suggestion with extmarks at the cursor, clears it, and inserts it.
local compat = require("prewrite.compat")

local M = {}

M.ns = vim.api.nvim_create_namespace("prewrite")

local function split(text)
  return vim.split(text, "\n", { plain = true })
end

-- virt_text shows a tab as a control character; draw it as spaces to the next tab stop.
local function expand_tabs(line, bufnr)
  if not line:find("\t", 1, true) then
    return line
  end
  local tabstop = vim.api.nvim_buf_get_option(bufnr, "tabstop")
  local out = {}
  local width = 0
  for char in line:gmatch(".") do
    if char == "\t" then
      local spaces = tabstop - width % tabstop
      out[#out + 1] = string.rep(" ", spaces)
      width = width + spaces
    else
      out[#out + 1] = char
      width = width + 1
    end
  end
  return table.concat(out)
end

--- A suggestion for `bufnr` from an LSP InlineCompletionItem, anchored at the cursor (row, col
--- 0-based bytes). Returns nil when nothing would be left to show.
function M.suggestion(bufnr, item, row, col, encoding)
  local text = type(item.insertText) == "table" and item.insertText.value or item.insertText
  if type(text) ~= "string" or text == "" then
    return nil
  end
  local start_row, start_col, end_row, end_col = row, col, row, col
  if item.range then
    local first = vim.api.nvim_buf_get_lines(bufnr, item.range.start.line, item.range.start.line + 1, false)[1] or ""
    local last = vim.api.nvim_buf_get_lines(bufnr, item.range["end"].line, item.range["end"].line + 1, false)[1] or ""
    start_row, end_row = item.range.start.line, item.range["end"].line
    start_col = compat.byte_col(first, item.range.start.character, encoding)
    end_col = compat.byte_col(last, item.range["end"].character, encoding)
  end
  -- What the user already typed inside the range is not drawn again.
  local shown = text
  if start_row == row and start_col < col then
    local typed = vim.api.nvim_buf_get_text(bufnr, row, start_col, row, col, {})[1]
    if text:sub(1, #typed) == typed then
      shown = text:sub(#typed + 1)
    end
  end
  if shown == "" then
    return nil
  end
  return {
    bufnr = bufnr,
    row = row,
    col = col,
    tick = vim.api.nvim_buf_get_changedtick(bufnr),
    text = text,
    shown = shown,
    range = { start_row, start_col, end_row, end_col },
    line = vim.api.nvim_buf_get_lines(bufnr, row, row + 1, false)[1] or "", -- the cursor line then
    lines = vim.api.nvim_buf_line_count(bufnr),
  }
end

--- Draw a suggestion: its first line at the cursor, the other lines as virtual lines below; and
--- `label` ({ row, chunks }, optional: the draft's examples) at the end of its row.
function M.show(s, hl_group, label)
  M.clear(s.bufnr)
  local lines = split(s.shown)
  local line = vim.api.nvim_buf_get_lines(s.bufnr, s.row, s.row + 1, false)[1] or ""
  local opts = { hl_mode = "combine" }
  if lines[1] ~= "" then
    opts.virt_text = { { expand_tabs(lines[1], s.bufnr), hl_group } }
    if compat.inline_virt_text then
      opts.virt_text_pos = "inline"
    else
      opts.virt_text_pos = s.col >= #line and "overlay" or "eol"
    end
  end
  if #lines > 1 then
    opts.virt_lines = {}
    for i = 2, #lines do
      opts.virt_lines[#opts.virt_lines + 1] = { { expand_tabs(lines[i], s.bufnr), hl_group } }
    end
  end
  -- Overlay and eol text lie past the line's end, where a second mark's eol text would be drawn
  -- over them (0.7 to 0.9): on the suggestion's row the label follows in the same chunks.
  if label and label.row == s.row and opts.virt_text and opts.virt_text_pos ~= "inline" then
    vim.list_extend(opts.virt_text, label.chunks)
    label = nil
  end
  s.mark = vim.api.nvim_buf_set_extmark(s.bufnr, M.ns, s.row, math.min(s.col, #line), opts)
  if label then
    M.label(s.bufnr, label)
  end
end

--- Draw a label ({ row, chunks }) at the end of its row (after inline ghost text there); it goes
--- with the ghost text (clear).
function M.label(bufnr, label)
  if label.row < vim.api.nvim_buf_line_count(bufnr) then
    vim.api.nvim_buf_set_extmark(bufnr, M.ns, label.row, 0,
      { virt_text = label.chunks, virt_text_pos = "eol", hl_mode = "combine" })
  end
end

--- Remove every ghost text from a buffer.
function M.clear(bufnr)
  if vim.api.nvim_buf_is_valid(bufnr) then
    vim.api.nvim_buf_clear_namespace(bufnr, M.ns, 0, -1)
  end
end

--- True while the buffer and cursor are where the suggestion was made.
function M.current(s)
  if not s or not vim.api.nvim_buf_is_valid(s.bufnr) or vim.api.nvim_get_current_buf() ~= s.bufnr then
    return false
  end
  local cursor = vim.api.nvim_win_get_cursor(0)
  return vim.api.nvim_buf_get_changedtick(s.bufnr) == s.tick and cursor[1] - 1 == s.row and cursor[2] == s.col
end

--- Insert a suggestion (replacing its range) and put the cursor after it.
function M.accept(s)
  M.clear(s.bufnr)
  local lines = split(s.text)
  local sr, sc, er, ec = unpack(s.range)
  vim.api.nvim_buf_set_text(s.bufnr, sr, sc, er, ec, lines)
  local row = sr + #lines - 1
  local col = #lines == 1 and sc + #lines[1] or #lines[#lines]
  vim.api.nvim_win_set_cursor(0, { row + 1, col })
end

--- The next word of what a suggestion shows: leading white space (line breaks included), then a
--- run of word characters or a run of other non-blank characters.
function M.next_word(shown)
  local space = shown:match("^%s*")
  local rest = shown:sub(#space + 1)
  return space .. (rest:match("^[%w_]+") or rest:match("^[^%w_%s]+") or "")
end

--- The next line of what a suggestion shows: up to its first line break; when it starts with a
--- line break, that break and the line after it.
function M.next_line(shown)
  local start = shown:sub(1, 1) == "\n" and 2 or 1
  local stop = shown:find("\n", start, true)
  return stop and shown:sub(1, stop - 1) or shown
end

--- The suggestion left once the first `n` bytes of what `s` shows are in the buffer and the cursor
--- is at (row, col) after them; nil when nothing is left. It replaces from the cursor to its
--- range's end, which moved with the inserted text.
function M.advance(s, n, row, col)
  local rest = s.shown:sub(n + 1)
  if rest == "" then
    return nil
  end
  local _, _, end_row, end_col = unpack(s.range)
  if end_row == s.row then
    end_row, end_col = row, col + math.max(0, end_col - s.col)
  else
    end_row = end_row + row - s.row
  end
  return {
    bufnr = s.bufnr,
    row = row,
    col = col,
    tick = vim.api.nvim_buf_get_changedtick(s.bufnr),
    text = rest,
    shown = rest,
    range = { row, col, end_row, end_col },
    line = vim.api.nvim_buf_get_lines(s.bufnr, row, row + 1, false)[1] or "",
    lines = vim.api.nvim_buf_line_count(s.bufnr),
    preview = s.preview,
  }
end

--- How many bytes of what `s` shows were typed at its cursor since it was drawn (and nothing
--- else changed), else nil: typing the ghost text's next characters keeps the rest shown.
function M.typed_through(s)
  if not vim.api.nvim_buf_is_valid(s.bufnr) or vim.api.nvim_get_current_buf() ~= s.bufnr
    or vim.api.nvim_buf_line_count(s.bufnr) ~= s.lines then
    return nil
  end
  local cursor = vim.api.nvim_win_get_cursor(0)
  local n = cursor[2] - s.col
  if cursor[1] - 1 ~= s.row or n <= 0 then
    return nil
  end
  local line = vim.api.nvim_buf_get_lines(s.bufnr, s.row, s.row + 1, false)[1] or ""
  local typed = line:sub(s.col + 1, s.col + n)
  if s.shown:sub(1, n) ~= typed or line ~= s.line:sub(1, s.col) .. typed .. s.line:sub(s.col + 1) then
    return nil
  end
  return n
end

--- Insert the first `n` bytes of what `s` shows at its cursor and put the cursor after them;
--- returns the suggestion left (nil when none is).
function M.accept_part(s, n)
  local part = s.shown:sub(1, n)
  local lines = split(part)
  vim.api.nvim_buf_set_text(s.bufnr, s.row, s.col, s.row, s.col, lines)
  local row = s.row + #lines - 1
  local col = #lines == 1 and s.col + #lines[1] or #lines[#lines]
  vim.api.nvim_win_set_cursor(0, { row + 1, col })
  return M.advance(s, n, row, col)
end

return M
