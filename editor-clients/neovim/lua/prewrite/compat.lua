-- Shims over the Neovim API differences between 0.7 and current releases.
local M = {}

local has = function(feature)
  return vim.fn.has(feature) == 1
end

M.colon_methods = has("nvim-0.11") -- client:request() replaces client.request()
M.inline_virt_text = has("nvim-0.10") -- virt_text_pos = "inline"

--- Send a request through a client object, in the calling style the running version expects.
function M.request(client, method, params, handler, bufnr)
  if M.colon_methods then
    return client:request(method, params, handler, bufnr)
  end
  return client.request(method, params, handler, bufnr)
end

--- Send a notification through a client object.
function M.notify(client, method, params)
  if M.colon_methods then
    return client:notify(method, params)
  end
  return client.notify(method, params)
end

--- Byte column of an LSP `character` on `line` under the client's position encoding.
function M.byte_col(line, character, encoding)
  if encoding == "utf-8" then
    return math.min(character, #line)
  end
  local ok, col
  if has("nvim-0.11") then
    ok, col = pcall(vim.str_byteindex, line, encoding, character, false)
  else
    ok, col = pcall(vim.str_byteindex, line, character, encoding == "utf-16")
  end
  return ok and col or #line
end

--- LSP `character` of a byte column on `line` under the client's position encoding.
function M.character(line, col, encoding)
  if encoding == "utf-8" then
    return col
  end
  local prefix = line:sub(1, col)
  if has("nvim-0.11") then
    return vim.str_utfindex(prefix, encoding)
  end
  local utf32, utf16 = vim.str_utfindex(prefix)
  return encoding == "utf-16" and utf16 or utf32
end

--- Start a new client for `bufnr` and attach it; returns the client id. (The plugin reuses its
--- own clients, so Neovim's reuse, by name and root alone, is turned off.)
function M.start(config, bufnr)
  if vim.lsp.start then
    return vim.lsp.start(config, { bufnr = bufnr, reuse_client = function()
      return false
    end })
  end
  local id = vim.lsp.start_client(config) -- 0.7
  if id then
    vim.lsp.buf_attach_client(bufnr, id)
  end
  return id
end

--- Stop a client: the server is asked to shut down, or with `force` sent SIGTERM.
function M.stop(client, force)
  if M.colon_methods then
    return client:stop(force)
  end
  return client.stop(force)
end

--- Whether a client has stopped.
function M.is_stopped(client)
  if M.colon_methods then
    return client:is_stopped()
  end
  return client.is_stopped()
end

return M
