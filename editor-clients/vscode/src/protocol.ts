// prewrite's own wire names and payloads beyond standard LSP, shared by the extension and tests.

/** Server-to-client notification with the live draft (sent when the draftPreview setting is on). */
export const DRAFT_NOTIFICATION = 'prewrite/draft';

/** workspace/executeCommand commands the server implements. */
export const STATS_COMMAND = 'prewrite.stats';
export const TOGGLE_COMMAND = 'prewrite.toggle';

/** The languages the server drafts for (VS Code language ids). */
export const LANGUAGES = ['python', 'javascript', 'typescript'] as const;

export interface DraftParams {
  uri: string;
  version?: number;
  status: string; // accepted | regenerating | verified
  text: string;
}

/** The insert text of an inline completion item, plain or snippet. */
export function insertTextOf(item: { insertText: string | { value: string } }): string {
  return typeof item.insertText === 'string' ? item.insertText : item.insertText.value;
}
