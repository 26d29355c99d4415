// A stand-in for the `vscode` module, enough for the extension and vscode-languageclient to run
// in Node: real events, configuration and command registries; every other API is a recording
// no-op (an auto-stub), so the extension's wiring can be driven without VS Code.
import Module from 'node:module';

type Listener<T> = (value: T) => unknown;

class EventEmitter<T> {
  private listeners: Listener<T>[] = [];
  event = (listener: Listener<T>, thisArg?: unknown) => {
    const bound: Listener<T> = (value) => listener.call(thisArg, value);
    this.listeners.push(bound);
    return { dispose: () => (this.listeners = this.listeners.filter((l) => l !== bound)) };
  };
  fire(value: T): void {
    for (const listener of [...this.listeners]) {
      listener(value);
    }
  }
  dispose(): void {
    this.listeners = [];
  }
}

class Disposable {
  constructor(private readonly callback: () => void = () => undefined) {}
  static from(...items: { dispose(): unknown }[]): Disposable {
    return new Disposable(() => items.forEach((item) => item.dispose()));
  }
  dispose(): void {
    this.callback();
  }
}

class CancellationTokenSource {
  private readonly emitter = new EventEmitter<void>();
  token = { isCancellationRequested: false, onCancellationRequested: this.emitter.event };
  cancel(): void {
    this.token.isCancellationRequested = true;
    this.emitter.fire();
  }
  dispose(): void {}
}

class Uri {
  constructor(readonly scheme: string, readonly fsPath: string) {}
  static file(path: string): Uri {
    return new Uri('file', path);
  }
  static parse(value: string): Uri {
    return new Uri(value.split(':')[0], value.replace(/^file:\/\//, ''));
  }
  toString(): string {
    return `${this.scheme}://${this.fsPath}`;
  }
}

class Position {
  constructor(readonly line: number, readonly character: number) {}
}

class Range {
  readonly start: Position;
  readonly end: Position;
  constructor(a: Position | number, b: Position | number, c?: number, d?: number) {
    this.start = typeof a === 'number' ? new Position(a, b as number) : a;
    this.end = typeof a === 'number' ? new Position(c as number, d as number) : (b as Position);
  }
}

class SnippetString {
  constructor(readonly value: string) {}
}

class InlineCompletionItem {
  filterText?: string;
  constructor(readonly insertText: string | SnippetString, readonly range?: Range, readonly command?: unknown) {}
}

class InlineCompletionList {
  constructor(readonly items: InlineCompletionItem[]) {}
}

/** A text document as the language client reads it. */
export interface FakeDocument {
  uri: Uri;
  languageId: string;
  version: number;
  getText(): string;
}

/** Any API not written out: callable, constructible, and every property another stub. */
function autoStub(name: string): unknown {
  const target = function () {} as unknown as Record<string | symbol, unknown>;
  return new Proxy(target, {
    get: (_, key) => {
      if (key === 'then' || key === Symbol.toPrimitive || key === Symbol.iterator) {
        return undefined;
      }
      if (key === 'dispose') {
        return () => undefined;
      }
      return autoStub(`${name}.${String(key)}`);
    },
    apply: () => autoStub(`${name}()`),
    construct: () => autoStub(`new ${name}`) as object,
  });
}

export interface Fake {
  settings: Record<string, unknown>;
  commands: Map<string, (...args: unknown[]) => unknown>;
  executed: string[];
  statusBar: { text: string; tooltip: string };
  statusSeen: string[]; // every text the status bar item showed, in order
  output: string[];
  messages: string[];
  configurationChanged: EventEmitter<{ affectsConfiguration(section: string): boolean }>;
  opened: EventEmitter<FakeDocument>;
  changed: EventEmitter<{ document: FakeDocument; contentChanges: unknown[]; reason: undefined }>;
  activeTextEditor: { document: FakeDocument } | undefined;
  textDocuments: FakeDocument[]; // the open documents (a restarted client sends them to its server)
  Range: typeof Range;
  inlineProviders: { provideInlineCompletionItems(...args: unknown[]): Promise<unknown> }[];
  inlineSelectors: unknown[];
  Uri: typeof Uri;
  Position: typeof Position;
}

/** Install the fake as `vscode` for every later require; returns its recorders. */
export function installFakeVscode(): Fake {
  const fake: Fake = {
    settings: {},
    commands: new Map(),
    executed: [],
    statusBar: { text: '', tooltip: '' },
    statusSeen: [],
    output: [],
    messages: [],
    configurationChanged: new EventEmitter(),
    opened: new EventEmitter(),
    changed: new EventEmitter(),
    activeTextEditor: undefined,
    textDocuments: [],
    Range,
    inlineProviders: [],
    inlineSelectors: [],
    Uri,
    Position,
  };
  const configuration = (section?: string) => ({
    get: (key: string, fallback?: unknown) => fake.settings[section ? `${section}.${key}` : key] ?? fallback,
    inspect: (key: string) => ({ globalValue: fake.settings[section ? `${section}.${key}` : key] }),
    has: (key: string) => `${section}.${key}` in fake.settings,
    update: async () => undefined,
  });
  const outputChannel = () => ({
    name: 'prewrite',
    append: (text: string) => fake.output.push(text),
    appendLine: (text: string) => fake.output.push(text),
    replace: () => undefined,
    clear: () => undefined,
    show: () => undefined,
    hide: () => undefined,
    dispose: () => undefined,
    trace: (text: string) => fake.output.push(text),
    debug: (text: string) => fake.output.push(text),
    info: (text: string) => fake.output.push(text),
    warn: (text: string) => fake.output.push(text),
    error: (text: unknown) => fake.output.push(String(text)),
    logLevel: 2,
    onDidChangeLogLevel: new EventEmitter().event,
  });
  const show = async (message: string) => {
    fake.messages.push(message);
    return undefined;
  };
  const api: Record<string, unknown> = {
    version: '1.91.0',
    EventEmitter,
    Disposable,
    CancellationTokenSource,
    Uri,
    CancellationError: class CancellationError extends Error {},
    Position,
    Range,
    SnippetString,
    InlineCompletionItem,
    InlineCompletionList,
    InlineCompletionTriggerKind: { Invoke: 0, Automatic: 1 },
    languages: new Proxy(
      {
        match: (selector: { language?: string }[] | { language?: string }, document: FakeDocument) =>
          ([] as { language?: string }[]).concat(selector).some((item) => item.language === document.languageId) ? 10 : 0,
        registerInlineCompletionItemProvider: (selector: unknown, provider: Fake['inlineProviders'][number]) => {
          fake.inlineProviders.push(provider);
          fake.inlineSelectors.push(selector);
          return new Disposable();
        },
      } as Record<string, unknown>,
      { get: (target, key) => (key in target ? target[key as string] : autoStub(`languages.${String(key)}`)) },
    ),
    StatusBarAlignment: { Left: 1, Right: 2 },
    ThemeColor: class ThemeColor {
      constructor(readonly id: string) {}
    },
    LogLevel: { Off: 0, Trace: 1, Debug: 2, Info: 3, Warning: 4, Error: 5 },
    env: { appName: 'fake VS Code', language: 'en', openExternal: async () => true },
    commands: {
      registerCommand: (id: string, callback: (...args: unknown[]) => unknown) => {
        if (fake.commands.has(id)) {
          throw new Error(`command '${id}' already exists`);
        }
        fake.commands.set(id, callback);
        return new Disposable(() => fake.commands.delete(id));
      },
      executeCommand: async (id: string, ...args: unknown[]) => {
        fake.executed.push(id);
        return fake.commands.get(id)?.(...args);
      },
    },
    window: new Proxy(
      {
        createStatusBarItem: () => {
          let text = '';
          Object.defineProperty(fake.statusBar, 'text', {
            get: () => text,
            set: (value: string) => {
              text = value;
              fake.statusSeen.push(value);
            },
          });
          const item = fake.statusBar as Record<string, unknown>;
          return Object.assign(item, { show: () => undefined, hide: () => undefined, dispose: () => undefined });
        },
        createOutputChannel: outputChannel,
        showInformationMessage: show,
        showWarningMessage: show,
        showErrorMessage: show,
        get activeTextEditor() {
          return fake.activeTextEditor;
        },
        visibleTextEditors: [],
        onDidChangeVisibleTextEditors: new EventEmitter().event,
        onDidChangeActiveTextEditor: new EventEmitter().event,
        tabGroups: { all: [], onDidChangeTabs: new EventEmitter().event },
        withProgress: async (_options: unknown, task: (progress: unknown, token: unknown) => unknown) =>
          task({ report: () => undefined }, new CancellationTokenSource().token),
      } as Record<string | symbol, unknown>,
      { get: (target, key) => (key in target ? target[key] : autoStub(`window.${String(key)}`)) },
    ),
    workspace: new Proxy(
      {
        getConfiguration: configuration,
        onDidChangeConfiguration: fake.configurationChanged.event,
        workspaceFolders: undefined,
        get textDocuments() {
          return fake.textDocuments;
        },
        notebookDocuments: [],
        onDidOpenTextDocument: fake.opened.event,
        onDidCloseTextDocument: new EventEmitter().event,
        onDidChangeTextDocument: fake.changed.event,
        onDidSaveTextDocument: new EventEmitter().event,
        onWillSaveTextDocument: new EventEmitter().event,
        onDidChangeWorkspaceFolders: new EventEmitter().event,
      } as Record<string | symbol, unknown>,
      { get: (target, key) => (key in target ? target[key] : autoStub(`workspace.${String(key)}`)) },
    ),
  };
  const vscode = new Proxy(api, { get: (target, key) => (key in target ? target[key as string] : autoStub(String(key))) });
  const original = (Module as unknown as { _load: (...args: unknown[]) => unknown })._load;
  (Module as unknown as { _load: (...args: unknown[]) => unknown })._load = function (request: unknown, ...rest: unknown[]) {
    return request === 'vscode' ? vscode : original.call(this, request, ...rest);
  };
  return fake;
}
