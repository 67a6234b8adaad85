/**
 * Plan state → what the plan tree shows. Pure: no `vscode` import, so vitest can test it.
 */
import type { TodoItem, TodoState, TodoStatus } from '../protocol';
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

/** Items no longer open: completed, and cancelled (a step dropped is not a step left to do). */
export function closedCount(state: Pick<TodoState, 'items'>): number {
  return state.items.filter((i) => i.status === 'completed' || i.status === 'cancelled').length;
}

/** "2/5" (closed of all), or "" when there is no plan. */
export function progressText(state: Pick<TodoState, 'items'>): string {
  return state.items.length > 0 ? `${closedCount(state)}/${state.items.length}` : '';
}

/** "2/5 · 1 cancelled": the count, and the cancelled items it includes. */
export function progressDetail(state: Pick<TodoState, 'items'>): string {
  const cancelled = state.items.filter((i) => i.status === 'cancelled').length;
  const progress = progressText(state);
  return cancelled && progress ? `${progress} · ${cancelled} cancelled` : progress;
}

/** The item the agent works on: the one in progress, else the first still open. */
export function currentItem(state: Pick<TodoState, 'items'>): TodoItem | undefined {
  return (
    state.items.find((i) => i.status === 'in_progress') ??
    state.items.find((i) => i.status === 'pending' || i.status === 'failed')
  );
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
  outcome: EditOutcome;
  feedback?: string;
}

export function todoRow(item: TodoItem, editCount: number): RowSpec {
  const retries = item.retries ? `retried ${item.retries}×` : undefined;
  const edits = editCount > 0 ? `${editCount} edit${editCount === 1 ? '' : 's'}` : undefined;
  const description = [`#${item.id}`, retries, edits].filter(Boolean).join(' · ');
  const color = statusColors[item.status];
  return {
    // A new id once edits appear, so that VS Code shows the row expanded (it keeps the
    // collapsible state of an id it has seen without children).
    id: editCount > 0 ? `todo:${item.id}:edits` : `todo:${item.id}`,
    label: escapeIcons(oneLine(item.text)),
    iconId: statusIcons[item.status],
    ...(color ? { iconColor: color } : {}),
    description,
    tooltip: `#${item.id} · ${statusLabels[item.status]}${retries ? ` (${retries})` : ''}\n${item.text}`,
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

/** Splits the session's edits by plan item; edits for no (or an unknown) item go to `other`. */
export function groupEdits(
  items: readonly TodoItem[],
  edits: readonly EditRecord[],
): { byTodo: Map<string, EditRecord[]>; other: EditRecord[] } {
  const ids = new Set(items.map((i) => i.id));
  const byTodo = new Map<string, EditRecord[]>();
  const other: EditRecord[] = [];
  for (const edit of edits) {
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
