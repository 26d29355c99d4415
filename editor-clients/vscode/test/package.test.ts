// `npm run package` (what `make vsix` runs) makes an installable .vsix with the compiled extension
// and its runtime libraries only, small, and with no placeholder metadata.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { Entry, entries } from './zip';

const folder = path.join(__dirname, '..', '..');
const packageJson = JSON.parse(readFileSync(path.join(folder, 'package.json'), 'utf8'));
const runtimeDependencies = Object.keys(packageJson.dependencies);
const MAX_VSIX_BYTES = 1_000_000; // 0.4 MB today: the extension and vscode-languageclient
const dir = mkdtempSync(path.join(os.tmpdir(), 'prewrite-vsix-'));
const vsix = path.join(dir, 'prewrite.vsix');
let files: Entry[] = [];

before(() => {
  execFileSync('npm', ['run', 'package', '--', '--out', vsix], { cwd: folder, stdio: 'pipe' });
  files = entries(vsix);
});

after(() => rmSync(dir, { recursive: true, force: true }));

/** Where a runtime library's files may come from: its own folder or one it depends on. */
function allowed(name: string): boolean {
  if (['[Content_Types].xml', 'extension.vsixmanifest', 'extension/package.json', 'extension/readme.md'].includes(name)) {
    return true;
  }
  return /^extension\/out\/src\/\w+\.js$/.test(name) || name.startsWith('extension/node_modules/');
}

test('the .vsix holds the compiled extension and its runtime libraries, nothing else', () => {
  const names = files.map((entry) => entry.name);
  assert.ok(names.includes('extension/out/src/extension.js'), names.join('\n'));
  for (const dependency of runtimeDependencies) {
    assert.ok(names.some((name) => name.startsWith(`extension/node_modules/${dependency}/`)), dependency);
  }
  assert.deepEqual(names.filter((name) => !allowed(name)), []);
  const stray = /(^|\/)(src|test|e2e|scripts)\/.*\.ts$|\.map$|\.vsix$|^extension\/(out\/test|out\/e2e|e2e|test|src)\/|^extension\/node_modules\/(typescript|@vscode\/vsce|puppeteer-core|@types)\//;
  assert.deepEqual(names.filter((name) => stray.test(name)), []);
  // out/src/schema.js is the settings generator's, not the extension's
  assert.ok(!names.includes('extension/out/src/schema.js'));
});

test('the .vsix is small', () => {
  assert.ok(statSync(vsix).size < MAX_VSIX_BYTES, `${statSync(vsix).size} bytes`);
});

test('its metadata names no placeholder (no made-up repository URL)', () => {
  assert.equal(packageJson.repository, undefined, 'the real repository URL is unknown: no repository field');
  for (const name of ['extension.vsixmanifest', 'extension/package.json', 'extension/readme.md']) {
    const text = files.find((entry) => entry.name === name)!.read().toString('utf8');
    assert.doesNotMatch(text, /example\.(invalid|com|org|net)|your-(name|org|repo)/i, name);
  }
  const manifest = JSON.parse(files.find((entry) => entry.name === 'extension/package.json')!.read().toString('utf8'));
  assert.equal(manifest.name, 'prewrite');
  assert.equal(manifest.version, packageJson.version);
});
