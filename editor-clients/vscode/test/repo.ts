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

/**
 * Why a test on the real server cannot run here, or undefined. In CI (the CI variable set) a
 * missing model pack is a failure, not a skip.
 */
export function serverTestSkipReason(model: string): string | undefined {
  if (!existsSync(path.join(repoRoot(), 'lsp_server', 'server.py'))) {
    return 'lsp_server/server.py is not written yet: the server cannot be started';
  }
  const installed = runPython(`from inference import packs; print(packs.is_installed(${JSON.stringify(model)}))`);
  if (installed.trim() !== 'True') {
    if (process.env.CI) {
      throw new Error(`${model} must be installed in CI (make models-test)`);
    }
    return `${model} is not installed: run \`prewrite models install ${model}\``;
  }
  return undefined;
}
