/**
 * `plansight/askUser`: the agent's question waits on its card in the conversation, in the
 * status bar and in a notification; none of them takes the keyboard (a QuickPick opened by
 * itself took the keys of a user typing in the editor, and Enter sent what they typed as the
 * answer: issue 31). The QuickPick opens only when the user asks for it: the card's Answer…,
 * the notification's Answer…, or Plansight: Answer Question. It offers the options (several
 * picks for a multi-select question) and "Other…" for an answer in the user's own words;
 * Escape closes it and the question keeps waiting; Let the Agent Decide dismisses it. All of
 * it closes when the server withdraws the request.
 */
import * as vscode from 'vscode';
import type { CardEntry } from '../conversation/model';
import type { AskUserParams, AskUserResult } from '../protocol';
import type { ReviewSurface } from '../review/reviewManager';
import type { SessionStore } from '../session';
import {
  answerFrom,
  questionNotice,
  answerText,
  isMultiSelect,
  type OptionPick,
  optionPicks,
  placeholder,
  type QuestionCardData,
  questionCard,
  questionCardData,
} from './questionModel';

/** True while a question waits (for the Answer Question command and its keybinding). */
export const questionContextKey = 'plansight.questionOpen';

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
          void vscode.commands.executeCommand('setContext', questionContextKey, this.pending.size > 0);
          question.picker?.dispose();
          const outcome = withdrawn ? 'withdrawn' : result.dismissed ? 'dismissed' : 'answered';
          this.surface.model.updateCard<QuestionCardData>(card.id, { outcome, answer: answerText(result) }, false);
          this.output.info(`Question ${outcome}: ${params.question}`);
        },
      };
      this.pending.set(id, question);
      this.store.setWaiting('questions', this.pending.size);
      token.onCancellationRequested(() => question.settle({ dismissed: true }, true));
      void vscode.commands.executeCommand('setContext', questionContextKey, true);
      this.notify(question);
    });
  }

  /** A notification (it takes no focus); its Answer… opens the QuickPick. */
  private notify(question: PendingQuestion): void {
    void vscode.window.showInformationMessage(questionNotice(question.params), 'Answer…', 'Let the Agent Decide').then((choice) => {
      if (!this.pending.has(question.id)) {
        return; // answered on its card meanwhile, or withdrawn
      }
      if (choice === 'Answer…') {
        this.show(question);
      } else if (choice === 'Let the Agent Decide') {
        question.settle({ dismissed: true });
      }
    });
  }

  /** Plansight: Answer Question: the oldest question still waiting, in a QuickPick. */
  answerOldest(): void {
    const first = this.pending.values().next();
    if (first.done) {
      void vscode.window.showInformationMessage('Plansight: no question is waiting for an answer.');
      return;
    }
    this.show(first.value);
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
        picker.hide();
        other = await vscode.window.showInputBox({ title: `Plansight asks: ${params.question}`, prompt: 'Your answer', ignoreFocusOut: true });
        if (other === undefined || !other.trim()) {
          return; // closed: the question keeps waiting on its card
        }
      }
      const result = answerFrom(params, options, other);
      if (result.dismissed && !picker.canSelectMany) {
        return; // nothing picked: keep asking
      }
      question.settle(result);
    });
    picker.onDidHide(() => {
      // Escape (or a click elsewhere) only closes the picker: the question waits on its card,
      // and a later Answer… opens a fresh one. Letting the agent decide is its own button.
      question.picker = undefined;
      picker.dispose();
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
