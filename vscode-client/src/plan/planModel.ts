/**
 * Plan state → what the plan tree shows. Pure: no `vscode` import, so vitest can test it.
 *
 * The plan's counts and its current and next item are the server's (`TodoState.counts`,
 * `current`, `next`), shown as sent; for an older server that does not send them, they are
 * counted here by the server's rule (`doneStatuses`, `openStatuses`), and nowhere else.
 */
import { doneStatuses, openStatuses, todoStatuses } from '../protocol';
import type { ItemRef, PlanCounts, TodoItem, TodoState, TodoStatus } from '../protocol';
import type { ServerStatus } from '../session';
import { escapeIcons, oneLine, truncate } from '../text';

/** How one tree row looks, independent of the VS Code API. */
export interface RowSpec {
  /** Stable id (keeps selection and expansion across refreshes). */
  id: string;
  label: string;
  /** A codicon id, e.g. `pass` or `sync~spin`. */
  iconId: string;
  /** A theme color id for the icon, if any. */
  iconColor?: string;
  description?: string;
  tooltip: string;
  contextValue: string;
  /** Whether the row has children (collapsed or expanded). */
  hasChildren: boolean;
}

export const statusIcons: Readonly<Record<TodoStatus, string>> = {
  pending: 'circle-outline',
  in_progress: 'sync~spin',
  completed: 'pass',
  cancelled: 'circle-slash',
  failed: 'error',
};

const statusColors: Readonly<Partial<Record<TodoStatus, string>>> = {
  completed: 'testing.iconPassed',
  failed: 'testing.iconFailed',
  cancelled: 'disabledForeground',
};

export const statusLabels: Readonly<Record<TodoStatus, string>> = {
  pending: 'Pending',
  in_progress: 'In progress',
  completed: 'Completed',
  cancelled: 'Cancelled',
  failed: 'Failed',
};

/** The parts of a plan state the counts are read from (older servers send only `items`). */
export type PlanFacts = Pick<TodoState, 'items'> & Partial<Pick<TodoState, 'counts' | 'current' | 'next'>>;

/** `TodoState.counts` as the server sent it, else counted from the items by its rule. */
export function planCounts(state: PlanFacts): PlanCounts {
  if (state.counts && typeof state.counts.done === 'number' && typeof state.counts.total === 'number') {
    return state.counts;
  }
  const count = (status: TodoStatus): number => state.items.filter((i) => i.status === status).length;
  const byStatus = Object.fromEntries(todoStatuses.map((s) => [s, count(s)])) as Record<TodoStatus, number>;
  return {
    total: state.items.length,
    completed: byStatus.completed,
    cancelled: byStatus.cancelled,
    failed: byStatus.failed,
    pending: byStatus.pending,
    inProgress: byStatus.in_progress,
    done: doneStatuses.reduce((sum, s) => sum + byStatus[s], 0),
    open: openStatuses.reduce((sum, s) => sum + byStatus[s], 0),
  };
}

/** "2/5": the items done (completed or cancelled: they need no more work) of all, or "" when
 * there is no plan. */
export function progressText(state: PlanFacts): string {
  const { done, total } = planCounts(state);
  return total > 0 ? `${done}/${total}` : '';
}

/** "2/5 · 1 cancelled": the count, and the cancelled items it includes. */
export function progressDetail(state: PlanFacts): string {
  const { cancelled } = planCounts(state);
  const progress = progressText(state);
  return cancelled && progress ? `${progress} · ${cancelled} cancelled` : progress;
}

/** The item in progress (the server's `current`), if any. */
export function inProgressItem(state: PlanFacts): ItemRef | undefined {
  if (state.current !== undefined) {
    return state.current ?? undefined;
  }
  return refOf(state.items.find((i) => i.status === 'in_progress'));
}

/** The first item still to start: pending or failed (the server's `next`), if any. */
export function nextItem(state: PlanFacts): ItemRef | undefined {
  if (state.next !== undefined) {
    return state.next ?? undefined;
  }
  return refOf(state.items.find((i) => i.status !== 'in_progress' && openStatuses.includes(i.status)));
}

/** The item the agent works on (`now`), else the next one to start. */
export function currentItem(state: PlanFacts): (ItemRef & { now: boolean }) | undefined {
  const now = inProgressItem(state);
  if (now) {
    return { ...now, now: true };
  }
  const next = nextItem(state);
  return next ? { ...next, now: false } : undefined;
}

function refOf(item: TodoItem | undefined): ItemRef | undefined {
  return item ? { id: item.id, text: item.text } : undefined;
}

/** What the user or model decided about a proposed edit. */
export type EditOutcome = 'pending' | 'accepted' | 'changed' | 'rejected' | 'cancelled';

/** An edit proposed during the session (from `plansight/reviewEdit`). */
export interface EditRecord {
  id: string;
  uri: string;
  /** Workspace-relative path (or the file name) for display. */
  path: string;
  description: string;
  todoId?: string;
  /** The plan `todoId` is an item of (the server's `planId`; absent from an older server). */
  planId?: string;
  outcome: EditOutcome;
  feedback?: string;
}

export function todoRow(item: TodoItem, editCount: number): RowSpec {
  const retries = item.retries ? `retried ${item.retries}×` : undefined;
  const edits = editCount > 0 ? `${editCount} edit${editCount === 1 ? '' : 's'}` : undefined;
  const notes = item.notes ? 'notes' : undefined;
  const description = [`#${item.id}`, retries, edits, notes].filter(Boolean).join(' · ');
  const color = statusColors[item.status];
  return {
    // A new id once edits appear, so that VS Code shows the row expanded (it keeps the
    // collapsible state of an id it has seen without children).
    id: editCount > 0 ? `todo:${item.id}:edits` : `todo:${item.id}`,
    label: escapeIcons(oneLine(item.text)),
    iconId: statusIcons[item.status],
    ...(color ? { iconColor: color } : {}),
    description,
    // Notes (version 4: among them the comments the user approved the plan with) under the text.
    tooltip: `#${item.id} · ${statusLabels[item.status]}${retries ? ` (${retries})` : ''}\n${item.text}${item.notes ? `\n\nNotes:\n${item.notes}` : ''}`,
    contextValue: `todo.${item.status}`,
    hasChildren: editCount > 0,
  };
}

const editIcons: Readonly<Record<EditOutcome, string>> = {
  pending: 'git-pull-request-draft',
  accepted: 'check',
  changed: 'edit',
  rejected: 'close',
  cancelled: 'circle-slash',
};

const editOutcomeLabels: Readonly<Record<EditOutcome, string>> = {
  pending: 'waiting for your review',
  accepted: 'accepted',
  changed: 'accepted with your changes',
  rejected: 'rejected',
  cancelled: 'cancelled',
};

export function editRow(edit: EditRecord): RowSpec {
  const feedback = edit.feedback ? `\nReason: ${edit.feedback}` : '';
  return {
    id: `edit:${edit.id}`,
    label: edit.path,
    iconId: editIcons[edit.outcome],
    ...(edit.outcome === 'pending' ? { iconColor: 'charts.yellow' } : {}),
    description: truncate(oneLine(edit.description), 80),
    tooltip: `${edit.path} (${editOutcomeLabels[edit.outcome]})\n${edit.description}${feedback}`,
    contextValue: `edit.${edit.outcome}`,
    hasChildren: false,
  };
}

/** The row grouping edits that belong to no plan item. */
export function otherEditsRow(count: number): RowSpec {
  return {
    id: 'edits:other',
    label: 'Other edits',
    iconId: 'files',
    description: `${count}`,
    tooltip: 'Edits proposed while no plan item was in progress',
    contextValue: 'edits.other',
    hasChildren: count > 0,
  };
}

/**
 * Splits the session's edits by plan item; edits for no (or an unknown) item go to `other`.
 * With the server's `planId`, an edit made under an earlier plan's item is not this plan's,
 * even where the ids are the same: it is left out (the conversation still shows it).
 */
export function groupEdits(
  items: readonly TodoItem[],
  edits: readonly EditRecord[],
  planId?: string,
): { byTodo: Map<string, EditRecord[]>; other: EditRecord[] } {
  const ids = new Set(items.map((i) => i.id));
  const byTodo = new Map<string, EditRecord[]>();
  const other: EditRecord[] = [];
  for (const edit of edits) {
    const earlierPlan = edit.todoId !== undefined && !!planId && !!edit.planId && edit.planId !== planId;
    if (earlierPlan) {
      continue;
    }
    if (edit.todoId !== undefined && ids.has(edit.todoId)) {
      const list = byTodo.get(edit.todoId) ?? [];
      list.push(edit);
      byTodo.set(edit.todoId, list);
    } else {
      other.push(edit);
    }
  }
  return { byTodo, other };
}

/** The plan view's description, e.g. "3/5 · 1 cancelled" (empty without a plan). */
export function planViewDescription(state: TodoState): string {
  return progressDetail(state);
}

/**
 * What the Plan view says while the server is not running (undefined while it runs or starts).
 * A server that stopped on its own and is left stopped (a crash loop) is said too: the view's
 * "No plan yet" welcome would read as if all were well (issue 31).
 */
export function serverDownMessage(status: ServerStatus): string | undefined {
  switch (status) {
    case 'failed':
      return 'The Plansight server is not running. See the Plansight output.';
    case 'crashed':
      return 'The Plansight server stopped and is not restarted by itself: click "Plansight: server stopped" in the status bar, or your next request starts it. See the Plansight output.';
    default:
      return undefined;
  }
}
