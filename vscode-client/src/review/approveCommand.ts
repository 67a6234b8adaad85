/**
 * `plansight/approveCommand`: a notification with Approve / Reject (and a reason) that goes away
 * once the request is settled, however that happens: the user's answer, the server cancelling
 * its request (`$/cancelRequest` when the run is cancelled), or the run ending.
 */
import * as vscode from 'vscode';
import type { ApproveCommandParams, ApproveCommandResult } from '../protocol';
import { oneLine, truncate } from '../text';

interface PendingApproval {
  id: string;
  params: ApproveCommandParams;
  settle(result: ApproveCommandResult): void;
}

export class CommandApprovals implements vscode.Disposable {
  private readonly pending = new Map<string, PendingApproval>();
  private counter = 0;

  constructor(private readonly output: vscode.LogOutputChannel) {}

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
    return new Promise<ApproveCommandResult>((resolve) => {
      let settled!: () => void;
      const done = new Promise<void>((r) => (settled = r));
      const approval: PendingApproval = {
        id,
        params,
        settle: (result) => {
          if (this.pending.delete(id)) {
            resolve(result);
            settled();
          }
        },
      };
      this.pending.set(id, approval);
      token.onCancellationRequested(() => {
        if (this.pending.has(id)) {
          this.output.info(`Command approval cancelled by the server: ${params.command}`);
          approval.settle({ approved: false, feedback: 'Cancelled.' });
        }
      });
      this.notify(approval, done);
    });
  }

  private notify(approval: PendingApproval, done: Promise<void>): void {
    const command = truncate(oneLine(approval.params.command.replace(/\s*\n\s*/g, ' ⏎ ')), 300);
    const args = encodeURIComponent(JSON.stringify([approval.id]));
    void vscode.window.withProgress(
      {
        location: vscode.ProgressLocation.Notification,
        title: `Plansight wants to run: ${command}`,
        cancellable: false,
      },
      async (progress) => {
        progress.report({
          message:
            `(in ${approval.params.cwd}) ` +
            `[Approve](command:plansight.approveCommand?${args}) · ` +
            `[Reject](command:plansight.rejectCommand?${args})`,
        });
        await done;
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
      approval.settle({ approved: false, feedback });
    }
  }

  dispose(): void {
    this.cancelAll('The editor closed.');
  }
}
