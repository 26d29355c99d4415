// `vsce package` makes an installable .vsix with the compiled extension and its runtime libraries.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';

const folder = path.join(__dirname, '..', '..');
const vsce = path.join(folder, 'node_modules', '.bin', 'vsce');

test('vsce packages the extension with its runtime and without tests or sources', () => {
  const listed = execFileSync(vsce, ['ls'], { cwd: folder, encoding: 'utf8' }).split('\n');
  assert.ok(listed.includes('out/src/extension.js'), listed.join('\n'));
  assert.ok(listed.some((file) => file.startsWith('node_modules/vscode-languageclient/')));
  assert.deepEqual(
    listed.filter((file) => /^(src|test|out\/test)\/|\.ts$|^node_modules\/(typescript|@vscode\/vsce)\//.test(file)),
    [],
  );
  const dir = mkdtempSync(path.join(os.tmpdir(), 'prewrite-vsix-'));
  try {
    const vsix = path.join(dir, 'prewrite.vsix');
    execFileSync(vsce, ['package', '--out', vsix], { cwd: folder, stdio: 'pipe' });
    assert.ok(statSync(vsix).size > 10_000);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
