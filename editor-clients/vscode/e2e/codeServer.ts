// One private code-server on loopback: its folders, the installed .vsix, start and stop.
import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { codeServerEntry, nodeBinary } from './cache';

export interface CodeServer {
  url: string;
  userDataDir: string;
  process: ChildProcess;
  output: () => string; // its stdout and stderr so far (the last 20,000 characters)
}

/** code-server's folders under `root`: nothing is read from or written to the user's own. */
export function folders(root: string): { userDataDir: string; extensionsDir: string; env: NodeJS.ProcessEnv } {
  const userDataDir = path.join(root, 'user-data');
  const extensionsDir = path.join(root, 'extensions');
  const xdg = path.join(root, 'xdg');
  for (const dir of [userDataDir, extensionsDir, path.join(xdg, 'config'), path.join(xdg, 'data')]) {
    mkdirSync(dir, { recursive: true });
  }
  const env = {
    ...process.env,
    XDG_CONFIG_HOME: path.join(xdg, 'config'),
    XDG_DATA_HOME: path.join(xdg, 'data'),
    // for the prewrite server it starts: the model pack is local
    HF_HUB_OFFLINE: '1',
    TOKENIZERS_PARALLELISM: 'false',
  };
  return { userDataDir, extensionsDir, env };
}

function commonArgs(root: string): string[] {
  const { userDataDir, extensionsDir } = folders(root);
  return ['--user-data-dir', userDataDir, '--extensions-dir', extensionsDir, '--disable-telemetry', '--disable-update-check'];
}

/** Install the packaged extension into the private extensions folder. */
export function installExtension(root: string, vsix: string): void {
  execFileSync(nodeBinary(), [codeServerEntry(), ...commonArgs(root), '--install-extension', vsix], {
    env: folders(root).env,
    stdio: 'pipe',
  });
}

/** Write a settings.json of code-server's: 'User' (user settings) or 'Machine' (the remote host's). */
export function writeSettings(root: string, scope: 'User' | 'Machine', settings: Record<string, unknown>): void {
  const dir = path.join(folders(root).userDataDir, scope);
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'settings.json'), JSON.stringify(settings, null, 2));
}

/** A TCP port on 127.0.0.1 that was free a moment ago. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/** Start code-server and resolve once it listens (rejects if it exits first or after `timeoutMs`). */
export async function start(root: string, timeoutMs: number): Promise<CodeServer> {
  const port = await freePort();
  const args = [
    codeServerEntry(), ...commonArgs(root), '--bind-addr', `127.0.0.1:${port}`, '--auth', 'none',
    '--disable-workspace-trust', '--disable-getting-started-override',
  ];
  // Its own process group, so that stop() ends the extension host and the prewrite server too.
  const child = spawn(nodeBinary(), args, { env: folders(root).env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const listening = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      signalGroup(child.pid!, 'SIGKILL');
      reject(new Error(`code-server did not listen within ${timeoutMs} ms:\n${output}`));
    }, timeoutMs);
    const read = (chunk: Buffer) => {
      output = (output + chunk.toString()).slice(-20_000);
      if (output.includes('HTTP server listening on')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on('data', read);
    child.stderr!.on('data', read);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`code-server exited (${code}) before listening:\n${output}`));
    });
  });
  await listening;
  return { url: `http://127.0.0.1:${port}`, userDataDir: folders(root).userDataDir, process: child, output: () => output };
}

/** Stop code-server's process group: SIGTERM, then SIGKILL after `graceMs`. */
export async function stop(server: CodeServer, graceMs = 10_000): Promise<void> {
  const pid = server.process.pid;
  if (pid === undefined || server.process.exitCode !== null) {
    return;
  }
  const exited = new Promise((resolve) => server.process.once('exit', resolve));
  signalGroup(pid, 'SIGTERM');
  const timer = setTimeout(() => signalGroup(pid, 'SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
  signalGroup(pid, 'SIGKILL'); // what outlived code-server in its group (a server that hung)
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') {
      throw error;
    }
  }
}
