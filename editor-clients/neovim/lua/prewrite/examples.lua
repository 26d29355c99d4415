-- A draft's `>>>` examples as the plugin shows them: "examples 3/3", or the count and the first
-- failure ("examples 1/3: f(2) returned 5, expected 4"), in a highlight group of its own.
local M = {}

M.PASSED = "PrewriteExamplesPassed"
M.FAILED = "PrewriteExamplesFailed"

--- The label of a prewrite/draft's `examples` field; nil when there is none (JSON null). With
--- `alternative` (a sampled answer that passes them, offered first: the server's searchOnFailure)
--- it ends in " · alternative 3/3".
function M.label(examples, alternative)
  if type(examples) ~= "table" then
    return nil
  end
  local label = string.format("examples %d/%d", examples.passed, examples.total)
  if examples.failed > 0 and type(examples.firstFailure) == "string" then
    -- virtual text is one line: a multi-line expected value is folded onto it
    label = label .. ": " .. (examples.firstFailure:gsub("%s+", " "))
  end
  if type(alternative) == "table" then
    label = label .. string.format(" · alternative %d/%d", alternative.passed, alternative.total)
  end
  return label
end

--- What a draft's examples draw: { version, row (the spec's last line), label, chunks
--- (virt_text), passed, total }; nil when the draft has none.
function M.of(draft)
  local label = M.label(draft.examples, draft.alternative)
  if not label then
    return nil
  end
  local hl = draft.examples.failed > 0 and M.FAILED or M.PASSED
  return {
    version = draft.version,
    row = draft.position.line,
    label = label,
    chunks = { { "  " }, { label, hl } },
    passed = draft.examples.passed,
    total = draft.examples.total,
    alternative = type(draft.alternative) == "table" and draft.alternative or nil,
  }
end

--- Link the groups to the diagnostics' colours unless the user defined them (DiagnosticOk is
--- Neovim 0.9's; before it, passing examples read as DiagnosticInfo).
function M.highlights()
  local ok = vim.fn.hlexists("DiagnosticOk") == 1 and "DiagnosticOk" or "DiagnosticInfo"
  vim.api.nvim_set_hl(0, M.PASSED, { link = ok, default = true })
  vim.api.nvim_set_hl(0, M.FAILED, { link = "DiagnosticWarn", default = true })
end

return M
