/**
 * `plansight.pickModel` (in the Conversation view's title menu and the command palette): the
 * models the Models API lists, asked of the server (`plansight/models`), and extended thinking;
 * a choice is written to the settings (`plansight.model`, `plansight.thinking`), which restart
 * the server. Not during a run: a restart would end it.
 */
import * as vscode from 'vscode';
import { Methods, type ModelsResult } from '../protocol';
import type { PlansightServer } from '../server/client';
import type { SessionStore } from '../session';
import { choiceMessage, type ModelChoice, modelPicks } from './modelPicks';

type Row = vscode.QuickPickItem & { choice?: ModelChoice };

export function registerModelCommands(context: vscode.ExtensionContext, server: PlansightServer, store: SessionStore): void {
  context.subscriptions.push(
    vscode.commands.registerCommand('plansight.pickModel', async () => {
      if (store.running) {
        void vscode.window.showInformationMessage('Plansight: the model can be changed once the run ends.');
        return;
      }
      const config = vscode.workspace.getConfiguration('plansight');
      const now = {
        model: config.get<string>('model', ''),
        thinking: config.get<boolean>('thinking', false),
        budgetTokens: config.get<number>('thinkingBudgetTokens', 4096),
      };
      const picker = vscode.window.createQuickPick<Row>();
      picker.title = 'Plansight: Model and Thinking';
      picker.placeholder = 'Which model should Plansight use?';
      picker.busy = true;
      picker.matchOnDescription = true;
      const show = (listed: ModelsResult | undefined, problem?: string): void => {
        const rows = modelPicks(listed, now, problem).map(
          (row): Row => (row.separator ? { label: row.label, kind: vscode.QuickPickItemKind.Separator } : row),
        );
        picker.items = rows;
        picker.activeItems = rows.filter((r) => (r as { picked?: boolean }).picked);
      };
      show({ models: [], current: '' });
      picker.show();
      void (async () => {
        try {
          show(await server.sendRequest<ModelsResult>(Methods.models, {}));
        } catch (error) {
          show(undefined, error instanceof Error ? error.message : String(error));
        } finally {
          picker.busy = false;
        }
      })();
      const chosen = await new Promise<ModelChoice | undefined>((resolve) => {
        picker.onDidAccept(() => {
          const row = picker.selectedItems[0];
          if (row?.choice) resolve(row.choice);
        });
        picker.onDidHide(() => resolve(undefined));
      });
      picker.dispose();
      if (!chosen) return;
      // Where the user set it (a workspace's value wins over the user's): else for the user.
      const where = (key: string): vscode.ConfigurationTarget =>
        config.inspect(key)?.workspaceValue !== undefined ? vscode.ConfigurationTarget.Workspace : vscode.ConfigurationTarget.Global;
      let typed: string | undefined;
      if (chosen.kind === 'typed') {
        typed = (await vscode.window.showInputBox({ title: 'Plansight: model id', value: now.model, ignoreFocusOut: true }))?.trim();
        if (!typed) return;
        await config.update('model', typed, where('model'));
      } else if (chosen.kind === 'model') {
        await config.update('model', chosen.model, where('model'));
      } else if (chosen.kind === 'default') {
        await config.update('model', undefined, where('model'));
      } else {
        await config.update('thinking', chosen.on, where('thinking'));
      }
      void vscode.window.setStatusBarMessage(choiceMessage(chosen, typed), 5000);
    }),
  );
}
