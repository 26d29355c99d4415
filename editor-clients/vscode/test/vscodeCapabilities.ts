// Client capabilities of real VS Code (captured by pytest-lsp from VS Code 1.65.2), plus what
// vscode-languageclient 11's inline completion feature adds (fillClientCapabilities).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { ClientCapabilities } from 'vscode-languageserver-protocol';
import { runPython } from './repo';

export function vscodeCapabilities(): { capabilities: ClientCapabilities; clientInfo: { name: string; version?: string } } {
  const folder = runPython('import os, pytest_lsp.clients as c; print(os.path.dirname(c.__file__))').trim();
  const captured = JSON.parse(readFileSync(path.join(folder, 'visual_studio_code_v1.65.2.json'), 'utf8'));
  captured.capabilities.textDocument.inlineCompletion = { dynamicRegistration: true };
  return captured;
}
