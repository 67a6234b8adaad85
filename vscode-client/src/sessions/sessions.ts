/**
 * The sessions of the workspace in VS Code (protocol version 4): the commands New Session,
 * Switch Session…, Rename Session… and Delete Session…, and the sessions control at the top of
 * the conversation view. The list, titles and statuses are the server's (`plansight/sessions`);
 * switching asks the server to open the session and shows what it sends back for it.
 */
import * as vscode from 'vscode';
import type { ConversationModel } from '../conversation/model';
import { editsFromHistory, loadHistory } from '../conversation/history';
import { ErrorCodes, type HistoryRun, Methods, type SessionInfo, type StateResult } from '../protocol';
import type { PlansightServer } from '../server/client';
import type { SessionStore } from '../session';
import { parseSessions, renderSessions, sessionTitle, timeAgo } from './sessionsModel';

export interface SessionsDeps {
  server: PlansightServer;
  store: SessionStore;
  model: ConversationModel;
  output: vscode.LogOutputChannel;
  /** Draws the sessions control (its HTML; empty: none). */
  draw(html: string): void;
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export class SessionsUi {
  /** False once the server said it has no `plansight/sessions` (a version 1–3 server). */
  private supported = true;
  /** The list is asked again after this one answers (events come in bursts). */
  private refreshing: Promise<void> | undefined;
  private again = false;

  constructor(private readonly deps: SessionsDeps) {}

  /** Asks the server for the list and draws it; quiet when the server is not there. */
  refresh(): Promise<void> {
    if (this.refreshing) {
      this.again = true;
      return this.refreshing;
    }
    this.refreshing = this.fetch().finally(() => {
      this.refreshing = undefined;
      if (this.again) {
        this.again = false;
        void this.refresh();
      }
    });
    return this.refreshing;
  }

  private async fetch(): Promise<void> {
    const { server, store } = this.deps;
    if (!this.supported || !server.isRunning) {
      return;
    }
    try {
      const result = await server.sendRequest<unknown>(Methods.sessions, {});
      store.sessions.update(parseSessions(result));
      this.draw();
    } catch (error) {
      if ((error as { code?: unknown }).code === ErrorCodes.methodNotFound) {
        this.supported = false; // one session per workspace: no control, nothing filtered
        return;
      }
      this.deps.output.warn(`plansight/sessions failed: ${errorMessage(error)}`);
    }
  }

  /** A server (re)started: it says which session is current, which is then the one shown. */
  serverStarted(): Promise<void> {
    this.supported = true;
    this.deps.store.sessions.shown = undefined;
    return this.refresh();
  }

  draw(): void {
    this.deps.draw(renderSessions(this.deps.store.sessions, Date.now()));
  }

  /** `plansight/event` `history` (after an openSession): the runs of the session shown. */
  historyEvent(runs: unknown, sessionId: unknown): void {
    const { model, store } = this.deps;
    if (!Array.isArray(runs) || !store.sessions.isShown(sessionId)) {
      return;
    }
    model.clear();
    loadHistory(model, runs as HistoryRun[]);
    for (const edit of editsFromHistory(runs as HistoryRun[])) {
      if (!store.findEdit(edit.id)) {
        store.addEdit(edit);
      }
    }
  }

  /** Shows session `id`: its state, then its conversation (the history event that follows). */
  async open(id: string): Promise<void> {
    const { server, store, model } = this.deps;
    const before = store.sessions.shown;
    // Shown before the request: the server sends the session's notifications before it answers.
    store.sessions.shown = id;
    model.clear();
    store.clearEdits();
    try {
      const state = await server.sendRequest<StateResult>(Methods.openSession, { id });
      this.showState(state);
    } catch (error) {
      store.sessions.shown = before;
      void vscode.window.showErrorMessage(`Plansight: could not open the session: ${errorMessage(error)}`);
      await this.reloadShown();
    }
    await this.refresh();
  }

  /** The shown session's conversation again (after a failed switch). */
  private async reloadShown(): Promise<void> {
    const { server, store } = this.deps;
    const id = store.sessions.shown;
    try {
      const history = await server.sendRequest<{ runs: unknown }>(Methods.history, id ? { sessionId: id } : {});
      this.historyEvent(history.runs, id);
      this.showState(await server.sendRequest<StateResult>(Methods.state, id ? { sessionId: id } : {}));
    } catch (error) {
      this.deps.output.warn(`Reloading the session failed: ${errorMessage(error)}`);
    }
  }

  private showState(state: StateResult | undefined): void {
    if (!state?.todos) {
      return;
    }
    this.deps.store.setTodos(state.todos);
    this.deps.store.setScratchpad(state.scratchpad ?? '');
    this.deps.store.setInstructions(state.instructions);
    this.deps.store.setServerRunning(state.running === true);
  }

  /** A new, empty session, shown (a version 1–3 server: `plansight/reset`). */
  async create(): Promise<void> {
    const { server, store, model } = this.deps;
    try {
      if (!this.supported) {
        await server.sendRequest(Methods.reset, {});
        store.clearEdits();
        model.addSessionBreak();
        return;
      }
      const { id } = await server.sendRequest<{ id: string }>(Methods.newSession, {});
      store.sessions.shown = id;
      model.clear();
      model.addSessionBreak(); // says what happened: the view starts over
      store.clearEdits();
      this.showState(await server.sendRequest<StateResult>(Methods.state, { sessionId: id }));
    } catch (error) {
      void vscode.window.showErrorMessage(`Plansight: could not start a new session: ${errorMessage(error)}`);
    }
    await this.refresh();
  }

  private async pick(placeHolder: string): Promise<SessionInfo | undefined> {
    await this.refresh();
    const sessions = this.deps.store.sessions;
    if (sessions.sessions.length === 0) {
      void vscode.window.showInformationMessage('Plansight: this server keeps one session (no list of sessions).');
      return undefined;
    }
    const now = Date.now();
    const picked = await vscode.window.showQuickPick(
      sessions.sessions.map((s) => ({
        label: `${s.status === 'running' ? '$(loading~spin) ' : s.status === 'waiting' ? '$(bell-dot) ' : ''}${sessionTitle(s).replace(/\$\(/g, '$\u200b(')}`,
        description: [s.id === sessions.shown ? 'shown' : '', s.status === 'idle' ? '' : s.status, timeAgo(s.updatedAt, now)].filter(Boolean).join(' · '),
        session: s,
      })),
      { placeHolder, matchOnDescription: true },
    );
    return picked?.session;
  }

  private async resolve(id: unknown, placeHolder: string): Promise<SessionInfo | undefined> {
    if (typeof id === 'string') {
      await this.refresh();
      return this.deps.store.sessions.find(id);
    }
    return this.pick(placeHolder);
  }

  async switchTo(id?: unknown): Promise<void> {
    const session = await this.resolve(id, 'Switch to a session');
    if (session && session.id !== this.deps.store.sessions.shown) {
      await this.open(session.id);
    }
  }

  async rename(id?: unknown): Promise<void> {
    const session = await this.resolve(id, 'Rename which session?');
    if (!session) {
      return;
    }
    const title = await vscode.window.showInputBox({ title: 'Plansight: rename the session', value: session.title, prompt: 'The session\'s new title' });
    if (title === undefined || !title.trim()) {
      return;
    }
    try {
      await this.deps.server.sendRequest(Methods.renameSession, { id: session.id, title: title.trim() });
    } catch (error) {
      void vscode.window.showErrorMessage(`Plansight: could not rename the session: ${errorMessage(error)}`);
    }
    await this.refresh();
  }

  async delete(id?: unknown): Promise<void> {
    const session = await this.resolve(id, 'Delete which session?');
    if (!session) {
      return;
    }
    const choice = await vscode.window.showWarningMessage(
      `Delete the session “${sessionTitle(session)}”?`,
      { modal: true, detail: 'Its conversation, plan and scratchpad are deleted; checkpoints stay.' },
      'Delete',
    );
    if (choice !== 'Delete') {
      return;
    }
    const { store } = this.deps;
    try {
      await this.deps.server.sendRequest(Methods.deleteSession, { id: session.id });
    } catch (error) {
      void vscode.window.showErrorMessage(`Plansight: could not delete the session: ${errorMessage(error)}`);
      await this.refresh();
      return;
    }
    if (session.id !== store.sessions.shown) {
      await this.refresh();
      return;
    }
    // The shown one is gone: the server made another current; show that one.
    store.sessions.shown = undefined;
    await this.refresh();
    const next = store.sessions.shown;
    if (next) {
      await this.open(next);
    }
  }

  /** A click in the sessions control. */
  action(action: string, id: string | undefined): Promise<void> {
    switch (action) {
      case 'new':
        return this.create();
      case 'open':
        return id ? this.switchTo(id) : Promise.resolve();
      case 'rename':
        return id ? this.rename(id) : Promise.resolve();
      case 'delete':
        return id ? this.delete(id) : Promise.resolve();
      default:
        return Promise.resolve();
    }
  }
}

export function registerSessionCommands(context: vscode.ExtensionContext, ui: SessionsUi): void {
  context.subscriptions.push(
    vscode.commands.registerCommand('plansight.newSession', () => ui.create()),
    vscode.commands.registerCommand('plansight.switchSession', (id?: unknown) => ui.switchTo(id)),
    vscode.commands.registerCommand('plansight.renameSession', (id?: unknown) => ui.rename(id)),
    vscode.commands.registerCommand('plansight.deleteSession', (id?: unknown) => ui.delete(id)),
  );
}
