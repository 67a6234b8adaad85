/**
 * Cards about a run itself rather than something the agent asks: a past edit's decision
 * (read-only, from the history or written without asking), a run to send again after an API
 * error or a server crash (Retry), and a request kept while the server cannot start. Data
 * types and renderers. Pure: no `vscode` import.
 */
import { cardDiff, lineDiffStat } from '../review/lineDiff';
import { type CardEntry, editOutcomeIcons, editOutcomeWords, pastReviewCard, type PastReviewCardData } from './model';
import type { ConversationRenderer, RenderHelpers } from './render';

export { pastReviewCard };
export const retryCard = 'retry';
export const serverDownCard = 'serverDown';

/**
 * Whether a run's error is the API refusing the key (401): the server's words carry the HTTP
 * status or the API's error type (engine/model.py), as the terminal and ACP read them.
 */
export function keyRefused(error: string): boolean {
  return /\(HTTP 401\)|authentication_error/.test(error);
}

/** The refused key in the user's words: where the key comes from, and what to do. */
export const keyRefusedReason =
  'The model API refused the API key (HTTP 401). Set API Key stores a new one in the editor\'s secret storage (it is given to the server as ANTHROPIC_API_KEY, before any in the environment), then Retry.';

export interface RetryCardData {
  /** What went wrong, in words. */
  reason: string;
  /** The API refused the key: the card offers Set API Key. */
  keyRefused?: boolean;
  outcome: 'pending' | 'sent' | 'dismissed';
}

export interface ServerDownCardData {
  /** Why the server is not running, in words. */
  why: string;
  outcome: 'pending' | 'sent' | 'dismissed';
}

/** A past edit: how it was decided and, when the history has the tool's input, the change. */
export function renderPastReviewCard(card: CardEntry, h: RenderHelpers): string {
  const data = card.data as PastReviewCardData;
  const change = data.oldText !== undefined && data.newText !== undefined ? { old: data.oldText, new: data.newText } : undefined;
  // The same line-level diff as the live card's (review/lineDiff.ts): a reloaded card read
  // differently from the one the user had reviewed (a block of removed and added lines).
  const stat = change ? lineDiffStat(change.old, change.new) : undefined;
  const lines = change ? cardDiff(change.old, change.new) : [];
  const rows = lines.map((l) => {
    const sign = l.kind === 'added' ? '+' : l.kind === 'removed' ? '−' : l.kind === 'skipped' ? '⋯' : ' ';
    return `<span class="${l.kind}">${sign} ${h.escape(l.text)}</span>`;
  });
  const words = editOutcomeWords[data.outcome] ?? data.outcome;
  const reason = data.outcome === 'rejected' && data.feedback ? `: ${data.feedback}` : '';
  const label = words.charAt(0).toUpperCase() + words.slice(1) + reason;
  return (
    `<div class="card-head">${h.icon('diff')}<span>Edit <strong>${h.escape(data.path)}</strong></span>` +
    (stat ? `<span class="stat"><span class="added">+${stat.added}</span> <span class="removed">−${stat.removed}</span></span>` : '') +
    `</div>` +
    `${data.description ? `<div class="card-text">${h.escape(data.description)}</div>` : ''}` +
    `${rows.length ? `<pre class="diff">${rows.join('\n')}</pre>` : ''}` +
    `<div class="outcome ${h.escape(data.outcome)}">${h.icon(editOutcomeIcons[data.outcome] ?? 'edit')}<span>${h.escape(label)}</span></div>`
  );
}

export function renderRetryCard(card: CardEntry, h: RenderHelpers): string {
  const data = card.data as RetryCardData;
  const head = `<div class="card-head">${h.icon('error')}<span>${h.escape(data.reason)}</span></div>`;
  if (card.open) {
    return (
      head +
      `<div class="buttons">` +
      (data.keyRefused ? h.button('setKey', 'Set API Key', { primary: true, icon: 'key', title: 'Store a new Anthropic API key (the server restarts with it)' }) : '') +
      `${h.button('retry', 'Retry', { primary: !data.keyRefused, icon: 'refresh', title: 'Send the same request again' })}` +
      `${h.button('showOutput', 'Show Output', { icon: 'output' })}</div>`
    );
  }
  const text = data.outcome === 'sent' ? 'Sent again.' : 'Not sent again.';
  return head + `<div class="outcome">${h.icon(data.outcome === 'sent' ? 'refresh' : 'circle-slash')}<span>${h.escape(text)}</span></div>`;
}

export function renderServerDownCard(card: CardEntry, h: RenderHelpers): string {
  const data = card.data as ServerDownCardData;
  if (card.open) {
    return (
      `<div class="card-head">${h.icon('debug-disconnect')}<span>The Plansight server is not running</span></div>` +
      `<div class="card-text">${h.escape(data.why)}</div>` +
      `<div class="card-text">Your request is kept and goes out as soon as the server starts.</div>` +
      `<div class="buttons">${h.button('retry', 'Retry', { primary: true, icon: 'refresh', title: 'Start the server again and send the request' })}` +
      `${h.button('openSetting', 'Open Setting', { icon: 'settings-gear', title: 'plansight.python: the interpreter that runs the server' })}` +
      `${h.button('showOutput', 'Show Output', { icon: 'output' })}</div>`
    );
  }
  const text = data.outcome === 'sent' ? 'The server started: your request was sent.' : 'Not sent (the server did not start).';
  return `<div class="outcome">${h.icon(data.outcome === 'sent' ? 'check' : 'circle-slash')}<span>${h.escape(text)}</span></div>`;
}

export function registerRunCards(renderer: ConversationRenderer): void {
  renderer.registerCard(pastReviewCard, renderPastReviewCard);
  renderer.registerCard(retryCard, renderRetryCard);
  renderer.registerCard(serverDownCard, renderServerDownCard);
}
