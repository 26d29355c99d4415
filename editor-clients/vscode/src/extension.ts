// Extension entry point: starts the prewrite server, wires status, commands and settings.

import * as vscode from 'vscode';
import {
  CloseAction,
  CloseHandlerResult,
  DidChangeConfigurationNotification,
  ErrorAction,
  ExecuteCommandRequest,
  LanguageClient,
  LanguageClientOptions,
  Middleware,
  ServerOptions,
  State,
  TransportKind,
} from 'vscode-languageclient/node';
import {
  DRAFT_NOTIFICATION,
  DraftParams,
  LANGUAGES,
  STATS_COMMAND,
  STATUS_NOTIFICATION,
  StatusParams,
  TOGGLE_COMMAND,
  insertTextOf,
} from './protocol';
import { CrashRecovery } from './restarts';
import {
  Contributed,
  Getter,
  SECTION,
  languageEnabled,
  launchChanged,
  serverKeys,
  serverLaunch,
  serverSettings,
  withDraftStatus,
} from './settings';
import { draftEvents, draftIsCurrent } from './status';
import { StatusBar } from './statusBar';

let client: LanguageClient | undefined;
let statusBar: StatusBar;
let output: vscode.LogOutputChannel;
let recovery: CrashRecovery | undefined;
let keys: string[];

const RESTART_COMMAND = 'prewrite.restartServer';

const getter: Getter = (key) => vscode.workspace.getConfiguration(SECTION).get(key);

/** Only what the user set (any scope): the server owns the defaults. */
const userGetter: Getter = (key) => {
  const values = vscode.workspace.getConfiguration(SECTION).inspect(key);
  return values?.workspaceFolderValue ?? values?.workspaceValue ?? values?.globalValue;
};

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const contributed: Contributed = context.extension.packageJSON.contributes.configuration.properties;
  keys = serverKeys(contributed);
  statusBar = new StatusBar({ toggle: 'prewrite.toggleCompletions', restart: RESTART_COMMAND });
  // One channel for every server of this window, so that its log and log level outlive restarts.
  output = vscode.window.createOutputChannel('prewrite', { log: true });
  // A crashed server is started again by the same client, which sends it the open documents.
  recovery = new CrashRecovery(() => void run(client!, serverLaunch(getter).command));
  context.subscriptions.push(
    statusBar,
    output,
    vscode.commands.registerCommand('prewrite.toggleCompletions', toggle),
    vscode.commands.registerCommand('prewrite.showStats', showStats),
    vscode.commands.registerCommand(RESTART_COMMAND, restart),
    vscode.workspace.onDidChangeConfiguration(onConfigurationChanged),
    vscode.window.onDidChangeActiveTextEditor(showEditor),
    vscode.workspace.onDidChangeTextDocument((event) => {
      // a save (auto save, say) changes the dirty state only: the text, its draft and its
      // examples' result stand
      if (event.document === vscode.window.activeTextEditor?.document && event.contentChanges.length > 0) {
        statusBar.update({ kind: 'edited' });
      }
    }),
  );
  showEditor();
  await start();
}

export async function deactivate(): Promise<void> {
  recovery?.reset();
  const stopping = client;
  client = undefined;
  if (stopping?.needsStop()) {
    await stopping.stop();
  }
}

async function start(): Promise<void> {
  const launch = serverLaunch(getter);
  const serverOptions: ServerOptions = { command: launch.command, args: launch.args, transport: TransportKind.stdio };
  const clientOptions: LanguageClientOptions = {
    documentSelector: LANGUAGES.flatMap((language) => [
      { scheme: 'file', language },
      { scheme: 'untitled', language },
    ]),
    // read at each start, so that a server restarted after a crash gets the settings of now
    initializationOptions: () => settingsToSend(),
    outputChannel: output,
    middleware: statusMiddleware(),
    errorHandler: {
      // as vscode-languageclient's own: a few broken messages are borne, more stop the server
      error: (_error, _message, count) => ({ action: count !== undefined && count <= 3 ? ErrorAction.Continue : ErrorAction.Shutdown }),
      closed: onClosed,
    },
  };
  client = new LanguageClient('prewrite', 'prewrite', serverOptions, clientOptions);
  client.onDidChangeState(({ newState }) => {
    if (newState === State.Stopped) {
      statusBar.update({ kind: 'stopped' });
    }
  });
  client.onNotification(DRAFT_NOTIFICATION, onDraft);
  client.onNotification(STATUS_NOTIFICATION, (params: StatusParams) => statusBar.update({ kind: 'server', ...params }));
  await run(client, launch.command);
}

/** The server settings the user set, plus the draft notifications the status bar follows. */
function settingsToSend(): Record<string, unknown> {
  return withDraftStatus(serverSettings(keys, userGetter), getter('draftStatus'));
}

/** Whether `prewrite.enable` leaves suggestions on for a language. */
function enabledFor(languageId: string): boolean {
  return languageEnabled(getter('enable'), languageId);
}

/** Tell the status bar the active editor's language and whether it is switched on. */
function showEditor(): void {
  const document = vscode.window.activeTextEditor?.document;
  const language = document?.languageId;
  const enabled = language === undefined || enabledFor(language);
  statusBar.update({ kind: 'editor', uri: document?.uri.toString(), language, enabled });
}

/** Start (or start again) a client's server and show how that went. */
async function run(starting: LanguageClient, command: string): Promise<void> {
  statusBar.update({ kind: 'starting' });
  try {
    await starting.start();
    statusBar.update({ kind: 'started' });
  } catch (error) {
    // (after a server that died while starting, the status bar keeps what onClosed said)
    statusBar.update({ kind: 'failed', message: `could not start ${command}: ${String(error)}` });
  }
}

/**
 * The server went away unasked (the client's own stops do not come here): start it again after a
 * pause, or give up after too many crashes. The client itself would restart at once, so it is
 * left stopped and the recovery's timer starts it; a restart or stop asked for in the pause then
 * finds nothing running and cancels the timer.
 */
function onClosed(): CloseHandlerResult {
  const decision = recovery!.crashed();
  if (decision.action === 'restart') {
    const { crash, limit, delayMs } = decision;
    statusBar.update({ kind: 'restarting', crash, limit, inMs: delayMs });
    const message = `The prewrite server stopped unexpectedly (crash ${crash} of ${limit}); it starts again in ${delayMs / 1000} s.`;
    return { action: CloseAction.DoNotRestart, message, handled: true };
  }
  const minutes = decision.windowMs / 60_000;
  const message =
    `The prewrite server crashed ${decision.crashes} times within ${minutes} minutes and is not started again: ` +
    `see the prewrite output channel; "prewrite: Restart server" starts it.`;
  statusBar.update({ kind: 'gaveUp', message });
  const again = 'Restart server';
  void vscode.window.showErrorMessage(message, again).then((choice) => (choice === again ? restart() : undefined));
  return { action: CloseAction.DoNotRestart, message, handled: true };
}

/** Feeds model-loading progress and completion latency into the status bar. */
function statusMiddleware(): Middleware {
  return {
    handleWorkDoneProgress: (token, params, next) => {
      statusBar.update({
        kind: 'progress',
        stage: params.kind,
        message: 'message' in params ? params.message : undefined,
        percentage: 'percentage' in params ? params.percentage : undefined,
      });
      next(token, params);
    },
    provideInlineCompletionItems: async (document, position, context, token, next) => {
      if (!enabledFor(document.languageId)) {
        return null; // switched off for this language: the server is not asked
      }
      const started = performance.now();
      const result = await next(document, position, context, token);
      const items = Array.isArray(result) ? result : (result?.items ?? []);
      if (items.length > 0) {
        const chars = insertTextOf(items[0]).length;
        statusBar.update({ kind: 'answered', ms: performance.now() - started, chars });
      } else {
        // no result at all: cancelled, or refused as stale; an empty list: nothing to write here
        statusBar.update({ kind: 'empty', reason: result ? 'noSpec' : 'stale' });
      }
      return result;
    },
  };
}

/**
 * A live draft (sent with prewrite.draftPreview or prewrite.draftStatus on): with draftStatus,
 * show drafting / draft ready; for the active editor's text as it is, its examples' result; with
 * draftPreview, once the draft is verified for that text, have VS Code ask for (and draw) the
 * suggestion.
 */
function onDraft(params: DraftParams): void {
  const document = vscode.window.activeTextEditor?.document;
  const active = document && { uri: document.uri.toString(), version: document.version };
  for (const event of draftEvents(params, active, getter('draftStatus') !== false)) {
    statusBar.update(event);
  }
  const current = document !== undefined && draftIsCurrent(params, active);
  if (params.status === 'verified' && current && getter('draftPreview') === true && enabledFor(document.languageId)) {
    void vscode.commands.executeCommand('editor.action.inlineSuggest.trigger');
  }
}

async function toggle(): Promise<void> {
  const result = await executeServerCommand(TOGGLE_COMMAND);
  if (result && typeof result === 'object' && 'enabled' in result) {
    statusBar.update({ kind: 'toggled', enabled: Boolean((result as { enabled: unknown }).enabled) });
  }
}

async function showStats(): Promise<void> {
  const stats = await executeServerCommand(STATS_COMMAND);
  if (stats !== undefined) {
    output.appendLine(`prewrite stats ${new Date().toISOString()}`);
    output.appendLine(JSON.stringify(stats, null, 2));
    output.show(true);
  }
}

async function executeServerCommand(command: string): Promise<unknown> {
  if (!client?.isRunning()) {
    void vscode.window.showWarningMessage('prewrite: the server is not running.');
    return undefined;
  }
  return client.sendRequest(ExecuteCommandRequest.type, { command, arguments: [] });
}

async function restart(): Promise<void> {
  await deactivate();
  await start();
}

async function onConfigurationChanged(event: vscode.ConfigurationChangeEvent): Promise<void> {
  if (!event.affectsConfiguration(SECTION)) {
    return;
  }
  if (event.affectsConfiguration(`${SECTION}.enable`)) {
    showEditor();
  }
  if (launchChanged((key) => event.affectsConfiguration(key))) {
    await restart();
  } else if (client?.isRunning()) {
    await client.sendNotification(DidChangeConfigurationNotification.type, {
      settings: { [SECTION]: settingsToSend() },
    });
  }
}
