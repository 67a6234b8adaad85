/**
 * Plansight for VS Code: renders what the Plansight language server sends (plan, scratchpad,
 * activity, edit reviews, command approvals) and forwards what the user decides.
 */
import * as vscode from 'vscode';
import { ActivityLog } from './activity/activityModel';
import { registerActivityView } from './activity/activityView';
import { DemoRunner } from './commands/demo';
import { registerRunCommands, RunController, runningContextKey } from './commands/run';
import { registerPlanView } from './plan/planView';
import { CommandApprovals } from './review/approveCommand';
import { ReviewManager } from './review/reviewManager';
import { registerScratchpadView } from './scratchpad/scratchpadView';
import { PlansightServer } from './server/client';
import { onDidChangePython } from './server/python';
import { SessionStore } from './session';
import { registerStatusBar } from './status/statusBar';

let server: PlansightServer | undefined;

export function activate(context: vscode.ExtensionContext): void {
  const output = vscode.window.createOutputChannel('Plansight', { log: true });
  const store = new SessionStore();
  server = new PlansightServer(context, output, store);
  const reviews = new ReviewManager(store, output);
  const approvals = new CommandApprovals(output);
  context.subscriptions.push(output, server, reviews, approvals);
  reviews.registerCommands(context);
  approvals.registerCommands(context);

  const activity = registerActivityView(context, new ActivityLog());
  registerPlanView(context, store, server, reviews);
  registerScratchpadView(context, store);
  registerStatusBar(context, store);

  const runs = new RunController(server, store, activity, output);
  const demo = new DemoRunner(context, server, runs, output);
  context.subscriptions.push(demo);
  registerRunCommands(context, { server, store, runs, beforeAsk: () => demo.leave() });

  const running = server;
  server.setHandlers({
    reviewEdit: (params, token) => reviews.review(params, token),
    approveCommand: (params, token) => approvals.request(params, token),
    event: (event) => {
      if (event.type === 'runFinished') {
        // The server asks only during a run: whatever is still open has nobody waiting for it
        // (a server that cancels its requests has closed them already).
        reviews.cancelAll('The run ended before the review was decided.');
        approvals.cancelAll('The run ended before the command was approved.');
      }
      activity.event(event);
    },
  });

  context.subscriptions.push(
    store.onDidChange((change) => {
      if (change === 'running') {
        void vscode.commands.executeCommand('setContext', runningContextKey, store.running);
      }
      if (change === 'server' && store.serverStatus !== 'running' && store.serverStatus !== 'starting') {
        reviews.cancelAll('The Plansight server stopped.');
        approvals.cancelAll('The Plansight server stopped.');
        activity.serverStopped();
      }
    }),
    vscode.commands.registerCommand('plansight.runDemo', () => demo.run()),
    vscode.commands.registerCommand('plansight.restartServer', () => running.restart()),
    vscode.commands.registerCommand('plansight.showOutput', () => output.show()),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration('plansight') && store.serverStatus !== 'stopped') {
        output.info('Settings changed: restarting the server.');
        void running.restart();
      }
    }),
  );
  void onDidChangePython(() => {
    const configured = vscode.workspace.getConfiguration('plansight').get<string>('python', '');
    if (!configured.trim()) {
      output.info('The Python interpreter changed: restarting the server.');
      void running.restart();
    }
  }).then((disposable) => disposable && context.subscriptions.push(disposable));
  void vscode.commands.executeCommand('setContext', runningContextKey, false);
  void server.start().then(() => demo.resumePending());
}

export async function deactivate(): Promise<void> {
  await server?.stop();
  server = undefined;
}
