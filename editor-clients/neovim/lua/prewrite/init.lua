-- prewrite for Neovim: starts the server, asks for inline completions and shows them as ghost text.
local compat = require("prewrite.compat")
local config = require("prewrite.config")
local examples = require("prewrite.examples")
local ghost = require("prewrite.ghost")
local languages = require("prewrite.languages")
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
  requests = 0, -- inline completions asked since Neovim started
  progress = nil, -- last $/progress value: { kind, title, message, percentage }
  last = nil, -- last answer: { ms = ..., chars = ... }
  last_error = nil,
  draft = nil, -- last prewrite/draft params
  drafts = {}, -- bufnr -> { version, status } of the buffer's last draft
  examples = {}, -- bufnr -> what the examples of the buffer's last draft draw (see examples.of)
  labelled = nil, -- the buffer whose examples are drawn with no ghost text
  ids = nil, -- the language ids the server finds specs in (nil: not known yet)
  switched = {}, -- filetype -> true/false: :PrewriteEnable / :PrewriteDisable since setup
  attached = {}, -- bufnr -> true for the buffers attached since setup
  server = nil, -- last prewrite/status params: { state, model, message }
  timer = nil,
  accepted_tick = nil, -- the buffer's changedtick right after an accept
}

local client = servers.current

-- The version Neovim last sent for a buffer (its changedtick on the versions that keep none).
local function buf_version(bufnr)
  return (vim.lsp.util.buf_versions or {})[bufnr] or vim.api.nvim_buf_get_changedtick(bufnr)
end

--- Whether the plugin serves a filetype (nil: not known until the server lists its languages).
function M.serves(ft)
  return languages.served(ft, state.options.filetypes, state.ids, state.switched)
end

--- Whether suggestions are on for a buffer's filetype.
function M.enabled(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  return state.options ~= nil and M.serves(vim.bo[bufnr].filetype) ~= false
end

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

--- Hide the ghost text (if any) and the examples drawn with it, and forget the suggestion.
function M.dismiss()
  if state.suggestion then
    ghost.clear(state.suggestion.bufnr)
    state.suggestion = nil
  end
  if state.labelled then
    ghost.clear(state.labelled)
    state.labelled = nil
  end
end

-- The examples of the buffer's draft of its text as it is, else nil.
local function examples_now(bufnr)
  local e = state.examples[bufnr]
  return e and e.version == buf_version(bufnr) and e or nil
end

-- Draw a suggestion as ghost text, with its buffer's examples at the end of the spec line.
local function draw(s)
  M.dismiss()
  ghost.show(s, state.options.hl_group, examples_now(s.bufnr))
  state.suggestion = s
end

-- Show a buffer's examples as its last draft has them: with the ghost text, or alone.
local function show_examples(bufnr)
  if state.suggestion and state.suggestion.bufnr == bufnr then
    draw(state.suggestion)
    return
  end
  M.dismiss()
  local e = examples_now(bufnr)
  if e then
    ghost.label(bufnr, e)
    state.labelled = bufnr
  end
end

local function show(item, bufnr, row, col, c)
  local s = ghost.suggestion(bufnr, item, row, col, c.offset_encoding)
  if s then
    draw(s)
  else
    M.dismiss()
    show_examples(bufnr) -- no ghost text: the examples alone
  end
end

--- Ask the server for an inline completion at the cursor; the answer is drawn as ghost text.
function M.trigger(kind)
  local c = client()
  local bufnr = vim.api.nvim_get_current_buf()
  if not c or not c.initialized or not vim.lsp.buf_is_attached(bufnr, c.id) or not M.enabled(bufnr) then
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
    state.requests = state.requests + 1
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

-- Insert the part of the ghost text `pick(shown)` returns; the rest stays shown.
local function accept_part(pick)
  local s = state.suggestion
  if not (s and ghost.current(s)) then
    return false
  end
  M.dismiss()
  local rest = ghost.accept_part(s, #pick(s.shown))
  if rest then
    draw(rest)
  else
    state.accepted_tick = vim.api.nvim_buf_get_changedtick(s.bufnr) -- all of it: as accept()
  end
  return true
end

--- Insert the next word of the ghost text; returns true when something was inserted.
function M.accept_word()
  return accept_part(ghost.next_word)
end

--- Insert the rest of the ghost text's line (or, at its end, its next line); true when inserted.
function M.accept_line()
  return accept_part(ghost.next_line)
end

--- True while a current suggestion is drawn.
function M.visible()
  return state.suggestion ~= nil and ghost.current(state.suggestion)
end

-- The buffer or cursor changed: a suggestion whose next characters were typed keeps its rest
-- shown (as llama.vim does); any other change hides it.
local function follow()
  local s = state.suggestion
  if not s or ghost.current(s) then
    return
  end
  local n = ghost.typed_through(s)
  local rest = n and ghost.advance(s, n, s.row, s.col + n)
  M.dismiss()
  if rest then
    draw(rest)
  end
end

local function on_text_changed()
  follow()
  if not state.suggestion then
    M.dismiss() -- examples drawn alone stand for the text before this change
  end
  cancel_request()
  stop_timer()
  -- Typing through the ghost text, or a part of it accepted, leaves it current: nothing to ask.
  if state.suggestion and ghost.current(state.suggestion) then
    return
  end
  -- Accepting is not typing: no idle trigger right after the inserted answer.
  local accepted = state.accepted_tick == vim.api.nvim_buf_get_changedtick(0)
  if state.options.auto_trigger and not accepted and M.enabled(0) then
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
-- answer is shown; true when drawn. Elsewhere (editing the body, mid-docstring) it would restate
-- typed code.
local function preview(params, bufnr, c)
  if state.suggestion and not state.suggestion.preview then
    return false -- an answer to a trigger wins over the preview
  end
  local cursor = vim.api.nvim_win_get_cursor(0)
  local row = params.position.line
  local line = vim.api.nvim_buf_get_lines(bufnr, row, row + 1, false)[1] or ""
  local col = compat.byte_col(line, params.position.character, c.offset_encoding)
  if cursor[1] - 1 ~= row or cursor[2] ~= col then
    M.dismiss()
    return false
  end
  show({ insertText = params.text }, bufnr, row, col, c)
  if state.suggestion then
    state.suggestion.preview = true
  end
  return state.suggestion ~= nil
end

-- A draft of a buffer: its status for the statusline; for the current buffer's text as it is (in
-- insert mode), its examples at the end of the spec line, and the preview.
local function on_draft(_, params, ctx)
  if type(params) ~= "table" or type(params.uri) ~= "string" then
    return
  end
  state.draft = params
  local bufnr = vim.uri_to_bufnr(params.uri)
  state.drafts[bufnr] = { version = params.version, status = params.status }
  local current = params.version == buf_version(bufnr)
  if current then
    state.examples[bufnr] = examples.of(params) -- a draft without examples clears the last one's
  end
  pcall(vim.cmd, "redrawstatus")
  if not current or bufnr ~= vim.api.nvim_get_current_buf() or vim.api.nvim_get_mode().mode:sub(1, 1) ~= "i"
    or not M.enabled(bufnr) then
    return
  end
  -- a regenerating draft's text is the previous version's
  local drawn = state.options.draft_preview and params.status ~= "regenerating"
    and preview(params, bufnr, vim.lsp.get_client_by_id(ctx.client_id))
  if not drawn then
    show_examples(bufnr)
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
    pcall(vim.cmd, "redrawstatus")
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

--- The server's notifications the plugin handles, by method (its clients' `handlers`).
M.handlers = { [DRAFT] = on_draft, [STATUS] = on_status, ["$/progress"] = on_progress }

local function capabilities()
  local caps = vim.lsp.protocol.make_client_capabilities()
  caps.textDocument.inlineCompletion = { dynamicRegistration = false }
  return caps
end

-- The client config for `root` running `cmd` (servers.lua adds on_init and on_exit).
local function client_config(root, cmd)
  local options = state.options
  local settings = vim.deepcopy(options.settings)
  if (options.draft_preview or options.draft_status) and settings.draftPreview == nil then
    settings.draftPreview = true
  end
  return {
    name = "prewrite",
    cmd = cmd,
    root_dir = root,
    init_options = settings,
    capabilities = capabilities(),
    handlers = M.handlers,
    on_init = function(_, result)
      local ids = languages.from_result(result)
      if ids then
        languages.save(config.command(options), ids)
        vim.schedule(function()
          M.languages_known(ids)
        end)
      end
    end,
  }
end

-- A new current client (or none): what was known of the previous server no longer holds.
local function on_current()
  cancel_request()
  state.server, state.progress, state.drafts, state.examples = nil, nil, {}, {}
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
  -- An <expr> map may not edit the buffer, so the accept itself runs from <Cmd>; with no ghost
  -- text shown the key does what it did before.
  for name, fn in pairs({ accept = "accept", accept_word = "accept_word", accept_line = "accept_line" }) do
    local key = keys[name]
    if key then
      vim.keymap.set("i", key, function()
        if M.visible() then
          return "<Cmd>lua require('prewrite')." .. fn .. "()<CR>"
        end
        return key
      end, { buffer = bufnr, silent = true, expr = true })
    end
  end
end

--- Start the server for a buffer (if not running) and attach it, with keys and autocommands.
function M.attach(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  state.attached[bufnr] = true
  servers.attach(bufnr, vim.loop.cwd())
  map_keys(bufnr)
  local group = vim.api.nvim_create_augroup("prewrite_buffer_" .. bufnr, { clear = true })
  vim.api.nvim_create_autocmd("TextChangedI", { group = group, buffer = bufnr, callback = on_text_changed })
  vim.api.nvim_create_autocmd("CursorMovedI", { group = group, buffer = bufnr, callback = follow })
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

-- Attach a buffer of a served filetype (a file's, not help or a terminal) that is not attached.
local function attach_if_served(bufnr)
  if vim.api.nvim_buf_is_valid(bufnr) and vim.api.nvim_buf_is_loaded(bufnr) and not state.attached[bufnr]
    and vim.bo[bufnr].buftype == "" and M.serves(vim.bo[bufnr].filetype) then
    M.attach(bufnr)
  end
end

-- Attach every loaded buffer the plugin now serves.
local function attach_served()
  for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
    attach_if_served(bufnr)
  end
end

--- The server listed the language ids it finds specs in: serve their buffers from now on.
function M.languages_known(ids)
  state.ids = ids
  attach_served()
end

--- Switch suggestions on or off for a filetype (the current buffer's when nil) while Neovim runs.
function M.enable(ft, on)
  ft = (ft == nil or ft == "") and vim.bo.filetype or ft
  state.switched[ft] = on ~= false
  if on == false then
    if state.suggestion and vim.bo[state.suggestion.bufnr].filetype == ft then
      M.dismiss()
    end
    cancel_request()
  else
    attach_served()
  end
  pcall(vim.cmd, "redrawstatus")
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
    requests = state.requests,
    draft_status = state.draft and state.draft.status or nil,
    draft = M.draft_state(0), -- the current buffer's: "drafting" / "ready" / nil
    examples = M.examples_label(0), -- its draft's examples, e.g. "examples 3/3" (nil: none for its text)
    enabled = M.enabled(0), -- suggestions on for the current buffer's filetype
    language_ids = state.ids, -- what the server serves (nil: not known yet)
    switched_off = vim.tbl_filter(function(ft)
      return state.switched[ft] == false
    end, vim.tbl_keys(state.switched)),
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
  if s.examples then
    lines[#lines + 1] = s.examples
  end
  if s.last then
    lines[#lines + 1] = string.format("last completion: %.0f ms, %d characters", s.last.ms, s.last.chars)
  end
  if s.last_error then
    lines[#lines + 1] = "last error: " .. s.last_error
  end
  return lines
end

--- Where the server's draft of a buffer stands: "drafting" while it is (re)written, "ready"
--- once verified for the buffer's current text, nil when there is no draft of this text.
function M.draft_state(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local d = state.drafts[bufnr]
  if not d then
    return nil
  end
  if d.status ~= "verified" then
    return "drafting" -- the server is on it: a verified (or newer) draft follows
  end
  -- A verified draft of older text: the spec changed since, or the cursor left it.
  return d.version == buf_version(bufnr) and "ready" or nil
end

--- The label of the examples of a buffer's draft of its text as it is ("examples 3/3",
--- "examples 1/3: f(2) returned 5, expected 4"), nil when there are none.
function M.examples_label(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local e = examples_now(bufnr)
  return e and e.label
end

--- A short status for the statusline, e.g. `%{v:lua.require'prewrite'.statusline()}`:
--- "" in buffers the plugin does not serve.
function M.statusline()
  if not state.options then
    return ""
  end
  local bufnr = vim.api.nvim_get_current_buf()
  if not state.attached[bufnr] then
    return ""
  elseif not M.enabled(bufnr) then
    return "prewrite: off for " .. vim.bo[bufnr].filetype
  end
  local r = servers.state()
  if r.restarting then
    return "prewrite: restarting"
  elseif r.halted then
    return "prewrite: stopped"
  end
  local server = state.server and state.server.state
  if server == nil then
    return "prewrite: starting"
  elseif server == "loading" then
    local p = state.progress
    return p and p.kind ~= "end" and p.percentage and string.format("prewrite: loading %d%%", p.percentage)
      or "prewrite: loading"
  elseif server == "error" then
    return "prewrite: error"
  elseif server == "disabled" then
    return "prewrite: off"
  end
  local draft = state.options.draft_status and M.draft_state(bufnr)
  local line = draft == "drafting" and "prewrite: drafting" or draft == "ready" and "prewrite: draft ready"
    or "prewrite: ready"
  local e = examples_now(bufnr)
  if not e then
    return line
  end
  -- the counts only: the first failure is at the end of the spec line
  line = string.format("%s · examples %d/%d", line, e.passed, e.total)
  local alt = e.alternative
  return alt and string.format("%s · alternative %d/%d", line, alt.passed, alt.total) or line
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
  state.switched, state.ids, state.attached, state.examples = {}, nil, {}, {}
  servers.setup(client_config, function()
    return config.command(state.options)
  end, state.options.restart, on_current)
  vim.api.nvim_set_hl(0, "PrewriteGhost", { link = "Comment", default = true })
  examples.highlights()
  local group = vim.api.nvim_create_augroup("prewrite", { clear = true })
  vim.api.nvim_create_autocmd("FileType", {
    group = group,
    callback = function(args)
      attach_if_served(args.buf)
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
  for name, on in pairs({ PrewriteEnable = true, PrewriteDisable = false }) do
    vim.api.nvim_create_user_command(name, function(args)
      M.enable(args.args, on)
    end, { nargs = "?", complete = "filetype" })
  end
  -- The server's languages: kept from the last server of this command, else asked once.
  local cmd = config.command(state.options)
  state.ids = languages.cached(cmd)
  if state.ids == nil and languages.needs_ids(state.options.filetypes) then
    languages.probe(cmd, function(ids)
      if ids and state.ids == nil then
        languages.save(cmd, ids)
        M.languages_known(ids)
      end
    end)
  end
  attach_served()
end

return M
