/** `plansight/approveCommand`: a notification with Approve / Reject (and a reason). */
import * as vscode from 'vscode';
import type { ApproveCommandParams, ApproveCommandResult } from '../protocol';
import { truncate } from '../text';

export async function approveCommand(
  params: ApproveCommandParams,
  token: vscode.CancellationToken,
): Promise<ApproveCommandResult> {
  const command = truncate(params.command.replace(/\s*\n\s*/g, ' ⏎ '), 300);
  const choice = await Promise.race([
    vscode.window.showWarningMessage(
      `Plansight wants to run: ${command}  (in ${params.cwd})`,
      { modal: false },
      'Approve',
      'Reject',
    ),
    new Promise<'cancelled'>((resolve) => token.onCancellationRequested(() => resolve('cancelled'))),
  ]);
  if (choice === 'Approve') {
    return { approved: true };
  }
  if (choice === 'cancelled') {
    return { approved: false, feedback: 'Cancelled.' };
  }
  if (choice === undefined) {
    return { approved: false, feedback: 'The user dismissed the request without approving it.' };
  }
  const reason = await vscode.window.showInputBox({
    title: 'Reject the command',
    prompt: 'Why? The agent reads your reason (leave empty to reject without one).',
    ignoreFocusOut: true,
  });
  const feedback = reason?.trim();
  return feedback ? { approved: false, feedback } : { approved: false };
}
