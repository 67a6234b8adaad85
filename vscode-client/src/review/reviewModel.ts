/**
 * Edit review decisions → `plansight/reviewEdit` results, and the review URIs' paths.
 * Pure: no `vscode` import.
 */
import type { ReviewEditResult } from '../protocol';

/** The result for an accepted edit: `newText` only when the user changed the proposal. */
export function acceptResult(proposed: string, settled: string): ReviewEditResult {
  return settled === proposed ? { accepted: true } : { accepted: true, newText: settled };
}

export function rejectResult(feedback: string | undefined): ReviewEditResult {
  const reason = feedback?.trim();
  return reason ? { accepted: false, feedback: reason } : { accepted: false };
}

/**
 * The path of a review's documents: `/<encoded id>/<file name>`, so each review has its own
 * documents and the editor still picks the language from the file name.
 */
export function reviewPath(id: string, fileName: string): string {
  return `/${encodeURIComponent(id)}/${fileName || 'untitled'}`;
}

/** The review id in a path made by `reviewPath`, or undefined. */
export function reviewIdFromPath(path: string): string | undefined {
  const match = /^\/([^/]+)\/[^/]*$/.exec(path);
  return match ? decodeURIComponent(match[1]!) : undefined;
}

/** The last segment of a URI's or path's path. */
export function baseName(uriOrPath: string): string {
  const path = uriOrPath.replace(/[?#].*$/, '');
  const parts = path.split('/').filter(Boolean);
  return decodeURIComponent(parts[parts.length - 1] ?? '');
}
