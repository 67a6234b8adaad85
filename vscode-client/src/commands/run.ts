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
  /** The runs this client waits for (one, unless the server refuses a second as busy). */
  private readonly inFlight = new Set<vscode.CancellationTokenSource>();

  constructor(
    private readonly server: PlansightServer,
    private readonly store: SessionStore,
    private readonly activity: ActivityView,
    private readonly output: vscode.LogOutputChannel,
  ) {}

  /**
   * Sends `plansight/run` and waits for its end; undefined when it did not run. Whether a run
   * may start is the server's rule (its session refuses a second run with -32803): the client
   * does not second-guess it, it shows the refusal.
   */
  async run(prompt: string, options: { newSession?: boolean } = {}): Promise<RunResult | undefined> {
    const source = new vscode.CancellationTokenSource();
    this.inFlight.add(source);
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
      if (code === ErrorCodes.requestFailed) {
        // The server's own words, e.g. that a run is already in progress.
        this.output.info(`plansight/run refused: ${message}`);
        void vscode.window.showWarningMessage(`Plansight: ${message}`, 'Cancel Run').then((choice) => {
          if (choice === 'Cancel Run') {
            this.cancel();
          }
        });
        return undefined;
      }
      this.output.error(`plansight/run failed: ${message}`);
      this.activity.error(message);
      if (!(error instanceof ServerNotRunningError)) {
        // (When the server did not start, the user has just been told why.)
        void vscode.window.showErrorMessage(`Plansight: ${message}`);
      }
      return undefined;
    } finally {
      source.dispose();
      this.inFlight.delete(source);
      this.store.setRequestRunning(this.inFlight.size > 0);
    }
  }

  /** Cancels the run in progress: `$/cancelRequest` on its `plansight/run`. */
  cancel(): void {
    if (this.inFlight.size > 0) {
      this.output.info('Cancelling the run.');
      for (const source of this.inFlight) {
        source.cancel();
      }
    } else {
      void vscode.window.showInformationMessage('Plansight: no run to cancel.');
    }
  }
}

/** What goes with the prompt, in the words the input box shows. */
function contextHint(editor: EditorContext): string {
  return editor.path
    ? `The active file (${editor.path})${editor.selection ? ' and the selection' : ''} go with your request.`
    : 'What should Plansight do?';
}

/**
 * The Ask input box. It names the context that goes with the prompt and follows the editor
 * while it is open, so what it shows is what is sent (read when the user presses Enter).
 */
function askPrompt(): Promise<{ prompt: string; editor: EditorContext } | undefined> {
  return new Promise((resolve) => {
    const input = vscode.window.createInputBox();
    input.title = 'Ask Plansight';
    input.placeholder = 'e.g. Add type hints to hello.py';
    input.ignoreFocusOut = true;
    let editor = editorContext();
    input.prompt = contextHint(editor);
    const follow = (): void => {
      editor = editorContext();
      input.prompt = contextHint(editor);
    };
    let answer: { prompt: string; editor: EditorContext } | undefined;
    const subscriptions = [
      vscode.window.onDidChangeActiveTextEditor(follow),
      vscode.window.onDidChangeTextEditorSelection(follow),
      input.onDidAccept(() => {
        answer = { prompt: input.value, editor: editorContext() };
        input.hide();
      }),
      input.onDidHide(() => {
        for (const subscription of subscriptions) {
          subscription.dispose();
        }
        input.dispose();
        resolve(answer);
      }),
    ];
    input.show();
  });
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
      const asked = typeof promptArg === 'string' ? { prompt: promptArg, editor: editorContext() } : await askPrompt();
      if (!asked?.prompt.trim()) {
        return;
      }
      await deps.beforeAsk?.();
      await runs.run(buildPrompt(asked.prompt, asked.editor));
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
