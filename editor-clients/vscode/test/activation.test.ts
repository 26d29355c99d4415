// The extension's own wiring, run in Node with a stand-in `vscode` module and the real server:
// activate starts `prewrite serve` as configured, the status bar follows the server, and the
// commands reach it (VS Code itself cannot be installed on these machines).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { installFakeVscode } from './fakeVscode';
import { serverPids } from './processes';
import type * as Extension from '../src/extension';
import { python, repoRoot, serverTestSkipReason } from './repo';

const MODEL_MS = 180_000;
const scenario = JSON.parse(readFileSync(path.join(repoRoot(), 'editor-clients', 'test-data', 'scenario.json'), 'utf8'));
const skip = serverTestSkipReason(scenario.settings.model);

async function until(condition: () => boolean, timeoutMs: number, what: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${condition.toString()}: ${what()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

test('activate starts the server; the status bar and commands follow it', { skip, timeout: 2 * MODEL_MS }, async (t) => {
  const fake = installFakeVscode();
  let extension: typeof Extension | undefined;
  t.after(() => extension?.deactivate());
  for (const [key, value] of Object.entries(scenario.settings)) {
    fake.settings[`prewrite.${key}`] = value;
  }
  fake.settings['prewrite.pythonPath'] = python();
  const packageJSON = JSON.parse(readFileSync(path.join(__dirname, '..', '..', 'package.json'), 'utf8'));
  // Loaded after the fake is installed, so its `vscode` is the fake.
  extension = require('../src/extension') as typeof Extension;
  const context = { subscriptions: [] as { dispose(): unknown }[], extension: { packageJSON } };
  const status = () => JSON.stringify(fake.statusBar.text) + ' ' + fake.messages.join(' | ');

  await extension.activate(context as never);
  assert.deepEqual(
    packageJSON.contributes.commands.map((command: { command: string }) => command.command).filter((id: string) => !fake.commands.has(id)),
    [],
    'every contributed command is registered',
  );
  await until(() => fake.statusBar.text.includes('prewrite'), 10_000, status);
  await until(() => fake.statusBar.text === '$(check) prewrite ready', MODEL_MS, status);
  assert.match(String(fake.statusBar.tooltip), /smollm2-135m/);

  // A Python file is opened and a docstring typed into it. The server drafts (draftPreview is on
  // in the scenario) and the extension asks VS Code to show each verified draft of the active
  // document; then the inline completion provider that the language client registered answers
  // through the extension's middleware, which times it for the status bar.
  const source = path.join(repoRoot(), 'editor-clients', 'test-data', scenario.file);
  let text = readFileSync(source, 'utf8');
  const document = { uri: fake.Uri.file(source), languageId: 'python', version: 1, getText: () => text };
  fake.activeTextEditor = { document };
  fake.textDocuments.push(document);
  fake.opened.fire(document);
  const type = (chunk: string) => {
    const lines = text.split('\n');
    const end = new fake.Position(lines.length - 1, lines[lines.length - 1].length);
    const change = { range: new fake.Range(end, end), rangeOffset: text.length, rangeLength: 0, text: chunk };
    text += chunk;
    document.version += 1;
    fake.changed.fire({ document, contentChanges: [change], reason: undefined });
  };
  (scenario.typed as string[]).forEach(type);
  await until(() => fake.executed.includes('editor.action.inlineSuggest.trigger'), MODEL_MS, () => `${status()} ${fake.executed}`);
  assert.equal(fake.inlineProviders.length, 1, 'the language client registered an inline completion provider');
  const languages = (fake.inlineSelectors[0] as { language: string; scheme: string }[]).map((s) => `${s.scheme}:${s.language}`);
  assert.deepEqual(languages.sort(), [
    'file:javascript', 'file:python', 'file:typescript', 'untitled:javascript', 'untitled:python', 'untitled:typescript',
  ]);
  const answer = await ask(fake.inlineProviders[0]);
  assert.match(answer.items[0].insertText, /^"""\n\s*\S/);
  assert.match(fake.statusBar.text, /^\$\(check\) prewrite \d+ ms$/, 'answered from the draft at once');
  assert.match(String(fake.statusBar.tooltip), new RegExp(`${answer.items[0].insertText.length} characters`));

  await fake.commands.get('prewrite.toggleCompletions')!();
  await until(() => fake.statusBar.text === '$(circle-slash) prewrite off', 10_000, status);
  await fake.commands.get('prewrite.toggleCompletions')!();
  await until(() => fake.statusBar.text.startsWith('$(check) prewrite'), 10_000, status);

  await fake.commands.get('prewrite.showStats')!();
  const stats = JSON.parse(fake.output.slice(fake.output.findIndex((line) => line.startsWith('prewrite stats')) + 1).join('\n').split('\nprewrite stats')[0]);
  assert.equal(stats.model, 'smollm2-135m');

  // The server dies (SIGKILL) while it drafts: the status bar says when it starts again, the same
  // client starts a new server and sends it the open document, and the new server answers for it.
  const [killed] = serverPids(process.pid);
  assert.ok(killed, 'a prewrite server runs under this process');
  let mark = fake.statusSeen.length;
  type(' Raise ValueError for equal points.');
  await until(() => fake.statusSeen.slice(mark).includes('$(sync~spin) prewrite drafting'), MODEL_MS, status);
  process.kill(killed, 'SIGKILL');
  const restarting = '$(debug-restart) prewrite restarting (crash 1 of 5, in 2 s)';
  await until(() => fake.statusSeen.slice(mark).includes(restarting), 10_000, status);
  mark = fake.statusSeen.indexOf(restarting, mark);
  await until(() => fake.statusSeen.slice(mark).some((text) => text.startsWith('$(check) prewrite')), MODEL_MS, status);
  const afterCrash = fake.statusSeen.slice(mark);
  const order = ['restarting', 'starting', 'loading', '$(check)'].map((word) => afterCrash.findIndex((text) => text.includes(word)));
  assert.deepEqual([...order].sort((a, b) => a - b), order, `restarting, starting, loading, ready: ${JSON.stringify(afterCrash)}`);
  assert.ok(!order.includes(-1), JSON.stringify(afterCrash));
  const [restarted] = serverPids(process.pid);
  assert.ok(restarted && restarted !== killed, `a new server: ${restarted}, not ${killed}`);
  assert.equal(fake.inlineProviders.length, 2, 'the restarted client registered its provider again');
  const again = await ask(fake.inlineProviders[1]);
  assert.match(again.items[0].insertText, /^"""\n\s*\S/, 'the new server has the document (didOpen was sent again)');
  assert.ok(!fake.messages.some((message) => /crashed/.test(message)), fake.messages.join(' | '));

  // prewrite.enable switches Python off: the status bar says so and why, and the provider does
  // not ask the server (which has an answer for this very text); switched on again, it answers.
  const setEnable = (value: unknown) => {
    fake.settings['prewrite.enable'] = value;
    fake.configurationChanged.fire({ affectsConfiguration: (s: string) => ['prewrite', 'prewrite.enable'].includes(s) });
  };
  setEnable({ '*': true, python: false });
  await until(() => fake.statusBar.text === '$(circle-slash) prewrite off for python', 10_000, status);
  assert.match(String(fake.statusBar.tooltip), /no suggestion: disabled for python \(prewrite\.enable\)/);
  assert.equal(await ask(fake.inlineProviders[1]), null, 'no answer for a language switched off');
  setEnable({ '*': true });
  await until(() => fake.statusBar.text.startsWith('$(check) prewrite'), 10_000, status);
  assert.match((await ask(fake.inlineProviders[1])).items[0].insertText, /^"""\n\s*\S/, 'switched on again, it answers');

  await extension.deactivate();
  await until(() => fake.statusBar.text === '$(debug-stop) prewrite stopped', 10_000, status);

  /** The provider's answer at the end of the document. */
  async function ask(provider: (typeof fake.inlineProviders)[number]): Promise<{ items: { insertText: string }[] }> {
    const lines = text.split('\n');
    const position = new fake.Position(lines.length - 1, lines[lines.length - 1].length);
    const cancel = { isCancellationRequested: false, onCancellationRequested: () => ({ dispose() {} }) };
    return (await provider.provideInlineCompletionItems(document, position, { triggerKind: 0 }, cancel)) as { items: { insertText: string }[] };
  }
});
