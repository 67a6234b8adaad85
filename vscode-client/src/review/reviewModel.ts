/**
 * Edit review decisions → `plansight/reviewEdit` results, the review URIs' paths, and the words
 * of the notification that stands in for the review card. Pure: no `vscode` import.
 */
import type { ReviewEditResult } from '../protocol';
import { oneLine, truncate } from '../text';

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

/**
 * What a control file's review card says (`control: true`: a file that steers the user's tools,
 * such as `.vscode/settings.json` or `.git/…`), plainly, so nobody accepts one in passing.
 */
export function controlNotice(path: string): string {
  return `This changes ${path}, a file that controls your tools (git, the editor, Plansight). Accept it only if you have read the change.`;
}

/** Whether "Accept All in This Run" may accept this review unasked: never a control file's. */
export function autoAcceptable(params: { control?: boolean; conflict?: boolean }): boolean {
  // A conflict (version 4, a worker's change) holds markers: never accepted unseen either.
  return params.control !== true && params.conflict !== true;
}

/** The last segment of a URI's or path's path. */
export function baseName(uriOrPath: string): string {
  const path = uriOrPath.replace(/[?#].*$/, '');
  const parts = path.split('/').filter(Boolean);
  return decodeURIComponent(parts[parts.length - 1] ?? '');
}


/**
 * The notification asking for an edit while the conversation is out of sight. A progress toast
 * shows one line, `title: message`, cut with an ellipsis (and its close and settings buttons
 * take the line's end): so the title is one word, and Accept, Reject and Show Diff (command
 * links carrying the review's `id`) come right after it, in sight on the collapsed toast;
 * what is proposed, the file and the description follow.
 */
export function reviewNotice(
  id: string,
  path: string,
  description: string,
  control = false,
  from: { worker?: string; conflict?: boolean } = {},
): { title: string; message: string } {
  const args = encodeURIComponent(JSON.stringify([id]));
  const said = truncate(oneLine(description), 120);
  // A control file is named as one even on the collapsed toast's line.
  const file = control ? `a control file, ${path} (it controls your tools)` : path;
  const worker = from.worker ? ` from worker #${from.worker}` : '';
  const what = `${file}${worker}${from.conflict ? ' (a conflict to settle)' : ''}`;
  return {
    title: 'Plansight',
    // A conflict is settled in the diff: the toast offers no Accept, so it is never taken unseen.
    message: from.conflict
      ? `[Show Diff](command:plansight.plan.openEdit?${args}) · [Reject](command:plansight.rejectEdit?${args}) — ` +
        `proposes an edit to ${what}${said ? `: ${said}` : ''}`
      : `[Accept](command:plansight.acceptEdit?${args}) · [Reject](command:plansight.rejectEdit?${args}) · ` +
        `[Show Diff](command:plansight.plan.openEdit?${args}) — proposes an edit to ${what}${said ? `: ${said}` : ''}`,
  };
}

/** Whether a text still holds a merge's conflict markers (a line of 7 `<`, `=` or `>`). */
export function hasConflictMarkers(text: string): boolean {
  return /^(<{7}|={7}|>{7})( |$)/m.test(text);
}

/** The question before accepting a conflict whose markers are still in the text. */
export function markersQuestion(path: string): string {
  return `${path} still has conflict markers (<<<<<<<, =======, >>>>>>>). Accept it with the markers in the file?`;
}
