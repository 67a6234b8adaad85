import type { TodoItem, TodoState } from '../src/protocol';

export function state(items: TodoItem[], version = 3): TodoState {
  const completed = items.filter((i) => i.status === 'completed').length;
  return { items, completed, total: items.length, rendered: '', source: 'model', version };
}

export const plan = state([
  { id: '1', text: 'Add type hints', status: 'completed' },
  { id: '2', text: 'Add docstrings', status: 'in_progress' },
  { id: '3', text: 'Add a main guard', status: 'pending' },
  { id: '4', text: 'Rename greet', status: 'cancelled' },
  { id: '5', text: 'Run the tests', status: 'failed', retries: 2 },
]);
