/** The status bar item: spinner while running, "2/5 · current item"; click shows the plan. */
import * as vscode from 'vscode';
import type { SessionStore } from '../session';
import { statusText } from './statusText';

export function registerStatusBar(context: vscode.ExtensionContext, store: SessionStore): void {
  const item = vscode.window.createStatusBarItem('plansight.status', vscode.StatusBarAlignment.Left, 10);
  item.name = 'Plansight';
  item.command = 'plansight.showPlan';
  const update = (): void => {
    const { text, tooltip } = statusText(store.todos, store.running);
    item.text = text;
    item.tooltip = tooltip;
    item.backgroundColor =
      store.serverStatus === 'failed' ? new vscode.ThemeColor('statusBarItem.errorBackground') : undefined;
  };
  update();
  item.show();
  context.subscriptions.push(
    item,
    store.onDidChange((change) => {
      if (change === 'todos' || change === 'running' || change === 'server') {
        update();
      }
    }),
  );
}
