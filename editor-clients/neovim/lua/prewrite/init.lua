-- prewrite for Neovim: starts the server, asks for inline completions and shows them as ghost text.
local compat = require("prewrite.compat")
local config = require("prewrite.config")
local ghost = require("prewrite.ghost")
local servers = require("prewrite.servers")

local M = {}

local INLINE_COMPLETION = "textDocument/inlineCompletion"
local DRAFT = "prewrite/draft"
local STATUS = "prewrite/status"
local TRIGGER_INVOKED, TRIGGER_AUTOMATIC = 1, 2

local state = {
  options = nil,
  suggestion = nil, -- what ghost text shows now (see ghost.suggestion)
  request = nil, -- { id = ..., client = ... } of the inline completion in flight
  progress = nil, -- last $/progress value: { kind, title, message, percentage }
  last = nil, -- last answer: { ms = ..., chars = ... }
  last_error = nil,
  draft = nil, -- last prewrite/draft params
  server = nil, -- last prewrite/status params: { state, model, message }
  timer = nil,
  accepted_tick = nil, -- the buffer's changedtick right after an accept
}

local client = servers.current

local function stop_timer()
  if state.timer then
    state.timer:stop()
    state.timer:close()
    state.timer = nil
  end
end

local function cancel_request()
  if state.request then
    local c = state.request.client
    pcall(function()
      if compat.colon_methods then
        c:cancel_request(state.request.id)
      else
        c.cancel_request(state.request.id)
      end
    end)
    state.request = nil
  end
end

--- Hide the ghost text (if any) and forget the suggestion.
function M.dismiss()
  if state.suggestion then
    ghost.clear(state.suggestion.bufnr)
    state.suggestion = nil
  end
end

local function show(item, bufnr, row, col, c)
  local s = ghost.suggestion(bufnr, item, row, col, c.offset_encoding)
  M.dismiss()
  if s then
    ghost.show(s, state.options.hl_group)
    state.suggestion = s
  end
end

--- Ask the server for an inline completion at the cursor; the answer is drawn as ghost text.
function M.trigger(kind)
  local c = client()
  local bufnr = vim.api.nvim_get_current_buf()
  if not c or not c.initialized or not vim.lsp.buf_is_attached(bufnr, c.id) then
    return
  end
  cancel_request()
  local params = vim.lsp.util.make_position_params(0, c.offset_encoding)
  params.context = { triggerKind = kind or TRIGGER_INVOKED }
  local cursor = vim.api.nvim_win_get_cursor(0)
  local row, col = cursor[1] - 1, cursor[2]
  local tick = vim.api.nvim_buf_get_changedtick(bufnr)
  local started = vim.loop.hrtime()
  local ok, id
  ok, id = compat.request(c, INLINE_COMPLETION, params, function(err, result)
    if state.request and state.request.id == id then
      state.request = nil
    end
    if err then
      state.last_error = err.message or vim.inspect(err)
      return
    end
    -- A stale answer (the user typed or moved since) is dropped, never drawn.
    local now = vim.api.nvim_win_get_cursor(0)
    if vim.api.nvim_get_current_buf() ~= bufnr or vim.api.nvim_buf_get_changedtick(bufnr) ~= tick
      or now[1] - 1 ~= row or now[2] ~= col then
      return
    end
    local items = result and (result.items or result) or {}
    state.last = { ms = (vim.loop.hrtime() - started) / 1e6, chars = items[1] and #(
      type(items[1].insertText) == "table" and items[1].insertText.value or items[1].insertText or "") or 0 }
    if items[1] then
      show(items[1], bufnr, row, col, c)
    end
  end, bufnr)
  if ok then
    state.request = { id = id, client = c }
  end
end

--- Insert the ghost text if it is still current; returns true when something was inserted.
function M.accept()
  local s = state.suggestion
  state.suggestion = nil
  if s and ghost.current(s) then
    ghost.accept(s)
    state.accepted_tick = vim.api.nvim_buf_get_changedtick(s.bufnr)
    return true
  end
  if s then
    ghost.clear(s.bufnr)
  end
  return false
end

--- True while a current suggestion is drawn.
function M.visible()
  return state.suggestion ~= nil and ghost.current(state.suggestion)
end

local function on_text_changed()
  if state.suggestion and not ghost.current(state.suggestion) then
    M.dismiss()
  end
  cancel_request()
  -- Accepting is not typing: no idle trigger right after the inserted answer.
  local accepted = state.accepted_tick == vim.api.nvim_buf_get_changedtick(0)
  if state.options.auto_trigger and not accepted then
    stop_timer()
    state.timer = vim.loop.new_timer()
    state.timer:start(state.options.idle_ms, 0, vim.schedule_wrap(function()
      stop_timer()
      if vim.api.nvim_get_mode().mode:sub(1, 1) == "i" then
        M.trigger(TRIGGER_AUTOMATIC)
      end
    end))
  end
end

-- The server's live draft, drawn while the cursor is where it goes (the end of the spec) and no
-- answer is shown. Elsewhere (editing the body, mid-docstring) it would restate typed code.
local function on_draft(_, params, ctx)
  state.draft = params
  if not (state.options.draft_preview and params and params.status ~= "regenerating") then
    return -- a regenerating draft's text is the previous version's
  end
  local bufnr = vim.uri_to_bufnr(params.uri)
  local version = (vim.lsp.util.buf_versions or {})[bufnr] or vim.api.nvim_buf_get_changedtick(bufnr)
  if bufnr ~= vim.api.nvim_get_current_buf() or params.version ~= version
    or vim.api.nvim_get_mode().mode:sub(1, 1) ~= "i" then
    return
  end
  if state.suggestion and not state.suggestion.preview then
    return -- an answer to a trigger wins over the preview
  end
  local c = vim.lsp.get_client_by_id(ctx.client_id)
  local cursor = vim.api.nvim_win_get_cursor(0)
  local row = params.position.line
  local line = vim.api.nvim_buf_get_lines(bufnr, row, row + 1, false)[1] or ""
  local col = compat.byte_col(line, params.position.character, c.offset_encoding)
  if cursor[1] - 1 ~= row or cursor[2] ~= col then
    M.dismiss()
    return
  end
  show({ insertText = params.text }, bufnr, row, col, c)
  if state.suggestion then
    state.suggestion.preview = true
  end
end

-- Status and progress of the current client only: a stopping one may still send some.
local function is_current(ctx)
  local c = client()
  return c ~= nil and c.id == ctx.client_id
end

local function on_status(_, params, ctx)
  if is_current(ctx) then
    state.server = params
  end
end

local function on_progress(err, result, ctx, cfg)
  if result and result.value and is_current(ctx) then
    state.progress = result.value
  end
  local default = vim.lsp.handlers["$/progress"]
  if default then
    return default(err, result, ctx, cfg)
  end
end

local function capabilities()
  local caps = vim.lsp.protocol.make_client_capabilities()
  caps.textDocument.inlineCompletion = { dynamicRegistration = false }
  return caps
end

-- The client config for `root` running `cmd` (servers.lua adds on_init and on_exit).
local function client_config(root, cmd)
  local options = state.options
  local settings = vim.deepcopy(options.settings)
  if options.draft_preview and settings.draftPreview == nil then
    settings.draftPreview = true
  end
  return {
    name = "prewrite",
    cmd = cmd,
    root_dir = root,
    init_options = settings,
    capabilities = capabilities(),
    handlers = { [DRAFT] = on_draft, [STATUS] = on_status, ["$/progress"] = on_progress },
  }
end

-- A new current client (or none): what was known of the previous server no longer holds.
local function on_current()
  cancel_request()
  state.server, state.progress = nil, nil
end

local function map_keys(bufnr)
  local keys = state.options.keys
  local opts = { buffer = bufnr, silent = true }
  if keys.trigger then
    vim.keymap.set("i", keys.trigger, function()
      M.trigger(TRIGGER_INVOKED)
    end, opts)
  end
  if keys.dismiss then
    vim.keymap.set("i", keys.dismiss, M.dismiss, opts)
  end
  if keys.accept then
    -- An <expr> map may not edit the buffer, so the accept itself runs from <Cmd>.
    vim.keymap.set("i", keys.accept, function()
      if M.visible() then
        return "<Cmd>lua require('prewrite').accept()<CR>"
      end
      return keys.accept
    end, { buffer = bufnr, silent = true, expr = true })
  end
end

--- Start the server for a buffer (if not running) and attach it, with keys and autocommands.
function M.attach(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  servers.attach(bufnr, vim.loop.cwd())
  map_keys(bufnr)
  local group = vim.api.nvim_create_augroup("prewrite_buffer_" .. bufnr, { clear = true })
  vim.api.nvim_create_autocmd("TextChangedI", { group = group, buffer = bufnr, callback = on_text_changed })
  vim.api.nvim_create_autocmd("CursorMovedI", {
    group = group,
    buffer = bufnr,
    callback = function()
      if state.suggestion and not ghost.current(state.suggestion) then
        M.dismiss()
      end
    end,
  })
  vim.api.nvim_create_autocmd({ "InsertLeave", "BufLeave" }, {
    group = group,
    buffer = bufnr,
    callback = function()
      stop_timer()
      cancel_request()
      M.dismiss()
    end,
  })
end

--- Stop the servers (a clean stop, never taken for a crash); none starts until restart().
M.stop = servers.stop

--- Start new servers for the served buffers (the old ones stop) and forget past crashes.
M.restart = servers.restart

local function execute(command, callback)
  local c = client()
  if not (c and c.initialized) then
    callback("the server is not running", nil)
    return
  end
  compat.request(c, "workspace/executeCommand", { command = command, arguments = {} }, function(err, result)
    callback(err and (err.message or vim.inspect(err)) or nil, result)
  end)
end

--- Ask the server to switch completions on or off; `callback(err, result)` gets its answer.
function M.toggle(callback)
  execute("prewrite.toggle", callback or function(err, result)
    vim.notify("prewrite: " .. (err or vim.inspect(result)))
  end)
end

--- Ask the server for its statistics; `callback(err, stats)` gets them.
function M.stats(callback)
  execute("prewrite.stats", callback)
end

--- Send new server settings (didChangeConfiguration, under the `prewrite` section).
function M.configure(settings)
  state.options.settings = vim.tbl_extend("force", state.options.settings, settings)
  local c = client()
  if c then
    compat.notify(c, "workspace/didChangeConfiguration", { settings = { prewrite = state.options.settings } })
  end
end

--- The client's view of the server, as plain data.
function M.state()
  local c = client()
  return {
    running = c ~= nil,
    client_id = c and c.id or nil,
    cmd = state.options and config.command(state.options) or nil,
    server = state.server and state.server.state or nil, -- loading / ready / error / disabled
    model = state.server and state.server.model or nil,
    message = state.server and state.server.message or nil,
    progress = state.progress,
    last = state.last,
    last_error = state.last_error,
    draft_status = state.draft and state.draft.status or nil,
    suggestion = state.suggestion and state.suggestion.shown or nil, -- the ghost text drawn now
    preview = state.suggestion ~= nil and state.suggestion.preview == true, -- drawn from a draft
    -- After a crash: restarting, restart_in_ms, crash ({ code, signal }), crashes, halted.
    restart = servers.state(),
  }
end

--- Human-readable status lines (for :PrewriteStatus).
function M.status_lines()
  local s = M.state()
  local lines = {}
  local down = servers.down_line()
  if down then
    lines[1] = down
  elseif not s.running then
    lines[1] = "prewrite: not running (" .. table.concat(s.cmd or { "?" }, " ") .. ")"
  else
    local p = s.progress
    local percent = p and p.kind ~= "end" and p.percentage and string.format(" %d%%", p.percentage) or ""
    lines[1] = string.format("prewrite: %s%s, model %s (client %d)", s.server or "starting", percent,
      s.model or "?", s.client_id)
    if s.message and s.message ~= "" then
      lines[#lines + 1] = s.message
    end
    lines[#lines + 1] = servers.crash_line()
  end
  if s.draft_status then
    lines[#lines + 1] = "draft: " .. s.draft_status
  end
  if s.last then
    lines[#lines + 1] = string.format("last completion: %.0f ms, %d characters", s.last.ms, s.last.chars)
  end
  if s.last_error then
    lines[#lines + 1] = "last error: " .. s.last_error
  end
  return lines
end

local function status_command()
  vim.notify(table.concat(M.status_lines(), "\n"))
  local c = client()
  if c and c.initialized then
    M.stats(function(err, stats)
      vim.notify("prewrite stats: " .. (err or vim.fn.json_encode(stats)))
    end)
  end
end

--- Configure the plugin; see README.md for the options.
function M.setup(opts)
  state.options = config.resolve(opts)
  servers.setup(client_config, function()
    return config.command(state.options)
  end, state.options.restart, on_current)
  vim.api.nvim_set_hl(0, "PrewriteGhost", { link = "Comment", default = true })
  local group = vim.api.nvim_create_augroup("prewrite", { clear = true })
  vim.api.nvim_create_autocmd("FileType", {
    group = group,
    pattern = state.options.filetypes,
    callback = function(args)
      M.attach(args.buf)
    end,
  })
  vim.api.nvim_create_user_command("PrewriteStatus", status_command, {})
  vim.api.nvim_create_user_command("PrewriteToggle", function()
    M.toggle()
  end, {})
  vim.api.nvim_create_user_command("PrewriteStop", function()
    M.stop()
  end, {})
  vim.api.nvim_create_user_command("PrewriteRestart", function()
    M.restart()
  end, {})
  if vim.tbl_contains(state.options.filetypes, vim.bo.filetype) then
    M.attach(0)
  end
end

return M
