/**
 * The Changes view (`plansight.changes`): under each plan step, the files its edits and commands
 * changed (`plansight/changes`, kept by the server's checkpoints, so also after a reload). A
 * step opens in VS Code's multi-file diff (before the step → now), a file in a diff; Undo Step
 * (here and on each plan item), Undo File and Restore to Checkpoint ask first, saying what will
 * change (a `dryRun` of the same restore), then restore through `plansight/restore`. The left
 * side of each diff is read from the server (`plansight/checkpointFile`) through a read-only
 * `plansight-checkpoint:` document.
 */
import * as vscode from 'vscode';
import type { PlanNode } from '../plan/planView';
import type { RowSpec } from '../plan/planModel';
import {
  type ChangesResult,
  type Checkpoint,
  type CheckpointFileResult,
  type CheckpointsResult,
  ErrorCodes,
  Methods,
  type PlansightEvent,
  type RestoreParams,
  type RestoreResult,
  type StateResult,
} from '../protocol';
import type { PlansightServer } from '../server/client';
import type { SessionStore } from '../session';
import {
  type ChangeNode,
  checkpointPicks,
  type Confirmation,
  type FileNode,
  fileNodes,
  fileRow,
  restoreConfirmation,
  resultMessage,
  stepNodes,
  stepRow,
  stepTitle,
  undoCheckpoint,
  undoFileConfirmation,
  undoFileWhat,
  undoStepConfirmation,
  undoneSteps,
} from './changesModel';

export const checkpointScheme = 'plansight-checkpoint';
const REFRESH_DELAY_MS = 150;

function toTreeItem(spec: RowSpec): vscode.TreeItem {
  const item = new vscode.TreeItem(
    spec.label,
    spec.hasChildren ? vscode.TreeItemCollapsibleState.Expanded : vscode.TreeItemCollapsibleState.None,
  );
  item.id = spec.id;
  item.iconPath = new vscode.ThemeIcon(spec.iconId, spec.iconColor ? new vscode.ThemeColor(spec.iconColor) : undefined);
  item.description = spec.description;
  item.tooltip = spec.tooltip;
  item.contextValue = spec.contextValue;
  return item;
}

export class ChangesProvider implements vscode.TreeDataProvider<ChangeNode> {
  private readonly changed = new vscode.EventEmitter<ChangeNode | undefined | void>();
  readonly onDidChangeTreeData = this.changed.event;
  changes: ChangesResult = { steps: [] };

  constructor(private readonly store: SessionStore) {}

  set(changes: ChangesResult): void {
    this.changes = changes;
    this.changed.fire();
  }

  refresh(): void {
    this.changed.fire();
  }

  getTreeItem(node: ChangeNode): vscode.TreeItem {
    if (node.kind === 'step') {
      return toTreeItem(stepRow(this.changes, node.todoId, this.store.todos.items));
    }
    const item = toTreeItem(fileRow(node));
    if (node.before) {
      item.command = { command: 'plansight.changes.openFile', title: 'Open Changes', arguments: [node] };
    }
    return item;
  }

  getChildren(node?: ChangeNode): ChangeNode[] {
    if (!node) return stepNodes(this.changes);
    return node.kind === 'step' ? fileNodes(this.changes, node.todoId) : [];
  }

  getParent(node: ChangeNode): ChangeNode | undefined {
    return node.kind === 'file' ? { kind: 'step', todoId: node.todoId } : undefined;
  }
}

/** Read-only documents of files as a checkpoint holds them (`?checkpoint=ID`), or empty. */
class CheckpointDocuments implements vscode.TextDocumentContentProvider {
  constructor(private readonly server: PlansightServer) {}

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const query = new URLSearchParams(uri.query);
    const checkpoint = query.get('checkpoint');
    const path = query.get('path');
    if (!checkpoint || !path) return ''; // a side on which the file does not exist
    const result = await this.server.sendRequest<CheckpointFileResult>(Methods.checkpointFile, { checkpoint, path });
    if (!result.exists) return '';
    return result.binary ? '(a binary file: no text to show)' : (result.text ?? '');
  }
}

function workspaceUri(path: string): vscode.Uri {
  const root = vscode.workspace.workspaceFolders?.[0]?.uri ?? vscode.Uri.file('/');
  return vscode.Uri.joinPath(root, ...path.split('/'));
}

/** The file as a checkpoint holds it: the workspace file's own path (so that a diff shows one
 *  file, not a rename), another scheme; no checkpoint: an empty side. */
function beforeUri(path: string, checkpoint: string | undefined): vscode.Uri {
  return workspaceUri(path).with({
    scheme: checkpointScheme,
    query: new URLSearchParams(checkpoint ? { checkpoint, path } : { absent: path }).toString(),
  });
}

/** The file as it is now, or an empty side where it does not exist. */
async function nowUri(path: string): Promise<vscode.Uri> {
  const uri = workspaceUri(path);
  try {
    await vscode.workspace.fs.stat(uri);
    return uri;
  } catch {
    return beforeUri(path, undefined); // gone now (the step deleted it)
  }
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export interface Changes {
  /** Every `plansight/event` (a checkpoint taken, a run ended): the view stays current. */
  onEvent(event: PlansightEvent): void;
}

/** Creates the Changes view and its commands (`plansight.changes.<verb>`). */
export function registerChanges(
  context: vscode.ExtensionContext,
  server: PlansightServer,
  store: SessionStore,
  notice: (text: string) => void = () => undefined,
): Changes {
  const provider = new ChangesProvider(store);
  const view = vscode.window.createTreeView('plansight.changes', { treeDataProvider: provider, showCollapseAll: true });
  context.subscriptions.push(
    view,
    vscode.workspace.registerTextDocumentContentProvider(checkpointScheme, new CheckpointDocuments(server)),
  );

  let timer: ReturnType<typeof setTimeout> | undefined;
  let fetching = Promise.resolve();
  const fetchChanges = async (): Promise<void> => {
    if (!server.isRunning) return;
    try {
      const changes = await server.sendRequest<ChangesResult>(Methods.changes, {});
      provider.set(changes);
      view.message = undefined; // with no step yet, the view's welcome text says what it shows
    } catch (error) {
      const code = (error as { code?: number }).code;
      provider.set({ steps: [] });
      view.message =
        code === ErrorCodes.methodNotFound
          ? 'This Plansight server does not list the changes of each step.'
          : `Plansight: ${errorText(error)}`;
    }
  };
  /** Soon, once: checkpoints come in bursts (an edit, a command, an item starting). */
  const refreshSoon = (): void => {
    if (timer) clearTimeout(timer);
    timer = setTimeout(() => {
      timer = undefined;
      fetching = fetching.then(fetchChanges);
    }, REFRESH_DELAY_MS);
  };
  context.subscriptions.push(
    { dispose: () => timer && clearTimeout(timer) },
    store.onDidChange((change) => {
      if (change === 'server' && store.serverStatus === 'running') refreshSoon();
      if (change === 'todos') {
        provider.refresh();
        refreshSoon();
      }
    }),
  );

  /** The button chosen: the plain action, the forced one, or undefined (cancelled). */
  const ask = async (said: Confirmation): Promise<'plain' | 'force' | undefined> => {
    const actions = said.force ? [said.action, said.force] : [said.action];
    const chosen = await vscode.window.showWarningMessage(said.message, { modal: true, detail: said.detail }, ...actions);
    return chosen === said.action ? 'plain' : chosen !== undefined && chosen === said.force ? 'force' : undefined;
  };

  /**
   * Dry runs first (the plain one, and for an undo that would leave files, the forced one),
   * the confirmation from them, then the restore the user chose; what it did, said after.
   */
  const restoreAfterAsking = async (
    params: RestoreParams,
    confirmation: (preview: RestoreResult, forced: RestoreResult | undefined, undone: ReadonlySet<string>) => Confirmation,
    what: string,
    { forceable = false } = {},
  ): Promise<void> => {
    try {
      const preview = await server.sendRequest<RestoreResult>(Methods.restore, { ...params, dryRun: true });
      const forced =
        forceable && preview.skipped.length
          ? await server.sendRequest<RestoreResult>(Methods.restore, { ...params, force: true, dryRun: true })
          : undefined;
      const before = await server.sendRequest<CheckpointsResult>(Methods.checkpoints, {});
      const chosen = await ask(confirmation(preview, forced, undoneSteps(before.checkpoints)));
      if (!chosen) return;
      const result = await server.sendRequest<RestoreResult>(Methods.restore, chosen === 'force' ? { ...params, force: true } : params);
      // The plan as the undo left it (the step back to pending), also after a forced undo,
      // whose plan notification a window could miss (issue 31: the plan stayed as before).
      const state = await server.sendRequest<StateResult>(Methods.state, store.sessions.shown ? { sessionId: store.sessions.shown } : {});
      if (state?.todos) store.setTodos(state.todos);
      const listed = await server.sendRequest<CheckpointsResult>(Methods.checkpoints, {});
      const message = resultMessage(what, result, undoCheckpoint(listed.checkpoints));
      notice(message.replace(/^Plansight: /, ''));
      void vscode.window.showInformationMessage(message);
    } catch (error) {
      void vscode.window.showErrorMessage(`Plansight could not restore: ${errorText(error)}`);
    } finally {
      refreshSoon();
    }
  };

  const stepOf = async (node: unknown): Promise<string | undefined> => {
    const given = node as ChangeNode | PlanNode | undefined;
    if (given?.kind === 'step') return given.todoId;
    if (given?.kind === 'todo') return given.item.id;
    const steps = stepNodes(provider.changes);
    if (!steps.length) {
      void vscode.window.showInformationMessage('Plansight: no plan step has changed a file yet.');
      return undefined;
    }
    const pick = await vscode.window.showQuickPick(
      steps.map((s) => ({ label: stepTitle(s.todoId, store.todos.items), todoId: s.todoId })),
      { placeHolder: 'Undo which step?' },
    );
    return pick?.todoId;
  };

  const register = (command: string, callback: (...args: unknown[]) => unknown): void => {
    context.subscriptions.push(vscode.commands.registerCommand(command, callback));
  };

  register('plansight.changes.refresh', () => fetchChanges());
  register('plansight.changes.openFile', async (node) => {
    const file = node as FileNode | undefined;
    if (file?.kind !== 'file') return;
    const title = `${file.path} (before step #${file.todoId} ↔ now)`;
    await vscode.commands.executeCommand('vscode.diff', beforeUri(file.path, file.before), await nowUri(file.path), title);
  });
  register('plansight.changes.openStep', async (node) => {
    const todoId = await stepOf(node);
    if (todoId === undefined) return;
    // [the file, before (none for a file the step made), now (none for one it deleted)]
    const resources = fileNodes(provider.changes, todoId)
      .filter((f) => f.before)
      .map((f) => [
        workspaceUri(f.path),
        f.change === 'added' ? undefined : beforeUri(f.path, f.before),
        f.change === 'deleted' ? undefined : workspaceUri(f.path),
      ]);
    const title = `Step ${stepTitle(todoId, store.todos.items)}: before ↔ now`;
    await vscode.commands.executeCommand('vscode.changes', title, resources);
  });
  register('plansight.changes.undoStep', async (node) => {
    const todoId = await stepOf(node);
    if (todoId === undefined) return;
    const files = fileNodes(provider.changes, todoId);
    await restoreAfterAsking(
      { todoId },
      (preview, forced, undone) => undoStepConfirmation(todoId, store.todos.items, files, preview, forced, undone),
      `step #${todoId} undone`,
      { forceable: true },
    );
  });
  register('plansight.changes.undoFile', async (node) => {
    const file = node as FileNode | undefined;
    if (file?.kind !== 'file') return;
    await restoreAfterAsking(
      { todoId: file.todoId, paths: [file.path] },
      (preview, forced, undone) => undoFileConfirmation(file, store.todos.items, preview, forced, undone),
      undoFileWhat(file),
      { forceable: true },
    );
  });
  register('plansight.changes.restoreCheckpoint', async () => {
    let checkpoints: Checkpoint[];
    try {
      checkpoints = (await server.sendRequest<CheckpointsResult>(Methods.checkpoints, {})).checkpoints;
    } catch (error) {
      void vscode.window.showErrorMessage(`Plansight: ${errorText(error)}`);
      return;
    }
    const picked = await vscode.window.showQuickPick(checkpointPicks(checkpoints), {
      title: 'Restore to Checkpoint',
      placeHolder: 'Which checkpoint? (newest first)',
      matchOnDescription: true,
      matchOnDetail: true,
    });
    if (!picked) return;
    const how = await vscode.window.showQuickPick(
      [
        { label: 'Files only', conversation: false, detail: 'The conversation and the plan stay as they are.' },
        { label: 'Files and the conversation', conversation: true, detail: 'The conversation and the plan go back to that point too.' },
      ],
      { title: `Restore checkpoint ${picked.checkpoint.id}`, placeHolder: 'Restore what?' },
    );
    if (!how) return;
    const checkpoint = picked.checkpoint;
    await restoreAfterAsking(
      { checkpoint: checkpoint.id, ...(how.conversation ? { conversation: true } : {}) },
      (preview) => restoreConfirmation(checkpoint, preview, how.conversation),
      `checkpoint ${checkpoint.id} restored${how.conversation ? ' with the conversation' : ''}`,
    );
  });

  return {
    onEvent(event: PlansightEvent): void {
      // A checkpoint (an edit, a command, a restore), files changed, a run's end: what each
      // step changed may be different now, whoever did it.
      if (event.type === 'checkpoint' || event.type === 'filesChanged' || event.type === 'runFinished') refreshSoon();
    },
  };
}
