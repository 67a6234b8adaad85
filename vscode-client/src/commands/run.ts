/**
 * The run commands: ask (`plansight/run` with the editor's context), cancel (the request's
 * CancellationToken → `$/cancelRequest`), new session (`plansight/reset`), and the API key.
 */
import * as vscode from 'vscode';
import type { ActivityView } from '../activity/activityView';
import { ErrorCodes, Methods, type RunParams, type RunResult } from '../protocol';
import { apiKeySecret, type PlansightServer, ServerNotRunningError } from '../server/client';
import type { SessionStore } from '../session';
import { buildPrompt, type EditorContext } from './prompt';

export const runningContextKey = 'plansight.running';

/** The active file (workspace-relative) and the selected text, if any. */
export function editorContext(): EditorContext {
  const editor = vscode.window.activeTextEditor;
  if (!editor || (editor.document.uri.scheme !== 'file' && editor.document.uri.scheme !== 'untitled')) {
    return {};
  }
  const document = editor.document;
  const context: EditorContext = {
    path:
      document.uri.scheme === 'file'
        ? vscode.workspace.asRelativePath(document.uri, false)
        : document.fileName,
    languageId: document.languageId,
  };
  const selection = editor.selection;
  if (!selection.isEmpty) {
    context.selection = {
      text: document.getText(selection),
      startLine: selection.start.line + 1,
      endLine: selection.end.line + 1,
    };
  }
  return context;
}

function errorCode(error: unknown): number | undefined {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'number' ? code : undefined;
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export class RunController {
  private tokenSource: vscode.CancellationTokenSource | undefined;

  constructor(
    private readonly server: PlansightServer,
    private readonly store: SessionStore,
    private readonly activity: ActivityView,
    private readonly output: vscode.LogOutputChannel,
  ) {}

  /** Sends `plansight/run` and waits for its end; undefined when it did not run. */
  async run(prompt: string, options: { newSession?: boolean } = {}): Promise<RunResult | undefined> {
    if (this.tokenSource) {
      const choice = await vscode.window.showWarningMessage(
        'Plansight is already running. Wait for it, or cancel it first.',
        'Cancel Run',
      );
      if (choice === 'Cancel Run') {
        this.cancel();
      }
      return undefined;
    }
    const source = new vscode.CancellationTokenSource();
    this.tokenSource = source;
    this.store.setRequestRunning(true);
    const params: RunParams = { prompt, ...(options.newSession ? { newSession: true } : {}) };
    try {
      const result = await this.server.sendRequest<RunResult>(Methods.run, params, source.token);
      this.output.info(`Run finished: ${result.status} after ${result.rounds} rounds.`);
      if (result.status === 'error') {
        void vscode.window.showErrorMessage(`Plansight: the run failed: ${result.error ?? result.text}`);
      } else if (result.status === 'limit') {
        void vscode.window.showWarningMessage(
          `Plansight stopped after ${result.rounds} rounds (the round limit). Ask again to continue.`,
        );
      }
      return result;
    } catch (error) {
      const code = errorCode(error);
      if (code === ErrorCodes.requestCancelled) {
        this.output.info('Run cancelled.');
        return undefined;
      }
      const message = errorMessage(error);
      this.output.error(`plansight/run failed: ${message}`);
      this.activity.error(message);
      if (!(error instanceof ServerNotRunningError)) {
        // (When the server did not start, the user has just been told why.)
        void vscode.window.showErrorMessage(`Plansight: ${message}`);
      }
      return undefined;
    } finally {
      source.dispose();
      if (this.tokenSource === source) {
        this.tokenSource = undefined;
      }
      this.store.setRequestRunning(false);
    }
  }

  cancel(): void {
    if (this.tokenSource) {
      this.output.info('Cancelling the run.');
      this.tokenSource.cancel();
    } else {
      void vscode.window.showInformationMessage('Plansight: no run to cancel.');
    }
  }
}

export interface RunCommandDeps {
  server: PlansightServer;
  store: SessionStore;
  runs: RunController;
  /** Called before a normal ask, e.g. to leave the demo's fake API. */
  beforeAsk?: () => Promise<void>;
}

export function registerRunCommands(context: vscode.ExtensionContext, deps: RunCommandDeps): void {
  const { server, store, runs } = deps;
  context.subscriptions.push(
    vscode.commands.registerCommand('plansight.ask', async (promptArg?: unknown) => {
      const editor = editorContext();
      const prompt =
        typeof promptArg === 'string'
          ? promptArg
          : await vscode.window.showInputBox({
              title: 'Ask Plansight',
              prompt: editor.path
                ? `The active file (${editor.path})${editor.selection ? ' and the selection' : ''} go with your request.`
                : 'What should Plansight do?',
              placeHolder: 'e.g. Add type hints to hello.py',
              ignoreFocusOut: true,
            });
      if (!prompt?.trim()) {
        return;
      }
      await deps.beforeAsk?.();
      await runs.run(buildPrompt(prompt, editor));
    }),
    vscode.commands.registerCommand('plansight.cancel', () => runs.cancel()),
    vscode.commands.registerCommand('plansight.newSession', async () => {
      try {
        await server.sendRequest(Methods.reset, {});
        store.clearEdits();
      } catch (error) {
        void vscode.window.showErrorMessage(`Plansight: could not start a new session: ${errorMessage(error)}`);
      }
    }),
    vscode.commands.registerCommand('plansight.setApiKey', async () => {
      const key = await vscode.window.showInputBox({
        title: 'Plansight: Anthropic API key',
        prompt: 'Stored in the editor\'s secret storage and given to the server as ANTHROPIC_API_KEY. Leave empty to remove it.',
        password: true,
        ignoreFocusOut: true,
      });
      if (key === undefined) {
        return;
      }
      if (key.trim()) {
        await context.secrets.store(apiKeySecret, key.trim());
      } else {
        await context.secrets.delete(apiKeySecret);
      }
      await server.restart();
      void vscode.window.showInformationMessage(
        key.trim() ? 'Plansight: API key saved; the server restarted.' : 'Plansight: API key removed.',
      );
    }),
  );
}
