"""`prewrite bench-lsp`: the editor-protocol benchmark (sessions, typist, runs, report)."""
