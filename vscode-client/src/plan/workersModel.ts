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

export type Workers = ReadonlyMap<string, WorkerView>;

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
  const next = new Map(workers);
  const before = workers.get(todoId);
  switch (event.type) {
    case 'workerStarted':
      next.set(todoId, { todoId, status: 'running', rounds: 0, files: [] });
      break;
    case 'workerProgress': {
      const tool = typeof event['tool'] === 'string' ? event['tool'] : undefined;
      const summary = typeof event['summary'] === 'string' ? event['summary'] : undefined;
      next.set(todoId, {
        todoId,
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
      next.set(todoId, {
        todoId,
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
    if (!record || typeof record.todoId !== 'string' || next.get(record.todoId)?.status === 'running') {
      continue;
    }
    next.set(record.todoId, {
      todoId: record.todoId,
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
    id: `worker:${worker.todoId}:live`,
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

/**
 * The stored change sets of items the plan no longer has (a new plan, an item removed): still
 * the user's to take in or drop, so they get rows of their own below the items.
 */
export function strayWorkers(workers: Workers, planIds: readonly string[]): WorkerView[] {
  const ids = new Set(planIds);
  return [...workers.values()].filter((w) => !ids.has(w.todoId) && w.status !== 'running' && w.files.length > 0);
}

/** The row of a change set whose item is no longer in the plan. */
export function strayWorkerRow(worker: WorkerView): RowSpec {
  return {
    id: `worker:${worker.todoId}`,
    label: `Worker #${worker.todoId}'s changes`,
    iconId: 'git-pull-request-draft',
    description: escapeIcons(workerDescription(worker)),
    tooltip: `Item #${worker.todoId} is no longer in the plan. ${workerTooltip(worker)}${worker.summary ? `\n\nWorker: ${worker.summary}` : ''}`,
    contextValue: 'stray.worker.changes',
    hasChildren: true,
  };
}

/** One file of a worker's change set, under its item. */
export function workerFileRow(todoId: string, file: WorkerFile): RowSpec {
  return {
    id: `worker:${todoId}:${file.path}`,
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
