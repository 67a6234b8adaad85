/**
 * `plansight/approveCommand`: a card in the conversation with Approve / Reject (and a reason),
 * and a notification when the conversation is out of sight. Both close once the request is
 * settled, however that happens: the user's answer, the server cancelling its request
 * (`$/cancelRequest` when the run is cancelled), or the run ending.
 */
import * as vscode from 'vscode';
import { type ApprovalCardData, approvalCard } from '../conversation/cards';
import type { CardEntry } from '../conversation/model';
import type { ApproveCommandParams, ApproveCommandResult } from '../protocol';
import type { ReviewSurface } from './reviewManager';
import type { SessionStore } from '../session';
import { commandNotice, sandboxSummary } from './approveCommandModel';

interface PendingApproval {
  id: string;
  params: ApproveCommandParams;
  cardId: string;
  done: Promise<void>;
  notified?: boolean;
  settle(result: ApproveCommandResult, cancelled?: boolean): void;
}

function outcomeOf(result: ApproveCommandResult, cancelled: boolean): ApprovalCardData['outcome'] {
  return result.approved ? 'approved' : cancelled ? 'cancelled' : 'rejected';
}

export class CommandApprovals implements vscode.Disposable {
  private readonly pending = new Map<string, PendingApproval>();
  private counter = 0;
  private readonly visibility: vscode.Disposable;

  constructor(
    private readonly output: vscode.LogOutputChannel,
    private readonly store: SessionStore,
    private readonly surface: ReviewSurface,
  ) {
    // The conversation went out of sight with approvals open: a notification tells.
    this.visibility = surface.onDidChangeVisibility((visible) => {
      if (!visible) {
        for (const approval of this.pending.values()) {
          this.notify(approval);
        }
      }
    });
  }

  registerCommands(context: vscode.ExtensionContext): void {
    context.subscriptions.push(
      vscode.commands.registerCommand('plansight.approveCommand', (id?: unknown) => this.approve(id)),
      vscode.commands.registerCommand('plansight.rejectCommand', (id?: unknown) => this.reject(id)),
    );
  }

  /** Handles one `plansight/approveCommand` request; resolves when it is settled. */
  request(params: ApproveCommandParams, token: vscode.CancellationToken): Promise<ApproveCommandResult> {
    this.counter += 1;
    const id = `command-${this.counter}`;
    const allowed = sandboxSummary(params);
    const card = this.surface.model.addCard<ApprovalCardData>(approvalCard, {
      approvalId: id,
      command: params.command,
      cwd: params.cwd,
      ...(allowed.text ? { sandbox: allowed.text, sandboxed: allowed.sandboxed === true } : {}),
      outcome: 'pending',
    });
    return new Promise<ApproveCommandResult>((resolve) => {
      let settled!: () => void;
      const done = new Promise<void>((r) => (settled = r));
      const approval: PendingApproval = {
        id,
        params,
        cardId: card.id,
        done,
        settle: (result, cancelled = false) => {
          if (this.pending.delete(id)) {
            resolve(result);
            settled();
            this.store.setWaiting('approvals', this.pending.size);
            this.surface.model.updateCard<ApprovalCardData>(
              card.id,
              { outcome: outcomeOf(result, cancelled), ...(result.feedback !== undefined ? { feedback: result.feedback } : {}) },
              false,
            );
          }
        },
      };
      this.pending.set(id, approval);
      this.store.setWaiting('approvals', this.pending.size);
      token.onCancellationRequested(() => {
        if (this.pending.has(id)) {
          this.output.info(`Command approval cancelled by the server: ${params.command}`);
          approval.settle({ approved: false, feedback: 'Cancelled.' }, true);
        }
      });
      if (!this.surface.visible()) {
        this.notify(approval);
      }
    });
  }

  /** A command card's buttons; the reason comes from the card's field. */
  cardAction(card: CardEntry, action: string, fields: Record<string, string>): void {
    const approval = this.pending.get((card.data as ApprovalCardData).approvalId);
    if (!approval) {
      return;
    }
    if (action === 'approve') {
      approval.settle({ approved: true });
    } else if (action === 'reject') {
      const feedback = fields['reason']?.trim();
      approval.settle(feedback ? { approved: false, feedback } : { approved: false });
    }
  }

  private notify(approval: PendingApproval): void {
    if (approval.notified) {
      return;
    }
    approval.notified = true;
    const notice = commandNotice(approval.params, approval.id);
    void vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: notice.title, cancellable: false },
      async (progress) => {
        progress.report({ message: notice.message });
        await approval.done;
      },
    );
  }

  /** The approval a command is about: its id, else the only one pending. */
  private target(id: unknown): PendingApproval | undefined {
    if (typeof id === 'string') {
      return this.pending.get(id);
    }
    return this.pending.size === 1 ? [...this.pending.values()][0] : undefined;
  }

  approve(id?: unknown): void {
    this.target(id)?.settle({ approved: true });
  }

  async reject(id?: unknown): Promise<void> {
    const approval = this.target(id);
    if (!approval) {
      return;
    }
    const reason = await vscode.window.showInputBox({
      title: 'Reject the command',
      prompt: 'Why? The agent reads your reason (leave empty to reject without one).',
      ignoreFocusOut: true,
    });
    if (reason === undefined) {
      return; // Escape: the request stays open.
    }
    const feedback = reason.trim();
    approval.settle(feedback ? { approved: false, feedback } : { approved: false });
  }

  /** Settles every pending approval (the run ended, or the server went away). */
  cancelAll(feedback: string): void {
    for (const approval of [...this.pending.values()]) {
      approval.settle({ approved: false, feedback }, true);
    }
  }

  dispose(): void {
    this.cancelAll('The editor closed.');
    this.visibility.dispose();
  }
}
