/**
 * A question from the agent (`plansight/askUser`): the notification that says it waits, and,
 * once the user asks for it, a QuickPick: its options (several may be
 * picked for a multi-select question) and "Other…" for an answer in the user's own words; and
 * the answer sent back. Also the conversation's question card. Pure: no `vscode` import.
 */
import type { CardEntry } from '../conversation/model';
import type { RenderHelpers } from '../conversation/render';
import type { AskUserParams, AskUserResult } from '../protocol';
import { escapeIcons, oneLine, truncate } from '../text';

export const questionCard = 'question';

export interface OptionPick {
  label: string;
  /** The option it stands for; undefined for "Other…". */
  option?: string;
  description?: string;
  alwaysShow?: boolean;
}

export function options(params: AskUserParams): string[] {
  return Array.isArray(params.options) ? params.options.filter((o): o is string => typeof o === 'string') : [];
}

export function isMultiSelect(params: AskUserParams): boolean {
  return params.multiSelect === true && options(params).length > 0;
}

/** "Other…", or, once the user typed in the filter box, "Answer: <what they typed>". */
export function otherPick(typed: string): OptionPick {
  const text = typed.trim();
  return text
    ? { label: `$(edit) Answer: ${escapeIcons(truncate(oneLine(text), 80))}`, description: 'your own words', alwaysShow: true }
    : { label: '$(edit) Other…', description: 'answer in your own words', alwaysShow: true };
}

export function optionPicks(params: AskUserParams, typed = ''): OptionPick[] {
  return [...options(params).map((option) => ({ label: escapeIcons(option), option })), otherPick(typed)];
}

/** The notification that says a question waits (it takes no focus; Answer… opens the picker). */
export function questionNotice(params: AskUserParams): string {
  return `Plansight asks: ${truncate(oneLine(params.question), 200)}`;
}

/** The QuickPick's placeholder: how to answer. */
export function placeholder(params: AskUserParams): string {
  if (!options(params).length) {
    return 'Type your answer and press Enter (Escape: answer later)';
  }
  return isMultiSelect(params)
    ? 'Pick one or more, then press Enter; or choose Other… (Escape: answer later)'
    : 'Pick an answer, or type your own (Escape: answer later)';
}

/**
 * The answer from what was picked: the options chosen and, when "Other…" was among them, the
 * user's own words (`other`). Nothing at all is a dismissal.
 */
export function answerFrom(params: AskUserParams, picked: readonly string[], other?: string): AskUserResult {
  const chosen = picked.filter((p) => options(params).includes(p));
  const own = other?.trim();
  if (isMultiSelect(params)) {
    if (!chosen.length && !own) {
      return { dismissed: true };
    }
    return { ...(chosen.length ? { answers: chosen } : {}), ...(own ? { answer: own } : {}) };
  }
  const answer = own || chosen[0];
  return answer ? { answer } : { dismissed: true };
}

export interface QuestionCardData {
  questionId: string;
  question: string;
  options: string[];
  multiSelect: boolean;
  outcome: 'pending' | 'answered' | 'dismissed' | 'withdrawn';
  answer?: string;
}

export function questionCardData(questionId: string, params: AskUserParams): QuestionCardData {
  return { questionId, question: params.question, options: options(params), multiSelect: isMultiSelect(params), outcome: 'pending' };
}

/** The answer as the card shows it. */
export function answerText(result: AskUserResult): string {
  return [...(result.answers ?? []), ...(result.answer ? [result.answer] : [])].join('; ');
}

export function renderQuestionCard(card: CardEntry, h: RenderHelpers): string {
  const data = card.data as QuestionCardData;
  const list = data.options.length
    ? `<ul class="options">${data.options.map((o) => `<li>${h.escape(o)}</li>`).join('')}</ul>`
    : '';
  const head =
    `<div class="card-head">${h.icon('question')}<span><strong>Plansight asks</strong>` +
    `${data.multiSelect ? ' (pick one or more)' : ''}</span></div>` +
    `<div class="card-text question">${h.escape(data.question)}</div>` + list;
  if (card.open) {
    return (
      head +
      `<div class="card-text hint">Waiting for your answer: Answer… opens a picker (nothing opens by itself).</div>` +
      `<div class="buttons">${h.button('answer', 'Answer…', { primary: true, icon: 'reply' })}` +
      `${h.button('dismiss', 'Let the Agent Decide', { icon: 'circle-slash' })}</div>`
    );
  }
  const said =
    data.outcome === 'answered'
      ? `You answered: ${data.answer ?? ''}`
      : data.outcome === 'dismissed'
        ? 'Dismissed: the agent decides itself'
        : 'The run ended before an answer';
  return head + `<div class="outcome ${data.outcome}">${h.icon(data.outcome === 'answered' ? 'check' : 'circle-slash')}<span>${h.escape(said)}</span></div>`;
}
