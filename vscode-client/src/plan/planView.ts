/**
 * The plan tree (`plansight.plan`): one row per item, and under each item the edits proposed
 * while it was in progress. Updated only from the server's notifications (through the
 * SessionStore); the user's changes go to the server as `plansight/editPlan`.
 */
import * as vscode from 'vscode';
import {
  ErrorCodes,
  Methods,
  type EditPlanParams,
  type RunParallelResult,
  type TakeInResult,
  type TodoItem,
  todoStatuses,
  type TodoStatus,
  type WorkerFile,
  type WorkersResult,
} from '../protocol';
import type { ReviewManager } from '../review/reviewManager';
import type { PlansightServer } from '../server/client';
import type { SessionStore } from '../session';
import { sessionTitle } from '../sessions/sessionsModel';
import * as edits from './planEdits';
import { proposedDescription, reviewBadgeTooltip, reviewMessage } from './planReviewModel';
import {
  editRow,
  type EditRecord,
  groupEdits,
  otherEditsRow,
  planViewDescription,
  type RowSpec,
  serverDownMessage,
  statusIcons,
  statusLabels,
  todoRow,
} from './planModel';
import {
  afterServerChange,
  dropQuestion,
  itemWorker,
  mergeRecords,
  refusedMessage,
  runParallelMessage,
  selectedTodoIds,
  strayWorkerRow,
  strayWorkers,
  workerKey,
  workerTarget,
  takeInMessage,
  type WorkerView,
  withWorker,
  workerFileRow,
  workerLiveRow,
} from './workersModel';

export type PlanNode =
  | { kind: 'todo'; item: TodoItem }
  | { kind: 'edit'; edit: EditRecord; parentTodoId?: string }
  | { kind: 'other' }
  | { kind: 'workerFile'; worker: WorkerView; file: WorkerFile }
  | { kind: 'workerLive'; worker: WorkerView }
  | { kind: 'strayWorker'; worker: WorkerView };

const dragMime = 'application/vnd.code.tree.plansight.plan';

function toTreeItem(spec: RowSpec, expanded: boolean): vscode.TreeItem {
  const item = new vscode.TreeItem(
    spec.label,
    spec.hasChildren
      ? expanded
        ? vscode.TreeItemCollapsibleState.Expanded
        : vscode.TreeItemCollapsibleState.Collapsed
      : vscode.TreeItemCollapsibleState.None,
  );
  item.id = spec.id;
  item.iconPath = new vscode.ThemeIcon(
    spec.iconId,
    spec.iconColor ? new vscode.ThemeColor(spec.iconColor) : undefined,
  );
  item.description = spec.description;
  item.tooltip = spec.tooltip;
  item.contextValue = spec.contextValue;
  return item;
}

export class PlanTreeProvider
  implements vscode.TreeDataProvider<PlanNode>, vscode.TreeDragAndDropController<PlanNode>
{
  private readonly changed = new vscode.EventEmitter<PlanNode | undefined | void>();
  readonly onDidChangeTreeData = this.changed.event;
  readonly dragMimeTypes = [dragMime];
  readonly dropMimeTypes = [dragMime];

  constructor(
    private readonly store: SessionStore,
    private readonly server: PlansightServer,
  ) {}

  refresh(): void {
    this.changed.fire();
  }

  getTreeItem(node: PlanNode): vscode.TreeItem {
    const { byTodo, other } = groupEdits(this.store.todos.items, this.store.edits, this.store.todos.planId);
    switch (node.kind) {
      case 'todo': {
        const count = byTodo.get(node.item.id)?.length ?? 0;
        return toTreeItem(withWorker(todoRow(node.item, count), this.workerOf(node.item.id)), true);
      }
      case 'edit': {
        const item = toTreeItem(editRow(node.edit), false);
        item.command = {
          command: 'plansight.plan.openEdit',
          title: 'Open Edit',
          arguments: [node.edit.id],
        };
        return item;
      }
      case 'other':
        return toTreeItem(otherEditsRow(other.length), false);
      case 'workerFile':
        return toTreeItem(workerFileRow(node.worker, node.file), false);
      case 'workerLive':
        return toTreeItem(workerLiveRow(this.store.workers.get(workerKey(node.worker.parentSessionId, node.worker.todoId)) ?? node.worker), false);
      case 'strayWorker': {
        const shown = this.store.sessions.shown;
        const name = (id: string): string | undefined => {
          const session = this.store.sessions.find(id);
          return session ? sessionTitle(session) : undefined;
        };
        return toTreeItem(strayWorkerRow(node.worker, shown, name), true);
      }
    }
  }

  /** The worker on the shown session's item `todoId` (another session's item of that id has
   *  its own, never drawn on this one). */
  private workerOf(todoId: string): WorkerView | undefined {
    return itemWorker(this.store.workers, this.store.sessions.shown, todoId);
  }

  getChildren(node?: PlanNode): PlanNode[] {
    const { byTodo, other } = groupEdits(this.store.todos.items, this.store.edits, this.store.todos.planId);
    if (!node) {
      const rows: PlanNode[] = this.store.todos.items.map((item) => ({ kind: 'todo', item }));
      if (other.length) {
        rows.push({ kind: 'other' });
      }
      const planIds = this.store.todos.items.map((i) => i.id);
      for (const worker of strayWorkers(this.store.workers, planIds, this.store.sessions.shown)) {
        rows.push({ kind: 'strayWorker', worker });
      }
      return rows;
    }
    if (node.kind === 'todo') {
      // The worker's change set first (what waits to be taken in), then the edits made here.
      const worker = this.workerOf(node.item.id);
      const files: PlanNode[] = !worker
        ? []
        : worker.status === 'running'
          ? [{ kind: 'workerLive', worker }]
          : worker.files.map((file) => ({ kind: 'workerFile', worker, file }));
      return [...files, ...(byTodo.get(node.item.id) ?? []).map((edit): PlanNode => ({
        kind: 'edit',
        edit,
        parentTodoId: node.item.id,
      }))];
    }
    if (node.kind === 'other') {
      return other.map((edit) => ({ kind: 'edit', edit }));
    }
    if (node.kind === 'strayWorker') {
      return node.worker.files.map((file) => ({ kind: 'workerFile', worker: node.worker, file }));
    }
    return [];
  }

  getParent(node: PlanNode): PlanNode | undefined {
    if (node.kind === 'workerLive') {
      const item = this.store.todos.items.find((i) => i.id === node.worker.todoId);
      return item ? { kind: 'todo', item } : undefined;
    }
    if (node.kind === 'workerFile') {
      const worker = this.store.workers.get(workerKey(node.worker.parentSessionId, node.worker.todoId)) ?? node.worker;
      const item = this.workerOf(worker.todoId) === worker ? this.store.todos.items.find((i) => i.id === worker.todoId) : undefined;
      return item ? { kind: 'todo', item } : { kind: 'strayWorker', worker };
    }
    if (node.kind === 'edit') {
      const item = this.store.todos.items.find((i) => i.id === node.parentTodoId);
      return item ? { kind: 'todo', item } : { kind: 'other' };
    }
    return undefined;
  }

  handleDrag(source: readonly PlanNode[], data: vscode.DataTransfer): void {
    const ids = source.filter((n) => n.kind === 'todo').map((n) => (n as { item: TodoItem }).item.id);
    if (ids.length === 1) {
      data.set(dragMime, new vscode.DataTransferItem(ids[0]));
    }
  }

  async handleDrop(target: PlanNode | undefined, data: vscode.DataTransfer): Promise<void> {
    const id = data.get(dragMime)?.value as string | undefined;
    if (!id) {
      return;
    }
    const beforeId = target?.kind === 'todo' ? target.item.id : undefined;
    if (beforeId === id) {
      return;
    }
    await sendPlanEdit(this.server, edits.moveBefore(this.store.todos, id, beforeId));
  }
}

/** Sends the user's new plan; shows the server's message when it refuses. */
export async function sendPlanEdit(server: PlansightServer, params: EditPlanParams): Promise<boolean> {
  try {
    await server.sendRequest(Methods.editPlan, params);
    return true;
  } catch (error) {
    const code = (error as { code?: number }).code;
    const message = error instanceof Error ? error.message : String(error);
    const prefix =
      code === ErrorCodes.requestFailed
        ? 'Plansight did not change the plan'
        : code === ErrorCodes.invalidParams
          ? 'Plansight refused the plan'
          : 'Plansight could not change the plan';
    void vscode.window.showErrorMessage(`${prefix}: ${message}`);
    return false;
  }
}

function itemOf(node: unknown): TodoItem | undefined {
  if (node && typeof node === 'object' && (node as PlanNode).kind === 'todo') {
    return (node as { item: TodoItem }).item;
  }
  return undefined;
}

/** Creates the plan view and registers its commands (`plansight.plan.<verb>`). */
export function registerPlanView(
  context: vscode.ExtensionContext,
  store: SessionStore,
  server: PlansightServer,
  reviews: ReviewManager,
): PlanTreeProvider {
  const provider = new PlanTreeProvider(store, server);
  const view = vscode.window.createTreeView('plansight.plan', {
    treeDataProvider: provider,
    dragAndDropController: provider,
    showCollapseAll: false,
    // Several items can be selected for "Run in Parallel".
    canSelectMany: true,
  });
  const update = (): void => {
    const review = store.planReview;
    // A proposed plan is marked as such: the header says it waits, one line says what to do
    // (the summary is on the plan's card: here it pushed the items out of sight).
    view.description = review ? proposedDescription(planViewDescription(store.todos)) : planViewDescription(store.todos);
    view.badge = review ? { value: 1, tooltip: reviewBadgeTooltip(review.summary) } : undefined;
    view.message =
      serverDownMessage(store.serverStatus) ?? (review ? reviewMessage(review.problem) : undefined);
  };
  /** `plansight/workers`: the stored change sets (an older server has none to list). */
  const fetchWorkers = async (): Promise<void> => {
    if (!server.isRunning) return;
    try {
      const result = await server.sendRequest<WorkersResult>(Methods.workers, {});
      store.setWorkers(mergeRecords(store.workers, Array.isArray(result?.workers) ? result.workers : []));
    } catch {
      // An older server (method not found) or one without workers: nothing stored to show.
    }
  };
  update();
  context.subscriptions.push(
    view,
    store.onDidChange((change) => {
      if (change === 'server') {
        store.setWorkers(afterServerChange(store.workers));
        if (store.serverStatus === 'running') {
          void fetchWorkers(); // stored change sets survive a restart: show them again
        }
      }
      if (change === 'todos' || change === 'edits' || change === 'server' || change === 'planReview' || change === 'workers') {
        update();
        provider.refresh();
      }
    }),
  );

  /** The item a command is about: the clicked row, else the selection, else ask. */
  const pickItem = async (node: unknown, placeHolder: string): Promise<TodoItem | undefined> => {
    const direct = itemOf(node) ?? itemOf(view.selection[0]);
    if (direct) {
      return store.todos.items.find((i) => i.id === direct.id) ?? direct;
    }
    if (!store.todos.items.length) {
      void vscode.window.showInformationMessage('Plansight: there is no plan yet.');
      return undefined;
    }
    const pick = await vscode.window.showQuickPick(
      store.todos.items.map((item) => ({
        label: `$(${statusIcons[item.status]}) ${item.text}`,
        description: `#${item.id}`,
        item,
      })),
      { placeHolder },
    );
    return pick?.item;
  };

  const register = (command: string, callback: (...args: unknown[]) => unknown): void => {
    context.subscriptions.push(vscode.commands.registerCommand(command, callback));
  };

  register('plansight.plan.markDone', async (node) => {
    const item = await pickItem(node, 'Mark which item done?');
    if (item) {
      await sendPlanEdit(server, edits.markDone(store.todos, item.id));
    }
  });
  register('plansight.plan.setStatus', async (node) => {
    const item = await pickItem(node, 'Change the status of which item?');
    if (!item) {
      return;
    }
    const pick = await vscode.window.showQuickPick(
      todoStatuses.map((status: TodoStatus) => ({
        label: `$(${statusIcons[status]}) ${statusLabels[status]}`,
        status,
        picked: status === item.status,
      })),
      { placeHolder: `Status of #${item.id}` },
    );
    if (pick && pick.status !== item.status) {
      await sendPlanEdit(server, edits.setStatus(store.todos, item.id, pick.status));
    }
  });
  register('plansight.plan.editText', async (node) => {
    const item = await pickItem(node, 'Edit which item?');
    if (!item) {
      return;
    }
    const text = await vscode.window.showInputBox({
      title: `Edit plan item #${item.id}`,
      value: item.text,
      validateInput: (v) => (v.trim() ? undefined : 'The text must not be empty.'),
    });
    if (text !== undefined && text.trim() !== item.text) {
      await sendPlanEdit(server, edits.setText(store.todos, item.id, text.trim()));
    }
  });
  register('plansight.plan.add', async (node) => {
    const after = itemOf(node);
    const text = await vscode.window.showInputBox({
      title: 'Add a plan item',
      prompt: after ? `Added after #${after.id}` : 'Added at the end of the plan',
      validateInput: (v) => (v.trim() ? undefined : 'The text must not be empty.'),
    });
    if (text !== undefined) {
      await sendPlanEdit(server, edits.addItem(store.todos, text.trim(), after?.id));
    }
  });
  register('plansight.plan.remove', async (node) => {
    const item = await pickItem(node, 'Remove which item?');
    if (item) {
      await sendPlanEdit(server, edits.removeItem(store.todos, item.id));
    }
  });
  register('plansight.plan.moveUp', async (node) => {
    const item = await pickItem(node, 'Move which item up?');
    if (item) {
      await sendPlanEdit(server, edits.moveItem(store.todos, item.id, -1));
    }
  });
  register('plansight.plan.moveDown', async (node) => {
    const item = await pickItem(node, 'Move which item down?');
    if (item) {
      await sendPlanEdit(server, edits.moveItem(store.todos, item.id, 1));
    }
  });
  register('plansight.plan.openEdit', async (arg) => {
    const id =
      typeof arg === 'string'
        ? arg
        : arg && typeof arg === 'object' && (arg as PlanNode).kind === 'edit'
          ? (arg as { edit: EditRecord }).edit.id
          : undefined;
    if (id !== undefined) {
      await reviews.show(id);
    }
  });
  const failure = (error: unknown): string => (error instanceof Error ? error.message : String(error));
  /** The worker of a worker command: the clicked row's (or its file's), else the selected
   *  item's in the shown session. Its session goes with its item id in the request. */
  const workerItem = (node: unknown): WorkerView | undefined => {
    const clicked = node as PlanNode | undefined;
    if (clicked?.kind === 'workerFile' || clicked?.kind === 'strayWorker' || clicked?.kind === 'workerLive') {
      return store.workers.get(workerKey(clicked.worker.parentSessionId, clicked.worker.todoId)) ?? clicked.worker;
    }
    const id = itemOf(node)?.id ?? itemOf(view.selection[0])?.id;
    return id === undefined ? undefined : itemWorker(store.workers, store.sessions.shown, id);
  };

  register('plansight.plan.runParallel', async (node, nodes) => {
    // A context menu passes the clicked row and, with several selected, all of them.
    const chosen = Array.isArray(nodes) && nodes.length ? nodes : node ? [node] : [...view.selection];
    const ids = selectedTodoIds(chosen, store.todos.items.map((i) => i.id));
    if (!ids.length) {
      void vscode.window.showInformationMessage('Plansight: select the plan items to run in parallel first (Ctrl or Shift + click).');
      return;
    }
    try {
      const result = await server.sendRequest<RunParallelResult>(Methods.runParallel, {
        todoIds: ids,
        ...(store.sessions.shown ? { sessionId: store.sessions.shown } : {}),
      });
      const said = runParallelMessage(result);
      void (said.ok ? vscode.window.showInformationMessage(`Plansight: ${said.text}`) : vscode.window.showWarningMessage(`Plansight: ${said.text}`));
    } catch (error) {
      void vscode.window.showErrorMessage(refusedMessage(failure(error)));
    }
  });
  register('plansight.plan.cancelWorker', async (node) => {
    // A worker waiting for a place has sent nothing yet: the selected item of the shown session.
    const selected = itemOf(node)?.id ?? itemOf(view.selection[0])?.id;
    const worker = workerItem(node) ?? (selected === undefined ? undefined : { todoId: selected, ...(store.sessions.shown ? { parentSessionId: store.sessions.shown } : {}) });
    if (!worker) return;
    const id = worker.todoId;
    try {
      await server.sendRequest(Methods.cancel, workerTarget(worker));
    } catch (error) {
      void vscode.window.showErrorMessage(`Plansight could not cancel the worker on #${id}: ${failure(error)}`);
    }
  });
  register('plansight.plan.takeIn', async (node) => {
    const worker = workerItem(node);
    if (!worker) return;
    const id = worker.todoId;
    try {
      // Each file comes as a usual reviewEdit (with `worker`); this answers once all are decided.
      const result = await server.sendRequest<TakeInResult>(Methods.takeIn, workerTarget(worker));
      void vscode.window.showInformationMessage(`Plansight: ${takeInMessage(id, result)}`);
    } catch (error) {
      void vscode.window.showErrorMessage(`Plansight could not take in worker #${id}'s changes: ${failure(error)}`);
    }
    await fetchWorkers();
  });
  register('plansight.plan.dropChanges', async (node) => {
    const worker = workerItem(node);
    if (!worker) return;
    const id = worker.todoId;
    const drop = 'Drop Changes';
    const answer = await vscode.window.showWarningMessage(dropQuestion(worker), { modal: true }, drop);
    if (answer !== drop) return;
    try {
      await server.sendRequest(Methods.dropChanges, workerTarget(worker));
    } catch (error) {
      void vscode.window.showErrorMessage(`Plansight could not drop worker #${id}'s changes: ${failure(error)}`);
    }
    await fetchWorkers();
  });
  register('plansight.showPlan', async () => {
    await vscode.commands.executeCommand('plansight.plan.focus');
  });
  return provider;
}
