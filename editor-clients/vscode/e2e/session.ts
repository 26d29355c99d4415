// One end-to-end session: a private workspace and code-server, headless Chromium on it, the
// timings, and on failure the screenshots and logs kept in a folder the failure names.
import { copyFileSync, cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'puppeteer-core';
import * as codeServer from './codeServer';
import { outputLogs } from './trace';
import { launch, openFolder, recordStatus } from './workbench';

export interface Session {
  root: string; // the test's own folder
  workspace: string; // the folder opened in VS Code
  artifacts: string; // screenshots, logs and timings.json
  server: codeServer.CodeServer;
  browser: Browser;
  page: Page;
  timings: Record<string, number>; // seconds
  failed: boolean;
}

/** VS Code settings that keep the window plain: no welcome page, chat or minimap. */
const QUIET_UI = {
  'workbench.startupEditor': 'none',
  'workbench.secondarySideBar.defaultVisibility': 'hidden',
  'workbench.tips.enabled': false,
  'chat.disableAIFeatures': true,
  'editor.minimap.enabled': false,
  'telemetry.telemetryLevel': 'off',
  'extensions.autoCheckUpdates': false,
  'git.enabled': false,
};

/** Seconds since `started` (a performance.now() value). */
export function since(started: number): number {
  return Math.round((performance.now() - started) / 100) / 10;
}

/**
 * Set up the workspace (copies of `files`), code-server's user and machine settings, the
 * installed .vsix, code-server itself and the browser on the workspace.
 */
export async function open(options: {
  vsix: string;
  files: string[];
  userSettings: Record<string, unknown>;
  machineSettings: Record<string, unknown>;
  keybindings?: unknown[]; // the user's keybindings.json
  timeoutMs: number;
}): Promise<Session> {
  const root = mkdtempSync(path.join(os.tmpdir(), 'prewrite-vscode-e2e-'));
  const artifacts = process.env.PREWRITE_E2E_ARTIFACTS || path.join(root, 'artifacts');
  const workspace = path.join(root, 'workspace');
  mkdirSync(artifacts, { recursive: true });
  mkdirSync(workspace);
  for (const file of options.files) {
    copyFileSync(file, path.join(workspace, path.basename(file)));
  }
  codeServer.writeSettings(root, 'User', { ...QUIET_UI, ...options.userSettings });
  // On code-server the extension runs on its host: the server's path goes in machine settings.
  codeServer.writeSettings(root, 'Machine', options.machineSettings);
  writeFileSync(path.join(codeServer.folders(root).userDataDir, 'User', 'keybindings.json'), JSON.stringify(options.keybindings ?? []));
  const timings: Record<string, number> = {};
  let started = performance.now();
  codeServer.installExtension(root, options.vsix);
  timings.installVsix = since(started);
  started = performance.now();
  const server = await codeServer.start(root, options.timeoutMs);
  timings.codeServerStart = since(started);
  const browser = await launch(path.join(root, 'chromium')).catch(async (error) => {
    await codeServer.stop(server);
    throw error;
  });
  const session: Session = { root, workspace, artifacts, server, browser, page: await browser.newPage(), timings, failed: false };
  try {
    await check(session, 'open the workbench', async () => {
      await recordStatus(session.page);
      started = performance.now();
      await openFolder(session.page, server.url, workspace, options.timeoutMs);
      timings.workbenchOpen = since(started);
    });
  } catch (error) {
    await close(session);
    throw error;
  }
  return session;
}

/** Save a screenshot under the artifacts folder and return its path. */
export async function screenshot(session: Session, name: string): Promise<string> {
  const file = path.join(session.artifacts, `${name}.png`);
  await session.page.screenshot({ path: file });
  return file;
}

/**
 * Run one check; when it fails, keep a screenshot, the extension's log and code-server's
 * output in the artifacts folder and name that folder in the error.
 */
export async function check(session: Session, name: string, body: () => Promise<void>): Promise<void> {
  try {
    await body();
  } catch (error) {
    session.failed = true;
    const slug = name.replace(/\W+/g, '-').toLowerCase();
    await screenshot(session, `failed-${slug}`).catch(() => undefined); // the page may be gone
    keepLogs(session);
    const message = error instanceof Error ? error.message : String(error);
    throw Object.assign(new Error(`${message}\nscreenshot and logs in ${session.artifacts}`), { cause: error });
  }
}

function keepLogs(session: Session): void {
  for (const [index, log] of outputLogs(session.server.userDataDir).entries()) {
    copyFileSync(log, path.join(session.artifacts, `prewrite-output-${index + 1}.log`));
  }
  writeFileSync(path.join(session.artifacts, 'code-server.log'), session.server.output());
  cpSync(path.join(session.server.userDataDir, 'logs'), path.join(session.artifacts, 'vscode-logs'), { recursive: true });
}

/** Stop the browser and code-server (with the extension host and the prewrite server). */
export async function close(session: Session | undefined): Promise<void> {
  if (!session) {
    return;
  }
  writeFileSync(path.join(session.artifacts, 'timings.json'), `${JSON.stringify(session.timings, null, 2)}\n`);
  await session.browser.close().catch(() => undefined); // already gone when Chromium crashed
  await codeServer.stop(session.server);
  if (!session.failed) {
    rmSync(session.root, { recursive: true, force: true });
  }
}
