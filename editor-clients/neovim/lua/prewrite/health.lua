-- :checkhealth prewrite: the server command, the server, its model and runtime, the last error
-- and the last answer.
local M = {}

-- vim.health has start/ok/... from 0.10, report_start/... in 0.8 and 0.9; 0.7 has require("health").
local function reporter()
  local h = vim.health or require("health")
  return {
    start = h.start or h.report_start,
    ok = h.ok or h.report_ok,
    info = h.info or h.report_info,
    warn = h.warn or h.report_warn,
    error = h.error or h.report_error,
  }
end

-- The server's prewrite.stats, waited for (checkhealth is synchronous); nil if none come.
local function stats(prewrite)
  local got
  prewrite.stats(function(err, result)
    got = { err = err, result = result }
  end)
  vim.wait(5000, function()
    return got ~= nil
  end, 20)
  return got and got.result, got and got.err
end

-- Advice for a model the server could not load: the command that installs a missing pack.
local function model_advice(message, model)
  local install = message and message:match("`(prewrite models install [^`]+)`")
  if install then
    return { "install it: " .. install }
  end
  if message and model and message:find("not installed", 1, true) then
    return { "install it: prewrite models install " .. model }
  end
  return { "check the `model` setting (`prewrite models list` lists the packs)" }
end

local function check_command(h, s)
  local cmd = s.cmd or {}
  local exe = cmd[1]
  if exe and vim.fn.executable(exe) == 1 then
    h.ok("server command: " .. table.concat(cmd, " ") .. " (" .. vim.fn.exepath(exe) .. ")")
  else
    h.error("server executable not found: " .. tostring(exe), {
      "install prewrite (`pip install prewrite`) or set `python` to a virtual environment's interpreter",
    })
  end
end

local function check_server(h, s, prewrite)
  if s.restart.restarting or s.restart.halted then
    h.warn(prewrite.status_lines()[1])
    return false
  elseif not s.running then
    h.warn("server not started: open a file of a served filetype", { "served: " .. table.concat(
      s.language_ids and require("prewrite.languages").filetypes(s.language_ids) or { "(not known yet)" }, ", ") })
    return false
  end
  h.ok(string.format("server started (client %d)", s.client_id))
  if s.server == "ready" then
    h.ok("model " .. tostring(s.model) .. " loaded")
  elseif s.server == "loading" or s.server == nil then
    h.info("model " .. tostring(s.model or "?") .. " is loading")
  elseif s.server == "disabled" then
    h.warn("completions are switched off", { ":PrewriteToggle switches them on" })
  else
    h.error("model " .. tostring(s.model) .. " not loaded: " .. tostring(s.message), model_advice(s.message, s.model))
  end
  return true
end

local function check_runtime(h, prewrite)
  local result, err = stats(prewrite)
  local runtime = type(result) == "table" and result.runtime
  if type(runtime) == "table" then
    h.ok(string.format("runtime %s on %s, %s threads, %s (%s)", tostring(runtime.kind), tostring(runtime.device),
      tostring(runtime.threads), tostring(runtime.dtype), tostring(runtime.version)))
  else
    h.info("runtime: none loaded" .. (err and (" (" .. err .. ")") or ""))
  end
end

--- Run the checks.
function M.check()
  local h = reporter()
  h.start("prewrite")
  local ok, prewrite = pcall(require, "prewrite")
  local s = ok and prewrite.state()
  if not (s and s.cmd) then
    h.error("require('prewrite').setup() has not run")
    return
  end
  check_command(h, s)
  if s.language_ids then
    h.info("the server finds specs in: " .. table.concat(s.language_ids, ", "))
  end
  if #s.switched_off > 0 then
    h.info("switched off: " .. table.concat(s.switched_off, ", ") .. " (:PrewriteEnable switches one on)")
  end
  if check_server(h, s, prewrite) then
    check_runtime(h, prewrite)
  end
  if s.last_error then
    h.warn("last error: " .. s.last_error)
  else
    h.ok("no error from a request")
  end
  if s.last then
    h.ok(string.format("a trigger was answered: %.0f ms, %d characters", s.last.ms, s.last.chars))
  else
    h.info("no trigger answered yet")
  end
end

return M
