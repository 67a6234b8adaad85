/**
 * The user's changes to the plan, as whole new item lists for `plansight/editPlan`.
 * Pure: the server validates; the tree only changes when `plansight/todos` arrives.
 */
import type { EditPlanParams, TodoItem, TodoState, TodoStatus } from '../protocol';

type WireItem = EditPlanParams['items'][number];

function wire(items: readonly TodoItem[]): WireItem[] {
  return items.map(({ id, text, status }) => ({ id, text, status }));
}

/**
 * The id a new item gets: the server's `nextId`, else (an older server) by its rule, the lowest
 * number (1, 2, ...) no item uses (`plan/text.py` `free_id`).
 */
export function nextId(state: Pick<TodoState, 'items' | 'nextId'>): string {
  if (typeof state.nextId === 'string' && state.nextId) {
    return state.nextId;
  }
  const taken = new Set(state.items.map((i) => i.id));
  let candidate = 1;
  while (taken.has(String(candidate))) {
    candidate += 1;
  }
  return String(candidate);
}

export function setStatus(state: TodoState, id: string, status: TodoStatus): EditPlanParams {
  const items = state.items.map((i) => {
    if (i.id === id) {
      return { ...i, status };
    }
    // Starting an item pauses the one in progress (the plan allows only one).
    if (status === 'in_progress' && i.status === 'in_progress') {
      return { ...i, status: 'pending' as const };
    }
    return i;
  });
  return { items: wire(items), version: state.version };
}

export function markDone(state: TodoState, id: string): EditPlanParams {
  return setStatus(state, id, 'completed');
}

export function setText(state: TodoState, id: string, text: string): EditPlanParams {
  return {
    items: wire(state.items.map((i) => (i.id === id ? { ...i, text } : i))),
    version: state.version,
  };
}

/** Adds a pending item after `afterId` (or at the end). */
export function addItem(state: TodoState, text: string, afterId?: string): EditPlanParams {
  const item: TodoItem = { id: nextId(state), text, status: 'pending' };
  const items = [...state.items];
  const at = afterId === undefined ? -1 : items.findIndex((i) => i.id === afterId);
  items.splice(at < 0 ? items.length : at + 1, 0, item);
  return { items: wire(items), version: state.version };
}

export function removeItem(state: TodoState, id: string): EditPlanParams {
  return { items: wire(state.items.filter((i) => i.id !== id)), version: state.version };
}

/** Moves an item by `delta` places (clamped); unchanged when it cannot move. */
export function moveItem(state: TodoState, id: string, delta: number): EditPlanParams {
  const items = [...state.items];
  const from = items.findIndex((i) => i.id === id);
  if (from >= 0) {
    const to = Math.min(items.length - 1, Math.max(0, from + delta));
    const [item] = items.splice(from, 1);
    items.splice(to, 0, item!);
  }
  return { items: wire(items), version: state.version };
}

/** Moves `id` to just before `beforeId` (or to the end when `beforeId` is undefined). */
export function moveBefore(state: TodoState, id: string, beforeId?: string): EditPlanParams {
  const items = state.items.filter((i) => i.id !== id);
  const moving = state.items.find((i) => i.id === id);
  if (!moving) {
    return { items: wire(state.items), version: state.version };
  }
  const at = beforeId === undefined ? -1 : items.findIndex((i) => i.id === beforeId);
  items.splice(at < 0 ? items.length : at, 0, moving);
  return { items: wire(items), version: state.version };
}
