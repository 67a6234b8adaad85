/**
 * Starts the Plansight language server over stdio with vscode-languageclient (`<python> -m
 * plansight lsp`, or the bundled server on the user's Python: see launch.ts) and routes the
 * server's custom notifications and requests. Holds no agent logic.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import * as vscode from 'vscode';
import {
  CloseAction,
  ErrorAction,
  type ClientCapabilities,
  type FeatureState,
  type InitializeResult,
  LanguageClient,
  type LanguageClientOptions,
  LogMessageNotification,
  MessageType,
  RevealOutputChannelOn,
  type ServerOptions,
  State,
  type StaticFeature,
  type StreamInfo,
} from 'vscode-languageclient/node';
import { openSettingChoice, sandboxSetting, sandboxUnavailable } from '../review/approveCommandModel';
import { readPlansightSettings } from './userSettings';
import {
  type ApproveCommandParams,
  type ApproveCommandResult,
  type ApproveMcpServerParams,
  type ApproveMcpServerResult,
  type ApproveToolParams,
  type ApproveToolResult,
  type AskUserParams,
  type AskUserResult,
  clientCapability,
  ErrorCodes,
  type HistoryResult,
  Methods,
  type PlansightEvent,
  type ReviewEditParams,
  type ReviewEditResult,
  type ReviewPlanParams,
  type ReviewPlanResult,
  type ScratchpadParams,
  type StateResult,
  type TodoState,
} from '../protocol';
import type { SessionStore } from '../session';
import { sessionOf } from '../sessions/sessionsModel';
import { type ServerOverrides, initializationOptions, type PlansightSettings, serverEnv } from './options';
import { CrashPolicy, crashLoopWords, crashWords, type ServerExit } from './crashes';
import { commandLine, describeLaunch, type Launch } from './launch';
import { resolveLaunch } from './python';
import { heldElsewhere, openElsewhereMessage } from './secondWindow';
import { type LogLine, ServerLogLines } from './serverLog';

export const apiKeySecret = 'plansight.anthropicApiKey';

/** Thrown by sendRequest when the server could not start (the user was already told why). */
export class ServerNotRunningError extends Error {
  constructor() {
    super('The Plansight server is not running (see the Plansight output).');
  }
}

/**
 * The language client, its own notifications silenced: it said "Plansight client: couldn't
 * create connection to server." and "Restarting server failed" (issue 31: the library's words,
 * beside ours). What went wrong still reaches the output; the user is told by this extension,
 * in plain words (the status bar, the conversation, one notification with what to do).
 */
class QuietLanguageClient extends LanguageClient {
  override error(message: string, data?: unknown, _showNotification?: boolean | 'force'): void {
    super.error(message, data, false);
  }
}

/** Announces `capabilities.experimental.plansight` in `initialize`; no work-done progress. */
class PlansightCapabilityFeature implements StaticFeature {
  fillClientCapabilities(capabilities: ClientCapabilities): void {
    const experimental = (capabilities.experimental ?? {}) as Record<string, unknown>;
    experimental['plansight'] = { ...clientCapability };
    capabilities.experimental = experimental;
    // The extension's own status bar item shows the run (and when it waits for the user);
    // the server's work-done progress would be a second item saying the same.
    if (capabilities.window) {
      capabilities.window.workDoneProgress = false;
    }
  }
  initialize(): void {}
  getState(): FeatureState {
    return { kind: 'static' };
  }
  clear(): void {}
}

/** The settings the server starts with; the boundary ones from the user's settings alone
 * (userSettings.ts). */
/** Why nothing starts in a window with no folder open. */
export const noFolderMessage = 'Open a folder to use Plansight: it works on the folder you open, and with none open it starts nothing.';

export function readSettings(): PlansightSettings {
  return readPlansightSettings(vscode.workspace.getConfiguration('plansight'));
}

export interface ServerHandlers {
  reviewEdit(params: ReviewEditParams, token: vscode.CancellationToken): Promise<ReviewEditResult>;
  approveCommand(
    params: ApproveCommandParams,
    token: vscode.CancellationToken,
  ): Promise<ApproveCommandResult>;
  reviewPlan(params: ReviewPlanParams, token: vscode.CancellationToken): Promise<ReviewPlanResult>;
  askUser(params: AskUserParams, token: vscode.CancellationToken): Promise<AskUserResult>;
  approveTool(params: ApproveToolParams, token: vscode.CancellationToken): Promise<ApproveToolResult>;
  approveMcpServer(params: ApproveMcpServerParams, token: vscode.CancellationToken): Promise<ApproveMcpServerResult>;
  event(event: PlansightEvent): void;
  /** The stored runs, once per start of a server that keeps them (`plansight/history`). */
  history(result: HistoryResult): void;
}

export class PlansightServer implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private starting: Promise<LanguageClient | undefined> | undefined;
  private handlers: ServerHandlers | undefined;
  /** Overrides for the next start (the demo's fake API and storage). */
  private overrides: ServerOverrides = {};
  private readonly disposables: vscode.Disposable[] = [];
  /** The server processes this client spawned and has not seen exit. */
  private readonly processes = new Set<ChildProcess>();
  private stopping = false;
  /** How the last server process ended, and how often it stopped on its own lately. */
  private lastExit: Promise<ServerExit> | undefined;
  private readonly crashes = new CrashPolicy();
  /** Started read-only, as another window's server keeps the session (secondWindow.ts). */
  private readOnly = false;

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly output: vscode.LogOutputChannel,
    private readonly store: SessionStore,
  ) {}

  setHandlers(handlers: ServerHandlers): void {
    this.handlers = handlers;
  }

  get isRunning(): boolean {
    return this.client?.state === State.Running;
  }

  /** Overrides used from the next (re)start on; `{}` goes back to the settings. */
  setOverrides(overrides: ServerOverrides): void {
    this.overrides = overrides;
  }

  get hasOverrides(): boolean {
    return Object.keys(this.overrides).length > 0;
  }

  /** The running client, starting the server first when needed. */
  async ensureStarted(): Promise<LanguageClient | undefined> {
    const client = this.client;
    if (client && client.state === State.Starting && !this.starting) {
      // Restarting by itself after a crash: wait for it rather than start a second server.
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => done(), 60_000);
        const subscription = client.onDidChangeState((e) => e.newState !== State.Starting && done());
        function done(): void {
          clearTimeout(timer);
          subscription.dispose();
          resolve();
        }
      });
    }
    if (this.client && this.client.state === State.Running) {
      return this.client;
    }
    return this.start();
  }

  start(): Promise<LanguageClient | undefined> {
    if (!this.starting) {
      this.starting = this.doStart().finally(() => {
        this.starting = undefined;
      });
    }
    return this.starting;
  }

  async restart(): Promise<LanguageClient | undefined> {
    if (this.starting) {
      await this.starting;
    }
    await this.stop();
    this.readOnly = false; // the other window may have closed: take the session if it can
    return this.start();
  }

  async stop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    this.stopping = true;
    this.crashes.reset(); // a deliberate stop (or restart): the user starts over
    this.store.serverCrash = undefined;
    if (client) {
      try {
        await client.stop(5000);
      } catch (error) {
        this.output.warn(`Stopping the server: ${String(error)}`);
      }
      await client.dispose(2000).catch(() => undefined);
    }
    // After shutdown and exit the server leaves by itself; one that does not is ended.
    await Promise.all([...this.processes].map((child) => this.reap(child)));
    this.stopping = false;
    this.store.setServerStatus('stopped');
    this.store.setServerRunning(false);
  }

  /** Whether the server gets an API key (as it checks: ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN). */
  async hasApiKey(): Promise<boolean> {
    const apiKey = await this.context.secrets.get(apiKeySecret);
    const env = serverEnv(process.env, readSettings(), { ...(apiKey ? { apiKey } : {}), ...this.overrides });
    return Boolean(env['ANTHROPIC_API_KEY']?.trim() || env['ANTHROPIC_AUTH_TOKEN']?.trim());
  }

  async sendRequest<R>(method: string, params: unknown, token?: vscode.CancellationToken): Promise<R> {
    const client = await this.ensureStarted();
    if (!client) {
      throw new ServerNotRunningError();
    }
    return token ? client.sendRequest<R>(method, params, token) : client.sendRequest<R>(method, params);
  }

  /** How the server (and the demo's fake API) starts now: the interpreter, and which plansight. */
  resolveLaunch(env?: NodeJS.ProcessEnv): Promise<Launch> {
    const folder = vscode.workspace.workspaceFolders?.[0];
    return resolveLaunch(this.context.extensionPath, folder?.uri, {
      cwd: folder?.uri.fsPath,
      env: env ?? process.env,
      log: (message) => this.output.warn(message),
    });
  }

  private async doStart(): Promise<LanguageClient | undefined> {
    const folder = vscode.workspace.workspaceFolders?.[0];
    if (!folder) {
      // No folder open: the server would work in its own cwd (often $HOME), list it and
      // checkpoint it. Nothing starts; the Conversation view asks for a folder.
      this.output.info(noFolderMessage);
      return undefined;
    }
    this.store.setServerStatus('starting');
    const settings = readSettings();
    const apiKey = await this.context.secrets.get(apiKeySecret);
    // The demo's overrides win over the stored key: the real key never goes to the fake API.
    const env = serverEnv(process.env, settings, { ...(apiKey ? { apiKey } : {}), ...this.overrides });
    const cwd = folder?.uri.fsPath;

    const launch = await this.resolveLaunch(env);
    this.output.info(`Python: ${launch.python} (from ${launch.source})`);
    if (launch.kind === 'error') {
      this.output.error(`${launch.message}\n${launch.detail}`);
      this.store.setServerStatus('failed', launch.message);
      void this.showLaunchError(launch.message);
      return undefined;
    }
    this.output.info(describeLaunch(launch));

    // Spawned here, not by vscode-languageclient, so that its stderr reaches the output once,
    // at each line's level (see serverLog.ts).
    const serverOptions: ServerOptions = () => this.spawnServer(launch, env, cwd);
    const clientOptions: LanguageClientOptions = {
      // Every file: document sync lets the agent read unsaved text, and reminders show in Problems.
      documentSelector: [{ scheme: 'file' }],
      outputChannel: this.output,
      revealOutputChannelOn: RevealOutputChannelOn.Never,
      initializationOptions: { ...initializationOptions(settings, this.overrides), ...(this.readOnly ? { readOnly: true } : {}) },
      initializationFailedHandler: (error) => {
        // Logged only: start() reports the failure once.
        this.output.error(`Initialization failed: ${String(error)}`);
        return false;
      },
      // A server that stops on its own is said in words (conversation, status bar), restarted
      // a few times, then left stopped; never the library's own toasts.
      errorHandler: {
        error: (_error, _message, count) => ({ action: (count ?? 0) <= 3 ? ErrorAction.Continue : ErrorAction.Shutdown, handled: true }),
        // A server that never got going (refused at `initialize`, say) is not a crash to
        // restart: the start's failure says what happened.
        closed: () => (started ? this.serverClosed() : { action: CloseAction.DoNotRestart, handled: true }),
      },
    };
    let started = false;
    const client = new QuietLanguageClient('plansight', 'Plansight', serverOptions, clientOptions);
    client.registerFeature(new PlansightCapabilityFeature());
    this.registerHandlers(client);
    this.client = client;
    client.onDidChangeState((e) => {
      if (client !== this.client) {
        return;
      }
      if (e.newState === State.Running) {
        this.store.setServerStatus('running');
        void this.fetchState(client);
      } else if (e.newState === State.Stopped) {
        if (this.store.serverStatus !== 'crashed') {
          this.store.setServerStatus('stopped');
        }
        this.store.setServerRunning(false);
      }
    });
    try {
      await client.start();
      started = true;
    } catch (error) {
      this.output.error(`The server did not start: ${String(error)}`);
      if (this.client === client) {
        this.client = undefined;
      }
      // The refused server is ended now: none is left behind (it would keep the pipes open).
      await client.dispose(2000).catch(() => undefined);
      await Promise.all([...this.processes].map((child) => this.reap(child, true)));
      if (!this.readOnly && heldElsewhere(error)) {
        // Another window keeps the session: show it read-only here, and say so once.
        this.readOnly = true;
        this.store.readOnly = true;
        void vscode.window.showInformationMessage(openElsewhereMessage, 'Show Output').then((choice) => choice && this.output.show());
        return this.doStart();
      }
      this.store.setServerStatus('failed');
      void vscode.window
        .showErrorMessage(`Plansight: the server did not start: ${String(error)}`, 'Show Output')
        .then((choice) => choice && this.output.show());
      return undefined;
    }
    this.logServerInfo(client.initializeResult);
    this.store.readOnly = this.readOnly;
    this.store.setServerStatus('running');
    await this.fetchState(client);
    await this.fetchHistory(client);
    return client;
  }

  /** The connection closed without a stop of ours: say how, restart or leave it stopped. */
  private async serverClosed(): Promise<{ action: CloseAction; handled: boolean }> {
    this.store.serverCrash = undefined; // said anew below (a request lost just now waits for it)
    // The process's exit usually comes with the closed pipes; wait a moment for its code.
    const exit = this.lastExit ? await Promise.race([this.lastExit, new Promise<undefined>((r) => setTimeout(() => r(undefined), 1000))]) : undefined;
    const restart = this.crashes.crashed(Date.now());
    const times = this.crashes.recent;
    const words = crashWords(exit, restart, this.crashes.windowMs, times);
    this.output.error(words);
    this.store.serverCrash = words;
    if (restart) {
      this.store.setServerStatus('starting');
      return { action: CloseAction.Restart, handled: true };
    }
    this.store.setServerStatus('crashed', words);
    // Left stopped: said once, in plain words, with the two things to do.
    void vscode.window.showErrorMessage(crashLoopWords(times, this.crashes.windowMs), 'Show Log', 'Restart').then((choice) => {
      if (choice === 'Show Log') {
        this.output.show();
      } else if (choice === 'Restart') {
        void this.restart();
      }
    });
    return { action: CloseAction.DoNotRestart, handled: true };
  }

  /** Past runs, from a server of protocol version 2 that built `plansight/history`. */
  private async fetchHistory(client: LanguageClient): Promise<void> {
    const experimental = client.initializeResult?.capabilities.experimental as { plansight?: { version?: number } } | undefined;
    if ((experimental?.plansight?.version ?? 1) < 2) {
      return;
    }
    try {
      const result = await client.sendRequest<HistoryResult>(Methods.history, {});
      if (client === this.client && Array.isArray(result?.runs)) {
        this.handlers?.history(result);
      }
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      if (code === ErrorCodes.methodNotFound) {
        this.output.info('This server keeps no history of runs (plansight/history).');
      } else {
        this.output.warn(`plansight/history failed: ${String(error)}`);
      }
    }
  }

  /** `plansight lsp` with pipes; its stderr goes to the output line by line. */
  private spawnServer(
    launch: Exclude<Launch, { kind: 'error' }>,
    env: Record<string, string>,
    cwd: string | undefined,
  ): Promise<StreamInfo> {
    const { command, args } = commandLine(launch, 'plansight', ['lsp']);
    const child = spawn(command, args, { env, ...(cwd ? { cwd } : {}), stdio: 'pipe' });
    this.processes.add(child);
    this.lastExit = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
    const lines = new ServerLogLines();
    const write = (parsed: LogLine[]): void => {
      for (const { level, text } of parsed) {
        this.output[level](text);
      }
    };
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => write(lines.push(chunk)));
    child.stderr.on('end', () => write(lines.end()));
    child.on('exit', (code, signal) => {
      this.processes.delete(child);
      if (code !== 0 && !this.stopping) {
        this.output.warn(`The server exited (${signal ?? `code ${code}`}).`);
      }
    });
    return new Promise((resolve, reject) => {
      child.once('spawn', () => resolve({ reader: child.stdout, writer: child.stdin }));
      child.once('error', reject);
    });
  }

  /** Waits for a server process to leave; TERM after 3 s (at once with `now`), KILL after 3 more. */
  private async reap(child: ChildProcess, now = false): Promise<void> {
    const exited = new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) {
        resolve();
      } else {
        child.once('exit', () => resolve());
      }
    });
    const within = (ms: number): Promise<boolean> =>
      Promise.race([exited.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), ms))]);
    if (!(await within(now ? 0 : 3000))) {
      child.kill('SIGTERM');
      if (!(await within(3000))) {
        child.kill('SIGKILL');
      }
    }
    this.processes.delete(child);
  }

  private logServerInfo(result: InitializeResult | undefined): void {
    const experimental = result?.capabilities.experimental as
      | { plansight?: { version?: number } }
      | undefined;
    const version = experimental?.plansight?.version;
    if (version === undefined) {
      this.output.warn('The server did not announce capabilities.experimental.plansight.');
    } else {
      this.output.info(`Server speaks Plansight protocol version ${version}.`);
    }
  }

  private async fetchState(client: LanguageClient): Promise<void> {
    try {
      const state = await client.sendRequest<StateResult>(Methods.state, {});
      if (client !== this.client) {
        return;
      }
      this.store.setTodos(state.todos);
      this.store.setScratchpad(state.scratchpad);
      this.store.setInstructions(state.instructions);
      this.store.setServerRunning(state.running);
    } catch (error) {
      this.output.warn(`plansight/state failed: ${String(error)}`);
    }
  }

  private registerHandlers(client: LanguageClient): void {
    // The server mirrors its log records here; its stderr, read above, has them already.
    // All but the one warning the user must see: commands run without a sandbox here.
    client.onNotification(LogMessageNotification.type, (params: { type: number; message: string }) => {
      const warning = params.type === MessageType.Warning ? sandboxUnavailable(params.message) : undefined;
      if (warning !== undefined && client === this.client) {
        // The toast shows one line: the setting it names is past the cut, so it is a button too.
        void vscode.window.showWarningMessage(warning, openSettingChoice).then((choice) => {
          if (choice === openSettingChoice) {
            void vscode.commands.executeCommand('workbench.action.openSettings', sandboxSetting);
          }
        });
      }
    });
    // Version 4: a notification about a session this window does not show is not drawn.
    client.onNotification(Methods.todos, (todos: TodoState) => {
      if (client === this.client && this.store.sessions.isShown(sessionOf(todos))) {
        this.store.setTodos(todos);
      }
    });
    client.onNotification(Methods.scratchpad, (params: ScratchpadParams) => {
      if (client === this.client && this.store.sessions.isShown(sessionOf(params))) {
        this.store.setScratchpad(params.content ?? '');
      }
    });
    client.onNotification(Methods.event, (event: PlansightEvent) => {
      if (client !== this.client || !event || typeof event.type !== 'string') {
        return;
      }
      if (event.type === 'runStarted') {
        // A run this window asked for that started a session of its own (`newSession: true`).
        this.store.sessions.adopt(sessionOf(event), this.store.requestRunning);
      }
      if (this.store.sessions.isShown(sessionOf(event))) {
        if (event.type === 'runStarted') {
          this.store.setServerRunning(true);
        } else if (event.type === 'runFinished') {
          this.store.setServerRunning(false);
        }
      }
      this.handlers?.event(event);
    });
    client.onRequest(Methods.reviewEdit, (params: ReviewEditParams, token) => {
      if (!this.handlers) {
        return { accepted: false, feedback: 'The editor is not ready to review edits.' };
      }
      return this.handlers.reviewEdit(params, token);
    });
    client.onRequest(Methods.approveCommand, (params: ApproveCommandParams, token) => {
      if (!this.handlers) {
        return { approved: false, feedback: 'The editor is not ready to approve commands.' };
      }
      return this.handlers.approveCommand(params, token);
    });
    client.onRequest(Methods.reviewPlan, (params: ReviewPlanParams, token) => {
      if (!this.handlers) {
        return { decision: 'cancel' };
      }
      return this.handlers.reviewPlan(params, token);
    });
    client.onRequest(Methods.askUser, (params: AskUserParams, token) => {
      if (!this.handlers) {
        return { dismissed: true };
      }
      return this.handlers.askUser(params, token);
    });
    client.onRequest(Methods.approveTool, (params: ApproveToolParams, token) => {
      if (!this.handlers) {
        return { approved: false, feedback: 'The editor is not ready to approve tool calls.' };
      }
      return this.handlers.approveTool(params, token);
    });
    client.onRequest(Methods.approveMcpServer, (params: ApproveMcpServerParams, token) => {
      if (!this.handlers) {
        return { approved: false };
      }
      return this.handlers.approveMcpServer(params, token);
    });
  }

  private async showLaunchError(message: string): Promise<void> {
    const choice = await vscode.window.showErrorMessage(message, 'Open Setting', 'Show Output');
    if (choice === 'Open Setting') {
      await vscode.commands.executeCommand('workbench.action.openSettings', 'plansight.python');
    } else if (choice === 'Show Output') {
      this.output.show();
    }
  }

  dispose(): void {
    void this.stop();
    for (const d of this.disposables) {
      d.dispose();
    }
  }
}
