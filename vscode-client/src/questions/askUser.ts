/**
 * `plansight/askUser`: the agent's question as a QuickPick (several picks for a multi-select
 * question), with "Other…" for an answer in the user's own words (typed in the box, or asked
 * for when Other… is picked with nothing typed); Escape lets the agent decide (dismissed). A
 * card in the conversation shows the question and, once settled, the answer; its Answer…
 * button brings the QuickPick to the front. All of it closes when the server withdraws the
 * request.
 */
import * as vscode from 'vscode';
import type { CardEntry } from '../conversation/model';
import type { AskUserParams, AskUserResult } from '../protocol';
import type { ReviewSurface } from '../review/reviewManager';
import type { SessionStore } from '../session';
import {
  answerFrom,
  answerText,
  isMultiSelect,
  type OptionPick,
  optionPicks,
  placeholder,
  type QuestionCardData,
  questionCard,
  questionCardData,
} from './questionModel';

interface PendingQuestion {
  id: string;
  params: AskUserParams;
  picker?: vscode.QuickPick<OptionPick>;
  settle(result: AskUserResult, withdrawn?: boolean): void;
}

export class Questions implements vscode.Disposable {
  private readonly pending = new Map<string, PendingQuestion>();
  private counter = 0;

  constructor(
    private readonly output: vscode.LogOutputChannel,
    private readonly store: SessionStore,
    private readonly surface: ReviewSurface,
  ) {}

  /** Handles one `plansight/askUser` request; resolves once it is answered or dismissed. */
  request(params: AskUserParams, token: vscode.CancellationToken): Promise<AskUserResult> {
    this.counter += 1;
    const id = `question-${this.counter}`;
    const card = this.surface.model.addCard<QuestionCardData>(questionCard, questionCardData(id, params));
    return new Promise<AskUserResult>((resolve) => {
      const question: PendingQuestion = {
        id,
        params,
        settle: (result, withdrawn = false) => {
          if (!this.pending.delete(id)) {
            return;
          }
          resolve(result);
          this.store.setWaiting('questions', this.pending.size);
          question.picker?.dispose();
          const outcome = withdrawn ? 'withdrawn' : result.dismissed ? 'dismissed' : 'answered';
          this.surface.model.updateCard<QuestionCardData>(card.id, { outcome, answer: answerText(result) }, false);
          this.output.info(`Question ${outcome}: ${params.question}`);
        },
      };
      this.pending.set(id, question);
      this.store.setWaiting('questions', this.pending.size);
      token.onCancellationRequested(() => question.settle({ dismissed: true }, true));
      this.show(question);
    });
  }

  /** The QuickPick for `question` (again, if it was closed). */
  private show(question: PendingQuestion): void {
    if (question.picker) {
      question.picker.show();
      return;
    }
    const { params } = question;
    const picker = vscode.window.createQuickPick<OptionPick>();
    question.picker = picker;
    picker.title = `Plansight asks: ${params.question}`;
    picker.placeholder = placeholder(params);
    picker.canSelectMany = isMultiSelect(params);
    picker.ignoreFocusOut = true;
    picker.matchOnDescription = false;
    picker.items = optionPicks(params);
    let accepted = false;
    picker.onDidChangeValue((typed) => {
      // "Other…" follows what is typed, so that Enter answers it; the picks made are kept.
      const picked = new Set(picker.selectedItems.map((i) => i.option ?? '\u0000other'));
      const items = optionPicks(params, typed);
      picker.items = items;
      if (picker.canSelectMany) {
        picker.selectedItems = items.filter((i) => picked.has(i.option ?? '\u0000other'));
      }
    });
    picker.onDidAccept(async () => {
      const chosen = picker.canSelectMany ? picker.selectedItems : picker.activeItems.slice(0, 1);
      const options = chosen.map((i) => i.option).filter((o): o is string => o !== undefined);
      const wantsOther = chosen.some((i) => i.option === undefined) || (!options.length && picker.value.trim() !== '');
      let other = wantsOther ? picker.value.trim() : undefined;
      if (wantsOther && !other) {
        accepted = true;
        picker.hide();
        other = await vscode.window.showInputBox({ title: `Plansight asks: ${params.question}`, prompt: 'Your answer', ignoreFocusOut: true });
        if (other === undefined || !other.trim()) {
          question.settle({ dismissed: true });
          return;
        }
      }
      const result = answerFrom(params, options, other);
      if (result.dismissed && !picker.canSelectMany) {
        return; // nothing picked: keep asking
      }
      accepted = true;
      question.settle(result);
    });
    picker.onDidHide(() => {
      if (!accepted) {
        question.settle({ dismissed: true }); // Escape: the agent decides itself
      }
    });
    picker.show();
  }

  /** The question card's buttons. */
  cardAction(card: CardEntry, action: string): void {
    const question = this.pending.get((card.data as QuestionCardData).questionId);
    if (!question) {
      return;
    }
    if (action === 'answer') {
      this.show(question); // brings the QuickPick to the front
    } else if (action === 'dismiss') {
      question.settle({ dismissed: true });
    }
  }

  /** The run ended or the server went away. */
  cancelAll(): void {
    for (const question of [...this.pending.values()]) {
      question.settle({ dismissed: true }, true);
    }
  }

  dispose(): void {
    this.cancelAll();
  }
}
