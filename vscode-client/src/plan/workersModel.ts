/**
 * Parallel workers (protocol version 4, "Running plan items in parallel") → what the plan tree
 * and the review cards show. Pure: no `vscode` import, so vitest can test it. The client holds
 * no worker logic: the state here is only what the server's events and `plansight/workers` said.
 */
import type {
  PlansightEvent,
  RunParallelResult,
  TakeInResult,
  WorkerFile,
  WorkerRecord,
  WorkerStatus,
} from '../protocol';
import { escapeIcons, oneLine, truncate } from '../text';
import type { RowSpec } from './planModel';

/** What the plan shows of one item's worker: running (its current tool) or its change set. */
export interface WorkerView {
  todoId: string;
  /** The session whose plan item it works on (`parentSessionId`); none from a server that
   *  does not say (one session's items only). */
  parentSessionId?: string;
  status: WorkerStatus;
  /** The tool it is calling now (`workerProgress`), if any. */
  tool?: string;
  /** That call in words ("$ make test"), if the server said. */
  toolSummary?: string;
  /** Tool calls so far. */
  rounds: number;
  /** Its change set once finished (empty while running). */
  files: WorkerFile[];
  /** How it ended, in the worker's words (`workerFinished`'s summary). */
  summary?: string;
}

/** Keyed by `workerKey`: two sessions' items of one id are two workers. */
export type Workers = ReadonlyMap<string, WorkerView>;

/** The key of session `parentSessionId`'s worker on item `todoId`. */
export function workerKey(parentSessionId: string | undefined, todoId: string): string {
  return JSON.stringify([parentSessionId ?? null, todoId]);
}

function keyOf(worker: Pick<WorkerView, 'parentSessionId' | 'todoId'>): string {
  return workerKey(worker.parentSessionId, worker.todoId);
}

function parentOf(raw: unknown): { parentSessionId?: string } {
  return typeof raw === 'string' && raw ? { parentSessionId: raw } : {};
}

/** Whether the worker is on an item of session `shown` (one that names no session is). */
export function isOfSession(worker: WorkerView, shown: string | undefined): boolean {
  return worker.parentSessionId === undefined || shown === undefined || worker.parentSessionId === shown;
}

/** The worker on the shown session's item `todoId`, if any (another session's never). */
export function itemWorker(workers: Workers, shown: string | undefined, todoId: string): WorkerView | undefined {
  return workers.get(workerKey(shown, todoId)) ?? [...workers.values()].find((w) => w.todoId === todoId && isOfSession(w, shown));
}

/** What `takeIn` / `dropChanges` / `cancel` send for this worker: its item and its session. */
export function workerTarget(worker: Pick<WorkerView, 'parentSessionId' | 'todoId'>): { todoId: string; sessionId?: string } {
  return { todoId: worker.todoId, ...(worker.parentSessionId ? { sessionId: worker.parentSessionId } : {}) };
}

const workerEventTypes = new Set(['workerStarted', 'workerProgress', 'workerFinished']);

/** Whether the event is one of a worker's (they carry the worker's own session id). */
export function isWorkerEvent(event: PlansightEvent): boolean {
  return workerEventTypes.has(event.type) && typeof (event as Record<string, unknown>)['todoId'] === 'string';
}

function files(raw: unknown): WorkerFile[] {
  if (!Array.isArray(raw)) {
    return [];
  }
  return raw
    .filter((f): f is Record<string, unknown> => !!f && typeof f === 'object' && typeof (f as { path?: unknown }).path === 'string')
    .map((f) => ({
      path: f['path'] as string,
      added: typeof f['added'] === 'number' ? f['added'] : 0,
      removed: typeof f['removed'] === 'number' ? f['removed'] : 0,
    }));
}

/** The workers after one event (a new map; the same one when the event is no worker's). */
export function applyWorkerEvent(workers: Workers, said: PlansightEvent): Workers {
  if (!isWorkerEvent(said)) {
    return workers;
  }
  const event = said as Record<string, unknown> & { type: string };
  const todoId = event['todoId'] as string;
  const parent = parentOf(event['parentSessionId']);
  const key = workerKey(parent.parentSessionId, todoId);
  const next = new Map(workers);
  const before = workers.get(key);
  switch (event.type) {
    case 'workerStarted':
      next.set(key, { todoId, ...parent, status: 'running', rounds: 0, files: [] });
      break;
    case 'workerProgress': {
      const tool = typeof event['tool'] === 'string' ? event['tool'] : undefined;
      const summary = typeof event['summary'] === 'string' ? event['summary'] : undefined;
      next.set(key, {
        todoId,
        ...parent,
        status: 'running',
        rounds: typeof event['rounds'] === 'number' ? event['rounds'] : (before?.rounds ?? 0),
        files: [],
        ...(tool ? { tool } : {}),
        ...(tool && summary ? { toolSummary: summary } : {}),
      });
      break;
    }
    case 'workerFinished': {
      const status = (event['status'] as WorkerStatus | undefined) ?? 'failed';
      const summary = typeof event['summary'] === 'string' ? event['summary'] : undefined;
      next.set(key, {
        todoId,
        ...parent,
        status,
        rounds: before?.rounds ?? 0,
        files: files(event['files']),
        ...(summary ? { summary } : {}),
      });
      break;
    }
  }
  return next;
}

/**
 * The workers after `plansight/workers` (stored change sets, e.g. after a restart): the stored
 * ones as listed, the ones running here as the events said; a finished one no longer listed
 * (taken in, dropped, or nothing to take in) is gone.
 */
export function mergeRecords(workers: Workers, records: readonly WorkerRecord[]): Workers {
  const next = new Map<string, WorkerView>();
  for (const [id, worker] of workers) {
    if (worker.status === 'running') {
      next.set(id, worker);
    }
  }
  for (const record of records) {
    if (!record || typeof record.todoId !== 'string') {
      continue;
    }
    const parent = parentOf(record.parentSessionId);
    const key = workerKey(parent.parentSessionId, record.todoId);
    if (next.get(key)?.status === 'running') {
      continue;
    }
    next.set(key, {
      todoId: record.todoId,
      ...parent,
      status: record.status,
      rounds: 0,
      files: files(record.files),
      ...(record.summary ? { summary: record.summary } : {}),
    });
  }
  return next;
}

/**
 * The workers once the server is gone or new: the ones shown running ran in the old process and
 * will send nothing more (the new one lists what they left as `failed`, "interrupted"), so they
 * are dropped; the stored change sets stay until `plansight/workers` says otherwise.
 */
export function afterServerChange(workers: Workers): Workers {
  const running = [...workers.values()].some((w) => w.status === 'running');
  return running ? new Map([...workers].filter(([, w]) => w.status !== 'running')) : workers;
}

const workerIcons: Readonly<Record<WorkerStatus, string>> = {
  running: 'sync~spin',
  completed: 'pass',
  failed: 'error',
  cancelled: 'circle-slash',
};

const workerColors: Readonly<Partial<Record<WorkerStatus, string>>> = {
  completed: 'testing.iconPassed',
  failed: 'testing.iconFailed',
  cancelled: 'disabledForeground',
};

const workerStatusWords: Readonly<Record<WorkerStatus, string>> = {
  running: 'worker running',
  completed: 'worker done',
  failed: 'worker failed',
  cancelled: 'worker cancelled',
};

/** "+12 −3" */
export function lineStat(file: Pick<WorkerFile, 'added' | 'removed'>): string {
  return `+${file.added} −${file.removed}`;
}

/** What the item's row says of its worker: its current tool while it runs, its change set after. */
export function workerDescription(worker: WorkerView): string {
  if (worker.status === 'running') {
    const tool = worker.tool ? `${worker.tool}${worker.toolSummary ? `: ${oneLine(worker.toolSummary)}` : ''}` : 'starting';
    const rounds = worker.rounds ? ` (${worker.rounds} tool${worker.rounds === 1 ? '' : 's'})` : '';
    return truncate(`${tool}${rounds}`, 80);
  }
  const count = worker.files.length;
  if (!count) {
    return `${workerStatusWords[worker.status]}, no changes`;
  }
  const added = worker.files.reduce((n, f) => n + f.added, 0);
  const removed = worker.files.reduce((n, f) => n + f.removed, 0);
  return `${workerStatusWords[worker.status]} · ${count} file${count === 1 ? '' : 's'} ${lineStat({ added, removed })} to take in`;
}

/**
 * The item's row with its worker on it: a spinner and the current tool while it runs; after,
 * its status and its change set (the files become the row's children). The context value
 * carries `.worker.running` or `.worker.changes`, for Cancel Worker and Take In / Drop Changes.
 */
export function withWorker(row: RowSpec, worker: WorkerView | undefined): RowSpec {
  if (!worker) {
    return row;
  }
  const running = worker.status === 'running';
  const hasFiles = !running && worker.files.length > 0;
  const state = running ? 'running' : hasFiles ? 'changes' : 'ended';
  // While it runs, its current tool is a row of its own under the item (workerLiveRow): on the
  // item's row, after a long label, a 300 px sidebar cut it off entirely.
  const said = running ? 'worker running' : workerDescription(worker);
  const description = `${row.description ? `${row.description} · ` : ''}${escapeIcons(said)}`;
  const summary = worker.summary ? `\n\nWorker: ${worker.summary}` : '';
  const { iconColor: _statusColor, ...rest } = row;
  const color = workerColors[worker.status];
  return {
    ...rest,
    // A new id once the worker's row or files appear, so that VS Code shows the row expanded
    // (see todoRow).
    id: running ? `${row.id}:running` : hasFiles ? `${row.id}:worker` : row.id,
    iconId: workerIcons[worker.status],
    ...(color ? { iconColor: color } : {}),
    description,
    tooltip: `${row.tooltip}\n\n${workerTooltip(worker)}${summary}`,
    // An ended worker with nothing to take in leaves the item's own actions as they were.
    contextValue: state === 'ended' ? row.contextValue : `${row.contextValue}.worker.${state}`,
    hasChildren: row.hasChildren || hasFiles || running,
  };
}

/**
 * The row under a running item: its worker's current tool (the label: a tool's name never
 * holds `$(…)`), what it is doing and how many tools it called (the description, escaped).
 */
export function workerLiveRow(worker: WorkerView): RowSpec {
  const rounds = worker.rounds ? `${worker.rounds} tool${worker.rounds === 1 ? '' : 's'}` : '';
  const doing = [worker.toolSummary ? oneLine(worker.toolSummary) : '', rounds].filter(Boolean).join(' · ');
  return {
    id: `${workerRowId(worker)}:live`,
    label: worker.tool ?? 'starting',
    iconId: 'tools',
    description: escapeIcons(truncate(doing, 80)),
    tooltip: `Worker #${worker.todoId}, in a copy of the workspace: ${workerDescription(worker)}. Nothing reaches your workspace until you take its changes in.`,
    contextValue: 'workerLive',
    hasChildren: false,
  };
}

function workerTooltip(worker: WorkerView): string {
  if (worker.status === 'running') {
    return `A worker is on this item, in a copy of the workspace: ${workerDescription(worker)}. Nothing reaches your workspace until you take its changes in.`;
  }
  if (!worker.files.length) {
    return `Its worker ended (${worker.status}) and changed nothing.`;
  }
  return `Its worker ended (${worker.status}). Its changes are stored, not in your workspace: Take In puts each file to you for review; Drop Changes discards them.`;
}

/** A worker's rows' id: its item's, and its session's when known (two sessions' items "1"
 *  can both have rows: another session's change set is listed below the shown plan). */
function workerRowId(worker: Pick<WorkerView, 'parentSessionId' | 'todoId'>): string {
  return worker.parentSessionId ? `worker:${worker.parentSessionId}:${worker.todoId}` : `worker:${worker.todoId}`;
}

/**
 * The stored change sets with no item in the shown plan: the shown session's whose item is
 * gone (a new plan, an item removed), then the other sessions'. Both are still the user's to
 * take in or drop, and never reached the workspace: hiding them until that session is shown
 * would leave work the user cannot see waiting on disk, so they get rows of their own below
 * the items. Running workers of other sessions are not listed (that session shows them).
 */
export function strayWorkers(workers: Workers, planIds: readonly string[], shown?: string): WorkerView[] {
  const ids = new Set(planIds);
  const stored = [...workers.values()].filter((w) => w.status !== 'running' && w.files.length > 0);
  return [
    ...stored.filter((w) => isOfSession(w, shown) && !ids.has(w.todoId)),
    ...stored.filter((w) => !isOfSession(w, shown)),
  ];
}

/** The row of a change set whose item is not in the shown plan: gone from it, or another
 *  session's (`sessionName` gives that session's title, if known). */
export function strayWorkerRow(worker: WorkerView, shown?: string, sessionName?: (id: string) => string | undefined): RowSpec {
  const elsewhere = !isOfSession(worker, shown) && worker.parentSessionId !== undefined;
  const name = elsewhere ? (sessionName?.(worker.parentSessionId!) ?? worker.parentSessionId!) : '';
  const where = elsewhere
    ? `Item #${worker.todoId} is in session "${name}", not the one shown. `
    : `Item #${worker.todoId} is no longer in the plan. `;
  return {
    id: workerRowId(worker),
    label: `Worker #${worker.todoId}'s changes`,
    iconId: 'git-pull-request-draft',
    description: escapeIcons(`${elsewhere ? `from session ${truncate(oneLine(name), 40)} · ` : ''}${workerDescription(worker)}`),
    tooltip: `${where}${workerTooltip(worker)}${worker.summary ? `\n\nWorker: ${worker.summary}` : ''}`,
    contextValue: 'stray.worker.changes',
    hasChildren: true,
  };
}

/** One file of a worker's change set, under its item. */
export function workerFileRow(worker: Pick<WorkerView, 'parentSessionId' | 'todoId'> | string, file: WorkerFile): RowSpec {
  const owner = typeof worker === 'string' ? { todoId: worker } : worker;
  const todoId = owner.todoId;
  return {
    id: `${workerRowId(owner)}:${file.path}`,
    label: file.path,
    iconId: 'diff',
    description: lineStat(file),
    tooltip: `${file.path}: ${lineStat(file)} in worker #${todoId}'s copy, not in your workspace yet`,
    contextValue: 'workerFile',
    hasChildren: false,
  };
}

function ids(list: readonly string[]): string {
  return list.map((id) => `#${id}`).join(', ');
}

/** `runParallel`'s answer in plain words, and whether anything started or waits. */
export function runParallelMessage(result: RunParallelResult): { text: string; ok: boolean } {
  const started = Array.isArray(result.started) ? result.started : [];
  const waiting = Array.isArray(result.waiting) ? result.waiting : [];
  const skipped = Array.isArray(result.skipped) ? result.skipped : [];
  const parts: string[] = [];
  if (started.length) {
    parts.push(`Started a worker on ${ids(started)}.`);
  }
  for (const w of waiting) {
    const after = Array.isArray(w.after) && w.after.length ? ` until ${ids(w.after)} ${w.after.length === 1 ? 'is' : 'are'} done` : ' for a free place';
    parts.push(`#${w.todoId} waits${after}.`);
  }
  for (const s of skipped) {
    parts.push(`#${s.todoId} not started: ${s.reason}`.replace(/\.?$/, '.'));
  }
  return { text: parts.join(' ') || 'Nothing was started.', ok: started.length + waiting.length > 0 };
}

/** Why `runParallel` was refused, in plain words (-32803: no sandbox, no checkpoints). */
export function refusedMessage(message: string): string {
  return `Plansight cannot run plan items in parallel here: ${message}`;
}

/** What Take In did, in plain words. */
export function takeInMessage(todoId: string, result: TakeInResult): string {
  const count = (list: unknown): number => (Array.isArray(list) ? list.length : 0);
  const parts = [`${count(result.applied)} applied`, `${count(result.rejected)} rejected`];
  if (count(result.conflicts)) {
    parts.push(`${count(result.conflicts)} with conflicts`);
  }
  const skipped = Array.isArray(result.skipped) ? result.skipped : [];
  const skippedText = skipped.length ? `; skipped: ${skipped.map((s) => `${s.path} (${s.reason})`).join(', ')}` : '';
  return `Worker #${todoId}'s changes: ${parts.join(', ')}${skippedText}.`;
}

/** The modal question before Drop Changes. */
export function dropQuestion(worker: WorkerView): string {
  const count = worker.files.length;
  return `Drop worker #${worker.todoId}'s changes (${count} file${count === 1 ? '' : 's'})? They never reached your workspace; dropping discards them for good.`;
}

/** The item ids of the selected plan rows that can get a worker, in plan order, without repeats. */
export function selectedTodoIds(nodes: readonly unknown[], order: readonly string[]): string[] {
  const picked = new Set<string>();
  for (const node of nodes) {
    const item = node && typeof node === 'object' ? (node as { kind?: string; item?: { id?: unknown } }) : undefined;
    if (item?.kind === 'todo' && typeof item.item?.id === 'string') {
      picked.add(item.item.id);
    }
  }
  return order.filter((id) => picked.has(id));
}

/** " — from worker #2" for a review of a worker's change, else "". */
export function workerSuffix(worker: string | undefined): string {
  return worker ? ` from worker #${worker}` : '';
}

/** The diff editor's title for a review. */
export function reviewTitle(path: string, params: { worker?: string; conflict?: boolean; deleted?: boolean }): string {
  const what = params.conflict ? 'conflict' : params.deleted ? 'deletion' : 'proposal';
  return `${path} (Plansight ${what}${workerSuffix(params.worker)})`;
}

/** What a conflicting review says, plainly: it holds markers and is never accepted unseen. */
export function conflictNotice(path: string, worker: string | undefined): string {
  const who = worker ? `worker #${worker}` : 'the agent';
  return (
    `Conflict: your workspace and ${who} changed the same lines of ${path}. The proposal holds both ` +
    `between conflict markers (<<<<<<< workspace … >>>>>>>). Settle it in the diff's right side, then ` +
    `accept, or reject it; it is never accepted unseen.`
  );
}
