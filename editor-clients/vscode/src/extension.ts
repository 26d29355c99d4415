// Extension entry point: starts the prewrite server, wires status, commands and settings.

import * as vscode from 'vscode';
import {
  DidChangeConfigurationNotification,
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
import { Contributed, Getter, SECTION, launchChanged, serverKeys, serverLaunch, serverSettings } from './settings';
import { StatusBar } from './statusBar';

let client: LanguageClient | undefined;
let statusBar: StatusBar;
let keys: string[];

const getter: Getter = (key) => vscode.workspace.getConfiguration(SECTION).get(key);

/** Only what the user set (any scope): the server owns the defaults. */
const userGetter: Getter = (key) => {
  const values = vscode.workspace.getConfiguration(SECTION).inspect(key);
  return values?.workspaceFolderValue ?? values?.workspaceValue ?? values?.globalValue;
};

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const contributed: Contributed = context.extension.packageJSON.contributes.configuration.properties;
  keys = serverKeys(contributed);
  statusBar = new StatusBar('prewrite.toggleCompletions');
  context.subscriptions.push(
    statusBar,
    vscode.commands.registerCommand('prewrite.toggleCompletions', toggle),
    vscode.commands.registerCommand('prewrite.showStats', showStats),
    vscode.commands.registerCommand('prewrite.restartServer', restart),
    vscode.workspace.onDidChangeConfiguration(onConfigurationChanged),
  );
  await start();
}

export async function deactivate(): Promise<void> {
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
    initializationOptions: serverSettings(keys, userGetter),
    outputChannelName: 'prewrite',
    middleware: statusMiddleware(),
  };
  client = new LanguageClient('prewrite', 'prewrite', serverOptions, clientOptions);
  client.onDidChangeState(({ newState }) => {
    if (newState === State.Stopped) {
      statusBar.update({ kind: 'stopped' });
    }
  });
  client.onNotification(DRAFT_NOTIFICATION, onDraft);
  client.onNotification(STATUS_NOTIFICATION, (params: StatusParams) => statusBar.update({ kind: 'server', ...params }));
  try {
    await client.start();
    statusBar.update({ kind: 'started' });
  } catch (error) {
    statusBar.update({ kind: 'failed', message: `could not start ${launch.command}: ${String(error)}` });
  }
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
      const started = performance.now();
      const result = await next(document, position, context, token);
      const items = Array.isArray(result) ? result : (result?.items ?? []);
      if (items.length > 0) {
        const chars = insertTextOf(items[0]).length;
        statusBar.update({ kind: 'answered', ms: performance.now() - started, chars });
      }
      return result;
    },
  };
}

/**
 * A live draft (sent only with prewrite.draftPreview on): show drafting/ready, and once the draft
 * is verified for the text in the active editor, have VS Code ask for (and draw) the suggestion.
 */
function onDraft(params: DraftParams): void {
  statusBar.update({ kind: 'draft', status: params.status });
  const document = vscode.window.activeTextEditor?.document;
  if (params.status === 'verified' && document?.uri.toString() === params.uri && document.version === params.version) {
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
  if (stats !== undefined && client) {
    client.outputChannel.appendLine(`prewrite stats ${new Date().toISOString()}`);
    client.outputChannel.appendLine(JSON.stringify(stats, null, 2));
    client.outputChannel.show(true);
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
  if (launchChanged((key) => event.affectsConfiguration(key))) {
    await restart();
  } else if (client?.isRunning()) {
    await client.sendNotification(DidChangeConfigurationNotification.type, {
      settings: { [SECTION]: serverSettings(keys, userGetter) },
    });
  }
}
