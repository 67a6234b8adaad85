/**
 * The conversation view (`plansight.conversation`): a webview in the Plansight container that
 * shows the ConversationModel and forwards what the user does (send, stop, new session, a
 * card's buttons, a link). Rendering happens here in the extension (render.ts); the page's
 * script only places the fragments.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { type FromWebview, type ToWebview, type ComposerContext, rankPaths, welcomeCommands } from './composer';
import { type DraftStore, type SentPrompt, draftToRestore, fileDraftStore, parseDraft } from './draft';
import type { CardEntry, Change, ConversationModel } from './model';
import { conversationPage } from './page';
import type { ConversationRenderer } from './render';

export type CardAction = (card: CardEntry, action: string, fields: Record<string, string>) => unknown;

export interface ConversationHandlers {
  send(text: string, includeContext: boolean, mode: 'act' | 'plan'): unknown;
  cancel(): unknown;
  newSession(): unknown;
  /** A click in the sessions control (`action`: new, open, rename, delete). */
  session(action: string, id: string | undefined): unknown;
}

export const conversationViewId = 'plansight.conversation';

/**
 * Where an earlier version kept the composer's unsent text: the workspace's state (and where it
 * is kept without a workspace storage folder). Not in the webview's own state: the workbench
 * stores that only when it saves its views (on a timer, on losing focus), so a reload brought
 * back a snapshot taken while a follow-up was being typed, a prompt already sent (issue 31).
 * The workspace's state goes through the workbench too, which writes it out a while later:
 * `draftStore` keeps the draft in a file of the extension's own.
 */
export const draftKey = 'plansight.conversation.draft';

function mementoDraftStore(memento: vscode.Memento): DraftStore {
  return {
    get: () => parseDraft(memento.get<unknown>(draftKey)),
    set: (draft) => void memento.update(draftKey, draft),
  };
}

/**
 * The draft's store: a file in the workspace storage folder (fileDraftStore says why), a draft
 * an earlier version kept in the workspace state moved there once; the workspace state where
 * there is no such folder (no folder open).
 */
export function draftStore(context: vscode.ExtensionContext, output: vscode.LogOutputChannel): DraftStore {
  const memento = mementoDraftStore(context.workspaceState);
  if (context.storageUri?.scheme !== 'file') {
    return memento;
  }
  const file = fileDraftStore(join(context.storageUri.fsPath, 'conversation-draft.json'), (error) =>
    output.warn(`The unsent prompt could not be kept: ${String(error)}`),
  );
  const earlier = memento.get();
  if (earlier) {
    if (!file.get()) file.set(earlier);
    memento.set(undefined);
  }
  return file;
}

export class ConversationView implements vscode.WebviewViewProvider, vscode.Disposable {
  private view: vscode.WebviewView | undefined;
  private ready = false;
  /** Plansight: Ask came before the page was ready: the cursor goes in the box once it is. */
  private focusWhenReady = false;
  private readonly actions = new Map<string, CardAction>();
  private readonly disposables: vscode.Disposable[] = [];
  /** Changes waiting to be posted: drawn together (text streams in many small deltas). */
  private queued = new Map<string, ToWebview>();
  private timer: ReturnType<typeof setTimeout> | undefined;
  private state: Extract<ToWebview, { type: 'state' }> = { type: 'state', running: false, status: '', context: null };
  private handlers: ConversationHandlers | undefined;
  /** The sessions control as last drawn (sent again when the page is drawn anew). */
  private sessions: Extract<ToWebview, { type: 'sessions' }> = { type: 'sessions', html: '' };
  private instructions: Extract<ToWebview, { type: 'instructions' }> = { type: 'instructions', html: '' };
  /** The workspace's files for `@` mentions, listed once per mention (while it is typed). */
  private files: { at: number; paths: Promise<string[]> } | undefined;
  private readonly visibility = new vscode.EventEmitter<boolean>();
  /** Fires when the view comes into sight or goes out of it (collapsed, hidden, closed). */
  readonly onDidChangeVisibility = this.visibility.event;

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly model: ConversationModel,
    private readonly renderer: ConversationRenderer,
    private readonly output: vscode.LogOutputChannel,
    /** Where the unsent prompt is kept: see `draftStore`. */
    private readonly drafts: DraftStore,
  ) {
    const subscription = model.onDidChange((change) => this.queue(change));
    this.disposables.push({ dispose: () => subscription.dispose() });
  }

  setHandlers(handlers: ConversationHandlers): void {
    this.handlers = handlers;
  }

  /** What a card type's buttons do: `action` is the button's `data-action`. */
  registerCardActions(card: string, action: CardAction): vscode.Disposable {
    this.actions.set(card, action);
    return new vscode.Disposable(() => this.actions.delete(card));
  }

  get visible(): boolean {
    return this.view?.visible ?? false;
  }

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    this.ready = false;
    const dist = vscode.Uri.joinPath(this.extensionUri, 'dist');
    const media = vscode.Uri.joinPath(this.extensionUri, 'media');
    view.webview.options = { enableScripts: true, enableCommandUris: false, localResourceRoots: [dist, media] };
    const page = (): string =>
      conversationPage(
        {
          nonce: randomBytes(16).toString('base64'),
          cspSource: view.webview.cspSource,
          scriptUri: view.webview.asWebviewUri(vscode.Uri.joinPath(dist, 'conversation.js')).toString(),
          styleUri: view.webview.asWebviewUri(vscode.Uri.joinPath(media, 'conversation.css')).toString(),
          codiconsUri: view.webview.asWebviewUri(vscode.Uri.joinPath(dist, 'codicons', 'codicon.css')).toString(),
        },
        { folder: (vscode.workspace.workspaceFolders?.length ?? 0) > 0 },
      );
    view.webview.html = page();
    this.disposables.push(
      // A folder opened (or the last one closed) without a reload: the page follows.
      vscode.workspace.onDidChangeWorkspaceFolders(() => {
        this.ready = false;
        view.webview.html = page();
      }),
      view.webview.onDidReceiveMessage((message: FromWebview) => this.receive(message)),
      view.onDidChangeVisibility(() => this.visibility.fire(view.visible)),
      view.onDidDispose(() => {
        if (this.view === view) {
          this.view = undefined;
          this.ready = false;
          this.visibility.fire(false);
        }
      }),
    );
  }

  /** Shows the view; with `focusInput`, puts the cursor in the prompt. */
  async reveal(focusInput: boolean): Promise<void> {
    if (this.view) {
      this.view.show(!focusInput);
    } else {
      await vscode.commands.executeCommand(`${conversationViewId}.focus`);
    }
    if (focusInput) {
      // A view not drawn yet takes it once its page is ready (a message before is lost); the
      // page also puts the cursor in the box whenever the view gets focus.
      if (this.ready) {
        this.post({ type: 'focus' });
      } else {
        this.focusWhenReady = true;
      }
    }
  }

  /** The composer's state: running or not, the status line, and the context chip. */
  setState(running: boolean, status: string, context: ComposerContext | null): void {
    this.state = { type: 'state', running, status, context };
    this.post(this.state);
  }

  /** The header's project-instructions line (instructions.ts renders it). */
  setInstructions(html: string): void {
    this.instructions = { type: 'instructions', html };
    this.post(this.instructions);
  }

  /** The sessions control (sessions/sessionsModel.ts renders it). */
  setSessions(html: string): void {
    this.sessions = { type: 'sessions', html };
    this.post(this.sessions);
  }

  setPrompt(text: string): void {
    this.post({ type: 'setPrompt', text });
  }

  private post(message: ToWebview): void {
    if (this.view && this.ready) {
      void this.view.webview.postMessage(message);
    }
  }

  private queue(change: Change): void {
    switch (change.kind) {
      case 'reset':
        this.queued.clear();
        this.queued.set('reset', { type: 'reset', html: '' });
        break;
      case 'run':
        // The whole run is drawn again: its pending entry updates are in it.
        for (const key of [...this.queued.keys()]) {
          if (key.startsWith(`entry:${change.run.id}:`)) {
            this.queued.delete(key);
          }
        }
        this.queued.set(`run:${change.run.id}`, { type: 'run', id: change.run.id, html: '' });
        break;
      case 'entry':
        if (!this.queued.has(`run:${change.run.id}`) && !this.queued.has('reset')) {
          this.queued.set(`entry:${change.run.id}:${change.entry.id}`, { type: 'entry', runId: change.run.id, id: change.entry.id, html: '' });
        }
        break;
      case 'removeRun':
        this.queued.delete(`run:${change.runId}`);
        this.queued.set(`remove:${change.runId}`, { type: 'removeRun', id: change.runId });
        break;
    }
    this.timer ??= setTimeout(() => this.flush(), 30);
  }

  /** Renders what was queued from the model as it is now, in the order it changed. */
  private flush(): void {
    this.timer = undefined;
    const queued = [...this.queued.values()];
    this.queued.clear();
    if (!this.ready) {
      return; // drawn in full once the page is ready
    }
    for (const message of queued) {
      if (message.type === 'reset') {
        this.post({ type: 'reset', html: this.renderAll() });
      } else if (message.type === 'run') {
        const run = this.model.runs.find((r) => r.id === message.id);
        if (run) {
          this.post({ type: 'run', id: run.id, html: this.renderer.run(run) });
        }
      } else if (message.type === 'entry') {
        const found = this.model.findEntry(message.id);
        if (found) {
          this.post({ type: 'entry', runId: found.run.id, id: message.id, html: this.renderer.entry(found.entry) });
        }
      } else {
        this.post(message);
      }
    }
    this.dropStaleDraft();
  }

  /** The prompts of earlier windows' runs (from the history), with when each run started. */
  private pastPrompts(): SentPrompt[] {
    return this.model.runs.flatMap((run) =>
      run.past && run.startedAt
        ? run.entries.flatMap((e) => (e.kind === 'user' ? [{ text: e.prompt.text, startedAt: run.startedAt! }] : []))
        : [],
    );
  }

  /**
   * The kept draft is forgotten once the history shows it sent after it was saved (draft.ts):
   * the history can come after the draft was put back in the box, which then empties.
   */
  private dropStaleDraft(): void {
    const saved = this.drafts.get();
    if (saved && !draftToRestore(saved, this.pastPrompts())) {
      this.drafts.set(undefined);
      this.post({ type: 'staleDraft', text: saved.text });
    }
  }

  private renderAll(): string {
    return this.model.runs.map((run) => this.renderer.run(run)).join('');
  }

  private async receive(message: FromWebview): Promise<void> {
    try {
      switch (message.type) {
        case 'ready':
          this.ready = true;
          this.post({ type: 'reset', html: this.renderAll() });
          this.post(this.state);
          this.post(this.sessions);
          this.post(this.instructions);
          this.post({ type: 'recall', prompts: this.sentPrompts() });
          this.dropStaleDraft();
          this.post({ type: 'draft', text: this.drafts.get()?.text ?? '' });
          if (this.focusWhenReady) {
            this.focusWhenReady = false;
            this.post({ type: 'focus' });
          }
          return;
        case 'mention':
          this.post({ type: 'mentionFiles', query: message.query, paths: rankPaths(await this.workspaceFiles(message.query), message.query) });
          return;
        case 'copy':
          await vscode.env.clipboard.writeText(message.text);
          void vscode.window.setStatusBarMessage('Plansight: code copied to the clipboard.', 3000);
          return;
        case 'command':
          if (welcomeCommands.includes(message.command)) {
            await vscode.commands.executeCommand(message.command);
          }
          return;
        case 'draft':
          this.drafts.set(message.text ? { text: message.text, savedAt: Date.now() } : undefined);
          return;
        case 'send':
          // Forgotten before anything else: a sent prompt must not come back as a draft.
          this.drafts.set(undefined);
          await this.handlers?.send(message.text, message.includeContext, message.mode === 'plan' ? 'plan' : 'act');
          return;
        case 'cancel':
          await this.handlers?.cancel();
          return;
        case 'newSession':
          await this.handlers?.newSession();
          return;
        case 'session':
          await this.handlers?.session(String(message.action), typeof message.id === 'string' ? message.id : undefined);
          return;
        case 'action': {
          const found = this.model.findEntry(message.entry);
          if (found?.entry.kind === 'card') {
            await this.actions.get(found.entry.card)?.(found.entry, message.action, message.fields ?? {});
          }
          return;
        }
        case 'openLink':
          await this.openLink(message.href);
          return;
      }
    } catch (error) {
      this.output.error(`Conversation view: ${String(error)}`);
    }
  }

  /** The user's prompts shown so far (from this window and the history), oldest first. */
  private sentPrompts(): string[] {
    return this.model.runs.flatMap((run) => run.entries.flatMap((e) => (e.kind === 'user' && e.prompt.text.trim() ? [e.prompt.text] : [])));
  }

  /** Workspace-relative paths of the files (the user's excludes and .gitignore'd folders left out). */
  private workspaceFiles(query: string): Promise<string[]> {
    // A new mention (just "@") lists the files again; the letters typed after it filter that list.
    if (!this.files || query === '' || Date.now() - this.files.at > 15_000) {
      const paths = Promise.resolve(
        vscode.workspace.findFiles('**/*', '{**/node_modules/**,**/.git/**,**/.venv/**,**/__pycache__/**}', 5000),
      ).then(
        (uris) => uris.map((uri) => vscode.workspace.asRelativePath(uri, false)).sort(),
        () => [] as string[],
      );
      this.files = { at: Date.now(), paths };
    }
    return this.files.paths;
  }

  /** Web links open in the browser, workspace paths in the editor; nothing else. */
  private async openLink(href: string): Promise<void> {
    if (/^(https?|mailto):/i.test(href)) {
      await vscode.env.openExternal(vscode.Uri.parse(href));
      return;
    }
    const folder = vscode.workspace.workspaceFolders?.[0];
    const path = href.replace(/#.*$/, '');
    if (!folder || !path || /^[a-z][a-z0-9+.-]*:/i.test(path) || path.split('/').includes('..')) {
      return;
    }
    const line = /#L(\d+)/.exec(href)?.[1];
    const uri = vscode.Uri.joinPath(folder.uri, path);
    const options: vscode.TextDocumentShowOptions = { preview: true, viewColumn: vscode.ViewColumn.Active };
    if (line) {
      const at = new vscode.Position(Number(line) - 1, 0);
      options.selection = new vscode.Range(at, at);
    }
    await vscode.window.showTextDocument(uri, options).then(undefined, () => undefined);
  }

  dispose(): void {
    if (this.timer) {
      clearTimeout(this.timer);
    }
    for (const d of this.disposables) {
      d.dispose();
    }
    this.visibility.dispose();
  }
}

export function registerConversationView(context: vscode.ExtensionContext, view: ConversationView): void {
  context.subscriptions.push(
    view,
    vscode.window.registerWebviewViewProvider(conversationViewId, view, { webviewOptions: { retainContextWhenHidden: true } }),
  );
}
