/**
 * The one Plansight status bar item (the server's own work-done progress is turned off, see
 * server/client.ts): a spinner while running, "2/5 · current item", and "waiting for your
 * review" when the run waits for the user. A click shows the conversation while it waits, else
 * the plan.
 */
import * as vscode from 'vscode';
import type { SessionStore } from '../session';
import { statusText } from './statusText';

export function registerStatusBar(context: vscode.ExtensionContext, store: SessionStore): void {
  const item = vscode.window.createStatusBarItem('plansight.status', vscode.StatusBarAlignment.Left, 10);
  item.name = 'Plansight';
  const update = (): void => {
    const waiting = store.waitingFor;
    const down = store.serverStatus === 'failed' || store.serverStatus === 'crashed';
    const { text, tooltip } = statusText(store.todos, store.running, 40, waiting, { status: store.serverStatus, problem: store.serverProblem });
    item.text = text;
    item.tooltip = tooltip;
    // A question opens its picker only from here, a click being the user asking for it.
    item.command = down
      ? 'plansight.restartServer'
      : store.waiting.questions > 0 && !store.planReview
        ? 'plansight.answerQuestion'
        : waiting
          ? 'plansight.showConversation'
          : 'plansight.showPlan';
    item.backgroundColor =
      down
        ? new vscode.ThemeColor('statusBarItem.errorBackground')
        : waiting
          ? new vscode.ThemeColor('statusBarItem.warningBackground')
          : undefined;
  };
  update();
  item.show();
  context.subscriptions.push(
    item,
    store.onDidChange((change) => {
      if (change === 'todos' || change === 'running' || change === 'server' || change === 'waiting') {
        update();
      }
    }),
  );
}
