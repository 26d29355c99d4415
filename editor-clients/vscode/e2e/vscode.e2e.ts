// The packaged extension in real VS Code (code-server on loopback, headless Chromium): status bar,
// ghost text typed into real editors and accepted with Tab or a word and a line at a time,
// suggestions switched off for one language, toggle, a settings change, restart, a TypeScript
// function written by the code model that must compile, and a crashed server.
// Run by `make vscode-e2e`, which installs Node 24 and code-server into the per-user cache first.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, test } from 'node:test';
import type { ElementHandle, Page } from 'puppeteer-core';
import { serverPids } from '../test/processes';
import { python, repoRoot, runPython, serverTestSkipReason } from '../test/repo';
import { CODE_SERVER, NODE, installed } from './cache';
import { evaluate, typeErrors } from './compiled';
import * as session from './session';
import { insertTextOf } from '../src/protocol';
import { InlineItem, applyAnswer, lastAnswer, offsetAt, readOutput, requestsFor, sentFor } from './trace';
import * as wb from './workbench';

const MODEL_MS = 180_000; // loading and running a model on two shared cores: a guard only
const UI_MS = 60_000;
const KEY_DELAY_MS = 40; // between keystrokes, as a fast typist
const root = repoRoot();
const testData = path.join(root, 'editor-clients', 'test-data');
const scenario = JSON.parse(readFileSync(path.join(testData, 'scenario.json'), 'utf8'));
const tsScenario = JSON.parse(readFileSync(path.join(testData, 'scenario-typescript.json'), 'utf8'));
const packageJson = JSON.parse(readFileSync(path.join(root, 'editor-clients', 'vscode', 'package.json'), 'utf8'));
const vsix = process.env.PREWRITE_VSIX || path.join(root, 'editor-clients', 'vscode', `prewrite-${packageJson.version}.vsix`);

/** A sentence added to the doc comment of a function with a body: the offer adds the check. */
const RESPEC = {
  file: 'largest.ts',
  sentence: ' Throws a RangeError when xs is empty.',
  title: 'prewrite: update the body to the comment',
  call: 'largest([3, 1, 2])',
  gives: 3,
};

/**
 * A docstring typed into a file of its own below its imports (key by key; VS Code indents), then
 * a `>>>` example added to it, which the server runs against its draft.
 */
const EXAMPLES = {
  file: 'triangle.py',
  docstring: 'def hypotenuse(a, b):\n"""Return the length of the hypotenuse of a right triangle with legs a and b.',
  example: '\n\n>>> hypotenuse(3, 4)\n5.0',
};
/** How the server says that it runs no examples here (its status message, its log). */
const NO_EXAMPLES = /examples not checked: ([^\n;]+)/;

/** The README's key for Accept Next Line, which VS Code binds to none. */
const ACCEPT_LINE_KEY = { key: 'ctrl+alt+right', command: 'editor.action.inlineSuggest.acceptNextLine', when: 'inlineSuggestionVisible && !editorReadonly' };

/**
 * VS Code's word for Accept Next Word (its default wordDefinition, which Python's language
 * configuration keeps).
 */
const WORD = /(-?\d*\.\d\w*)|([^`~!@#$%^&*()\-=+[{\]}\\|;:'",.<>/?\s]+)/;

/** `prewrite.enable` with Python switched off, as a user writes it in settings.json. */
const PYTHON_OFF = { '*': true, python: false };

let s: session.Session | undefined;
/** geometry.py as the Python test typed it, before Tab: the later Python tests go back to it. */
let typedPython: string | undefined;
let sessionName = 'python';
const skip = serverTestSkipReason(scenario.settings.model);
const tsSkip = skip ?? serverTestSkipReason(tsScenario.settings.model);

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
  s = await openSession();
});

after(closeSession);

/**
 * A new window on copies of the scenario files, with the Python scenario's settings and `overrides`
 * (prewrite's), and `editor`'s VS Code settings.
 */
function openSession(overrides: Record<string, unknown> = {}, editor: Record<string, unknown> = {}): Promise<session.Session> {
  return session.open({
    vsix,
    files: [scenario.file, tsScenario.file, RESPEC.file, EXAMPLES.file].map((name) => path.join(testData, name)),
    userSettings: { ...userSettings(overrides), ...editor },
    machineSettings: { 'prewrite.pythonPath': python() },
    keybindings: [ACCEPT_LINE_KEY],
    timeoutMs: UI_MS,
  });
}

/** Print the session's timings and close it. */
async function closeSession(): Promise<void> {
  const closing = s;
  s = undefined;
  if (closing) {
    console.log(`vscode e2e timings (s), ${sessionName} session: ${JSON.stringify(closing.timings)}`);
  }
  await session.close(closing);
}

/** The session (set up by before()). */
function live(): session.Session {
  assert.ok(s, 'the session started');
  return s;
}

test('the extension activates on a Python file; the status bar goes from loading to ready', { skip, timeout: MODEL_MS }, async () => {
  await session.check(live(), 'activate', () => activate(scenario.file, scenario.settings.model));
});

/**
 * Open a file of a new window's workspace: the extension activates and the status bar goes from
 * loading to ready on `model`. Then the output channel goes to log level Trace, as the JSON-RPC
 * trace needs (prewrite.trace.server alone logs nothing).
 */
async function activate(name: string, model: string): Promise<void> {
  const { page } = live();
  const started = performance.now();
  await wb.openFile(page, name, UI_MS);
  const ready = await wb.waitForStatus(page, /^\$\(check\) prewrite ready$/, 0, MODEL_MS);
  live().timings.activateToReady = session.since(started);
  const seen = await wb.statusSeen(page);
  const loading = seen.findIndex((text) => /prewrite loading/.test(text));
  assert.ok(loading >= 0 && loading < seen.indexOf(ready), `loading, then ready: ${JSON.stringify(seen)}`);
  assert.ok((await wb.statusLabel(page)).includes(`prewrite: ready (${model})`), await wb.statusLabel(page));
  await wb.setLogLevel(page, 'prewrite', 'Trace', UI_MS);
}

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
 * document before with the server's answer applied. Returns the document as typed, before Tab.
 */
async function typeWaitAccept(
  page: Page, name: string, keys: () => Promise<void>, typed: string, ghostMs = MODEL_MS, label = name,
): Promise<string> {
  const timings = live().timings;
  const before = file(name);
  await wb.chord(page, 'Control', 'End');
  await wb.waitForLanguageRules(page, UI_MS);
  let started = performance.now();
  await keys();
  timings[`${label}: typing`] = session.since(started);
  started = performance.now();
  await wb.waitForGhostText(page, ghostMs);
  timings[`${label}: last key to ghost text`] = session.since(started);
  await session.screenshot(live(), `ghost-${label}`);

  const typedText = await wb.saveAndRead(page, before.path, before.text, UI_MS);
  assert.ok(typedText.startsWith(before.text + typed), `typed as the scenario says: ${JSON.stringify(typedText.slice(before.text.length))}`);
  const item = await serverAnswer(before.uri);
  const expected = applyAnswer(typedText, item);
  const ghost = await wb.ghostText(page);
  assert.equal(squash(ghost), squash(shownPart(typedText, item)), 'the ghost text is the answer as VS Code draws it');

  await page.keyboard.press('Tab');
  const accepted = await wb.saveAndRead(page, before.path, typedText, UI_MS);
  assert.equal(accepted, expected, 'after Tab the document holds exactly the server\'s answer');
  return typedText;
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
    typedPython = await typeWaitAccept(page, scenario.file, () => typeLikeAPerson(page, typed), typed);
    const latency = await wb.waitForStatus(page, /^\$\(check\) prewrite \d+(\.\d)? m?s$/, mark, UI_MS);
    assert.match(await wb.statusLabel(page), /last completion: \d+(\.\d)? m?s, \d+ characters/, latency);
  });
});

test('prewrite.enable {"*": true, "python": false} set at run time: no suggestion in the Python file and the status bar says why, while the TypeScript file is still asked; then set back', { skip, timeout: 2 * MODEL_MS }, async () => {
  const { page } = live();
  await session.check(live(), 'enable by language', async () => {
    const py = file(scenario.file);
    const ts = file(tsScenario.file);
    const settingsFile = path.join(live().server.userDataDir, 'User', 'settings.json');
    const original = readFileSync(settingsFile, 'utf8');
    const asked = (uri: string) => requestsFor(readOutput(live().server.userDataDir), 'textDocument/inlineCompletion', uri);
    const written = await wb.editUserSettingsJson(page, settingsFile, async () => {
      // a line below the opening brace, in one input event: typed key by key, the settings
      // completions that open on the way would take ':' and ',' as commit characters
      await wb.chord(page, 'Control', 'Home');
      await page.keyboard.press('End');
      await page.keyboard.press('Enter');
      await page.keyboard.sendCharacter(`"prewrite.enable": ${JSON.stringify(PYTHON_OFF)},`);
    }, UI_MS);
    assert.deepEqual(JSON.parse(written)['prewrite.enable'], PYTHON_OFF, written);

    await wb.openFile(page, scenario.file, UI_MS);
    const off = await wb.waitForStatusNow(page, /^\$\(circle-slash\) prewrite off for python$/, UI_MS);
    assert.match(await wb.statusLabel(page), /no suggestion: disabled for python \(prewrite\.enable\)/, off);
    // back to the docstring as typed, where the server has an answer: Ctrl+Z takes back the Tab
    const pyAsked = asked(py.uri).length;
    await wb.chord(page, 'Control', 'KeyZ');
    assert.equal(await wb.saveAndRead(page, py.path, py.text, UI_MS), typedPython, 'Ctrl+Z gave back the docstring as typed');
    await wb.runCommand(page, 'Trigger Inline Suggestion', UI_MS);
    assert.equal(await wb.ghostText(page), '', 'no ghost text in the Python file');

    // TypeScript is still on: its trigger reaches the server and is answered (an answer for the
    // file as it is, with no spec in it: what it says does not matter here)
    await wb.openFile(page, tsScenario.file, UI_MS);
    await wb.waitForStatusNow(page, /^\$\([\w~-]+\) prewrite (?!off)/, UI_MS);
    const tsAsked = asked(ts.uri).length;
    await wb.runCommand(page, 'Trigger Inline Suggestion', UI_MS);
    await until(() => asked(ts.uri).slice(tsAsked).some((request) => request.answered), MODEL_MS, 'an answered inline completion request for geometry.ts');
    // the Python trigger came first, so its request would be in the trace by now
    assert.equal(asked(py.uri).length, pyAsked, 'no inline completion request for geometry.py while Python is off');

    const restored = await wb.editUserSettingsJson(page, settingsFile, async () => {
      await wb.chord(page, 'Control', 'Home');
      await page.keyboard.press('ArrowDown');
      await wb.chord(page, 'Shift', 'ArrowDown');
      await page.keyboard.press('Backspace');
    }, UI_MS);
    assert.equal(restored, original, 'the line taken out again');
    await wb.openFile(page, scenario.file, UI_MS);
    await wb.waitForStatusNow(page, /^\$\([\w~-]+\) prewrite (?!off)/, UI_MS);
  });
});

test('Accept Next Word (Ctrl+Right) and Accept Next Line (the README\'s Ctrl+Alt+Right) insert the ghost text\'s next word, then the rest of its line; the rest stays shown', { skip, timeout: 2 * MODEL_MS }, async () => {
  const { page } = live();
  await session.check(live(), 'accept word and line', async () => {
    const py = file(scenario.file);
    assert.equal(py.text, typedPython, 'the docstring as typed (the test before took the body back)');
    await wb.runCommand(page, 'Trigger Inline Suggestion', UI_MS);
    await wb.waitForGhostText(page, MODEL_MS);
    const item = await serverAnswer(py.uri);
    // VS Code draws an answer that restates what its range replaces as the rest, inserted there
    const end = offsetAt(py.text, item.range.end);
    const replaced = py.text.slice(offsetAt(py.text, item.range.start), end);
    assert.ok(insertTextOf(item).startsWith(replaced), `the answer adds to the text it replaces: ${JSON.stringify(item)}`);
    const shown = insertTextOf(item).slice(replaced.length);
    assert.equal(squash(await wb.ghostText(page)), squash(shown), 'the ghost text is the answer as VS Code draws it');
    const withFirst = (chars: number) => py.text.slice(0, end) + shown.slice(0, chars) + py.text.slice(end);

    // a word at a time until the answer's first word is in (what comes before it goes first)
    const word = WORD.exec(shown);
    assert.ok(word, `a word in the answer: ${JSON.stringify(shown)}`);
    let accepted = 0;
    let text = py.text;
    while (accepted < word.index + word[0].length) {
      accepted += nextWord(shown.slice(accepted));
      text = await acceptNext(page, ['Control', 'ArrowRight'], py.path, text, withFirst(accepted), shown.slice(accepted));
    }
    assert.ok(accepted < shown.length, `the answer goes on after its first word: ${JSON.stringify(shown)}`);
    accepted += nextLine(shown.slice(accepted));
    text = await acceptNext(page, ['Control', 'Alt', 'ArrowRight'], py.path, text, withFirst(accepted), shown.slice(accepted));
    if (accepted < shown.length) {
      await page.keyboard.press('Tab');
      text = await wb.saveAndRead(page, py.path, text, UI_MS);
    }
    assert.equal(text, applyAnswer(py.text, item), 'words, a line and Tab leave the document with the whole answer');
  });
});

/** How much of `rest` Accept Next Word takes: VS Code's rule (a word, or what comes before one, at most one run of blanks). */
function nextWord(rest: string): number {
  const word = WORD.exec(rest);
  let end = !word ? rest.length : word.index === 0 ? word[0].length : word.index;
  const blank = /\s+/.exec(rest);
  if (blank && blank.index + blank[0].length < end) {
    end = blank.index + blank[0].length;
  }
  return end;
}

/** How much of `rest` Accept Next Line takes: up to and with the first line break, else all. */
function nextLine(rest: string): number {
  const lineBreak = rest.indexOf('\n');
  return lineBreak >= 0 ? lineBreak + 1 : rest.length;
}

/** Press `keys`: the saved document must be `expected` and the ghost text the `rest` of the answer. Returns the document. */
async function acceptNext(page: Page, keys: Parameters<Page['keyboard']['press']>[0][], filePath: string, before: string, expected: string, rest: string): Promise<string> {
  await wb.chord(page, ...keys);
  const text = await wb.saveAndRead(page, filePath, before, UI_MS);
  assert.equal(text, expected, `${keys.join('+')}: the document with the answer's next part`);
  await until(async () => squash(await wb.ghostText(page)) === squash(rest), UI_MS, `the rest of the answer as ghost text: ${JSON.stringify(rest)}`);
  return text;
}

/** Poll `condition` every 100 ms until it holds; fail with `what` after `timeoutMs`. */
async function until(condition: () => boolean | Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    assert.ok(Date.now() < deadline, `no ${what} within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

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

/** A step of the TypeScript scenario: text typed, a key pressed, or a closing typed if missing. */
type Key = { type: string } | { press: Parameters<Page['keyboard']['press']>[0] } | { close: string; line: string };

/** Press the scenario's keys. */
async function typeKeys(page: Page, keys: Key[]): Promise<void> {
  for (const key of keys) {
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
}

/**
 * The saved file is the expected code, not only the server's text: TypeScript's compiler finds
 * no error, its braces balance, `name` is closed by one brace, and `call` gives `gives`.
 */
function checkCompiled(name: string, fn: string, call: string, gives: unknown): void {
  const ts = file(name);
  assert.deepEqual(typeErrors(ts.path), [], `${name} compiles:\n${ts.text}`);
  assert.equal(ts.text.split('{').length, ts.text.split('}').length, `balanced braces:\n${ts.text}`);
  const closing = ts.text.slice(ts.text.indexOf(`export function ${fn}(`)).split('\n').filter((line) => line.trim() === '}');
  assert.equal(closing.length, 1, `one closing brace for ${fn}:\n${ts.text}`);
  assert.deepEqual(evaluate(ts.text, call), gives, `${call} in the compiled file`);
}

test('TypeScript on the code model: a /** */ comment and the header, ghost text in the body; after Tab the file compiles and the function works', { skip: tsSkip, timeout: 3 * MODEL_MS }, async () => {
  // A new window whose user settings are the code model's: the Settings editor changes one text
  // field well (the settings change test), but these are several, two of them lists, and an
  // edit of settings.json from outside went unnoticed by code-server on a busy machine.
  await closeSession();
  sessionName = 'typescript';
  s = await openSession(tsScenario.settings);
  const { page } = live();
  await session.check(live(), 'typescript', async () => {
    await activate(tsScenario.file, tsScenario.settings.model);
    await typeWaitAccept(page, tsScenario.file, () => typeKeys(page, tsScenario.keys), tsScenario.typed);
    checkCompiled(tsScenario.file, tsScenario.function, tsScenario.call, tsScenario.gives);
  });
});

test('the server killed (SIGKILL) while it drafts starts again: the status bar says so, the open document is sent again, a trigger is answered', { skip: tsSkip, timeout: 3 * MODEL_MS }, async () => {
  const { page } = live();
  const crash = tsScenario.crash;
  await session.check(live(), 'crash', async () => {
    const timings = live().timings;
    const ts = file(tsScenario.file);
    const opened = () => sentFor(readOutput(live().server.userDataDir), 'textDocument/didOpen', ts.uri);
    const opensBefore = opened();
    const [killed] = serverPids(live().server.process.pid!);
    assert.ok(killed, 'a prewrite server runs under code-server');
    await wb.chord(page, 'Control', 'End');
    await page.keyboard.press('Enter'); // below the function accepted before: an empty line
    const keys = async () => {
      // The kill comes as soon as the server drafts, while the keys go on as a person's would.
      const mark = (await wb.statusSeen(page)).length;
      let crashed = 0;
      const kill = wb.waitForStatus(page, /prewrite drafting/, mark, MODEL_MS).then(() => {
        process.kill(killed, 'SIGKILL');
        crashed = performance.now();
      });
      await typeKeys(page, crash.keys);
      await kill;
      const restarting = await wb.waitForStatus(page, /^\$\(debug-restart\) prewrite restarting \(crash 1 of 5, in 2 s\)$/, mark, UI_MS);
      const from = mark + (await wb.statusSeen(page, mark)).indexOf(restarting);
      await wb.waitForStatus(page, /^\$\(check\) prewrite /, from, MODEL_MS);
      timings['crash: SIGKILL to ready'] = session.since(crashed);
      const seen = await wb.statusSeen(page, from);
      const order = [/restarting/, /prewrite starting/, /prewrite loading/, /^\$\(check\)/].map((re) => seen.findIndex((t) => re.test(t)));
      assert.ok(!order.includes(-1) && order.every((at, i) => i === 0 || at > order[i - 1]), `restarting, starting, loading, ready: ${JSON.stringify(seen)}`);
      const [restarted] = serverPids(live().server.process.pid!);
      assert.ok(restarted && restarted !== killed, `a new server (${restarted}), not the killed one (${killed})`);
      assert.equal(opened(), opensBefore + 1, 'the restarted client sent the open document again (didOpen in the trace)');
      // (VS Code 1.139 binds no key to it: Alt+\ of older versions is gone)
      await wb.runCommand(page, 'Trigger Inline Suggestion', UI_MS);
    };
    await typeWaitAccept(page, tsScenario.file, keys, `\n${crash.typed}`, MODEL_MS, 'crash');
    checkCompiled(tsScenario.file, crash.function, crash.call, crash.gives);
  });
});

test('a changed doc comment of a function with a body: the light bulb offers prewrite\'s action, which adds the check and keeps the other lines', { skip: tsSkip, timeout: 3 * MODEL_MS }, async () => {
  const { page } = live();
  await session.check(live(), 'respec', async () => {
    const before = file(RESPEC.file);
    await wb.openFile(page, RESPEC.file, UI_MS);
    await wb.chord(page, 'Control', 'Home');
    await page.keyboard.press('End');
    for (let i = 0; i < ' */'.length; i += 1) {
      await page.keyboard.press('ArrowLeft');
    }
    const started = performance.now();
    await page.keyboard.type(RESPEC.sentence, { delay: KEY_DELAY_MS });
    // the Hint on the first line that changes, and the light bulb on the cursor's line (the
    // function's first): VS Code asked for code actions there
    await page.waitForSelector('.editor-instance .monaco-editor .squiggly-hint', { timeout: MODEL_MS });
    // (VS Code 1.139 draws it in the gutter: codicon-gutter-lightbulb-auto-fix for a preferred fix)
    await page.waitForSelector('.editor-instance [class*="lightbulb"]', { visible: true, timeout: UI_MS });
    await session.screenshot(live(), 'respec-light-bulb');
    live().timings['respec: last key to light bulb'] = session.since(started);
    await wb.chord(page, 'Control', 'Period');
    const row = await page.waitForFunction(
      (title) => [...document.querySelectorAll('.action-widget .monaco-list-row')].find((el) => (el.textContent ?? '').includes(title)),
      { timeout: UI_MS, polling: 100 },
      RESPEC.title,
    );
    await session.screenshot(live(), 'respec-code-action');
    await (row.asElement() as ElementHandle<Element>).click();
    const text = await wb.saveAndRead(page, before.path, before.text.replace('xs. */', `xs.${RESPEC.sentence} */`), UI_MS);
    const updated = file(RESPEC.file);
    assert.deepEqual(typeErrors(updated.path), [], `${RESPEC.file} compiles:\n${text}`);
    assert.match(text, /throw new RangeError/, text);
    const person = before.text.split('\n').slice(1).filter((line) => line.trim());
    const lines = text.split('\n');
    let at = 0;
    for (const line of lines) {
      at += at < person.length && line === person[at] ? 1 : 0;
    }
    assert.equal(at, person.length, `every line of the body is kept, in order:\n${text}`);
    assert.deepEqual(evaluate(text, RESPEC.call), RESPEC.gives, `${RESPEC.call} in the compiled file`);
    await page.waitForFunction(() => !document.querySelector('.editor-instance .monaco-editor .squiggly-hint'), { timeout: UI_MS, polling: 100 });
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

test('a docstring, then a >>> example, where VS Code does not ask by itself: the status bar reads draft ready, then the example\'s result against the draft', { skip, timeout: 2 * MODEL_MS }, async (t) => {
  // Where VS Code asks as you type, its request waits for the draft and is answered the moment
  // the draft is verified: the status bar goes on to the answer's latency at once. Here nothing
  // asks (VS Code's automatic suggestions off, and prewrite.draftPreview unset, so that the
  // extension turns on the server's drafts for the status bar but asks nothing when one is ready).
  await closeSession();
  sessionName = 'examples';
  s = await openSession({ draftPreview: undefined }, { 'editor.inlineSuggest.enabled': false });
  const { page } = live();
  let noSandbox: string | undefined;
  await session.check(live(), 'examples', async () => {
    const timings = live().timings;
    await activate(EXAMPLES.file, scenario.settings.model);
    await wb.chord(page, 'Control', 'End');
    await wb.waitForLanguageRules(page, UI_MS);
    await typeLikeAPerson(page, EXAMPLES.docstring);
    let started = performance.now();
    const ready = await screenshotOfStatus(page, /^\$\(check\) prewrite draft ready$/, 'draft-ready', MODEL_MS);
    timings['examples: last key to draft ready'] = session.since(started);
    assert.match(await wb.statusLabel(page), /the draft is ready for the text as it is/, ready);

    await typeLikeAPerson(page, EXAMPLES.example);
    started = performance.now();
    noSandbox = await examplesOrWhyNot(page);
    if (noSandbox !== undefined) {
      return;
    }
    timings['examples: last key to the result'] = session.since(started);
    // a save changes the document's dirty state, not its text: the result stands
    await wb.chord(page, 'Control', 'KeyS');
    await page.waitForFunction(() => !document.querySelector('.tab.active')?.classList.contains('dirty'), { timeout: UI_MS, polling: 100 });
    await new Promise((resolve) => setTimeout(resolve, 500));
    assert.match(await wb.statusText(page), /· examples \d+\/\d+/, 'a save took the examples\' result away');
    // the body the example ran against, as ghost text: answered from the verified draft
    await wb.runCommand(page, 'Trigger Inline Suggestion', UI_MS);
    await wb.waitForGhostText(page, UI_MS);
    const shown = await screenshotOfStatus(page, /^\$\(check\) prewrite .* · examples \d+\/\d+/, 'examples-badge', UI_MS);
    assert.match(await wb.statusLabel(page), /examples: \d+ of \d+ passed/, shown);
    console.log(`vscode e2e examples: ${JSON.stringify({ status: shown, ghost: await wb.ghostText(page) })}`);
  });
  if (noSandbox !== undefined) {
    t.skip(`the examples' result: the server runs no examples here (${noSandbox})`);
  }
});

/**
 * Wait until the status bar shows `pattern` and keep a screenshot that shows it: taken again when
 * the status changed while it was taken (an edit of a late keystroke, say). Returns the text.
 */
async function screenshotOfStatus(page: Page, pattern: RegExp, name: string, timeoutMs: number): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const text = await wb.waitForStatusNow(page, pattern, Math.max(deadline - Date.now(), 1));
    await session.screenshot(live(), name);
    const now = await wb.statusText(page);
    if (now === text) {
      return text;
    }
    console.log(`${name}: the status bar went from ${JSON.stringify(text)} to ${JSON.stringify(now)} during the screenshot`);
  }
}

/**
 * Wait until the status bar shows the result of the examples for the text as it is, or the server
 * says that it runs no examples here (no working bubblewrap sandbox): then return its reason,
 * from the status bar's tooltip (prewrite/status's message) or the output channel (its log).
 */
async function examplesOrWhyNot(page: Page): Promise<string | undefined> {
  const deadline = Date.now() + MODEL_MS;
  for (;;) {
    if (/· examples \d+\/\d+/.test(await wb.statusText(page))) {
      return undefined;
    }
    const why = NO_EXAMPLES.exec(await wb.statusLabel(page)) ?? NO_EXAMPLES.exec(readOutput(live().server.userDataDir));
    if (why) {
      return why[1];
    }
    assert.ok(Date.now() < deadline, `no examples' result in the status bar: ${JSON.stringify(await wb.statusSeen(page))}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
