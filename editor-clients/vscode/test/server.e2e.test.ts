// The real Python server driven over stdio with vscode-languageserver-protocol, launched and
// initialized exactly as the extension does (serverLaunch, serverSettings), typing a docstring
// and asking for an inline completion.
import assert from 'node:assert/strict';
import { ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, test } from 'node:test';
import {
  DidChangeTextDocumentNotification,
  DidOpenTextDocumentNotification,
  ExecuteCommandRequest,
  InitializeRequest,
  InitializedNotification,
  InlineCompletionList,
  InlineCompletionRequest,
  InlineCompletionTriggerKind,
  ProtocolConnection,
  ShutdownRequest,
  ExitNotification,
  WorkDoneProgressCreateRequest,
  createProtocolConnection,
} from 'vscode-languageserver-protocol/node';
import { StreamMessageReader, StreamMessageWriter } from 'vscode-jsonrpc/node';
import {
  DRAFT_NOTIFICATION,
  DraftParams,
  STATS_COMMAND,
  STATUS_NOTIFICATION,
  StatusParams,
  TOGGLE_COMMAND,
  insertTextOf,
} from '../src/protocol';
import { Contributed, serverKeys, serverLaunch, serverSettings } from '../src/settings';
import { python, repoRoot, serverTestSkipReason } from './repo';
import { vscodeCapabilities } from './vscodeCapabilities';

const MODEL_MS = 180_000; // loading and running smollm2-135m on two shared cores
const root = repoRoot();
const testData = path.join(root, 'editor-clients', 'test-data');
const scenario = JSON.parse(readFileSync(path.join(testData, 'scenario.json'), 'utf8'));
const packageJson = JSON.parse(readFileSync(path.join(__dirname, '..', '..', 'package.json'), 'utf8'));

/** Resolves with the first notification of `method` whose params satisfy `accept`. */
function next<T>(events: Events, method: string, accept: (params: T) => boolean, timeoutMs: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no ${method} within ${timeoutMs} ms; seen: ${JSON.stringify(events.seen.slice(-5))}`)), timeoutMs);
    events.waiters.push({
      method,
      accept: (params) => {
        if (!accept(params as T)) {
          return false;
        }
        clearTimeout(timer);
        resolve(params as T);
        return true;
      },
    });
  });
}

interface Events {
  seen: { method: string; params: unknown }[];
  waiters: { method: string; accept: (params: unknown) => boolean }[];
}

let server: ChildProcess | undefined;
let connection: ProtocolConnection;
const events: Events = { seen: [], waiters: [] };
const skip = serverTestSkipReason(scenario.settings.model);
let stderr = '';
let answered: { item: InlineCompletionList['items'][number]; cursor: { line: number; character: number }; uri: string } | undefined;

before(() => {
  if (skip) {
    return;
  }
  const settings: Record<string, unknown> = { ...scenario.settings, pythonPath: python() };
  const launch = serverLaunch((key) => settings[key]);
  server = spawn(launch.command, launch.args, {
    cwd: root,
    env: { ...process.env, HF_HUB_OFFLINE: '1', TOKENIZERS_PARALLELISM: 'false' },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  server.stderr!.on('data', (chunk) => {
    stderr = (stderr + chunk).slice(-4000);
  });
  connection = createProtocolConnection(new StreamMessageReader(server.stdout!), new StreamMessageWriter(server.stdin!));
  connection.onRequest(WorkDoneProgressCreateRequest.type, () => undefined);
  const record = (method: string) => (params: unknown) => {
    events.seen.push({ method, params });
    events.waiters = events.waiters.filter((waiter) => waiter.method !== method || !waiter.accept(params));
  };
  for (const method of [DRAFT_NOTIFICATION, STATUS_NOTIFICATION, 'window/showMessage', 'window/logMessage']) {
    connection.onNotification(method, record(method));
  }
  connection.onNotification('$/progress', record('$/progress'));
  connection.listen();
});

after(async () => {
  if (server && server.exitCode === null) {
    await connection.sendRequest(ShutdownRequest.type).catch(() => undefined);
    await connection.sendNotification(ExitNotification.type).catch(() => undefined);
    const exited = new Promise((resolve) => server!.once('exit', resolve));
    const timer = setTimeout(() => server!.kill(), 10_000);
    await exited;
    clearTimeout(timer);
  }
  connection?.dispose();
});

test('the real server answers a typed docstring with a body', { skip, timeout: 3 * MODEL_MS }, async () => {
  const contributed: Contributed = packageJson.contributes.configuration.properties;
  // What the extension sends for a user who set these settings (only set values are sent).
  const initializationOptions = serverSettings(serverKeys(contributed), (key) => scenario.settings[key]);
  assert.deepEqual(initializationOptions, scenario.settings);

  const ready = next<StatusParams>(events, STATUS_NOTIFICATION, (params) => params.state !== 'loading', MODEL_MS);
  const { capabilities, clientInfo } = vscodeCapabilities();
  const init = await connection.sendRequest(InitializeRequest.type, {
    processId: process.pid,
    rootUri: pathToFileURL(testData).href,
    capabilities,
    initializationOptions,
    clientInfo,
  });
  assert.ok(init.capabilities.inlineCompletionProvider, 'the server offers inline completion');
  await connection.sendNotification(InitializedNotification.type, {});
  const status = await ready;
  assert.equal(status.state, 'ready', `model did not load: ${status.message}\n${stderr}`);
  assert.equal(status.model, scenario.settings.model);

  const uri = pathToFileURL(path.join(testData, scenario.file)).href;
  let text = readFileSync(path.join(testData, scenario.file), 'utf8');
  let version = 1;
  await connection.sendNotification(DidOpenTextDocumentNotification.type, {
    textDocument: { uri, languageId: 'python', version, text },
  });
  // Keystroke by keystroke, as VS Code sends incremental changes.
  for (const char of (scenario.typed as string[]).join('')) {
    const lines = text.split('\n');
    const at = { line: lines.length - 1, character: lines[lines.length - 1].length };
    text += char;
    version += 1;
    await connection.sendNotification(DidChangeTextDocumentNotification.type, {
      textDocument: { uri, version },
      contentChanges: [{ range: { start: at, end: at }, text: char }],
    });
  }
  const draft = await next<DraftParams>(events, DRAFT_NOTIFICATION, (params) => params.version === version && params.status === 'verified', MODEL_MS);

  const lines = text.split('\n');
  const cursor = { line: lines.length - 1, character: lines[lines.length - 1].length };
  const answer = (await connection.sendRequest(InlineCompletionRequest.type, {
    textDocument: { uri },
    position: cursor,
    context: { triggerKind: InlineCompletionTriggerKind.Invoked },
  })) as InlineCompletionList;
  assert.equal(answer.items.length, 1, JSON.stringify(answer));
  const item = answer.items[0];
  const inserted = insertTextOf(item);
  assert.match(inserted, /^"""\n\s*\S/, `closes the docstring, then a non-empty body: ${JSON.stringify(inserted)}`);
  assert.equal(inserted, draft.text, 'the answer is the verified draft');
  answered = { item, cursor, uri };

  const stats = (await connection.sendRequest(ExecuteCommandRequest.type, { command: STATS_COMMAND, arguments: [] })) as {
    documents: { uri: string; residualForwards: number }[];
  };
  const doc = stats.documents.find((entry) => entry.uri === uri);
  assert.equal(doc?.residualForwards, 0, `answered from the draft, no residual forwards: ${JSON.stringify(stats)}`);
});

// Typing at the very end of a document that does not end with a newline (a new file, or VS Code
// without files.insertFinalNewline) is common: pygls alone maps that offset to (last line + 1, 0),
// so the server converts it itself.
test('the answer replaces from the cursor, inside the document', { skip }, () => {
  assert.ok(answered, 'the first test answered');
  assert.deepEqual(answered.item.range?.start, answered.cursor);
});

test('prewrite.toggle switches answers off and on', { skip }, async () => {
  assert.ok(answered, 'the first test answered');
  const toggle = (value: boolean) =>
    connection.sendRequest(ExecuteCommandRequest.type, { command: TOGGLE_COMMAND, arguments: [value] });
  const ask = () =>
    connection.sendRequest(InlineCompletionRequest.type, {
      textDocument: { uri: answered!.uri },
      position: answered!.cursor,
      context: { triggerKind: InlineCompletionTriggerKind.Invoked },
    }) as Promise<InlineCompletionList>;
  const disabled = next<StatusParams>(events, STATUS_NOTIFICATION, (params) => params.state === 'disabled', 10_000);
  assert.deepEqual(await toggle(false), { enabled: false });
  await disabled;
  assert.deepEqual((await ask()).items, []);
  assert.deepEqual(await toggle(true), { enabled: true });
  assert.equal((await ask()).items.length, 1);
});
