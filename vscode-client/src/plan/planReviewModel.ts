/**
 * A proposed plan (`plansight/reviewPlan`) as the client shows it, and the answers it sends:
 * approve (with the plan as the user left it), revise (with feedback), cancel. Also the plan
 * as a Markdown document, and the conversation's plan card. Pure: no `vscode` import.
 */
import type { CardEntry } from '../conversation/model';
import type { RenderHelpers } from '../conversation/render';
import type { PlanChange, PlanComment, ReviewPlanParams, ReviewPlanResult, TodoItem, TodoState } from '../protocol';
import { oneLine, plainMarkdown, truncate } from '../text';
import { planCounts, statusLabels } from './planModel';

export const planReviewCard = 'planReview';

type WireItem = Pick<TodoItem, 'id' | 'text' | 'status'>;

function wire(items: readonly TodoItem[]): WireItem[] {
  return items.map(({ id, text, status }) => ({ id, text, status }));
}

/**
 * Approve the plan as the Plan view shows it now: the user may have edited it while the
 * review was open (each edit went to the server as `plansight/editPlan`), and what they
 * approve is what runs, so its items go with the answer.
 */
export function approveResult(current: TodoState, comments: readonly PlanComment[] = []): ReviewPlanResult {
  return { decision: 'approve', items: wire(current.items), ...withComments(comments) };
}

/** Ask for changes: the feedback is what the model reads (the plan as shown goes along), with
 * the user's comments, each on its item. */
export function reviseResult(feedback: string, current: TodoState, comments: readonly PlanComment[] = []): ReviewPlanResult {
  const text = feedback.trim();
  return { decision: 'revise', ...(text ? { feedback: text } : {}), items: wire(current.items), ...withComments(comments) };
}

function withComments(comments: readonly PlanComment[]): { comments?: PlanComment[] } {
  return comments.length ? { comments: comments.map((c) => ({ ...c })) } : {};
}

/** A new comment of the user's on a proposal: `todoId` for an item, none for the plan. */
export function newComment(id: string, text: string, todoId?: string): PlanComment | undefined {
  const said = text.trim();
  if (!said) {
    return undefined;
  }
  return { id, ...(todoId !== undefined ? { todoId } : {}), text: said };
}

/** One change of a proposal beside the one the user saw, as the clients show it: the change
 * in words, and the comments that asked for it with the model's `how`. */
export interface ChangeRow {
  line: string;
  kind: PlanChange['kind'];
  todoId: string;
  comments: { text: string; how?: string }[];
}

export function changeLine(change: PlanChange): string {
  switch (change.kind) {
    case 'reworded':
      return `reworded #${change.todoId}: "${change.before ?? ''}" → "${change.text}"`;
    case 'restatused':
      return `#${change.todoId} ${change.text}: ${change.before ?? '?'} → ${change.after ?? '?'}`;
    default:
      return `${change.kind} #${change.todoId}: ${change.text}`;
  }
}

/** The server's `changes` as rows (none for a first proposal): each change with the words of
 * the comments that asked for it and how the model addressed them; then the addressed comments
 * that no change names. */
export function changeRows(params: ReviewPlanParams): ChangeRow[] {
  if (!params.previous || !params.changes) {
    return [];
  }
  const words = new Map((params.addressedComments ?? []).map((c) => [c.id, c.text]));
  const how = new Map((params.addressed ?? []).map((a) => [a.commentId, a.how]));
  const said = (id: string) => ({ text: words.get(id) ?? id, ...(how.has(id) ? { how: how.get(id) } : {}) });
  const beside = new Set(params.changes.flatMap((c) => c.commentIds));
  const rows: ChangeRow[] = params.changes.map((change) => ({
    line: changeLine(change),
    kind: change.kind,
    todoId: change.todoId,
    comments: change.commentIds.map(said),
  }));
  const loose = [...how.keys()].filter((id) => !beside.has(id));
  if (loose.length) {
    rows.push({ line: 'on the plan as a whole', kind: 'reworded', todoId: '', comments: loose.map(said) });
  }
  return rows;
}

/** The comments still open, one line each (`#2: text` for one on an item). */
export function openCommentLines(params: ReviewPlanParams): string[] {
  return (params.openComments ?? []).map((c) => `${c.todoId ? `#${c.todoId}: ` : ''}${c.text}`);
}

/** A plan as the Markdown of a proposal document (the diff's two sides, the document the
 * Comments API comments on): one line per item, `- [ ] #2 text`; `notes` adds, under the item
 * a change touched, the comment that asked for it. */
export function proposalText(items: readonly Pick<TodoItem, 'id' | 'text' | 'status'>[], notes: ReadonlyMap<string, string[]> = new Map()): string {
  const lines: string[] = [];
  for (const item of items) {
    lines.push(`- ${marks[item.status] ?? '[ ]'} #${item.id} ${item.text}`);
    for (const note of notes.get(item.id) ?? []) {
      lines.push(`  > ${note}`);
    }
  }
  return lines.join('\n') + '\n';
}

/** What the diff's right side shows under each changed item: the comment and how. */
export function changeNotes(params: ReviewPlanParams): Map<string, string[]> {
  const notes = new Map<string, string[]>();
  for (const row of changeRows(params)) {
    for (const c of row.comments) {
      const list = notes.get(row.todoId) ?? [];
      list.push(`your comment: "${c.text}"${c.how ? ` — ${c.how}` : ''}`);
      notes.set(row.todoId, list);
    }
  }
  return notes;
}

/** The item a line of a proposal document is (`- [ ] #2 text`), or undefined. */
export function itemIdOfLine(line: string): string | undefined {
  return /^- \[.\] #(\S+) /.exec(line)?.[1];
}

export function cancelResult(): ReviewPlanResult {
  return { decision: 'cancel' };
}

export type PlanReviewOutcome = 'pending' | 'approved' | 'revised' | 'cancelled' | 'withdrawn';

export interface PlanReviewCardData {
  reviewId: string;
  summary: string;
  /** The plan as proposed; once approved or revised, as the user left it. */
  items: WireItem[];
  /** Why the server asked again: the user's edited plan broke a rule. */
  problem?: string;
  outcome: PlanReviewOutcome;
  feedback?: string;
  /** What changed since the proposal the user saw, and the comments still open. */
  changes?: ChangeRow[];
  openComments?: string[];
  /** The user's comments on this proposal so far (sent with Approve with Comments / Revise). */
  comments?: PlanComment[];
}

export function planReviewCardData(reviewId: string, params: ReviewPlanParams): PlanReviewCardData {
  return {
    reviewId,
    summary: params.summary,
    items: wire(params.todos.items),
    ...(params.problem ? { problem: params.problem } : {}),
    outcome: 'pending',
    ...(params.previous ? { changes: changeRows(params), openComments: openCommentLines(params) } : {}),
    ...(params.comments?.length ? { comments: params.comments } : {}),
  };
}

export function outcomeOf(result: ReviewPlanResult): PlanReviewOutcome {
  return result.decision === 'approve' ? 'approved' : result.decision === 'revise' ? 'revised' : 'cancelled';
}

const outcomes: Readonly<Record<PlanReviewOutcome, [string, string]>> = {
  pending: ['checklist', 'Waiting for your approval'],
  approved: ['check', 'Approved: the run carries out the plan'],
  revised: ['comment', 'Sent back for revision'],
  cancelled: ['close', 'Cancelled: the plan is kept, nothing was changed'],
  withdrawn: ['circle-slash', 'The run ended before a decision'],
};

const marks: Readonly<Record<string, string>> = {
  pending: '[ ]',
  in_progress: '[>]',
  completed: '[x]',
  cancelled: '[-]',
  failed: '[!]',
};

export function renderPlanReviewCard(card: CardEntry, h: RenderHelpers): string {
  const data = card.data as PlanReviewCardData;
  const items = data.items
    .map((i) => `<li><span class="mark">${h.escape(marks[i.status] ?? '[ ]')}</span> <strong>#${h.escape(i.id)}</strong> ${h.escape(i.text)}</li>`)
    .join('');
  const head =
    `<div class="card-head">${h.icon('checklist')}<span><strong>${data.outcome === 'approved' ? 'Approved plan' : 'Proposed plan'}</strong> (${data.items.length} ` +
    `item${data.items.length === 1 ? '' : 's'})</span></div>` +
    `<div class="summary md">${h.markdown(data.summary)}</div>` +
    `<ol class="plan-items">${items}</ol>`;
  const comments = data.comments ?? [];
  const changed = data.changes
    ? `<div class="card-text"><strong>What changed since the proposal you saw</strong></div><ul class="plan-changes">` +
      (data.changes.length
        ? data.changes
            .map(
              (c) =>
                `<li>${h.escape(c.line)}` +
                c.comments
                  .map((said) => `<div class="change-comment">${h.icon('comment')} ${h.escape(`“${said.text}”`)}${said.how ? ` — ${h.escape(said.how)}` : ''}</div>`)
                  .join('') +
                '</li>',
            )
            .join('')
        : '<li>No item changed.</li>') +
      '</ul>' +
      (data.openComments?.length
        ? `<div class="card-text"><strong>Open comments</strong></div><ul class="open-comments">${data.openComments.map((c) => `<li>${h.escape(c)}</li>`).join('')}</ul>`
        : '')
    : '';
  const yours = comments.length
    ? `<div class="card-text"><strong>Your comments</strong></div><ul class="your-comments">${comments
        .map((c) => `<li>${c.todoId ? `<strong>#${h.escape(c.todoId)}</strong> ` : ''}${h.escape(c.text)}</li>`)
        .join('')}</ul>`
    : '';
  const open = () =>
    (data.problem ? `<div class="outcome error">${h.icon('error')}<span>${h.escape(data.problem)}</span></div>` : '') +
    changed +
    yours +
    `<div class="card-text">Edit, add, remove or reorder items in the Plan view before you approve: what you approve is what runs. Comment on an item from its context menu.</div>` +
    h.field('feedback', 'What should change? (for Revise)', { multiline: true }) +
    `<div class="buttons">${h.button('approve', 'Approve', { primary: true, icon: 'check' })}` +
    (comments.length ? h.button('approveWithComments', 'Approve with Comments', { icon: 'comment-discussion', title: 'Approve; your comments stay on their items as notes' }) : '') +
    `${h.button('revise', 'Revise', { icon: 'comment', title: 'Send your feedback; the agent plans again' })}` +
    `${h.button('cancel', 'Cancel', { icon: 'close', title: 'End the run; the plan is kept' })}` +
    `${h.button('markdown', 'Open as Markdown', { icon: 'markdown' })}</div>`;
  if (card.open) {
    return head + open();
  }
  return head + changed + yours + closed(data, h);
}

function closed(data: PlanReviewCardData, h: RenderHelpers): string {
  const [icon, label] = outcomes[data.outcome];
  const said = data.outcome === 'revised' && data.feedback ? `: ${data.feedback}` : '';
  return `<div class="outcome ${data.outcome}">${h.icon(icon)}<span>${h.escape(label + said)}</span></div>`;
}

/** The summary's Markdown reduced to plain text (tables, marks, links), for places that show
 * plain text only: the Plan view's message, the notification. */
export function plainSummary(summary: string): string {
  return oneLine(plainMarkdown(summary));
}

/** About two lines of the Plan view's message at the default 300 px sidebar. */
export const problemShownChars = 90;

/**
 * What the Plan view says at its top while a plan waits: one short line, and the server's
 * reason when it asked again. The summary is not here: even clamped to three lines it took,
 * with the fixed sentences, seven lines at 440 px and pushed the items the user is to review
 * out of sight (issue 31). The summary is on the plan's card in the conversation (in full, as
 * Markdown), in the notification, in the badge's tooltip and in Open Plan as Markdown.
 */
export function reviewMessage(problem?: string): string {
  const lines: string[] = [];
  if (problem) {
    lines.push(truncate(oneLine(problem), problemShownChars));
  }
  lines.push('Approve, Revise… or Cancel it above.');
  return lines.join('\n');
}

/** The Plan view's badge tooltip while a plan waits: the summary, as plain text. */
export function reviewBadgeTooltip(summary: string): string {
  const said = truncate(plainSummary(summary), 300);
  return `A proposed plan waits for your approval${said ? `: ${said}` : ''}`;
}

/** The notification's title: one word, so that the decisions after it stay in sight on the
 * collapsed toast's one line (VS Code shows a progress notification collapsed, and its close,
 * settings and expand buttons take the line's end). */
export function notificationTitle(): string {
  return 'Plansight';
}

/** The notification's message: the three decisions as command links first (in sight on the
 * collapsed toast's line), then Open as Markdown and the summary as plain text. */
export function notificationMessage(summary: string, problem?: string): string {
  const links =
    '[Approve](command:plansight.plan.approve) · [Revise…](command:plansight.plan.revise) · ' +
    '[Cancel](command:plansight.plan.cancelReview)';
  // Approve with Comments sends the comments made on the items (the tree's context menu, the
  // proposal document's comment threads); Show Changes opens the diff of the previous proposal.
  const more =
    '[Approve with Comments](command:plansight.plan.approveWithComments) · [Show Changes](command:plansight.plan.showChanges) · ' +
    '[Open as Markdown](command:plansight.plan.openMarkdown)';
  return `${links} — a plan waits for you: ${problem ? `${problem} ` : ''}${truncate(plainSummary(summary), 200)} ${more}`;
}

/** The Plan view's title description while a plan waits: short enough for a narrow sidebar
 * ("Proposed · review · 0/3"), the view's message saying the rest. */
export function proposedDescription(progress: string): string {
  return ['Proposed · review', progress].filter(Boolean).join(' · ');
}

/** The card once the review is settled: its outcome, and the items as the user left them
 * before approving or revising (what runs), not as they were proposed. */
export function settledCardPatch(result: ReviewPlanResult, withdrawn: boolean): Partial<PlanReviewCardData> {
  return {
    outcome: withdrawn ? 'withdrawn' : outcomeOf(result),
    ...(!withdrawn && result.comments ? { comments: result.comments } : {}),
    ...(result.feedback !== undefined ? { feedback: result.feedback } : {}),
    ...(!withdrawn && result.decision !== 'cancel' && result.items ? { items: wire(result.items as TodoItem[]) } : {}),
  };
}

/** The plan, and its summary when there is one, as a Markdown document to keep. */
export function planMarkdown(todos: Pick<TodoState, 'items'>, summary?: string): string {
  const lines = ['# Plan', ''];
  if (summary?.trim()) {
    lines.push(summary.trim(), '');
  }
  if (!todos.items.length) {
    lines.push('_No plan yet._');
  }
  for (const item of todos.items) {
    const box = item.status === 'completed' ? '[x]' : '[ ]';
    const text = item.status === 'cancelled' ? `~~${item.text}~~` : item.text;
    const status = item.status === 'pending' || item.status === 'completed' ? '' : ` _(${statusLabels[item.status].toLowerCase()})_`;
    lines.push(`- ${box} **#${item.id}** ${text}${status}`);
  }
  const { done, total, cancelled } = planCounts(todos);
  if (total) {
    lines.push('', `${done} of ${total} done${cancelled ? ` (${cancelled} cancelled)` : ''}.`);
  }
  return lines.join('\n') + '\n';
}
