-- End to end against the real server: Tab fallback, live draft preview, trigger key, ghost text,
-- dismiss on typing, idle trigger, accept, and :PrewriteStatus. Run by tests/test_neovim_client.py.
local t = require("harness")
local prewrite = require("prewrite")
local ghost = require("prewrite.ghost")

local scenario = vim.fn.json_decode(table.concat(vim.fn.readfile(os.getenv("PREWRITE_SCENARIO")), "\n"))
local MODEL_MS = 180000 -- loading and running the model on two shared cores

local function ghost_text()
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

local function buffer_text()
  return table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")
end

local function keys_for(text)
  return (text:gsub("<", "<lt>"):gsub("\n", "<CR>"))
end

local function type_chunks(chunks, base)
  local expected = base
  for _, chunk in ipairs(chunks) do
    t.input(keys_for(chunk))
    expected = expected .. chunk
    assert(t.wait_for(function()
      return buffer_text() == expected
    end, 5000), "typing " .. vim.inspect(chunk) .. " did not reach the buffer: " .. vim.inspect(buffer_text()))
  end
  return expected
end

local function suggestion_shown(preview)
  return function()
    local s = prewrite.state()
    return s.suggestion ~= nil and ghost_text() ~= nil and s.preview == preview
  end
end

t.run(function()
  prewrite.setup({
    python = os.getenv("PREWRITE_PYTHON"),
    settings = scenario.settings,
    draft_preview = true,
  })
  vim.cmd("edit " .. vim.fn.fnameescape(os.getenv("PREWRITE_FILE")))
  t.check("filetype is python", vim.bo.filetype == "python", vim.bo.filetype)
  t.check("client attached", t.wait_for(function()
    return prewrite.state().running
  end, 10000), prewrite.state())

  -- Nothing shown yet: Tab is a plain Tab.
  t.input("Go")
  t.input("<Tab>")
  t.check("Tab inserts a tab when no ghost text is shown", t.wait_for(function()
    return vim.api.nvim_get_current_line() == "\t"
  end, 5000), vim.api.nvim_get_current_line())
  t.input("<BS>")
  assert(t.wait_for(function()
    return vim.api.nvim_get_current_line() == ""
  end, 5000))

  t.check("model ready", t.wait_for(function()
    return prewrite.state().server == "ready"
  end, MODEL_MS), prewrite.state())
  local base = buffer_text()
  local typed = type_chunks(scenario.typed, base)

  t.check("live draft preview drawn at the end of the spec", t.wait_for(suggestion_shown(true), MODEL_MS), prewrite.state())
  t.data.preview = ghost_text()

  t.input("<M-\\>")
  t.check("trigger key draws the answer as ghost text", t.wait_for(suggestion_shown(false), MODEL_MS), prewrite.state())
  local shown, marks = ghost_text()
  t.data.ghost = shown
  t.data.answer = prewrite.state().last
  t.check("one extmark", marks == 1, marks)
  t.check("extmark shows the answer", shown == prewrite.state().suggestion, { shown = shown, state = prewrite.state() })
  t.check("answer has a body after the docstring", shown ~= nil and shown:find("\n%s*%S") ~= nil, shown)
  t.check("ghost text is not in the buffer", buffer_text() == typed, buffer_text())

  t.input("x")
  t.check("typing clears the ghost text", t.wait_for(function()
    return ghost_text() == nil
  end, 5000), ghost_text())
  -- Reconfigured to ask by itself after an idle pause: deleting the x asks again.
  prewrite.setup({
    python = os.getenv("PREWRITE_PYTHON"),
    settings = scenario.settings,
    draft_preview = true,
    auto_trigger = true,
    idle_ms = 200,
  })
  t.input("<BS>")
  assert(t.wait_for(function()
    return buffer_text() == typed
  end, 5000))
  t.check("an idle pause draws the answer without a key", t.wait_for(suggestion_shown(false), MODEL_MS), prewrite.state())
  local answer = prewrite.state().suggestion
  t.input("<Tab>")
  t.check("Tab accepts: the buffer holds the typed docstring and the answer", t.wait_for(function()
    return buffer_text() == typed .. answer
  end, 5000), { buffer = buffer_text(), expected = typed .. answer })
  t.check("accepting clears the ghost text", ghost_text() == nil, ghost_text())
  local cursor = vim.api.nvim_win_get_cursor(0)
  local last = vim.api.nvim_buf_line_count(0)
  t.check("cursor after the inserted text", cursor[1] == last and cursor[2] == #vim.fn.getline(last),
    { cursor = cursor, last = last })
  t.data.buffer = buffer_text()

  local line = vim.api.nvim_get_current_line()
  t.input("<Tab>")
  t.check("Tab after accepting is a plain Tab again", t.wait_for(function()
    return vim.api.nvim_get_current_line() == line .. "\t"
  end, 5000), vim.api.nvim_get_current_line())

  t.input("<Esc>")
  local status = prewrite.status_lines()
  t.data.status = status
  t.check(":PrewriteStatus reports ready", status[1]:find("prewrite: ready", 1, true) ~= nil, status)
  t.check(":PrewriteStatus runs", pcall(vim.cmd, "PrewriteStatus"))
end, 400000)
