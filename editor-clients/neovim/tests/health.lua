-- :checkhealth prewrite against the real server whose model pack is not installed: the error
-- names the command that installs it. Run by tests/editor_clients/test_neovim.py.
local t = require("harness")
local prewrite = require("prewrite")

t.run(function()
  prewrite.setup({ python = os.getenv("PREWRITE_PYTHON"), settings = { model = os.getenv("PREWRITE_MODEL") } })
  vim.cmd("edit " .. vim.fn.fnameescape(os.getenv("PREWRITE_FILE")))
  t.check("the server reports the model missing", t.wait_for(function()
    return prewrite.state().server == "error"
  end, 60000), prewrite.state())
  t.check("statusline: error", prewrite.statusline() == "prewrite: error", prewrite.statusline())
  vim.cmd("checkhealth prewrite")
  local lines = vim.api.nvim_buf_get_lines(0, 0, -1, false)
  t.data.health = lines
  local text = table.concat(lines, "\n")
  local function has(pattern)
    return text:find(pattern) ~= nil
  end
  t.check("health: the server command is found", has("OK:? server command: "), lines)
  t.check("health: the server started", has("OK:? server started"), lines)
  t.check("health: the model is an error, with the command that installs it",
    has("ERROR:? model " .. vim.pesc(os.getenv("PREWRITE_MODEL")) .. " not loaded")
      and has("install it: prewrite models install " .. vim.pesc(os.getenv("PREWRITE_MODEL"))), lines)
  t.check("health: the server's languages", has("python"), lines)
  t.check("health: no trigger answered yet", has("no trigger answered yet"), lines)
end, 90000)
