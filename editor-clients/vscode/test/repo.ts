// Locates the prewrite repository and its Python for tests and scripts run from this folder.

import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';

/** The repository root: the nearest folder above this file with pyproject.toml and lsp_server/. */
export function repoRoot(): string {
  let dir = __dirname;
  while (!(existsSync(path.join(dir, 'pyproject.toml')) && existsSync(path.join(dir, 'lsp_server')))) {
    const parent = path.dirname(dir);
    if (parent === dir) {
      throw new Error(`no prewrite repository above ${__dirname}`);
    }
    dir = parent;
  }
  return dir;
}

/** The Python with prewrite installed: $PREWRITE_PYTHON, else the repository's .venv. */
export function python(): string {
  return process.env.PREWRITE_PYTHON ?? path.join(repoRoot(), '.venv', 'bin', 'python');
}

/** Run Python code in the repository root and return its stdout. */
export function runPython(code: string): string {
  return execFileSync(python(), ['-c', code], { cwd: repoRoot(), encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/** The server's settings schema, as `prewrite settings-schema` prints it. */
export function serverSchema(): { section: string; properties: Record<string, unknown> } {
  const out = execFileSync(python(), ['-m', 'lsp_server.cli', 'settings-schema'], { cwd: repoRoot(), encoding: 'utf8' });
  return JSON.parse(out);
}
