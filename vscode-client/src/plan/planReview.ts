/**
 * `plansight/reviewPlan`: the proposed plan waits for the user in the Plan view (marked as
 * waiting, its summary in full at the top, Approve / Revise… / Cancel in the view's title), in
 * a notification that keeps its buttons until the plan is decided, and as a card in the
 * conversation. The Plan view's own commands edit the proposal meanwhile (`plansight/editPlan`);
 * Approve sends the plan as the view shows it, so what the user approves is what runs. All of
 * it closes once the review is settled: the user's decision, the server withdrawing its
 * request (`$/cancelRequest` when the run is cancelled), or the run ending.
 */
import * as vscode from 'vscode';
import type { CardEntry } from '../conversation/model';
import type { ReviewPlanParams, ReviewPlanResult } from '../protocol';
import type { ReviewSurface } from '../review/reviewManager';
import type { SessionStore } from '../session';
import {
  approveResult,
  cancelResult,
  notificationMessage,
  notificationTitle,
  planMarkdown,
  type PlanReviewCardData,
  planReviewCard,
  planReviewCardData,
  reviseResult,
  settledCardPatch,
} from './planReviewModel';

export const planReviewContextKey = 'plansight.planReviewOpen';

interface PendingReview {
  id: string;
  params: ReviewPlanParams;
  cardId: string;
  done: Promise<void>;
  settle(result: ReviewPlanResult, withdrawn?: boolean): void;
}

export class PlanReviews implements vscode.Disposable {
  private pending: PendingReview | undefined;
  private counter = 0;

  constructor(
    private readonly output: vscode.LogOutputChannel,
    private readonly store: SessionStore,
    private readonly surface: ReviewSurface,
  ) {}

  registerCommands(context: vscode.ExtensionContext): void {
    context.subscriptions.push(
      vscode.commands.registerCommand('plansight.plan.approve', () => this.approve()),
      vscode.commands.registerCommand('plansight.plan.revise', (feedback?: unknown) =>
        this.revise(typeof feedback === 'string' ? feedback : undefined),
      ),
      vscode.commands.registerCommand('plansight.plan.cancelReview', () => this.cancel()),
      vscode.commands.registerCommand('plansight.plan.openMarkdown', () => this.openMarkdown()),
    );
  }

  /** Handles one `plansight/reviewPlan` request; resolves once it is settled. */
  request(params: ReviewPlanParams, token: vscode.CancellationToken): Promise<ReviewPlanResult> {
    // One review at a time: a new one (the server asking again) replaces an open one.
    this.pending?.settle(cancelResult(), true);
    this.counter += 1;
    const id = `plan-${this.counter}`;
    const card = this.surface.model.addCard<PlanReviewCardData>(planReviewCard, planReviewCardData(id, params));
    this.store.setPlanReview({ summary: params.summary, ...(params.problem ? { problem: params.problem } : {}) });
    void vscode.commands.executeCommand('setContext', planReviewContextKey, true);
    return new Promise<ReviewPlanResult>((resolve) => {
      let settled!: () => void;
      const done = new Promise<void>((r) => (settled = r));
      const review: PendingReview = {
        id,
        params,
        cardId: card.id,
        done,
        settle: (result, withdrawn = false) => {
          if (this.pending !== review) {
            return;
          }
          this.pending = undefined;
          resolve(result);
          settled();
          this.store.setPlanReview(undefined);
          void vscode.commands.executeCommand('setContext', planReviewContextKey, false);
          this.surface.model.updateCard<PlanReviewCardData>(card.id, settledCardPatch(result, withdrawn), false);
          this.output.info(`Plan review: ${withdrawn ? 'withdrawn' : result.decision}.`);
        },
      };
      this.pending = review;
      token.onCancellationRequested(() => review.settle(cancelResult(), true));
      this.notify(review);
      void vscode.commands.executeCommand('plansight.plan.focus');
    });
  }

  /**
   * A notification with the decisions as links, first on its line so that a collapsed toast
   * shows them too; it stays until the plan is decided (a progress notification closes when
   * its task ends, which a notification with buttons cannot be made to do).
   */
  private notify(review: PendingReview): void {
    void vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: notificationTitle(), cancellable: false },
      async (progress) => {
        progress.report({ message: notificationMessage(review.params.summary, review.params.problem) });
        await review.done;
      },
    );
  }

  approve(): void {
    if (!this.pending) {
      void vscode.window.showInformationMessage('Plansight: no plan waits for approval.');
      return;
    }
    this.pending.settle(approveResult(this.store.todos));
  }

  /** Asks what should change (unless given) and sends it; Escape keeps the review open. */
  async revise(feedback?: string): Promise<void> {
    const review = this.pending;
    if (!review) {
      void vscode.window.showInformationMessage('Plansight: no plan waits for approval.');
      return;
    }
    let text = feedback?.trim();
    if (!text) {
      text = await vscode.window.showInputBox({
        title: 'Revise the plan',
        prompt: 'What should change? The agent reads your feedback and plans again.',
        ignoreFocusOut: true,
      });
      if (text === undefined) {
        return;
      }
    }
    review.settle(reviseResult(text, this.store.todos));
  }

  cancel(): void {
    this.pending?.settle(cancelResult());
  }

  /** The plan and its summary as an untitled Markdown document, to save anywhere. */
  async openMarkdown(): Promise<void> {
    const summary = this.pending?.params.summary ?? this.store.planSummary;
    const document = await vscode.workspace.openTextDocument({ language: 'markdown', content: planMarkdown(this.store.todos, summary) });
    await vscode.window.showTextDocument(document, { preview: false });
  }

  /** The plan card's buttons; Revise uses the card's feedback field. */
  async cardAction(card: CardEntry, action: string, fields: Record<string, string>): Promise<void> {
    const data = card.data as PlanReviewCardData;
    if (action === 'markdown') {
      await this.openMarkdown();
      return;
    }
    if (this.pending?.id !== data.reviewId) {
      return;
    }
    if (action === 'approve') {
      this.approve();
    } else if (action === 'revise') {
      await this.revise(fields['feedback']);
    } else if (action === 'cancel') {
      this.cancel();
    }
  }

  /** The run ended or the server went away: nobody waits for the review any more. */
  cancelAll(): void {
    this.pending?.settle(cancelResult(), true);
  }

  dispose(): void {
    this.cancelAll();
  }
}
