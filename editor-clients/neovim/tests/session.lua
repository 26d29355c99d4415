-- What the end-to-end scripts share: typing into the buffer, reading the ghost text drawn, and
-- finding the server process.
local t = require("harness")
local ghost = require("prewrite.ghost")

local M = {}

--- The ghost text drawn in the current buffer (virtual text, then virtual lines) and the mark count.
function M.ghost_text()
  local marks = vim.api.nvim_buf_get_extmarks(0, ghost.ns, 0, -1, { details = true })
  if #marks == 0 then
    return nil
  end
  local parts, details = {}, marks[1][4]
  for _, chunk in ipairs(details.virt_text or {}) do
    parts[#parts + 1] = chunk[1]
  end
  local text = table.concat(parts)
  for _, line in ipairs(details.virt_lines or {}) do
    local chunks = {}
    for _, chunk in ipairs(line) do
      chunks[#chunks + 1] = chunk[1]
    end
    text = text .. "\n" .. table.concat(chunks)
  end
  return text, #marks
end

--- The current buffer's text.
function M.buffer_text()
  return table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")
end

local function keys_for(text)
  return (text:gsub("<", "<lt>"):gsub("\n", "<CR>"))
end

--- Type each chunk as keys, waiting until it is in the buffer; returns the buffer's text.
function M.type_chunks(chunks, base)
  local expected = base
  for _, chunk in ipairs(chunks) do
    t.input(keys_for(chunk))
    expected = expected .. chunk
    assert(t.wait_for(function()
      return M.buffer_text() == expected
    end, 5000), "typing " .. vim.inspect(chunk) .. " did not reach the buffer: " .. vim.inspect(M.buffer_text()))
  end
  return expected
end

--- A condition: a suggestion is drawn, from a live draft (`preview`) or as an answer.
function M.suggestion_shown(preview)
  return function()
    local s = require("prewrite").state()
    return s.suggestion ~= nil and M.ghost_text() ~= nil and s.preview == preview
  end
end

--- Type the scenario's chunks on a new line at the end of the buffer, in insert mode.
function M.type_at_end(chunks)
  local lines = vim.api.nvim_buf_line_count(0)
  t.input("<Esc>Go")
  assert(t.wait_for(function()
    return vim.api.nvim_buf_line_count(0) == lines + 1
  end, 5000), "Go did not open a line")
  return M.type_chunks(chunks, M.buffer_text())
end

--- The newest trigger the server counted for a buffer (prewrite.stats), and the error if any.
function M.last_trigger(bufnr)
  local got
  require("prewrite").stats(function(err, result)
    got = { err = err, result = result }
  end)
  assert(t.wait_for(function()
    return got ~= nil
  end, 30000), "prewrite.stats did not answer")
  local uri = vim.uri_from_bufnr(bufnr)
  for _, doc in ipairs(got.result and got.result.documents or {}) do
    if doc.uri == uri then
      return doc.triggers[#doc.triggers], got.err
    end
  end
  return nil, got.err
end

--- Check that the server answered a trigger for the buffer's current text: Neovim sends each
--- change with the buffer's changedtick as its version (0.7's didOpen sends 0), so a server that
--- missed an edit answers for an older version.
function M.check_in_sync(bufnr)
  local trigger, err = M.last_trigger(bufnr)
  local version = vim.api.nvim_buf_get_changedtick(bufnr)
  t.data.trigger = trigger
  return t.check("the server answered for the buffer's current version (it got every edit)",
    trigger ~= nil and trigger.version == version, { err = err, trigger = trigger, version = version })
end

--- The pid of a client's server. Neovim 0.7 to 0.9 expose it; later ones do not, and then it is
--- Neovim's only child process (the scripts start one server at a time).
function M.server_pid(client)
  if client.rpc.pid then
    return client.rpc.pid
  end
  local children = vim.api.nvim_get_proc_children(vim.fn.getpid())
  assert(#children == 1, "expected one child process, the server: " .. vim.inspect(children))
  return children[1]
end

return M
