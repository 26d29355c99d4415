// Installs Node 24 and code-server into the per-user cache unless already there (`make vscode-e2e`).
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { CODE_SERVER, NODE, PINS, Tool, installed, nodeHome, stampPath } from './cache';

/** `npm ci` of the tool's pinned lock in its cache folder; a half-finished folder is redone. */
function install(t: Tool, env: NodeJS.ProcessEnv): void {
  if (installed(t)) {
    console.log(`${t.name} ${t.version}: cached in ${t.dir}`);
    return;
  }
  const started = performance.now();
  rmSync(t.dir, { recursive: true, force: true });
  mkdirSync(t.dir, { recursive: true });
  for (const file of ['package.json', 'package-lock.json']) {
    copyFileSync(path.join(PINS, t.name, file), path.join(t.dir, file));
  }
  execFileSync('npm', ['ci', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: t.dir, env, stdio: 'inherit' });
  writeFileSync(stampPath(t), `${t.lockHash}\n`);
  console.log(`${t.name} ${t.version}: installed in ${t.dir} in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}

install(NODE, process.env);
// code-server's native modules build against Node 24's headers from the cache (nothing is
// downloaded), and its npm scripts run under Node 24.
install(CODE_SERVER, {
  ...process.env,
  PATH: `${path.join(nodeHome(), 'bin')}${path.delimiter}${process.env.PATH}`,
  npm_config_nodedir: nodeHome(),
});
