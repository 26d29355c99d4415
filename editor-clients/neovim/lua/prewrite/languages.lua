-- Which filetypes the plugin serves: the user's choice over the languages the server reports.
--
-- The server lists the LSP language ids it finds specs in, in its initialize result
-- (capabilities.experimental.prewrite.languageIds). The list of the last server started with a
-- command is kept in Neovim's cache folder, so that buffers opened before any server runs are
-- served at once; with nothing kept, `probe` asks a short-lived server (initialize, then exit:
-- no model loads).
local M = {}

-- LSP language ids whose Neovim filetype has another name.
local FILETYPE_OF = { ["objective-c"] = "objc", ["objective-cpp"] = "objcpp", csharp = "cs" }

--- The language ids in an initialize result, or nil when the server lists none.
function M.from_result(result)
  local ok, ids = pcall(function()
    return result.capabilities.experimental.prewrite.languageIds
  end)
  if not ok or type(ids) ~= "table" then
    return nil
  end
  local valid = {}
  for _, id in ipairs(ids) do
    if type(id) == "string" then
      valid[#valid + 1] = id
    end
  end
  return valid
end

--- The Neovim filetypes of LSP language ids.
function M.filetypes(ids)
  local fts = {}
  for _, id in ipairs(ids or {}) do
    fts[#fts + 1] = FILETYPE_OF[id] or id
  end
  return fts
end

--- Whether `ft` is served, given the `filetypes` option, the server's ids (nil: unknown) and
--- the switches made since (filetype -> true/false). nil when it cannot be told yet.
function M.served(ft, option, ids, switched)
  if ft == nil or ft == "" then
    return false
  end
  if switched[ft] ~= nil then
    return switched[ft]
  end
  if type(option) == "table" and option[1] ~= nil then
    return vim.tbl_contains(option, ft) -- a list: exactly those
  end
  if type(option) == "table" and type(option[ft]) == "boolean" then
    return option[ft]
  end
  if type(option) == "table" and option["*"] == false then
    return false -- a map with "*" = false: only the filetypes it switches on
  end
  if ids == nil then
    return nil
  end
  return vim.tbl_contains(M.filetypes(ids), ft)
end

--- Whether the `filetypes` option leaves any filetype to the server's list.
function M.needs_ids(option)
  return not (type(option) == "table" and (option[1] ~= nil or option["*"] == false))
end

local function cache_file()
  return vim.fn.stdpath("cache") .. "/prewrite/languages.json"
end

--- The ids kept for a server command line, or nil.
function M.cached(cmd)
  local ok, data = pcall(function()
    return vim.fn.json_decode(table.concat(vim.fn.readfile(cache_file()), "\n"))
  end)
  if ok and type(data) == "table" and vim.deep_equal(data.cmd, cmd) then
    return M.from_result({ capabilities = { experimental = { prewrite = { languageIds = data.languageIds } } } })
  end
  return nil
end

--- Keep the ids of a server command line for the next Neovim.
function M.save(cmd, ids)
  if M.cached(cmd) and vim.deep_equal(M.cached(cmd), ids) then
    return
  end
  pcall(function()
    vim.fn.mkdir(vim.fn.fnamemodify(cache_file(), ":h"), "p")
    vim.fn.writefile({ vim.fn.json_encode({ cmd = cmd, languageIds = ids }) }, cache_file())
  end)
end

local function frame(message)
  local body = vim.fn.json_encode(message)
  return "Content-Length: " .. #body .. "\r\n\r\n" .. body
end

--- Ask a short-lived server started with `cmd` for its ids; `callback(ids)` gets them, or nil
--- when it cannot start or does not answer within `timeout_ms`.
function M.probe(cmd, callback, timeout_ms)
  local out, done, job = "", false, nil
  local function finish(ids)
    if done then
      return
    end
    done = true
    if job and job > 0 then
      pcall(vim.fn.chansend, job, frame({ jsonrpc = "2.0", id = 1, method = "shutdown" })
        .. frame({ jsonrpc = "2.0", method = "exit" }))
      pcall(vim.fn.chanclose, job, "stdin")
    end
    callback(ids)
  end
  local ok
  ok, job = pcall(vim.fn.jobstart, cmd, {
    on_stdout = function(_, data)
      out = out .. table.concat(data, "\n")
      while not done do -- each complete frame; the answer to initialize has id 0
        local header_end = out:find("\r\n\r\n", 1, true)
        local length = header_end and tonumber(out:sub(1, header_end):match("Content%-Length: (%d+)"))
        if not length or #out < header_end + 3 + length then
          break
        end
        local decoded, message = pcall(vim.fn.json_decode, out:sub(header_end + 4, header_end + 3 + length))
        out = out:sub(header_end + 4 + length)
        if decoded and type(message) == "table" and message.id == 0 then
          finish(M.from_result(message.result))
        end
      end
    end,
    on_exit = function()
      finish(nil)
    end,
  })
  if not ok or job <= 0 then
    finish(nil)
    return
  end
  vim.fn.chansend(job, frame({ jsonrpc = "2.0", id = 0, method = "initialize",
    params = { processId = vim.fn.getpid(), rootUri = vim.NIL, capabilities = vim.empty_dict() } }))
  vim.defer_fn(function()
    if not done then
      finish(nil)
      pcall(vim.fn.jobstop, job)
    end
  end, timeout_ms or 30000)
end

return M
