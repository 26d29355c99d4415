// VS Code's workbench in headless Chromium, driven as a person would: keys, the command
// palette, and what the screen shows (status bar, ghost text), read from the DOM.
import { readFileSync } from 'node:fs';
import puppeteer, { Browser, Page } from 'puppeteer-core';

/** Debian's Chromium (never a downloaded browser); $PREWRITE_CHROMIUM overrides. */
export const CHROMIUM = process.env.PREWRITE_CHROMIUM || '/usr/bin/chromium';

export async function launch(profileDir: string): Promise<Browser> {
  return puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    userDataDir: profileDir,
    defaultViewport: { width: 1200, height: 720 },
    args: [
      '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync',
    ],
  });
}

declare global {
  interface Window {
    prewriteStatus: string[];
    prewriteStatusText: () => string;
  }
}

/**
 * Record every text the prewrite status bar item shows, in order (an observer in the page, so
 * that a state shown for a moment is seen too). Call before the page loads.
 */
export async function recordStatus(page: Page): Promise<void> {
  await page.evaluateOnNewDocument(() => {
    window.prewriteStatus = [];
    window.prewriteStatusText = () => {
      const item = [...document.querySelectorAll('.statusbar-item')].find((el) => /\bprewrite\b/.test(el.textContent ?? ''));
      const icon = item?.querySelector('.codicon')?.className.match(/codicon-([\w-]+)/)?.[1];
      return item ? `${icon ? `$(${icon}) ` : ''}${(item.textContent ?? '').trim()}` : '';
    };
    const look = () => {
      const text = window.prewriteStatusText();
      if (text && text !== window.prewriteStatus[window.prewriteStatus.length - 1]) {
        window.prewriteStatus.push(text);
      }
    };
    new MutationObserver(look).observe(document, { subtree: true, childList: true, characterData: true, attributes: true });
  });
}

/** The status texts seen since `from` (an index into the record). */
export async function statusSeen(page: Page, from = 0): Promise<string[]> {
  return (await page.evaluate(() => window.prewriteStatus)).slice(from);
}

/** Wait until the status bar shows a text that matches `pattern`, seen at index `from` or later. */
export async function waitForStatus(page: Page, pattern: RegExp, from: number, timeoutMs: number): Promise<string> {
  await page.waitForFunction(
    (source, flags, start) => window.prewriteStatus.slice(start).some((text) => new RegExp(source, flags).test(text)),
    { timeout: timeoutMs, polling: 100 },
    pattern.source, pattern.flags, from,
  );
  return (await statusSeen(page, from)).find((text) => pattern.test(text))!;
}

/** The text the prewrite status bar item shows now, as the record writes it ('' when none). */
export async function statusText(page: Page): Promise<string> {
  return page.evaluate(() => window.prewriteStatusText());
}

/**
 * Wait until the status bar shows, at this moment, a text that matches `pattern`, checked at
 * each change of the page. Returns the text.
 */
export async function waitForStatusNow(page: Page, pattern: RegExp, timeoutMs: number): Promise<string> {
  const shown = await page.waitForFunction(
    (source, flags) => {
      const text = window.prewriteStatusText();
      return new RegExp(source, flags).test(text) && text;
    },
    { timeout: timeoutMs, polling: 'mutation' },
    pattern.source, pattern.flags,
  );
  return (await shown.jsonValue()) as string;
}

/** Open the workbench on a folder and wait for it to be drawn. */
export async function openFolder(page: Page, url: string, folder: string, timeoutMs: number): Promise<void> {
  await page.goto(`${url}/?folder=${encodeURIComponent(folder)}`, { waitUntil: 'domcontentloaded', timeout: timeoutMs });
  await page.waitForSelector('.monaco-workbench .part.statusbar', { timeout: timeoutMs });
  await page.waitForSelector('.explorer-folders-view .monaco-list-row', { timeout: timeoutMs });
}

/**
 * Type into the quick input (already open) and accept the entry `label` once listed: the arrow
 * keys move the list's focus onto it and Enter accepts it once it has the focus (a recently used
 * command can come before it, and the list may be filtered again under the keys, so it is checked,
 * never assumed). With `closes`, done when the quick input has closed, else when its input is
 * empty again (a next list follows). An Enter that did not take (the list changed under it) is
 * pressed again after a while.
 */
async function pick(page: Page, text: string, label: string, timeoutMs: number, closes = true): Promise<void> {
  await page.waitForSelector('.quick-input-widget input', { visible: true, timeout: timeoutMs });
  await page.keyboard.type(text);
  const deadline = Date.now() + timeoutMs;
  let accepted = 0; // when Enter was last pressed on the entry
  for (;;) {
    const state = await page.evaluate((wanted) => {
      const widget = document.querySelector<HTMLElement>('.quick-input-widget');
      const rows = [...document.querySelectorAll<HTMLElement>('.quick-input-list .monaco-list-row')];
      const name = (el: Element) => el.querySelector('.label-name')?.textContent?.replace(/\s+/g, ' ').trim();
      const row = rows.find((el) => name(el) === wanted);
      const focused = rows.find((el) => el.classList.contains('focused'));
      return {
        open: !!widget && widget.offsetParent !== null && getComputedStyle(widget).display !== 'none',
        value: document.querySelector<HTMLInputElement>('.quick-input-widget input')?.value ?? '',
        wanted: row ? Number(row.dataset.index) : -1,
        focused: focused ? Number(focused.dataset.index) : -1,
      };
    }, label);
    if (closes ? !state.open : state.value === '') {
      return;
    }
    if (Date.now() > deadline) {
      throw new Error(`quick input: "${label}" not accepted within ${timeoutMs} ms (${JSON.stringify(state)})`);
    }
    if (state.wanted >= 0 && Date.now() - accepted > 3000) {
      if (state.focused === state.wanted) {
        await page.keyboard.press('Enter');
        accepted = Date.now();
      } else {
        await page.keyboard.press(state.focused < state.wanted ? 'ArrowDown' : 'ArrowUp');
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Open a workspace file with Quick Open (Ctrl+P) and wait for its editor to have focus. */
export async function openFile(page: Page, name: string, timeoutMs: number): Promise<void> {
  await page.keyboard.down('Control');
  await page.keyboard.press('KeyP');
  await page.keyboard.up('Control');
  await pick(page, name, name, timeoutMs);
  await page.waitForFunction(
    (wanted) =>
      document.querySelector('.tab.active')?.getAttribute('aria-label')?.startsWith(wanted) &&
      document.activeElement?.closest('.editor-instance .monaco-editor') !== null,
    { timeout: timeoutMs, polling: 100 },
    name,
  );
}

/** Run a command by its palette title (F1), e.g. 'prewrite: Restart server'. */
export async function runCommand(page: Page, title: string, timeoutMs: number): Promise<void> {
  await page.keyboard.press('F1');
  await pick(page, title, title, timeoutMs);
}

/** Press a key with modifiers, e.g. chord(page, 'Control', 'KeyS'). */
export async function chord(page: Page, ...keys: Parameters<Page['keyboard']['press']>[0][]): Promise<void> {
  const key = keys.pop()!;
  for (const modifier of keys) {
    await page.keyboard.down(modifier);
  }
  await page.keyboard.press(key);
  for (const modifier of keys.reverse()) {
    await page.keyboard.up(modifier);
  }
}

/**
 * Save the active editor (Ctrl+S) and return the file once it differs from `before` on disk and
 * reads the same twice in a row (VS Code truncates the file, then writes it).
 */
export async function saveAndRead(page: Page, file: string, before: string, timeoutMs: number): Promise<string> {
  await chord(page, 'Control', 'KeyS');
  const deadline = Date.now() + timeoutMs;
  let last: string | undefined;
  for (;;) {
    const text = readFileSync(file, 'utf8');
    if (text !== before && text === last) {
      return text;
    }
    if (Date.now() > deadline) {
      throw new Error(`${file} was not saved within ${timeoutMs} ms`);
    }
    last = text;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/**
 * The ghost text in the active editor as drawn: the part inline after the cursor
 * (.ghost-text-decoration), then each line below it (.ghost-text spans in a view zone), '' if none.
 */
export async function ghostText(page: Page): Promise<string> {
  return page.evaluate(() => {
    const editor = document.querySelector('.editor-instance .monaco-editor');
    if (!editor) {
      return '';
    }
    const text = (els: Element[]) => els.map((el) => el.textContent ?? '').join('').replace(/\u00a0/g, ' ');
    const inline = text([...editor.querySelectorAll('.ghost-text-decoration')]);
    const lines = new Map<Element, Element[]>();
    for (const span of editor.querySelectorAll('.ghost-text')) {
      const line = span.closest('.view-line') ?? span;
      lines.set(line, [...(lines.get(line) ?? []), span]);
    }
    return [inline, ...[...lines.values()].map(text)].join('\n');
  });
}

/**
 * Wait until the active editor applies its language's rules: VS Code loads a language's
 * configuration (brackets that close themselves, comment continuation) some time after the
 * file opens, and keys typed before then get none of it. Types `(` on the cursor's (empty)
 * line until `)` follows by itself, then deletes the pair.
 */
export async function waitForLanguageRules(page: Page, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    await page.keyboard.type('(');
    const closed = await hasLine(page, '()');
    await page.keyboard.press('Backspace'); // between an auto-closed pair it deletes both
    if (closed) {
      return;
    }
    if (performance.now() > deadline) {
      throw new Error(`the editor applied no language rules within ${timeoutMs} ms`);
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

/** True when a line of the active editor reads `text` (leading and trailing blanks aside). */
export async function hasLine(page: Page, text: string): Promise<boolean> {
  return page.evaluate(
    (wanted) =>
      [...document.querySelectorAll('.editor-instance .monaco-editor .view-line')].some(
        (line) => (line.textContent ?? '').replace(/\u00a0/g, ' ').trim() === wanted,
      ),
    text,
  );
}

/** Wait until ghost text is drawn in the active editor and return it. */
export async function waitForGhostText(page: Page, timeoutMs: number): Promise<string> {
  await page.waitForFunction(
    () => document.querySelector('.editor-instance .monaco-editor .ghost-text-decoration, .editor-instance .monaco-editor .ghost-text'),
    { timeout: timeoutMs, polling: 50 },
  );
  return ghostText(page);
}

/** The prewrite status bar item's accessible label: its text, then its tooltip's lines. */
export async function statusLabel(page: Page): Promise<string> {
  return page.evaluate(() => {
    const item = [...document.querySelectorAll('.statusbar-item')].find((el) => /\bprewrite\b/.test(el.textContent ?? ''));
    return item?.getAttribute('aria-label') ?? '';
  });
}

/** Set an output channel's log level (Developer: Set Log Level...), e.g. 'prewrite', 'Trace'. */
export async function setLogLevel(page: Page, channel: string, level: string, timeoutMs: number): Promise<void> {
  await page.keyboard.press('F1');
  await pick(page, 'Developer: Set Log Level', 'Developer: Set Log Level...', timeoutMs, false);
  await pick(page, channel, channel, timeoutMs, false);
  await pick(page, level, level, timeoutMs);
}

/**
 * Change a string setting in the Settings editor (user scope) as a person would, wait until VS
 * Code has written it to `settingsFile` (it writes after a pause), and close the editor.
 */
export async function setStringSetting(page: Page, settingsFile: string, key: string, value: string, timeoutMs: number): Promise<void> {
  await runCommand(page, 'Preferences: Open User Settings', timeoutMs);
  await page.waitForSelector('.settings-editor .search-container', { visible: true, timeout: timeoutMs });
  await page.keyboard.type(key); // into the search box, which has the focus
  const input = `.settings-editor .setting-item-control input[aria-label="${key}"]`;
  await page.waitForSelector(input, { visible: true, timeout: timeoutMs });
  await page.click(input);
  await chord(page, 'Control', 'KeyA');
  await page.keyboard.type(value);
  await page.keyboard.press('Tab');
  const written = `${JSON.stringify(key)}: ${JSON.stringify(value)}`;
  const deadline = Date.now() + timeoutMs;
  while (!readFileSync(settingsFile, 'utf8').includes(written)) {
    if (Date.now() > deadline) {
      throw new Error(`${written} not in ${settingsFile} within ${timeoutMs} ms`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await chord(page, 'Control', 'KeyW');
}

/**
 * Edit the user settings in settings.json as a person would (Preferences: Open User Settings
 * (JSON)): `keys` are pressed in its editor, which is then saved and closed. Returns the file once
 * VS Code has written it (it must change).
 */
export async function editUserSettingsJson(page: Page, settingsFile: string, keys: () => Promise<void>, timeoutMs: number): Promise<string> {
  const before = readFileSync(settingsFile, 'utf8');
  await runCommand(page, 'Preferences: Open User Settings (JSON)', timeoutMs);
  // VS Code 1.139 opens it in a modal editor (workbench.editor.useModal), titled with its name
  await page.waitForFunction(
    () =>
      document.activeElement?.closest('.monaco-editor') &&
      (document.querySelector('.modal-editor-title')?.textContent ?? document.querySelector('.tab.active')?.getAttribute('aria-label') ?? '').includes('settings.json'),
    { timeout: timeoutMs, polling: 100 },
  );
  await keys();
  const text = await saveAndRead(page, settingsFile, before, timeoutMs);
  await chord(page, 'Control', 'KeyW');
  await page.waitForSelector('.modal-editor-part', { hidden: true, timeout: timeoutMs });
  return text;
}
