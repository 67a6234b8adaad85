/**
 * The client's own cards: an edit to review, a command to approve, the missing API key, and
 * "accepting every edit in this run". Data types and renderers. Pure: no `vscode` import.
 */
import type { EditOutcome } from '../plan/planModel';
import { conflictNotice, workerSuffix } from '../plan/workersModel';
import { controlNotice } from '../review/reviewModel';
import { type DiffLine } from './diff';
import type { CardEntry } from './model';
import type { ConversationRenderer, RenderHelpers } from './render';

export const reviewCard = 'review';
export const approvalCard = 'approval';
export const apiKeyCard = 'apiKey';
export const autoAcceptCard = 'autoAccept';

export interface ReviewCardData {
  reviewId: string;
  path: string;
  description: string;
  diff: DiffLine[];
  added: number;
  removed: number;
  outcome: EditOutcome;
  feedback?: string;
  /** Accepted by "Accept all edits in this run", without a look. */
  auto?: boolean;
  /** A control file's edit (version 4): said plainly, and no "Accept All" on it. */
  control?: boolean;
  /** Version 4: the plan item whose parallel worker made this change ("from worker #N"). */
  worker?: string;
  /** Version 4: the change conflicts with the workspace (markers in it): said plainly, no
   * "Accept All" on it. */
  conflict?: boolean;
  /** Version 4: the worker deleted the file. */
  deleted?: boolean;
}

export interface ApprovalCardData {
  approvalId: string;
  command: string;
  cwd: string;
  /** What the command may do ("sandboxed: workspace only, no network"); '' from an older server. */
  sandbox?: string;
  sandboxed?: boolean;
  outcome: 'pending' | 'approved' | 'rejected' | 'cancelled';
  feedback?: string;
}

export interface ApiKeyCardData {
  outcome: 'pending' | 'saved' | 'dismissed';
}

export interface AutoAcceptCardData {
  on: boolean;
  /** Edits accepted without a look so far. */
  accepted: number;
  /** Why it is off: the user asked to be asked again, or the run ended. */
  stopped?: 'user' | 'runEnded';
}

const reviewOutcomes: Readonly<Record<EditOutcome, [string, string]>> = {
  pending: ['git-pull-request-draft', 'Waiting for your review'],
  accepted: ['check', 'Accepted'],
  changed: ['edit', 'Accepted with your changes'],
  rejected: ['close', 'Rejected'],
  cancelled: ['circle-slash', 'Cancelled: the run ended before a decision, nothing was written'],
};

function renderDiff(lines: readonly DiffLine[], h: RenderHelpers): string {
  if (!lines.length) {
    return '';
  }
  const rows = lines.map((l) => {
    const sign = l.kind === 'added' ? '+' : l.kind === 'removed' ? '−' : l.kind === 'skipped' ? '⋯' : ' ';
    return `<span class="${l.kind}">${sign} ${h.escape(l.text)}</span>`;
  });
  return `<pre class="diff">${rows.join('\n')}</pre>`;
}

export function renderReviewCard(card: CardEntry, h: RenderHelpers): string {
  const data = card.data as ReviewCardData;
  const [icon, label] = reviewOutcomes[data.outcome];
  const head =
    `<div class="card-head">${h.icon('diff')}<span>${data.deleted ? 'Delete' : 'Edit'} <strong>${h.escape(data.path)}</strong>${h.escape(workerSuffix(data.worker))}</span>` +
    `<span class="stat"><span class="added">+${data.added}</span> <span class="removed">−${data.removed}</span></span></div>` +
    (data.control ? `<div class="card-text control">${h.icon('warning')}<span>${h.escape(controlNotice(data.path))}</span></div>` : '') +
    (data.conflict ? `<div class="card-text control">${h.icon('warning')}<span>${h.escape(conflictNotice(data.path, data.worker))}</span></div>` : '') +
    `${data.description ? `<div class="card-text">${h.escape(data.description)}</div>` : ''}` +
    renderDiff(data.diff, h);
  if (card.open) {
    // A control file's edit is accepted one by one: no "Accept All" offered on it.
    const acceptAll = data.control || data.conflict
      ? ''
      : h.button('acceptAll', 'Accept All in This Run', { icon: 'check-all', title: 'Accept this edit and every further edit of this run without asking' });
    return (
      head +
      h.field('reason', 'Why reject? The agent reads your reason (optional)') +
      `<div class="buttons">${h.button('accept', 'Accept', { primary: true, icon: 'check' })}` +
      `${h.button('reject', 'Reject', { icon: 'close' })}` +
      `${h.button('showDiff', 'Show Diff', { icon: 'diff' })}` +
      `${acceptAll}</div>`
    );
  }
  const auto = data.auto ? ' (accepting every edit in this run)' : '';
  const reason = data.outcome === 'rejected' && data.feedback ? `: ${data.feedback}` : '';
  return (
    head +
    `<div class="outcome ${data.outcome}">${h.icon(icon)}<span>${h.escape(label + auto + reason)}</span>` +
    `${h.button('showDiff', 'Show Diff', { icon: 'diff' })}</div>`
  );
}

const approvalOutcomes: Readonly<Record<ApprovalCardData['outcome'], [string, string]>> = {
  pending: ['terminal', 'Waiting for your approval'],
  approved: ['check', 'Approved'],
  rejected: ['close', 'Rejected'],
  cancelled: ['circle-slash', 'Cancelled: the run ended before a decision, nothing ran'],
};

export function renderApprovalCard(card: CardEntry, h: RenderHelpers): string {
  const data = card.data as ApprovalCardData;
  const head =
    `<div class="card-head">${h.icon('terminal')}<span>Run a command in <strong>${h.escape(data.cwd)}</strong></span></div>` +
    // The whole command, wrapped (pre-wrap, broken anywhere): never cut or scrolled out of
    // sight, so that what is approved is all of what runs (`… && touch /tmp/x` included).
    `<pre class="command wrap">${h.escape(data.command)}</pre>` +
    (data.sandbox
      ? `<div class="card-text sandbox ${data.sandboxed ? 'sandboxed' : 'unsandboxed'}">` +
        `${h.icon(data.sandboxed ? 'shield' : 'warning')}<span>${h.escape(data.sandbox)}</span></div>`
      : '');
  if (card.open) {
    return (
      head +
      h.field('reason', 'Why reject? The agent reads your reason (optional)') +
      `<div class="buttons">${h.button('approve', 'Approve', { primary: true, icon: 'check' })}` +
      `${h.button('reject', 'Reject', { icon: 'close' })}</div>`
    );
  }
  const [icon, label] = approvalOutcomes[data.outcome];
  const reason = data.outcome === 'rejected' && data.feedback ? `: ${data.feedback}` : '';
  return head + `<div class="outcome ${data.outcome}">${h.icon(icon)}<span>${h.escape(label + reason)}</span></div>`;
}

export function renderApiKeyCard(card: CardEntry, h: RenderHelpers): string {
  const data = card.data as ApiKeyCardData;
  if (card.open) {
    return (
      `<div class="card-head">${h.icon('key')}<span>Plansight needs an Anthropic API key to send this</span></div>` +
      `<div class="card-text">Your request is kept and goes out as soon as the key is set. The key is stored in VS Code's secret storage and given only to the Plansight server.</div>` +
      `<div class="buttons">${h.button('setKey', 'Set API Key', { primary: true, icon: 'key' })}` +
      `${h.button('demo', 'Run the Offline Demo Instead', { icon: 'play' })}</div>`
    );
  }
  const text = data.outcome === 'saved' ? 'API key saved: your request was sent.' : 'Not sent (no API key).';
  return `<div class="outcome">${h.icon(data.outcome === 'saved' ? 'check' : 'circle-slash')}<span>${h.escape(text)}</span></div>`;
}

export function renderAutoAcceptCard(card: CardEntry, h: RenderHelpers): string {
  const data = card.data as AutoAcceptCardData;
  const count = ` (${data.accepted} accepted without asking)`;
  if (data.on) {
    return (
      `<div class="outcome">${h.icon('check-all')}<span>${h.escape(`Accepting every edit in this run${data.accepted ? count : ''}.`)}</span>` +
      `${h.button('stop', 'Ask Me Again', { icon: 'debug-pause' })}</div>`
    );
  }
  const text =
    data.stopped === 'user' ? `Asking again for each edit${data.accepted ? count : ''}.` : `Accepted every edit of this run${data.accepted ? count : ''}.`;
  return `<div class="outcome">${h.icon('check-all')}<span>${h.escape(text)}</span></div>`;
}

export function registerCoreCards(renderer: ConversationRenderer): void {
  renderer.registerCard(reviewCard, renderReviewCard);
  renderer.registerCard(approvalCard, renderApprovalCard);
  renderer.registerCard(apiKeyCard, renderApiKeyCard);
  renderer.registerCard(autoAcceptCard, renderAutoAcceptCard);
}
