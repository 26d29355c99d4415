-- The plugin's own options and their defaults; server settings pass through untouched.
local M = {}

M.defaults = {
  -- How to start the server. When `cmd` is nil: `{python, "-m", "lsp_server.cli", "serve"}` if
  -- `python` is set (a virtual environment's interpreter), else `{"prewrite", "serve"}`.
  cmd = nil,
  python = nil,
  filetypes = { "python", "javascript", "typescript" },
  -- Server configuration, sent as initializationOptions and on configure(): the flat camelCase
  -- object the server's schema defines (model, acceptance, maxTokens, ...). The server owns
  -- the defaults and validates; nothing here repeats them.
  settings = {},
  keys = {
    trigger = "<M-\\>", -- insert mode: ask for a completion now
    accept = "<Tab>", -- insert mode: accept the ghost text; a plain <Tab> when none is shown
    dismiss = "<C-]>", -- insert mode: hide the ghost text
  },
  auto_trigger = false, -- also ask after `idle_ms` without typing in insert mode
  idle_ms = 400,
  draft_preview = false, -- show the server's live `prewrite/draft` as ghost text
  hl_group = "PrewriteGhost", -- linked to Comment unless defined by the user
  -- A crashed server (a signal other than SIGTERM, or a non-zero exit) is started again after
  -- delay_ms, doubled for each further crash within window_ms (at most max_delay_ms); the
  -- max_crashes-th crash within window_ms stops the restarts until :PrewriteRestart.
  -- false: never restart.
  restart = { delay_ms = 1000, max_delay_ms = 30000, max_crashes = 5, window_ms = 180000 },
}

--- The defaults deep-merged with the user's options.
function M.resolve(opts)
  local resolved = vim.tbl_deep_extend("force", vim.deepcopy(M.defaults), opts or {})
  if opts and opts.settings then
    resolved.settings = vim.deepcopy(opts.settings) -- a table the server reads as a whole
  end
  return resolved
end

--- The server command line for resolved options.
function M.command(options)
  if options.cmd then
    return options.cmd
  end
  if options.python then
    return { options.python, "-m", "lsp_server.cli", "serve" }
  end
  return { "prewrite", "serve" }
end

return M
