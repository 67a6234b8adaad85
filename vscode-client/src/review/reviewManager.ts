/**
 * `plansight/reviewEdit`: shows the proposal as a card in the conversation (a compact diff and
 * its buttons) and in a diff editor beside the user's (left: the file as it is, right: an
 * editable copy of the proposal), and answers with the user's decision. Several reviews can be
 * pending at once, keyed by id. "Accept all in this run" answers the run's remaining reviews
 * itself until the user turns it off or the run ends.
 */
import * as vscode from 'vscode';
import {
  type AutoAcceptCardData,
  autoAcceptCard,
  type ReviewCardData,
  reviewCard,
} from '../conversation/cards';
import { cardDiff, lineDiffStat, writtenPatch } from './lineDiff';
import type { CardEntry, ConversationModel } from '../conversation/model';
import type { EditOutcome } from '../plan/planModel';
import type { ReviewEditParams, ReviewEditResult } from '../protocol';
import { reviewTitle } from '../plan/workersModel';
import type { SessionStore } from '../session';
import { OriginalContentProvider, originalScheme, ProposedFileSystem, proposedScheme } from './proposedFs';
import {
  acceptResult,
  autoAcceptable,
  hasConflictMarkers,
  markersQuestion,
  baseName,
  rejectResult,
  reviewIdFromQuery,
  reviewLocation,
  reviewNotice,
} from './reviewModel';

export const reviewContextKey = 'plansight.reviewOpen';

interface Review {
  params: ReviewEditParams;
  path: string;
  left: vscode.Uri;
  right: vscode.Uri;
  title: string;
  /** Its card in the conversation. */
  cardId: string;
  resolve(result: ReviewEditResult): void;
  /** Settles when the review is decided (closes its notification). */
  decided: Promise<void>;
  /** A notification shows it (the conversation was out of sight). */
  notified?: boolean;
  markDecided(): void;
}

/** A decided review, kept so its diff can be shown again from the plan tree. */
interface PastReview {
  left: vscode.Uri;
  right: vscode.Uri;
  title: string;
}

/** Where reviews show besides the diff: the conversation, and whether the user can see it. */
export interface ReviewSurface {
  model: ConversationModel;
  visible(): boolean;
  /** Fires when the conversation comes into sight or goes out of it. */
  onDidChangeVisibility: vscode.Event<boolean>;
}

export class ReviewManager implements vscode.Disposable {
  /** "Accept all in this run": its card while on, else undefined. */
  private autoAccept: CardEntry<AutoAcceptCardData> | undefined;
  private readonly pending = new Map<string, Review>();
  private readonly past = new Map<string, PastReview>();
  private readonly proposed = new ProposedFileSystem();
  private readonly original = new OriginalContentProvider();
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly store: SessionStore,
    private readonly output: vscode.LogOutputChannel,
    private readonly surface: ReviewSurface,
  ) {
    this.disposables.push(
      vscode.workspace.registerFileSystemProvider(proposedScheme, this.proposed, { isCaseSensitive: true }),
      vscode.workspace.registerTextDocumentContentProvider(originalScheme, this.original),
      this.proposed,
      this.original,
      // The conversation went out of sight with reviews open: a notification tells.
      surface.onDidChangeVisibility((visible) => {
        if (!visible) {
          for (const review of this.pending.values()) {
            this.notify(review);
          }
        }
      }),
    );
    this.changedPending();
  }

  /** Registers the accept / reject commands. */
  registerCommands(context: vscode.ExtensionContext): void {
    context.subscriptions.push(
      vscode.commands.registerCommand('plansight.acceptEdit', (target?: unknown) => this.accept(target)),
      vscode.commands.registerCommand('plansight.rejectEdit', (target?: unknown) => this.reject(target)),
    );
  }

  get pendingCount(): number {
    return this.pending.size;
  }

  isPending(id: string): boolean {
    return this.pending.has(id);
  }

  /** Handles one `plansight/reviewEdit` request; resolves when the user decides. */
  review(params: ReviewEditParams, token: vscode.CancellationToken): Promise<ReviewEditResult> {
    const target = vscode.Uri.parse(params.uri);
    const path = target.scheme === 'file' ? vscode.workspace.asRelativePath(target, false) : baseName(params.uri);
    const location = reviewLocation(params.id, path);
    const left = vscode.Uri.from({ scheme: originalScheme, ...location });
    const right = vscode.Uri.from({ scheme: proposedScheme, ...location });
    const title = reviewTitle(path, params);
    this.original.set(left, params.oldText);
    this.proposed.set(right, params.newText);
    this.store.addEdit({
      id: params.id,
      uri: params.uri,
      path,
      description: params.description,
      ...(params.todoId !== undefined ? { todoId: params.todoId } : {}),
      ...(params.planId !== undefined ? { planId: params.planId } : {}),
      outcome: 'pending',
    });

    const { added, removed } = lineDiffStat(params.oldText, params.newText);
    const card = this.surface.model.addCard<ReviewCardData>(reviewCard, {
      reviewId: params.id,
      path,
      description: params.description,
      diff: cardDiff(params.oldText, params.newText),
      added,
      removed,
      outcome: 'pending',
      ...(params.control === true ? { control: true } : {}),
      ...(typeof params.worker === 'string' ? { worker: params.worker } : {}),
      ...(params.conflict === true ? { conflict: true } : {}),
      ...(params.deleted === true ? { deleted: true } : {}),
    },
    // A worker's file taken in comes outside any run: its card must not start one.
    typeof params.worker === 'string' ? this.surface.model.outsideRun() : undefined);

    return new Promise<ReviewEditResult>((resolve) => {
      let markDecided = (): void => undefined;
      const decided = new Promise<void>((r) => (markDecided = r));
      const review: Review = { params, path, left, right, title, cardId: card.id, resolve, decided, markDecided };
      this.pending.set(params.id, review);
      this.changedPending();
      if (this.autoAccept?.data.on && autoAcceptable(params)) {
        this.autoAccept = this.surface.model.updateCard<AutoAcceptCardData>(this.autoAccept.id, {
          accepted: this.autoAccept.data.accepted + 1,
        });
        void this.finish(review, { accepted: true }, 'accepted', undefined, true);
        return;
      }
      token.onCancellationRequested(() => {
        if (this.pending.has(params.id)) {
          this.output.info(`Review ${params.id} cancelled by the server.`);
          void this.finish(review, { accepted: false, feedback: 'Cancelled.' }, 'cancelled');
        }
      });
      void this.showDiff(review);
      if (!this.surface.visible()) {
        // The card is where the review lives; a notification tells a user who cannot see it.
        this.notify(review);
      }
    });
  }

  /**
   * Opens a diff beside the user's editor without focus (or, with `plansight.review.openDiff`
   * set to `onRequest`, only when asked): the user's editor, cursor and keystrokes stay where
   * they are.
   */
  private async showDiff(review: Review): Promise<void> {
    const openDiff = vscode.workspace.getConfiguration('plansight').get<string>('review.openDiff', 'beside');
    if (openDiff === 'onRequest') {
      return;
    }
    await this.openDiff(review.left, review.right, review.title, true);
  }

  /**
   * Always in the side group (`ViewColumn.Beside`: the group beside the active one, created if
   * needed): never in the group the user works in, where a new tab would take their editor and
   * their keystrokes. Not by column number either: VS Code activates a group named by number
   * even with preserveFocus, and only the side group is exempt.
   */
  private async openDiff(left: vscode.Uri, right: vscode.Uri, title: string, preserveFocus: boolean): Promise<void> {
    try {
      await vscode.commands.executeCommand('vscode.diff', left, right, title, {
        preview: false,
        preserveFocus,
        viewColumn: vscode.ViewColumn.Beside,
      } satisfies vscode.TextDocumentShowOptions);
    } catch (error) {
      this.output.error(`Opening the diff of ${title}: ${String(error)}`);
    }
  }

  /**
   * A notification with Accept / Reject that goes away once the review is decided, wherever
   * that happens (a plain message's buttons would stay behind, stale). It is a progress
   * notification, so its actions are command links.
   */
  private notify(review: Review): void {
    if (review.notified) {
      return;
    }
    review.notified = true;
    const notice = reviewNotice(review.params.id, review.path, review.params.description, review.params.control === true, {
      ...(review.params.worker !== undefined ? { worker: review.params.worker } : {}),
      ...(review.params.conflict === true ? { conflict: true } : {}),
    });
    void vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: notice.title, cancellable: false },
      async (progress) => {
        progress.report({ message: notice.message });
        await review.decided;
      },
    );
  }

  /** Opens the diff of an edit on request (pending: the live review; decided: what was settled). */
  async show(id: string): Promise<void> {
    const shown = this.pending.get(id) ?? this.past.get(id);
    if (shown) {
      await this.openDiff(shown.left, shown.right, shown.title, false);
    } else if (this.store.findEdit(id)) {
      void vscode.window.showInformationMessage(
        'Plansight: this edit was reviewed before VS Code reloaded; its diff is not kept (the conversation shows the call).',
      );
    }
  }

  /** Which review a command is about: an id, a review URI, the active diff, or the only one. */
  private async target(target: unknown): Promise<Review | undefined> {
    if (typeof target === 'string') {
      return this.pending.get(target);
    }
    if (target && typeof target === 'object' && 'id' in target && typeof target.id === 'string') {
      const byId = this.pending.get(target.id);
      if (byId) {
        return byId;
      }
    }
    const fromUri = (uri: vscode.Uri | undefined): Review | undefined => {
      if (uri && (uri.scheme === proposedScheme || uri.scheme === originalScheme)) {
        const id = reviewIdFromQuery(uri.query);
        return id !== undefined ? this.pending.get(id) : undefined;
      }
      return undefined;
    };
    if (target instanceof vscode.Uri) {
      const review = fromUri(target);
      if (review) {
        return review;
      }
    }
    const input = vscode.window.tabGroups.activeTabGroup.activeTab?.input;
    if (input instanceof vscode.TabInputTextDiff) {
      const review = fromUri(input.modified) ?? fromUri(input.original);
      if (review) {
        return review;
      }
    }
    const active = fromUri(vscode.window.activeTextEditor?.document.uri);
    if (active) {
      return active;
    }
    const all = [...this.pending.values()];
    if (all.length <= 1) {
      return all[0];
    }
    const pick = await vscode.window.showQuickPick(
      all.map((r) => ({ label: r.path, description: r.params.description, review: r })),
      { placeHolder: 'Which proposed edit?' },
    );
    return pick?.review;
  }

  /** The proposal as the user left it (unsaved changes in the diff included). */
  private settledText(review: Review): string {
    const open = vscode.workspace.textDocuments.find(
      (d) => d.uri.toString() === review.right.toString(),
    );
    return open ? open.getText() : (this.proposed.text(review.right) ?? review.params.newText);
  }

  async accept(target?: unknown): Promise<void> {
    const review = await this.target(target);
    if (!review) {
      void vscode.window.showInformationMessage('Plansight: no proposed edit is waiting for review.');
      return;
    }
    const settled = this.settledText(review);
    if (review.params.conflict === true && hasConflictMarkers(settled)) {
      // A conflict is settled by the user: markers left in are written only if they say so.
      const keep = 'Accept with Markers';
      const answer = await vscode.window.showWarningMessage(markersQuestion(review.path), { modal: true }, keep);
      if (answer !== keep || !this.pending.has(review.params.id)) {
        if (this.pending.has(review.params.id)) await this.openDiff(review.left, review.right, review.title, false);
        return;
      }
    }
    const result = acceptResult(review.params.newText, settled);
    await this.finish(review, result, result.newText !== undefined ? 'changed' : 'accepted', settled);
  }

  async reject(target?: unknown): Promise<void> {
    const review = await this.target(target);
    if (!review) {
      void vscode.window.showInformationMessage('Plansight: no proposed edit is waiting for review.');
      return;
    }
    const reason = await vscode.window.showInputBox({
      title: `Reject the edit to ${review.path}`,
      prompt: 'Why? The agent reads your reason (leave empty to reject without one).',
      placeHolder: 'e.g. Keep the public API unchanged',
      ignoreFocusOut: true,
    });
    if (reason === undefined || !this.pending.has(review.params.id)) {
      return; // Escape: the review stays open.
    }
    const result = rejectResult(reason);
    await this.finish(review, result, 'rejected');
  }

  private async finish(
    review: Review,
    result: ReviewEditResult,
    outcome: Exclude<EditOutcome, 'pending'>,
    settled?: string,
    auto = false,
  ): Promise<void> {
    if (!this.pending.delete(review.params.id)) {
      return;
    }
    review.resolve(result);
    review.markDecided();
    this.changedPending();
    this.store.settleEdit(review.params.id, outcome, result.feedback);
    this.surface.model.updateCard<ReviewCardData>(
      review.cardId,
      {
        outcome,
        ...(result.feedback !== undefined ? { feedback: result.feedback } : {}),
        ...(auto ? { auto } : {}),
        // Accepted with the user's changes: the card shows what was written, not the proposal.
        ...(outcome === 'changed' && settled !== undefined ? writtenPatch(review.params.oldText, settled) : {}),
      },
      false,
    );
    // Keep what was decided, to show it again from the plan tree.
    const shown = outcome === 'rejected' || outcome === 'cancelled' ? review.params.newText : (settled ?? review.params.newText);
    const pastRight = review.left.with(reviewLocation(review.params.id, review.path, 'proposed'));
    this.original.set(pastRight, shown);
    this.past.set(review.params.id, {
      left: review.left,
      right: pastRight,
      title: `${review.path} (Plansight edit, ${outcome})`,
    });
    await this.closeDiff(review);
  }

  private async closeDiff(review: Review): Promise<void> {
    const right = review.right.toString();
    const document = vscode.workspace.textDocuments.find((d) => d.uri.toString() === right);
    if (document?.isDirty) {
      // Saving writes to the in-memory copy only; it keeps VS Code from asking on close.
      await document.save().then(undefined, () => undefined);
    }
    const tabs = vscode.window.tabGroups.all
      .flatMap((g) => g.tabs)
      .filter((tab) => {
        const input = tab.input;
        if (input instanceof vscode.TabInputTextDiff) {
          return input.modified.toString() === right;
        }
        return input instanceof vscode.TabInputText && input.uri.toString() === right;
      });
    if (tabs.length) {
      try {
        await vscode.window.tabGroups.close(tabs, true);
      } catch (error) {
        this.output.warn(`Closing the diff of ${review.path}: ${String(error)}`);
      }
    }
    this.proposed.remove(review.right);
  }

  /**
   * Answers every pending review as cancelled and closes its diff and notification (the run
   * ended, so nobody waits for the answer any more; or the server went away).
   */
  cancelAll(feedback: string): void {
    for (const review of [...this.pending.values()]) {
      this.output.info(`Review ${review.params.id} (${review.path}) closed: ${feedback}`);
      void this.finish(review, { accepted: false, feedback }, 'cancelled');
    }
  }

  /** The run ended: nothing waits any more, and "accept all" ends with it. */
  runFinished(): void {
    this.cancelAll('The run ended before the review was decided.');
    this.stopAutoAccept('runEnded');
  }

  /** Accepts this review and every further one of the run, until turned off. */
  async acceptAllInRun(target?: unknown): Promise<void> {
    if (!this.autoAccept?.data.on) {
      this.autoAccept = this.surface.model.addCard<AutoAcceptCardData>(autoAcceptCard, { on: true, accepted: 0 });
    }
    const pending = typeof target === 'string' ? [this.pending.get(target)].filter((r) => r !== undefined) : [...this.pending.values()];
    for (const review of pending) {
      // A control file's edit waits for its own Accept.
      if (autoAcceptable(review.params)) {
        await this.accept(review.params.id);
      }
    }
  }

  stopAutoAccept(why: 'user' | 'runEnded' = 'user'): void {
    if (this.autoAccept?.data.on) {
      this.surface.model.updateCard<AutoAcceptCardData>(this.autoAccept.id, { on: false, stopped: why }, false);
    }
    this.autoAccept = undefined;
  }

  /** A review card's buttons (`data-action`); the reason comes from the card's field. */
  async cardAction(card: CardEntry, action: string, fields: Record<string, string>): Promise<void> {
    const id = (card.data as ReviewCardData).reviewId;
    switch (action) {
      case 'accept':
        await this.accept(id);
        return;
      case 'reject': {
        const review = this.pending.get(id);
        if (review) {
          await this.finish(review, rejectResult(fields['reason']), 'rejected');
        }
        return;
      }
      case 'showDiff':
        await this.show(id);
        return;
      case 'acceptAll':
        await this.acceptAllInRun(id);
        return;
    }
  }

  /** "Accepting every edit in this run" card's button. */
  autoAcceptCardAction(_card: CardEntry, action: string): void {
    if (action === 'stop') {
      this.stopAutoAccept();
    }
  }

  private changedPending(): void {
    this.store.setWaiting('reviews', this.pending.size);
    void vscode.commands.executeCommand('setContext', reviewContextKey, this.pending.size > 0);
  }

  dispose(): void {
    this.cancelAll('The editor closed.');
    for (const d of this.disposables) {
      d.dispose();
    }
  }
}
