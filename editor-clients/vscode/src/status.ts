// The status bar's state machine and text; pure, so it is tested without VS Code.

import type { AlternativeParams, DraftParams, ExamplesParams } from './protocol';

export type Phase = 'starting' | 'loading' | 'drafting' | 'ready' | 'off' | 'stopped' | 'restarting' | 'crashed' | 'error';

export interface Status {
  phase: Phase;
  progress?: number; // model loading, 0..100, when the server reports a percentage
  detail?: string; // the server's progress message, or the last error
  model?: string; // the model the server loads or runs
  lastLatencyMs?: number; // trigger-to-answer time of the last inline completion
  lastChars?: number; // length of the last answer
  restart?: Restart; // while restarting after a crash
  draftReady?: boolean; // the last draft is verified for the active document's text as it is
  examples?: DocumentExamples; // how the draft of the active document's text as it is did on its examples
  empty?: EmptyReason; // why the last request got no suggestion (cleared by an answer)
  languageOff?: string; // the active editor's language, when prewrite.enable switches it off
}

/** A draft's examples result and the document it stands for, with an alternative that passes them. */
export interface DocumentExamples extends ExamplesParams {
  uri: string;
  alternative?: AlternativeParams;
}

/** The active editor's document, as a draft names it. */
export interface ActiveDocument {
  uri: string;
  version: number;
}

/** Why a request got no suggestion: the server had nothing to write there, or the text changed. */
export type EmptyReason = 'noSpec' | 'stale';

/** A restart after a crash: crash `crash` of the `limit` that give up, the server starts in `inMs`. */
export interface Restart {
  crash: number;
  limit: number;
  inMs: number;
}

export type StatusEvent =
  | { kind: 'starting' }
  | { kind: 'started' }
  | { kind: 'progress'; stage: 'begin' | 'report' | 'end'; message?: string; percentage?: number }
  | { kind: 'server'; state: string; model?: string; message?: string }
  | { kind: 'draft'; status: string; current?: boolean } // current: for the active text as it is
  | { kind: 'examples'; uri: string; examples?: ExamplesParams; alternative?: AlternativeParams } // of a draft of the active text as it is
  | { kind: 'answered'; ms: number; chars: number }
  | { kind: 'empty'; reason: EmptyReason }
  | { kind: 'edited' } // the active document changed
  | { kind: 'editor'; uri?: string; language?: string; enabled: boolean } // the active editor, or its switch, changed
  | { kind: 'toggled'; enabled: boolean }
  | { kind: 'stopped' }
  | ({ kind: 'restarting' } & Restart)
  | { kind: 'gaveUp'; message: string }
  | { kind: 'failed'; message: string };

export const INITIAL: Status = { phase: 'starting' };

/** The server's draft statuses that mean "a draft is being (re)written" (the rest mean ready). */
const DRAFTING_STATUSES = new Set(['regenerating', 'accepted', 'drafting']);

/** Phases with no server running, and the events that end them: a new start, or a crash's news. */
const DOWN_PHASES = new Set<Phase>(['stopped', 'restarting', 'crashed']);
const UP_EVENTS = new Set<StatusEvent['kind']>(['starting', 'started', 'restarting', 'gaveUp']);

/**
 * The status after one event. With no server ('stopped', or a crash's 'restarting' and 'crashed')
 * it changes only with a new start or a crash: messages still in flight from the old server are
 * ignored, and so are the stop and the failed start that follow a crash (the crash's status says
 * more; a new start's failure comes after its 'starting'). 'off' changes only with a toggle, a
 * stop, a crash or the server's word.
 */
export function reduce(status: Status, event: StatusEvent): Status {
  // the active editor's language switch holds whatever the server does
  if (event.kind === 'editor') {
    // another document's examples are not this one's
    const examples = status.examples?.uri === event.uri ? status.examples : undefined;
    return { ...status, languageOff: event.enabled ? undefined : event.language, empty: undefined, examples };
  }
  if (DOWN_PHASES.has(status.phase) && !UP_EVENTS.has(event.kind)) {
    return status;
  }
  if (event.kind === 'edited') {
    return status.draftReady || status.examples ? { ...status, draftReady: false, examples: undefined } : status;
  }
  if (status.phase === 'off' && !['toggled', 'stopped', 'server', 'restarting', 'gaveUp'].includes(event.kind)) {
    return event.kind === 'answered' ? { ...status, lastLatencyMs: event.ms, lastChars: event.chars } : status;
  }
  switch (event.kind) {
    case 'starting':
      return { ...status, phase: 'starting', progress: undefined, detail: undefined, restart: undefined, examples: undefined };
    case 'started':
      // The process answered initialize; the model loads next, and the server says when ready.
      return ['starting', 'stopped', 'error'].includes(status.phase)
        ? { ...status, phase: 'loading', detail: undefined }
        : status;
    case 'progress':
      if (event.stage === 'end') {
        return { ...status, phase: 'ready', progress: undefined, detail: event.message };
      }
      return {
        ...status,
        phase: 'loading',
        progress: event.percentage ?? status.progress,
        detail: event.message ?? status.detail,
      };
    case 'server':
      return { ...fromServer(status, event.state, event.message), model: event.model || status.model };
    case 'draft':
      if (status.phase === 'loading') {
        return status;
      }
      if (DRAFTING_STATUSES.has(event.status)) {
        return { ...status, phase: 'drafting', draftReady: false };
      }
      return { ...status, phase: 'ready', draftReady: event.current === true };
    case 'examples':
      // a newer draft of this text without examples (not run yet, or none in the spec) clears them
      return { ...status, examples: event.examples ? { ...event.examples, uri: event.uri, alternative: event.alternative } : undefined };
    case 'answered':
      return {
        ...status,
        phase: status.phase === 'loading' ? 'loading' : 'ready',
        lastLatencyMs: event.ms,
        lastChars: event.chars,
        draftReady: false,
        empty: undefined,
      };
    case 'empty':
      return { ...status, empty: event.reason };
    case 'toggled':
      return { ...status, phase: event.enabled ? 'ready' : 'off' };
    case 'stopped':
      return { ...status, phase: 'stopped', progress: undefined };
    case 'restarting': {
      const { crash, limit, inMs } = event;
      return { ...status, phase: 'restarting', progress: undefined, detail: undefined, restart: { crash, limit, inMs } };
    }
    case 'gaveUp':
      return { ...status, phase: 'crashed', progress: undefined, detail: event.message, restart: undefined };
    case 'failed':
      return { ...status, phase: 'error', detail: event.message };
  }
}

/** Whether a draft stands for the active document's text as it is (not another's, not older text). */
export function draftIsCurrent(draft: Pick<DraftParams, 'uri' | 'version'>, active: ActiveDocument | undefined): boolean {
  return active !== undefined && draft.uri === active.uri && draft.version === active.version;
}

/**
 * The status events of one prewrite/draft notification: the draft's readiness when `readiness`
 * (the draftStatus setting), and its examples when it stands for the active text as it is.
 */
export function draftEvents(draft: DraftParams, active: ActiveDocument | undefined, readiness: boolean): StatusEvent[] {
  const current = draftIsCurrent(draft, active);
  const events: StatusEvent[] = readiness ? [{ kind: 'draft', status: draft.status, current }] : [];
  if (current) {
    events.push({ kind: 'examples', uri: draft.uri, examples: draft.examples ?? undefined, alternative: draft.alternative ?? undefined });
  }
  return events;
}

/** The status after a prewrite/status notification (loading / ready / error / disabled). */
function fromServer(status: Status, state: string, message?: string): Status {
  switch (state) {
    case 'loading':
      return { ...status, phase: 'loading', detail: message || status.detail };
    case 'error':
      return { ...status, phase: 'error', progress: undefined, detail: message };
    case 'disabled':
      return { ...status, phase: 'off', progress: undefined };
    default:
      return { ...status, phase: 'ready', progress: undefined, detail: message || undefined };
  }
}

export interface Rendered {
  text: string; // with VS Code $(icon) syntax
  tooltip: string;
  click: 'toggle' | 'restart'; // what a click on the item does
}

const ICONS: Record<Phase, string> = {
  starting: '$(loading~spin)',
  loading: '$(loading~spin)',
  drafting: '$(sync~spin)',
  ready: '$(check)',
  off: '$(circle-slash)',
  stopped: '$(debug-stop)',
  restarting: '$(debug-restart)',
  crashed: '$(error)',
  error: '$(error)',
};

/** A latency as the status bar shows it: whole milliseconds below 10 s, else seconds. */
export function formatLatency(ms: number): string {
  return ms < 10_000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}

/** Most characters of a failure in the status bar text; the tooltip has all of it. */
const FAILURE_CHARS = 40;

/** `text` on one line, cut to `max` characters with an ellipsis. */
function shorten(text: string, max: number): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length <= max ? line : `${line.slice(0, max - 1).trimEnd()}…`;
}

/**
 * Examples as the status bar shows them: `examples 3/3`, or `examples 1/3: <first failure>`, and
 * ` · alternative 3/3` when a sampled answer that passes them is offered first.
 */
export function formatExamples(examples: ExamplesParams & { alternative?: AlternativeParams }): string {
  const counts = `examples ${examples.passed}/${examples.total}`;
  const label = examples.failed > 0 && examples.firstFailure ? `${counts}: ${shorten(examples.firstFailure, FAILURE_CHARS)}` : counts;
  const alternative = examples.alternative;
  return alternative ? `${label} · alternative ${alternative.passed}/${alternative.total}` : label;
}

/**
 * Why no suggestion is (or would be) shown, for the tooltip; undefined when nothing stands in
 * the way. The language switch and the server's phase come before the last request's outcome.
 */
export function whyNoSuggestion(status: Status): string | undefined {
  if (status.languageOff) {
    return `disabled for ${status.languageOff} (prewrite.enable)`;
  }
  switch (status.phase) {
    case 'off':
      return 'completions are toggled off (click to toggle them on)';
    case 'starting':
    case 'loading':
      return 'the model is loading';
    case 'drafting':
      return 'the draft is still being regenerated for the text as it is';
    case 'stopped':
    case 'restarting':
    case 'crashed':
    case 'error':
      return undefined; // the status itself says why, and the detail what happened
  }
  switch (status.empty) {
    case 'noSpec':
      return 'no spec under the cursor (a docstring, a comment above the function or one in its body), or nothing to add';
    case 'stale':
      return 'the text changed before the answer came';
  }
  return undefined;
}

/** Status bar text and tooltip for a status. */
export function render(status: Status): Rendered {
  let label: string;
  switch (status.phase) {
    case 'loading':
      label = status.progress === undefined ? 'loading' : `loading ${Math.round(status.progress)}%`;
      break;
    case 'ready':
      if (status.draftReady) {
        label = 'draft ready';
      } else {
        label = status.lastLatencyMs === undefined ? 'ready' : formatLatency(status.lastLatencyMs);
      }
      if (status.examples) {
        label += ` · ${formatExamples(status.examples)}`;
      }
      break;
    case 'restarting': {
      const restart = status.restart;
      label = restart ? `restarting (crash ${restart.crash} of ${restart.limit}, in ${Math.round(restart.inMs / 1000)} s)` : 'restarting';
      break;
    }
    default:
      label = status.phase;
  }
  const lines = [`prewrite: ${status.phase}${status.model ? ` (${status.model})` : ''}`];
  if (status.detail) {
    lines.push(status.detail);
  }
  if (status.draftReady) {
    lines.push('the draft is ready for the text as it is');
  }
  if (status.examples && status.phase === 'ready') {
    const { passed, total, firstFailure } = status.examples;
    lines.push(`examples: ${passed} of ${total} passed${firstFailure ? `; first failure: ${firstFailure}` : ''}`);
    const alternative = status.examples.alternative;
    if (alternative) {
      lines.push(
        `alternative (not the greedy answer; sample ${alternative.seed}, ${alternative.drawn} drawn): ` +
          `examples ${alternative.passed} of ${alternative.total} passed; offered first, the greedy answer next (Alt+])`,
      );
    }
  }
  const why = whyNoSuggestion(status);
  if (why) {
    lines.push(`no suggestion: ${why}`);
  }
  if (status.lastLatencyMs !== undefined) {
    lines.push(`last completion: ${formatLatency(status.lastLatencyMs)}, ${status.lastChars ?? 0} characters`);
  }
  // Once the server is given up on, a click is the way out: a restart with the crashes forgiven.
  const click = status.phase === 'crashed' ? 'restart' : 'toggle';
  lines.push(click === 'restart' ? 'click to restart the server' : 'click to toggle completions');
  if (status.languageOff && !DOWN_PHASES.has(status.phase) && status.phase !== 'error') {
    return { text: `${ICONS.off} prewrite off for ${status.languageOff}`, tooltip: lines.join('\n'), click };
  }
  return { text: `${ICONS[status.phase]} prewrite ${label}`, tooltip: lines.join('\n'), click };
}
