// The packaged extension in real VS Code (code-server on loopback, headless Chromium): status bar,
// ghost text typed into real editors and accepted with Tab, toggle, a settings change, restart.
// Run by `make vscode-e2e`, which installs Node 24 and code-server into the per-user cache first.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, test } from 'node:test';
import type { Page } from 'puppeteer-core';
import { python, repoRoot, runPython, serverTestSkipReason } from '../test/repo';
import { CODE_SERVER, NODE, installed } from './cache';
import * as session from './session';
import { insertTextOf } from '../src/protocol';
import { InlineItem, applyAnswer, lastAnswer, lastDraft, offsetAt, readOutput } from './trace';
import * as wb from './workbench';

const MODEL_MS = 180_000; // loading and running smollm2-135m on two shared cores: a guard only
const UI_MS = 60_000;
const KEY_DELAY_MS = 40; // between keystrokes, as a fast typist
const root = repoRoot();
const testData = path.join(root, 'editor-clients', 'test-data');
const scenario = JSON.parse(readFileSync(path.join(testData, 'scenario.json'), 'utf8'));
const tsScenario = JSON.parse(readFileSync(path.join(testData, 'scenario-typescript.json'), 'utf8'));
const packageJson = JSON.parse(readFileSync(path.join(root, 'editor-clients', 'vscode', 'package.json'), 'utf8'));
const vsix = process.env.PREWRITE_VSIX || path.join(root, 'editor-clients', 'vscode', `prewrite-${packageJson.version}.vsix`);

let s: session.Session | undefined;
const skip = serverTestSkipReason(scenario.settings.model);

/** The user settings: the scenario's server settings and the JSON-RPC trace with params. */
function userSettings(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const settings = Object.fromEntries(Object.entries({ ...scenario.settings, ...overrides }).map(([key, value]) => [`prewrite.${key}`, value]));
  return { ...settings, 'prewrite.trace.server': 'verbose' };
}

before(async () => {
  if (skip) {
    return;
  }
  for (const tool of [NODE, CODE_SERVER]) {
    assert.ok(installed(tool), `${tool.name} ${tool.version} is not installed in ${tool.dir}: run \`make vscode-e2e\``);
  }
  assert.ok(existsSync(vsix), `no ${vsix}: run \`make vsix\``);
  assert.ok(existsSync(wb.CHROMIUM), `no Chromium at ${wb.CHROMIUM}: apt-get install chromium (or set PREWRITE_CHROMIUM)`);
  s = await session.open({
    vsix,
    files: [path.join(testData, scenario.file), path.join(testData, tsScenario.file)],
    userSettings: userSettings(),
    machineSettings: { 'prewrite.pythonPath': python() },
    timeoutMs: UI_MS,
  });
});

after(async () => {
  if (s) {
    console.log(`vscode e2e timings (s): ${JSON.stringify(s.timings)}`);
  }
  await session.close(s);
});

/** The session (set up by before()). */
function live(): session.Session {
  assert.ok(s, 'the session started');
  return s;
}

test('the extension activates on a Python file; the status bar goes from loading to ready', { skip, timeout: MODEL_MS }, async () => {
  const { page } = live();
  await session.check(live(), 'activate', async () => {
    const started = performance.now();
    await wb.openFile(page, scenario.file, UI_MS);
    const ready = await wb.waitForStatus(page, /^\$\(check\) prewrite ready$/, 0, MODEL_MS);
    live().timings.activateToReady = session.since(started);
    const seen = await wb.statusSeen(page);
    const loading = seen.findIndex((text) => /prewrite loading/.test(text));
    assert.ok(loading >= 0 && loading < seen.indexOf(ready), `loading, then ready: ${JSON.stringify(seen)}`);
    assert.match(await wb.statusLabel(page), new RegExp(`prewrite: ready \\(${scenario.settings.model}\\)`));
    // The JSON-RPC trace needs the channel at Trace (prewrite.trace.server alone logs nothing).
    await wb.setLogLevel(page, 'prewrite', 'Trace', UI_MS);
  });
});

/** The document's text and its URI, read from disk. */
function file(name: string): { path: string; uri: string; text: string } {
  const full = path.join(live().workspace, name);
  return { path: full, uri: pathToFileURL(full).href, text: readFileSync(full, 'utf8') };
}

/** Wait for the trace to hold the server's answer for the document as it stands. */
async function serverAnswer(uri: string): Promise<InlineItem> {
  const deadline = Date.now() + UI_MS;
  for (;;) {
    const item = lastAnswer(readOutput(live().server.userDataDir), uri);
    if (item) {
      return item;
    }
    assert.ok(Date.now() < deadline, `no inline completion answer for ${uri} in the prewrite output channel's trace`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/**
 * Ghost text appears by itself after typing; Tab accepts it, and the saved document is the
 * document before with the server's answer applied.
 */
async function typeWaitAccept(page: Page, name: string, keys: () => Promise<void>, typed: string, ghostMs = MODEL_MS): Promise<void> {
  const timings = live().timings;
  const before = file(name);
  await wb.chord(page, 'Control', 'End');
  await wb.waitForLanguageRules(page, UI_MS);
  let started = performance.now();
  await keys();
  timings[`${name}: typing`] = session.since(started);
  started = performance.now();
  await wb.waitForGhostText(page, ghostMs);
  timings[`${name}: last key to ghost text`] = session.since(started);
  await session.screenshot(live(), `ghost-${name}`);

  const typedText = await wb.saveAndRead(page, before.path, before.text, UI_MS);
  assert.ok(typedText.startsWith(before.text + typed), `typed as the scenario says: ${JSON.stringify(typedText.slice(before.text.length))}`);
  const item = await serverAnswer(before.uri);
  const expected = applyAnswer(typedText, item);
  const ghost = await wb.ghostText(page);
  assert.equal(squash(ghost), squash(shownPart(typedText, item)), 'the ghost text is the answer as VS Code draws it');

  await page.keyboard.press('Tab');
  const accepted = await wb.saveAndRead(page, before.path, typedText, UI_MS);
  assert.equal(accepted, expected, 'after Tab the document holds exactly the server\'s answer');
}

/** What VS Code draws of an answer: the insert text less what it restates of its range. */
function shownPart(text: string, item: InlineItem): string {
  const insert = insertTextOf(item);
  const replaced = text.slice(offsetAt(text, item.range.start), offsetAt(text, item.range.end));
  let common = 0;
  while (common < replaced.length && replaced[common] === insert[common]) {
    common += 1;
  }
  return insert.slice(common);
}

function squash(text: string): string {
  return text.replace(/\s+/g, '');
}

/** Type text key by key; after a newline VS Code indents by itself, so the line's indent is not typed. */
async function typeLikeAPerson(page: Page, text: string): Promise<void> {
  for (const line of text.split(/(?<=\n)/)) {
    await page.keyboard.type(line.replace(/^[ \t]+/, ''), { delay: KEY_DELAY_MS });
  }
}

test('Python: typed docstring, ghost text, Tab inserts exactly the server\'s answer; the status bar shows its latency', { skip, timeout: 2 * MODEL_MS }, async () => {
  const { page } = live();
  await session.check(live(), 'python', async () => {
    const typed = (scenario.typed as string[]).join('');
    const mark = (await wb.statusSeen(page)).length;
    await typeWaitAccept(page, scenario.file, () => typeLikeAPerson(page, typed), typed);
    const latency = await wb.waitForStatus(page, /^\$\(check\) prewrite \d+(\.\d)? m?s$/, mark, UI_MS);
    assert.match(await wb.statusLabel(page), /last completion: \d+(\.\d)? m?s, \d+ characters/, latency);
  });
});

/** A step of the TypeScript scenario: text typed, a key pressed, or a closing typed if missing. */
type Key = { type: string } | { press: Parameters<Page['keyboard']['press']>[0] } | { close: string; line: string };

test('TypeScript: a /** */ comment and the header, ghost text in the body, Tab inserts exactly the server\'s answer', { skip, timeout: 2 * MODEL_MS }, async (t) => {
  const { page } = live();
  const ts = file(tsScenario.file);
  await session.check(live(), 'typescript', async () => {
    await wb.openFile(page, tsScenario.file, UI_MS);
    const keys = async () => {
      for (const key of tsScenario.keys as Key[]) {
        if ('close' in key) {
          // VS Code may have auto-closed the comment already (its language rules): a person
          // types the closing only when it is not there
          if (!(await wb.hasLine(page, key.line))) {
            await page.keyboard.type(key.close, { delay: KEY_DELAY_MS });
          }
        } else if ('type' in key) {
          await page.keyboard.type(key.type, { delay: KEY_DELAY_MS });
        } else {
          await page.keyboard.press(key.press, { delay: KEY_DELAY_MS });
        }
      }
    };
    try {
      await typeWaitAccept(page, tsScenario.file, keys, tsScenario.typed, UI_MS);
    } catch (error) {
      // The tiny test model's answer here depends on the CPU's arithmetic (on an AVX-512
      // machine it writes no body): with an empty verified draft there is nothing to show.
      const draft = lastDraft(readOutput(live().server.userDataDir), ts.uri);
      if (draft?.status === 'verified' && draft.text === '') {
        t.todo('smollm2-135m wrote no body for this text on this CPU (its verified draft is empty)');
        return;
      }
      throw error;
    }
  }, true);
});

test('prewrite: Toggle completions switches the server off and on', { skip, timeout: UI_MS }, async () => {
  const { page } = live();
  await session.check(live(), 'toggle', async () => {
    let mark = (await wb.statusSeen(page)).length;
    await wb.runCommand(page, 'prewrite: Toggle completions', UI_MS);
    await wb.waitForStatus(page, /^\$\(circle-slash\) prewrite off$/, mark, UI_MS);
    assert.match(await wb.statusLabel(page), /prewrite: off/);
    mark = (await wb.statusSeen(page)).length;
    await wb.runCommand(page, 'prewrite: Toggle completions', UI_MS);
    await wb.waitForStatus(page, /^\$\(check\) prewrite /, mark, UI_MS);
  });
});

test('a settings change at run time reaches the server: another model loads', { skip, timeout: 2 * MODEL_MS }, async () => {
  const { page } = live();
  await session.check(live(), 'settings change', async () => {
    // The same weights under another name: the pack's folder (a local Hugging Face folder).
    const folder = runPython(`from inference import packs; print(packs.installed_path(${JSON.stringify(scenario.settings.model)}))`).trim();
    const mark = (await wb.statusSeen(page)).length;
    const started = performance.now();
    await wb.setStringSetting(page, path.join(live().server.userDataDir, 'User', 'settings.json'), 'prewrite.model', folder, UI_MS);
    await wb.waitForStatus(page, /prewrite loading/, mark, UI_MS);
    const ready = await wb.waitForStatus(page, /^\$\(check\) prewrite /, mark, MODEL_MS);
    live().timings.modelChangeToReady = session.since(started);
    const seen = await wb.statusSeen(page, mark);
    assert.ok(seen.findIndex((text) => /loading/.test(text)) < seen.indexOf(ready), JSON.stringify(seen));
    assert.ok((await wb.statusLabel(page)).includes(`(${folder})`), await wb.statusLabel(page));
    await wb.runCommand(page, 'prewrite: Show statistics', UI_MS);
    await waitForOutput(new RegExp(`"model": ${JSON.stringify(JSON.stringify(folder)).slice(1, -1)}`), 'prewrite.stats with the new model');
  });
});

test('prewrite: Restart server stops the server and starts a new one', { skip, timeout: 2 * MODEL_MS }, async () => {
  const { page } = live();
  await session.check(live(), 'restart', async () => {
    const mark = (await wb.statusSeen(page)).length;
    const started = performance.now();
    await wb.runCommand(page, 'prewrite: Restart server', UI_MS);
    const ready = await wb.waitForStatus(page, /^\$\(check\) prewrite /, mark, MODEL_MS);
    live().timings.restartToReady = session.since(started);
    const seen = await wb.statusSeen(page, mark);
    const stopped = seen.findIndex((text) => /prewrite stopped/.test(text));
    const loading = seen.findIndex((text) => /prewrite loading/.test(text));
    assert.ok(stopped >= 0 && stopped < loading && loading < seen.indexOf(ready), `stopped, loading, ready: ${JSON.stringify(seen)}`);
  });
});

/** Wait until the prewrite output channel holds a line matching `pattern`. */
async function waitForOutput(pattern: RegExp, what: string): Promise<void> {
  const deadline = Date.now() + UI_MS;
  while (!pattern.test(readOutput(live().server.userDataDir))) {
    assert.ok(Date.now() < deadline, `no ${what} in the prewrite output channel`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
