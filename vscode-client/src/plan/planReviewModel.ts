/**
 * A proposed plan (`plansight/reviewPlan`) as the client shows it, and the answers it sends:
 * approve (with the plan as the user left it), revise (with feedback), cancel. Also the plan
 * as a Markdown document, and the conversation's plan card. Pure: no `vscode` import.
 */
import type { CardEntry } from '../conversation/model';
import type { RenderHelpers } from '../conversation/render';
import type { ReviewPlanParams, ReviewPlanResult, TodoItem, TodoState } from '../protocol';
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
export function approveResult(current: TodoState): ReviewPlanResult {
  return { decision: 'approve', items: wire(current.items) };
}

/** Ask for changes: the feedback is what the model reads (the plan as shown goes along). */
export function reviseResult(feedback: string, current: TodoState): ReviewPlanResult {
  const text = feedback.trim();
  return { decision: 'revise', ...(text ? { feedback: text } : {}), items: wire(current.items) };
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
}

export function planReviewCardData(reviewId: string, params: ReviewPlanParams): PlanReviewCardData {
  return {
    reviewId,
    summary: params.summary,
    items: wire(params.todos.items),
    ...(params.problem ? { problem: params.problem } : {}),
    outcome: 'pending',
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
  const open = () =>
    (data.problem ? `<div class="outcome error">${h.icon('error')}<span>${h.escape(data.problem)}</span></div>` : '') +
    `<div class="card-text">Edit, add, remove or reorder items in the Plan view before you approve: what you approve is what runs.</div>` +
    h.field('feedback', 'What should change? (for Revise)', { multiline: true }) +
    `<div class="buttons">${h.button('approve', 'Approve', { primary: true, icon: 'check' })}` +
    `${h.button('revise', 'Revise', { icon: 'comment', title: 'Send your feedback; the agent plans again' })}` +
    `${h.button('cancel', 'Cancel', { icon: 'close', title: 'End the run; the plan is kept' })}` +
    `${h.button('markdown', 'Open as Markdown', { icon: 'markdown' })}</div>`;
  if (card.open) {
    return head + open();
  }
  const [icon, label] = outcomes[data.outcome];
  const said = data.outcome === 'revised' && data.feedback ? `: ${data.feedback}` : '';
  return head + `<div class="outcome ${data.outcome}">${h.icon(icon)}<span>${h.escape(label + said)}</span></div>`;
}

/** The summary's Markdown reduced to plain text (tables, marks, links), for places that show
 * plain text only: the Plan view's message, the notification. */
export function plainSummary(summary: string): string {
  return oneLine(plainMarkdown(summary));
}

/** About three lines of the Plan view at the default 300 px sidebar. */
export const summaryShownChars = 160;

/**
 * The summary clamped for the Plan view's message, cut at a word, with where to read the
 * rest: a long summary filled the view and pushed the plan's items out of sight (issue 31).
 */
export function clampedSummary(said: string, max = summaryShownChars): string {
  if (said.length <= max) {
    return said;
  }
  const cut = said.slice(0, max);
  const word = cut.lastIndexOf(' ');
  return `${(word > max / 2 ? cut.slice(0, word) : cut).replace(/[\s,;:.]+$/, '')}… (the whole summary: Open Plan as Markdown, or the plan's card in the conversation)`;
}

/** What the Plan view says at its top while a plan waits: the summary, a few lines of it. */
export function reviewMessage(summary: string, problem?: string): string {
  const said = clampedSummary(plainSummary(summary));
  // The view shows the lines run together: each ends as a sentence does.
  const lines = [`Proposed plan, waiting for your approval. ${said}${said && !/[.!?:;]$/.test(said) ? '.' : ''}`];
  if (problem) {
    lines.push(problem);
  }
  lines.push('Approve, Revise… or Cancel from this view\'s title; edit the items first if you like.');
  return lines.join('\n');
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
  const more = '[Open as Markdown](command:plansight.plan.openMarkdown)';
  return `${links} — a plan waits for you: ${problem ? `${problem} ` : ''}${truncate(plainSummary(summary), 300)} ${more}`;
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
