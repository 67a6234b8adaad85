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
import type { PlanComment, ReviewPlanParams, ReviewPlanResult, TodoItem } from '../protocol';
import type { ReviewSurface } from '../review/reviewManager';
import type { SessionStore } from '../session';
import {
  approveResult,
  cancelResult,
  changeNotes,
  itemIdOfLine,
  newComment,
  proposalText,
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
/** The proposal as documents of their own: `plansight-plan:/proposed.md` (commented on through
 * the Comments API) and `plansight-plan:/previous.md` (the diff's left side). */
export const proposalScheme = 'plansight-plan';
const proposedUri = vscode.Uri.from({ scheme: proposalScheme, path: '/proposed.md' });
const previousUri = vscode.Uri.from({ scheme: proposalScheme, path: '/previous.md' });

interface PendingReview {
  id: string;
  params: ReviewPlanParams;
  cardId: string;
  done: Promise<void>;
  settle(result: ReviewPlanResult, withdrawn?: boolean): void;
  /** The user's comments on this proposal so far. */
  comments: PlanComment[];
}

export class PlanReviews implements vscode.Disposable, vscode.TextDocumentContentProvider {
  private pending: PendingReview | undefined;
  private counter = 0;
  private commentCounter = 0;
  private readonly documentChanged = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.documentChanged.event;
  private readonly comments: vscode.CommentController;
  private threads: vscode.CommentThread[] = [];

  constructor(
    private readonly output: vscode.LogOutputChannel,
    private readonly store: SessionStore,
    private readonly surface: ReviewSurface,
  ) {
    this.comments = vscode.comments.createCommentController('plansight.planComments', 'Plansight plan review');
    // Only the proposal document's item lines take comments, and only while a plan waits.
    this.comments.commentingRangeProvider = {
      provideCommentingRanges: (document) => {
        if (document.uri.toString() !== proposedUri.toString() || !this.pending) {
          return [];
        }
        const ranges: vscode.Range[] = [];
        for (let line = 0; line < document.lineCount; line += 1) {
          if (itemIdOfLine(document.lineAt(line).text) !== undefined) {
            ranges.push(new vscode.Range(line, 0, line, 0));
          }
        }
        return ranges;
      },
    };
    this.comments.options = { prompt: 'Comment on this item…', placeHolder: 'What should change, or what to keep in mind' };
  }

  /** The proposal documents' text (TextDocumentContentProvider). */
  provideTextDocumentContent(uri: vscode.Uri): string {
    const params = this.pending?.params;
    if (!params) {
      return '';
    }
    if (uri.path === previousUri.path) {
      return proposalText(params.previous?.items ?? []);
    }
    return proposalText(this.store.todos.items, changeNotes(params));
  }

  registerCommands(context: vscode.ExtensionContext): void {
    context.subscriptions.push(
      vscode.commands.registerCommand('plansight.plan.approve', () => this.approve()),
      vscode.commands.registerCommand('plansight.plan.revise', (feedback?: unknown) =>
        this.revise(typeof feedback === 'string' ? feedback : undefined),
      ),
      vscode.commands.registerCommand('plansight.plan.cancelReview', () => this.cancel()),
      vscode.commands.registerCommand('plansight.plan.openMarkdown', () => this.openMarkdown()),
      vscode.commands.registerCommand('plansight.plan.approveWithComments', () => this.approve(true)),
      vscode.commands.registerCommand('plansight.plan.commentItem', (node?: unknown) => this.commentItem(node)),
      vscode.commands.registerCommand('plansight.plan.addLineComment', (reply: vscode.CommentReply) => this.addLineComment(reply)),
      vscode.commands.registerCommand('plansight.plan.showChanges', () => this.showChanges()),
      vscode.workspace.registerTextDocumentContentProvider(proposalScheme, this),
      this.comments,
      this.documentChanged,
    );
  }

  /** The user's comment on an item of the tree (its context menu): asked in an InputBox only
   * because the user chose the command. */
  async commentItem(node?: unknown): Promise<void> {
    const review = this.pending;
    if (!review) {
      void vscode.window.showInformationMessage('Plansight: no plan waits for approval.');
      return;
    }
    let item = itemOfNode(node);
    if (!item) {
      const pick = await vscode.window.showQuickPick(
        this.store.todos.items.map((i) => ({ label: i.text, description: `#${i.id}`, item: i })),
        { placeHolder: 'Comment on which item?' },
      );
      item = pick?.item;
    }
    if (!item) {
      return;
    }
    const text = await vscode.window.showInputBox({
      title: `Comment on plan item #${item.id}`,
      prompt: `${item.text} — sent with Approve with Comments (kept as the item's notes) or Revise.`,
      ignoreFocusOut: true,
      validateInput: (v) => (v.trim() ? undefined : 'The comment must not be empty.'),
    });
    if (text !== undefined) {
      this.addComment(review, text, item.id);
    }
  }

  /** A comment made through the Comments API on a line of the proposal document. */
  private addLineComment(reply: vscode.CommentReply): void {
    const review = this.pending;
    const thread = reply.thread;
    if (!review) {
      thread.dispose();
      return;
    }
    const document = vscode.workspace.textDocuments.find((d) => d.uri.toString() === thread.uri.toString());
    const line = thread.range?.start.line ?? 0;
    const todoId = document ? itemIdOfLine(document.lineAt(line).text) : undefined;
    const comment = this.addComment(review, reply.text, todoId);
    if (!comment) {
      return;
    }
    thread.comments = [
      ...thread.comments,
      { body: comment.text, mode: vscode.CommentMode.Preview, author: { name: 'You' } },
    ];
    thread.canReply = true;
    if (!this.threads.includes(thread)) {
      this.threads.push(thread);
    }
  }

  private addComment(review: PendingReview, text: string, todoId?: string): PlanComment | undefined {
    this.commentCounter += 1;
    // Ids must differ from the session's comments still open: the review and a counter.
    const comment = newComment(`${review.id}-c${this.commentCounter}`, text, todoId);
    if (!comment) {
      return undefined;
    }
    review.comments.push(comment);
    this.surface.model.updateCard<PlanReviewCardData>(review.cardId, { comments: [...review.comments] });
    this.output.info(`Plan review: comment ${comment.id}${todoId ? ` on #${todoId}` : ''}.`);
    return comment;
  }

  /** The proposal beside the previous one: `vscode.diff` of the two proposal documents, the
   * comment that asked for each change under its item; or the proposal alone (to comment on
   * its lines) when there is no previous one. */
  async showChanges(): Promise<void> {
    const review = this.pending;
    if (!review) {
      void vscode.window.showInformationMessage('Plansight: no plan waits for approval.');
      return;
    }
    this.documentChanged.fire(proposedUri);
    this.documentChanged.fire(previousUri);
    if (!review.params.previous) {
      await vscode.window.showTextDocument(proposedUri, { preview: false });
      return;
    }
    await vscode.commands.executeCommand('vscode.diff', previousUri, proposedUri, 'Plan: previous ↔ proposed', { preview: false });
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
        comments: [...(params.comments ?? [])],
        settle: (result, withdrawn = false) => {
          if (this.pending !== review) {
            return;
          }
          this.pending = undefined;
          resolve(result);
          settled();
          this.store.setPlanReview(undefined);
          for (const thread of this.threads.splice(0)) {
            thread.dispose();
          }
          void vscode.commands.executeCommand('setContext', planReviewContextKey, false);
          this.surface.model.updateCard<PlanReviewCardData>(card.id, settledCardPatch(result, withdrawn), false);
          this.output.info(`Plan review: ${withdrawn ? 'withdrawn' : result.decision}.`);
        },
      };
      this.pending = review;
      this.documentChanged.fire(proposedUri);
      this.documentChanged.fire(previousUri);
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

  /** Approve; with `withComments`, the user's comments go along (approve with notes). Plain
   * Approve sends no comment: what the user did not choose to send is not sent. */
  approve(withComments = false): void {
    const review = this.pending;
    if (!review) {
      void vscode.window.showInformationMessage('Plansight: no plan waits for approval.');
      return;
    }
    if (withComments && !review.comments.length) {
      void vscode.window.showInformationMessage('Plansight: no comments yet: comment on an item from its context menu, or on a line of Show Changes.');
      return;
    }
    review.settle(approveResult(this.store.todos, withComments ? review.comments : []));
  }

  /** Asks what should change (unless given) and sends it; Escape keeps the review open. */
  async revise(feedback?: string): Promise<void> {
    const review = this.pending;
    if (!review) {
      void vscode.window.showInformationMessage('Plansight: no plan waits for approval.');
      return;
    }
    let text = feedback?.trim();
    if (!text && !review.comments.length) {
      text = await vscode.window.showInputBox({
        title: 'Revise the plan',
        prompt: 'What should change? The agent reads your feedback and plans again.',
        ignoreFocusOut: true,
      });
      if (text === undefined) {
        return;
      }
    }
    review.settle(reviseResult(text ?? '', this.store.todos, review.comments));
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
    } else if (action === 'approveWithComments') {
      this.approve(true);
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

/** The item of a tree row given to a command (`{ kind: 'todo', item }`), if it is one. */
function itemOfNode(node: unknown): TodoItem | undefined {
  if (node && typeof node === 'object' && (node as { kind?: unknown }).kind === 'todo') {
    return (node as { item: TodoItem }).item;
  }
  return undefined;
}
