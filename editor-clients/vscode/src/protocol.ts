// prewrite's own wire names and payloads beyond standard LSP, shared by the extension and tests.

/** Server-to-client notification with the live draft (sent when the draftPreview setting is on). */
export const DRAFT_NOTIFICATION = 'prewrite/draft';
/** Server-to-client notification: model loading / ready / error / disabled. */
export const STATUS_NOTIFICATION = 'prewrite/status';

/** workspace/executeCommand commands the server implements. */
export const STATS_COMMAND = 'prewrite.stats';
export const TOGGLE_COMMAND = 'prewrite.toggle'; // optional argument: true / false

/** The languages the server drafts for (VS Code language ids). */
export const LANGUAGES = ['python', 'javascript', 'typescript'] as const;

/** How a draft did on its spec's `>>>` examples, run in the server's sandbox. */
export interface ExamplesParams {
  passed: number;
  failed: number;
  total: number;
  firstFailure: string | null; // "f(2) returned 5, expected 4"; null when all passed
}

/**
 * A sampled answer whose examples all pass where the draft's fail (the server's searchOnFailure):
 * offered first at the trigger, and not the greedy answer.
 */
export interface AlternativeParams {
  passed: number;
  total: number;
  seed: number; // the sample it is (1, 2, ...)
  drawn: number; // samples drawn to find it
  text: string; // its text, as `text` is the draft's
}

/** The live draft of one document; `text` goes at `position` (the end of the spec). */
export interface DraftParams {
  uri: string;
  version: number;
  status: 'regenerating' | 'accepted' | 'verified';
  text: string;
  position: { line: number; character: number };
  acceptedTokens: number;
  draftTokens: number;
  generatedTokens: number;
  forwards: number;
  ms: number;
  examples: ExamplesParams | null; // null: no examples, not run yet, or not run for this draft
  alternative?: AlternativeParams | null; // null or absent: none found (or searchOnFailure off)
}

export interface StatusParams {
  state: 'loading' | 'ready' | 'error' | 'disabled';
  model: string;
  message: string;
}

/** The insert text of an inline completion item, plain or snippet. */
export function insertTextOf(item: { insertText: string | { value: string } }): string {
  return typeof item.insertText === 'string' ? item.insertText : item.insertText.value;
}
