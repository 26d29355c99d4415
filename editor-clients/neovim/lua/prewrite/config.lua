-- The plugin's own options and their defaults; server settings pass through untouched.
local M = {}

M.defaults = {
  -- How to start the server. When `cmd` is nil: `{python, "-m", "lsp_server.cli", "serve"}` if
  -- `python` is set (a virtual environment's interpreter), else `{"prewrite", "serve"}`.
  cmd = nil,
  python = nil,
  -- Which filetypes are served. nil: every language the server finds specs in (it lists them
  -- when it starts; see languages.lua). A list: exactly those. A map: the server's languages
  -- with these switched on or off, e.g. { markdown = false, lua = true }. :PrewriteDisable and
  -- :PrewriteEnable switch a filetype while Neovim runs.
  filetypes = nil,
  -- Server configuration, sent as initializationOptions and on configure(): the flat camelCase
  -- object the server's schema defines (model, acceptance, maxTokens, ...). The server owns
  -- the defaults and validates; nothing here repeats them.
  settings = {},
  keys = {
    trigger = "<M-\\>", -- insert mode: ask for a completion now
    accept = "<Tab>", -- insert mode: accept the ghost text; a plain <Tab> when none is shown
    accept_word = "<M-Right>", -- insert mode: accept its next word (copilot.vim's key)
    accept_line = "<M-C-Right>", -- insert mode: accept the rest of its line, or its next line
    dismiss = "<C-]>", -- insert mode: hide the ghost text
  },
  -- Also ask after `idle_ms` without typing in insert mode. The server answers from the draft it
  -- keeps while you type, so an automatic request costs no model work of its own.
  auto_trigger = true,
  idle_ms = 150,
  draft_preview = false, -- show the server's live `prewrite/draft` as ghost text
  -- Follow the server's drafts for statusline(): "drafting" while the draft is rewritten,
  -- "ready" once it is verified for the text as it is (the server sends them when this or
  -- draft_preview is on).
  draft_status = true,
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
