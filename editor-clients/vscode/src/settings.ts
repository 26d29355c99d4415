// Maps the extension's `prewrite.*` settings to the server's launch command and configuration.
// Pure: VS Code's configuration is passed in as a getter, so this is tested without VS Code.

/** One contributed setting, as package.json declares it (a JSON schema fragment). */
export interface SettingSchema {
  type?: string | string[];
  default?: unknown;
  enum?: unknown[];
  description?: string;
  markdownDescription?: string;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  items?: SettingSchema;
  scope?: string;
  order?: number;
}

export type Contributed = Record<string, SettingSchema>;
export type Getter = (key: string) => unknown;

export const SECTION = 'prewrite';

/** Settings that only the extension reads; every other `prewrite.*` setting goes to the server. */
export const CLIENT_ONLY_KEYS = ['pythonPath', 'serverCommand', 'serverArgs', 'trace.server', 'enable', 'draftStatus'] as const;

/** The server-side keys (camelCase, as on the wire) among the contributed settings. */
export function serverKeys(contributed: Contributed): string[] {
  const clientOnly = new Set<string>(CLIENT_ONLY_KEYS);
  return Object.keys(contributed)
    .filter((name) => name.startsWith(`${SECTION}.`))
    .map((name) => name.slice(SECTION.length + 1))
    .filter((key) => !clientOnly.has(key));
}

/**
 * The flat camelCase object sent as initializationOptions and under the `prewrite` section of
 * didChangeConfiguration. `get` returns what the user set; unset (null/undefined) values are
 * left out so the server's own defaults apply.
 */
export function serverSettings(keys: readonly string[], get: Getter): Record<string, unknown> {
  const settings: Record<string, unknown> = {};
  for (const key of keys) {
    const value = get(key);
    if (value !== undefined && value !== null) {
      settings[key] = value;
    }
  }
  return settings;
}

export interface Launch {
  command: string;
  args: string[];
}

/**
 * How to start the server: `<pythonPath> -m lsp_server.cli serve` when a Python is named (the
 * interpreter of a virtual environment with prewrite installed), else `<serverCommand> serve`.
 */
export function serverLaunch(get: Getter): Launch {
  const python = String(get('pythonPath') ?? '').trim();
  const extra = asStrings(get('serverArgs'));
  if (python) {
    return { command: python, args: ['-m', 'lsp_server.cli', 'serve', ...extra] };
  }
  const command = String(get('serverCommand') ?? '').trim() || 'prewrite';
  return { command, args: ['serve', ...extra] };
}

function asStrings(value: unknown): string[] {
  return Array.isArray(value) ? value.map((item) => String(item)) : [];
}

/**
 * Whether suggestions are on for a language under `prewrite.enable` (like Copilot's
 * `github.copilot.enable`): the language's own entry, else `"*"`, else on. A value that is not
 * an object of booleans counts as unset.
 */
export function languageEnabled(enable: unknown, languageId: string): boolean {
  if (typeof enable !== 'object' || enable === null || Array.isArray(enable)) {
    return true;
  }
  const table = enable as Record<string, unknown>;
  for (const key of [languageId, '*']) {
    if (typeof table[key] === 'boolean') {
      return table[key] as boolean;
    }
  }
  return true;
}

/**
 * The server settings to send: the user's, with `draftPreview` on when the status bar follows
 * the drafts (`prewrite.draftStatus`) and the user left it unset, so that the server sends them.
 */
export function withDraftStatus(settings: Record<string, unknown>, draftStatus: unknown): Record<string, unknown> {
  if (draftStatus !== false && settings.draftPreview === undefined) {
    return { ...settings, draftPreview: true };
  }
  return settings;
}

/** True when a configuration change needs the server restarted (its launch changed). */
export function launchChanged(affects: (key: string) => boolean): boolean {
  return ['pythonPath', 'serverCommand', 'serverArgs'].some((key) => affects(`${SECTION}.${key}`));
}
