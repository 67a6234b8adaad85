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
 * Where a review's documents live: the file's workspace-relative path (so the editor picks the
 * language and the breadcrumbs read like the real file) and the review id in the query (so
 * each review has its own documents).
 */
export function reviewLocation(id: string, relativePath: string, side?: 'proposed'): { path: string; query: string } {
  const clean = relativePath.replace(/^\/+/, '') || 'untitled';
  const query = `id=${encodeURIComponent(id)}${side ? `&side=${side}` : ''}`;
  return { path: `/${clean}`, query };
}

/** The review id in a query made by `reviewLocation`, or undefined. */
export function reviewIdFromQuery(query: string): string | undefined {
  const match = /(?:^|&)id=([^&]*)/.exec(query);
  return match ? decodeURIComponent(match[1]!) : undefined;
}

/** The last segment of a URI's or path's path. */
export function baseName(uriOrPath: string): string {
  const path = uriOrPath.replace(/[?#].*$/, '');
  const parts = path.split('/').filter(Boolean);
  return decodeURIComponent(parts[parts.length - 1] ?? '');
}

/** An editor group as the review placement sees it. */
export interface GroupSummary {
  viewColumn: number;
  isActive: boolean;
  /** The group shows a Plansight diff (a proposal or a past edit). */
  hasReview: boolean;
}

/**
 * Where a proposal's diff opens: never in the group the user works in (a new tab there would
 * take their editor, and their keystrokes with it), so in a group already showing Plansight
 * diffs if there is one beside it, else in a new group beside the active one.
 */
export function reviewColumn(groups: readonly GroupSummary[]): number | 'beside' {
  const other = groups.find((g) => g.hasReview && !g.isActive);
  return other ? other.viewColumn : 'beside';
}
