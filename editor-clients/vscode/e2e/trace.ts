// The extension's output channel as VS Code writes it to disk. At log level Trace (and with
// prewrite.trace.server 'verbose') it holds the JSON-RPC messages: the server's exact answers.
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { insertTextOf } from '../src/protocol';

export interface Range {
  start: { line: number; character: number };
  end: { line: number; character: number };
}

export interface InlineItem {
  insertText: string | { value: string };
  range: Range; // prewrite's answers always have one
}

interface Message {
  header: string; // e.g. "Received response 'textDocument/inlineCompletion - (12)' in 35ms."
  body: unknown; // the JSON after "Params: " or "Result: ", when there is one
}

/** The log files of the 'prewrite' output channel under code-server's user data folder
 * (logs/<session>/exthost1/prewrite.prewrite/prewrite.log). */
export function outputLogs(userDataDir: string): string[] {
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) {
        walk(full);
      } else if (entry.name === 'prewrite.log') {
        found.push(full);
      }
    }
  };
  const logs = path.join(userDataDir, 'logs');
  if (existsSync(logs)) {
    walk(logs);
  }
  return found.sort();
}

/** All of the channel's text (one file per window session). */
export function readOutput(userDataDir: string): string {
  return outputLogs(userDataDir)
    .map((file) => readFileSync(file, 'utf8'))
    .join('\n');
}

/** The traced messages in order (each entry starts "2026-12-01 15:28:01.002 [trace] "). */
export function messages(log: string): Message[] {
  return log
    .split(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+ \[\w+\] /m)
    .filter((chunk) => /^(Sending|Received) /.test(chunk))
    .map((chunk) => {
      const [header, ...rest] = chunk.split('\n');
      return { header, body: parseBody(rest.join('\n').replace(/^(Params|Result): /, '').trim()) };
    });
}

/** A message's JSON; undefined when there is none, or the entry is still being written. */
function parseBody(json: string): unknown {
  if (!json.startsWith('{') && !json.startsWith('[')) {
    return undefined;
  }
  try {
    return JSON.parse(json);
  } catch (error) {
    if (error instanceof SyntaxError) {
      return undefined;
    }
    throw error;
  }
}

/**
 * The server's answer to the last inline completion request for `uri` sent after its last
 * edit (so for the document as it stands), once that answer is in the log; else undefined.
 */
export function lastAnswer(log: string, uri: string): InlineItem | undefined {
  const traced = messages(log);
  const lastEdit = traced.findLastIndex((m) => m.header.startsWith("Sending notification 'textDocument/didChange'") && isFor(m.body, uri));
  // Newest first
  for (let index = traced.length - 1; index > lastEdit; index -= 1) {
    const request = traced[index];
    if (!request.header.startsWith("Sending request 'textDocument/inlineCompletion") || !isFor(request.body, uri)) {
      continue;
    }
    const items = (responseTo(traced, index)?.body as { items?: InlineItem[] } | undefined)?.items;
    if (items && items.length > 0) {
      return items[0];
    }
  }
  return undefined;
}

/** Whether a message's params name the document `uri`. */
function isFor(body: unknown, uri: string): boolean {
  return (body as { textDocument?: { uri?: string } })?.textDocument?.uri === uri;
}

/**
 * The response to the request traced at `index`, once it is in the log. Ids start again with a
 * restarted client, so the response is looked for after its request.
 */
function responseTo(traced: Message[], index: number): Message | undefined {
  const [, method, id] = traced[index].header.match(/^Sending request '(.+) - \((\d+)\)'/) ?? [];
  return traced.slice(index + 1).find((m) => m.header.startsWith(`Received response '${method} - (${id})'`));
}

/** The `method` requests for `uri` the client sent, in order, each with whether its response came, by the trace. */
export function requestsFor(log: string, method: string, uri: string): { answered: boolean }[] {
  const traced = messages(log);
  return traced.flatMap((m, index) =>
    m.header.startsWith(`Sending request '${method} - (`) && isFor(m.body, uri) ? [{ answered: responseTo(traced, index) !== undefined }] : [],
  );
}

/** `text` with the answer applied, as VS Code applies an accepted inline suggestion. */
export function applyAnswer(text: string, item: InlineItem): string {
  return text.slice(0, offsetAt(text, item.range.start)) + insertTextOf(item) + text.slice(offsetAt(text, item.range.end));
}

/** The offset of an LSP position (UTF-16 code units, which is what JavaScript strings count). */
export function offsetAt(text: string, position: { line: number; character: number }): number {
  let offset = 0;
  for (let line = 0; line < position.line; line += 1) {
    offset = text.indexOf('\n', offset) + 1;
  }
  return offset + position.character;
}

/** How many `method` notifications for `uri` the client sent, by the trace. */
export function sentFor(log: string, method: string, uri: string): number {
  return messages(log).filter((m) => m.header.startsWith(`Sending notification '${method}'`) && isFor(m.body, uri)).length;
}
