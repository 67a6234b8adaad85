/**
 * Runs, as the conversation starts them: ask (`plansight/run` with the editor's context, shown
 * in the conversation at once), cancel (the request's CancellationToken → `$/cancelRequest`),
 * new session (`plansight/reset`), and the API key: a prompt sent without one waits, with a
 * card to set it, and goes out once it is set.
 */
import * as vscode from 'vscode';
import { type ApiKeyCardData, apiKeyCard } from '../conversation/cards';
import { keyRefused, keyRefusedReason, retryCard, type RetryCardData, serverDownCard, type ServerDownCardData } from '../conversation/runCards';
import type { CardEntry, ConversationModel, Run } from '../conversation/model';
import { ErrorCodes, Methods, openStatuses, type RunParams, type RunResult, type TodoItem } from '../protocol';
import { apiKeySecret, noFolderMessage, type PlansightServer, ServerNotRunningError } from '../server/client';
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

/** vscode-jsonrpc's code for a request whose connection closed before its answer came. */
const pendingResponseRejected = -32097;

/** Whether `error` is the request's connection going away (the server stopped or crashed). */
export function lostConnection(error: unknown): boolean {
  return errorCode(error) === pendingResponseRejected || /connection got disposed|connection is closed|Client is not running/i.test(errorMessage(error));
}

/** How a run goes: plan first (`mode: 'plan'`), or on one plan item only (`todoId`). */
export interface RunOptions {
  mode?: 'act' | 'plan';
  todoId?: string;
}

export interface RunControllerDeps {
  server: PlansightServer;
  store: SessionStore;
  model: ConversationModel;
  output: vscode.LogOutputChannel;
  /** Whether the conversation is on screen (else errors also show as notifications). */
  visible(): boolean;
  /** Called before a prompt of the user's goes out, e.g. to leave the demo's fake API. */
  beforeAsk?(): Promise<void>;
}

export class RunController {
  /** The runs this client waits for (one, unless the server refuses a second as busy). */
  private readonly inFlight = new Set<vscode.CancellationTokenSource>();
  /** A prompt sent without an API key: it goes out once the key is set. */
  private waitingForKey: { prompt: string; run: Run; card: CardEntry<ApiKeyCardData>; options: RunOptions } | undefined;
  /** A prompt sent while the server could not start: it goes out once the server runs. */
  private waitingForServer: { prompt: string; run: Run; card: CardEntry<ServerDownCardData>; options: RunOptions } | undefined;
  /** Follow-ups sent during a run, oldest first: each goes out when the run before it ends. */
  private readonly queued: { prompt: string; run: Run; options: RunOptions }[] = [];
  /** How each run of this window was asked, for Retry. */
  private readonly asked = new WeakMap<Run, { prompt: string; options: RunOptions }>();
  private readonly subscription: { dispose(): void };

  constructor(private readonly deps: RunControllerDeps) {
    this.subscription = deps.store.onDidChange((change) => {
      if (change === 'server' && deps.store.serverStatus === 'running') {
        void this.serverUp();
      } else if (change === 'running' && !deps.store.running) {
        this.sendNextQueued();
      }
    });
  }

  dispose(): void {
    this.subscription.dispose();
  }

  /** A run goes on (this client's request, or one the server says is running). */
  private get busy(): boolean {
    return this.inFlight.size > 0 || this.deps.store.running;
  }

  /**
   * The user's prompt, with the editor's context unless they dropped it; `mode: 'plan'` plans
   * first, `todoId` works on that plan item only.
   */
  async ask(text: string, context: EditorContext = {}, options: RunOptions = {}): Promise<RunResult | undefined> {
    if (!text.trim()) {
      return undefined;
    }
    const prompt = buildPrompt(text, context);
    if (this.busy) {
      // A follow-up during a run: shown at once below it, sent when it ends (the server runs
      // one run at a time and would refuse it now).
      const run = this.deps.model.addQueued(prompt);
      this.queued.push({ prompt, run, options });
      this.deps.output.info('A run goes on: the follow-up is queued.');
      return undefined;
    }
    if (!vscode.workspace.workspaceFolders?.length) {
      void vscode.window.showInformationMessage(noFolderMessage);
      return undefined;
    }
    await this.deps.beforeAsk?.();
    const run = this.deps.model.addPending(prompt);
    if (!(await this.deps.server.hasApiKey())) {
      this.waitForKey(prompt, run, options);
      return undefined;
    }
    return this.run(prompt, { ...options, pending: run });
  }

  private waitForKey(prompt: string, run: Run, options: RunOptions): void {
    const { model } = this.deps;
    if (this.waitingForKey) {
      // Only the newest prompt waits; the older one says it was not sent.
      model.updateCard<ApiKeyCardData>(this.waitingForKey.card.id, { outcome: 'dismissed' }, false);
      model.stopPending(this.waitingForKey.run);
    }
    model.stopPending(run);
    const card = model.addCard<ApiKeyCardData>(apiKeyCard, { outcome: 'pending' }, run);
    this.waitingForKey = { prompt, run, card, options };
    this.deps.output.info('No API key: the prompt waits until one is set.');
  }

  /** The API key was set: the prompt that waited for it goes out now. */
  async keySaved(): Promise<void> {
    const waiting = this.waitingForKey;
    this.waitingForKey = undefined;
    if (!waiting) {
      return;
    }
    this.deps.model.updateCard<ApiKeyCardData>(waiting.card.id, { outcome: 'saved' }, false);
    waiting.run.running = true;
    await this.run(waiting.prompt, { ...waiting.options, pending: waiting.run });
  }

  /** The server runs again: the prompt that waited for it goes out. */
  private async serverUp(): Promise<void> {
    const waiting = this.waitingForServer;
    if (!waiting || this.busy) {
      return;
    }
    this.waitingForServer = undefined;
    this.deps.model.updateCard<ServerDownCardData>(waiting.card.id, { outcome: 'sent' }, false);
    waiting.run.running = true;
    await this.run(waiting.prompt, { ...waiting.options, pending: waiting.run });
  }

  private waitForServer(prompt: string, run: Run, options: RunOptions, why: string): void {
    const { model } = this.deps;
    if (this.waitingForServer) {
      model.updateCard<ServerDownCardData>(this.waitingForServer.card.id, { outcome: 'dismissed' }, false);
      model.stopPending(this.waitingForServer.run);
    }
    model.stopPending(run);
    const card = model.addCard<ServerDownCardData>(serverDownCard, { why, outcome: 'pending' }, run);
    this.waitingForServer = { prompt, run, card, options };
    this.deps.output.info('The server is not running: the prompt waits until it starts.');
  }

  /** The server-down card's buttons. */
  async serverDownCardAction(_card: CardEntry, action: string): Promise<void> {
    if (action === 'retry') {
      await this.deps.server.restart(); // serverUp sends the prompt once it runs
    } else if (action === 'openSetting') {
      await vscode.commands.executeCommand('workbench.action.openSettings', 'plansight.python');
    } else if (action === 'showOutput') {
      this.deps.output.show();
    }
  }

  /** The Retry card's buttons: the same request again, as a new run. */
  async retryCardAction(card: CardEntry, action: string): Promise<void> {
    if (action === 'showOutput') {
      this.deps.output.show();
      return;
    }
    if (action === 'setKey') {
      // The card stays open: Retry sends the request again once the key is set.
      await vscode.commands.executeCommand('plansight.setApiKey');
      return;
    }
    if (action !== 'retry' || !card.open) {
      return;
    }
    const found = this.deps.model.findEntry(card.id);
    const asked = found ? this.asked.get(found.run) : undefined;
    this.deps.model.updateCard<RetryCardData>(card.id, { outcome: asked ? 'sent' : 'dismissed' }, false);
    if (!asked) {
      return;
    }
    if (this.busy) {
      const run = this.deps.model.addQueued(asked.prompt);
      this.queued.push({ prompt: asked.prompt, run, options: asked.options });
      return;
    }
    await this.run(asked.prompt, { ...asked.options });
  }

  /**
   * How the server stopped, in words: the request is rejected as the connection closes, a
   * moment before the client has learnt how the process ended.
   */
  private crashWords(): Promise<string | undefined> {
    const { store } = this.deps;
    if (store.serverCrash) {
      return Promise.resolve(store.serverCrash);
    }
    return new Promise((resolve) => {
      const timer = setTimeout(() => done(), 3000);
      const subscription = store.onDidChange((change) => change === 'server' && store.serverCrash && done());
      function done(): void {
        clearTimeout(timer);
        subscription.dispose();
        resolve(store.serverCrash);
      }
    });
  }

  /** The next queued follow-up goes out, once nothing runs. */
  private sendNextQueued(): void {
    if (this.busy) {
      return;
    }
    const next = this.queued.shift();
    if (next) {
      this.deps.model.sendQueued(next.run);
      void this.run(next.prompt, { ...next.options, pending: next.run });
    }
  }

  /** The API key card's buttons. */
  async apiKeyCardAction(_card: CardEntry, action: string): Promise<void> {
    if (action === 'setKey') {
      await vscode.commands.executeCommand('plansight.setApiKey');
    } else if (action === 'demo') {
      const waiting = this.waitingForKey;
      this.waitingForKey = undefined;
      if (waiting) {
        this.deps.model.updateCard<ApiKeyCardData>(waiting.card.id, { outcome: 'dismissed' }, false);
      }
      await vscode.commands.executeCommand('plansight.runDemo');
    }
  }

  /**
   * Sends `plansight/run` and waits for its end; undefined when it did not run. Whether a run
   * may start is the server's rule (its session refuses a second run with -32803): the client
   * does not second-guess it, it shows the refusal.
   */
  async run(prompt: string, options: RunOptions & { newSession?: boolean; pending?: Run } = {}): Promise<RunResult | undefined> {
    const { server, store, model, output } = this.deps;
    if (options.newSession && !options.pending && model.runs.length > 0) {
      model.addSessionBreak(); // the demo starts over
    }
    const pending = options.pending ?? model.addPending(prompt);
    this.asked.set(pending, { prompt, options: { ...(options.mode ? { mode: options.mode } : {}), ...(options.todoId !== undefined ? { todoId: options.todoId } : {}) } });
    const source = new vscode.CancellationTokenSource();
    this.inFlight.add(source);
    store.setRequestRunning(true);
    const params: RunParams = {
      prompt,
      ...(options.newSession ? { newSession: true } : {}),
      ...(options.mode === 'plan' ? { mode: 'plan' as const } : {}),
      ...(options.todoId !== undefined ? { todoId: options.todoId } : {}),
    };
    try {
      const result = await server.sendRequest<RunResult>(Methods.run, params, source.token);
      output.info(`Run finished: ${result.status} after ${result.rounds} rounds.`);
      if (!pending.started) {
        // The server answered without a runStarted this client saw (e.g. an older server).
        model.stopPending(pending);
      }
      const refused = result.status === 'error' && keyRefused(`${result.error ?? ''} ${result.text ?? ''}`);
      if (refused) {
        // Said in words with the one thing to do, wherever the user looks: a new key.
        model.addCard<RetryCardData>(retryCard, { reason: keyRefusedReason, keyRefused: true, outcome: 'pending' }, pending);
        void vscode.window.showErrorMessage('Plansight: the model API refused the API key.', 'Set API Key').then((choice) => {
          if (choice === 'Set API Key') {
            void vscode.commands.executeCommand('plansight.setApiKey');
          }
        });
      } else if (result.status === 'error') {
        model.addCard<RetryCardData>(retryCard, { reason: `The run failed: ${result.error ?? result.text}`, outcome: 'pending' }, pending);
      }
      if (!this.deps.visible() && !refused) {
        if (result.status === 'error') {
          void vscode.window.showErrorMessage(`Plansight: the run failed: ${result.error ?? result.text}`);
        } else if (result.status === 'limit') {
          void vscode.window.showWarningMessage(`Plansight stopped after ${result.rounds} rounds (the round limit). Ask again to continue.`);
        }
      }
      return result;
    } catch (error) {
      const code = errorCode(error);
      if (code === ErrorCodes.requestCancelled) {
        output.info('Run cancelled.');
        if (!pending.started) {
          model.stopPending(pending, { icon: 'circle-slash', text: 'Cancelled before it started.' });
        }
        return undefined;
      }
      const message = errorMessage(error);
      if (error instanceof ServerNotRunningError) {
        // Kept, as a prompt without a key is: it goes out once the server runs.
        output.info(`plansight/run not sent: ${message}`);
        this.waitForServer(prompt, pending, options, store.serverProblem ?? message);
        return undefined;
      }
      if (lostConnection(error) || store.serverStatus === 'crashed') {
        output.error(`plansight/run lost its server: ${message}`);
        const why = (await this.crashWords()) ?? 'The Plansight server stopped.';
        if (pending.running) {
          model.stopPending(pending);
        }
        model.addCard<RetryCardData>(
          retryCard,
          { reason: `${why} The run was interrupted; what it did so far is kept.`, outcome: 'pending' },
          pending,
        );
        return undefined;
      }
      if (code === ErrorCodes.requestFailed) {
        // The server's own words, e.g. that a run is already in progress.
        output.info(`plansight/run refused: ${message}`);
        model.stopPending(pending, { icon: 'warning', text: `Not sent: ${message}`, tone: 'warning' });
        return undefined;
      }
      output.error(`plansight/run failed: ${message}`);
      model.stopPending(pending, { icon: 'error', text: message, tone: 'error' });
      if (!(error instanceof ServerNotRunningError) && !this.deps.visible()) {
        // (When the server did not start, the user has just been told why.)
        void vscode.window.showErrorMessage(`Plansight: ${message}`);
      }
      return undefined;
    } finally {
      source.dispose();
      this.inFlight.delete(source);
      store.setRequestRunning(this.inFlight.size > 0);
      this.sendNextQueued();
    }
  }

  /** Cancels the run in progress: `$/cancelRequest` on its `plansight/run`. */
  cancel(): void {
    // Stop means stop: the follow-ups queued behind the run do not go out either.
    for (const { run } of this.queued.splice(0)) {
      this.deps.model.dropQueued(run, 'Not sent: you stopped the run before it.');
    }
    if (this.inFlight.size > 0) {
      this.deps.output.info('Cancelling the run.');
      for (const source of this.inFlight) {
        source.cancel();
      }
    } else {
      void vscode.window.showInformationMessage('Plansight: no run to cancel.');
    }
  }
}

export interface RunCommandDeps {
  server: PlansightServer;
  store: SessionStore;
  runs: RunController;
  model: ConversationModel;
  /** Shows the conversation and puts the cursor in its prompt. */
  focusConversation(): Promise<void>;
}

function planItemOf(node: unknown): TodoItem | undefined {
  const item = (node as { kind?: string; item?: TodoItem } | undefined)?.item;
  return (node as { kind?: string } | undefined)?.kind === 'todo' && item ? item : undefined;
}

async function pickOpenItem(store: SessionStore): Promise<TodoItem | undefined> {
  const open = store.todos.items.filter((i) => openStatuses.includes(i.status));
  if (!open.length) {
    void vscode.window.showInformationMessage('Plansight: the plan has no open step to run.');
    return undefined;
  }
  const pick = await vscode.window.showQuickPick(
    open.map((item) => ({ label: item.text, description: `#${item.id}`, item })),
    { placeHolder: 'Run which step?' },
  );
  return pick?.item;
}

export function registerRunCommands(context: vscode.ExtensionContext, deps: RunCommandDeps): void {
  const { server, store, runs, model } = deps;
  context.subscriptions.push(
    vscode.commands.registerCommand('plansight.ask', async (promptArg?: unknown) => {
      if (typeof promptArg === 'string') {
        await runs.ask(promptArg, editorContext());
      } else {
        await deps.focusConversation();
      }
    }),
    vscode.commands.registerCommand('plansight.planFirst', async (promptArg?: unknown) => {
      // "Plan…": the agent plans and changes nothing until the user approves the plan.
      const context = editorContext();
      const text =
        typeof promptArg === 'string'
          ? promptArg
          : await vscode.window.showInputBox({
              title: 'Plansight: Plan…',
              prompt: `What should Plansight plan? It changes nothing until you approve the plan.${context.path ? ` (with ${context.path})` : ''}`,
              ignoreFocusOut: true,
            });
      if (text?.trim()) {
        await deps.focusConversation();
        await runs.ask(text, context, { mode: 'plan' });
      }
    }),
    vscode.commands.registerCommand('plansight.plan.runStep', async (node?: unknown) => {
      const item = planItemOf(node) ?? (await pickOpenItem(store));
      if (item) {
        await runs.ask(`Work on step #${item.id}: ${item.text}`, {}, { todoId: item.id });
      }
    }),
    vscode.commands.registerCommand('plansight.cancel', () => runs.cancel()),
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
      void vscode.window.setStatusBarMessage(
        key.trim() ? 'Plansight: API key saved; the server restarted.' : 'Plansight: API key removed.',
        5000,
      );
      if (key.trim()) {
        await runs.keySaved();
      }
    }),
  );
}
