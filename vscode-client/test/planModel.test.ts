import { describe, expect, it } from 'vitest';
import {
  currentItem,
  editRow,
  groupEdits,
  otherEditsRow,
  planViewDescription,
  progressText,
  serverDownMessage,
  todoRow,
  type EditRecord,
} from '../src/plan/planModel';
import { emptyTodoState } from '../src/protocol';
import { plan, state } from './fixtures';

describe('todoRow', () => {
  it('maps every status to its codicon', () => {
    const icons = plan.items.map((item) => todoRow(item, 0).iconId);
    expect(icons).toEqual(['pass', 'sync~spin', 'circle-outline', 'circle-slash', 'error']);
  });

  it('labels the row with the text and describes it with id, retries and edits', () => {
    const row = todoRow(plan.items[4]!, 2);
    expect(row.label).toBe('Run the tests');
    expect(row.description).toBe('#5 · retried 2× · 2 edits');
    expect(row.tooltip).toBe('#5 · Failed (retried 2×)\nRun the tests');
    expect(row.contextValue).toBe('todo.failed');
    expect(row.hasChildren).toBe(true);
    expect(row.id).toBe('todo:5:edits');
    expect(todoRow(plan.items[0]!, 0).id).toBe('todo:1');
  });

  it('has no children without edits and a plain description', () => {
    const row = todoRow(plan.items[1]!, 0);
    expect(row.description).toBe('#2');
    expect(row.hasChildren).toBe(false);
    expect(row.contextValue).toBe('todo.in_progress');
  });

  it('keeps labels on one line and defuses $(icon) syntax', () => {
    const row = todoRow({ id: '9', text: 'Fix\n  $(bug) in\tparser', status: 'pending' }, 1);
    expect(row.label).toBe('Fix $\u200b(bug) in parser');
    expect(row.description).toBe('#9 · 1 edit');
  });

  it('colours completed and failed icons', () => {
    expect(todoRow(plan.items[0]!, 0).iconColor).toBe('testing.iconPassed');
    expect(todoRow(plan.items[4]!, 0).iconColor).toBe('testing.iconFailed');
    expect(todoRow(plan.items[2]!, 0).iconColor).toBeUndefined();
  });
});

describe('progress', () => {
  it('counts completed over total', () => {
    // #1 completed and #4 cancelled are closed: a cancelled item is not left to do.
    expect(progressText(plan)).toBe('2/5');
    expect(planViewDescription(plan)).toBe('2/5 · 1 cancelled');
  });
  it('is empty without a plan', () => {
    expect(progressText(emptyTodoState)).toBe('');
  });
  it('finds the item in progress, else the first open one', () => {
    expect(currentItem(plan)).toEqual({ id: '2', text: 'Add docstrings', now: true });
    const noneInProgress = state([
      { id: 'a', text: 'done', status: 'completed' },
      { id: 'b', text: 'broken', status: 'failed' },
      { id: 'c', text: 'next', status: 'pending' },
    ]);
    expect(currentItem(noneInProgress)).toEqual({ id: 'b', text: 'broken', now: false });
    expect(currentItem(state([{ id: 'a', text: 'x', status: 'completed' }]))).toBeUndefined();
  });
  it("shows the server's counts and items as sent, not counted again", () => {
    const sent = {
      ...plan,
      counts: { total: 5, completed: 3, cancelled: 0, failed: 0, pending: 1, inProgress: 1, done: 3, open: 2 },
      current: null,
      next: { id: '9', text: "The server's next item" },
    };
    expect(progressText(sent)).toBe('3/5');
    expect(planViewDescription(sent)).toBe('3/5');
    expect(currentItem(sent)).toEqual({ id: '9', text: "The server's next item", now: false });
    expect(currentItem({ ...sent, next: null })).toBeUndefined();
  });
});

describe('edits', () => {
  const edits: EditRecord[] = [
    { id: 'e1', uri: 'file:///w/hello.py', path: 'hello.py', description: 'Add hints', todoId: '1', outcome: 'accepted' },
    { id: 'e2', uri: 'file:///w/hello.py', path: 'hello.py', description: 'Docstrings', todoId: '2', outcome: 'pending' },
    { id: 'e3', uri: 'file:///w/a.py', path: 'a.py', description: 'Stray', outcome: 'rejected', feedback: 'no' },
    { id: 'e4', uri: 'file:///w/b.py', path: 'b.py', description: 'Gone item', todoId: '42', outcome: 'changed' },
    { id: 'e5', uri: 'file:///w/hello.py', path: 'hello.py', description: 'More hints', todoId: '1', outcome: 'rejected' },
  ];

  it('groups edits under their plan item; unknown or missing todoId goes to other', () => {
    const { byTodo, other } = groupEdits(plan.items, edits);
    expect(byTodo.get('1')?.map((e) => e.id)).toEqual(['e1', 'e5']);
    expect(byTodo.get('2')?.map((e) => e.id)).toEqual(['e2']);
    expect(other.map((e) => e.id)).toEqual(['e3', 'e4']);
  });

  it("leaves out an earlier plan's edits whose item id the new plan reuses", () => {
    const demo: EditRecord[] = ['d1', 'd2', 'd3', 'd4'].map((id) => ({
      id, uri: '', path: 'hello.py', description: 'Demo edit', todoId: '1', planId: 'demo', outcome: 'accepted',
    }));
    const mine: EditRecord = { id: 'n1', uri: '', path: 'LICENSE', description: 'Add', todoId: '1', planId: 'new', outcome: 'accepted' };
    const { byTodo, other } = groupEdits(plan.items, [...demo, mine], 'new');
    expect(byTodo.get('1')?.map((e) => e.id)).toEqual(['n1']);
    expect(todoRow(plan.items[0]!, byTodo.get('1')!.length).description).toBe('#1 · 1 edit');
    expect(other).toEqual([]);
    // An older server sends no plan ids: edits group by item id as before.
    expect(groupEdits(plan.items, demo).byTodo.get('1')).toHaveLength(4);
  });

  it('shows an edit with its outcome', () => {
    expect(editRow(edits[0]!)).toMatchObject({ label: 'hello.py', iconId: 'check', contextValue: 'edit.accepted' });
    expect(editRow(edits[1]!)).toMatchObject({ iconId: 'git-pull-request-draft', contextValue: 'edit.pending' });
    expect(editRow(edits[2]!).tooltip).toBe('a.py (rejected)\nStray\nReason: no');
    expect(editRow(edits[3]!).iconId).toBe('edit');
    expect(otherEditsRow(2)).toMatchObject({ label: 'Other edits', description: '2', hasChildren: true });
  });
});

describe('serverDownMessage', () => {
  it('says in the Plan view that the server is not running, a crashed one too (issue 31)', () => {
    expect(serverDownMessage('failed')).toBe('The Plansight server is not running. See the Plansight output.');
    expect(serverDownMessage('crashed')).toMatch(/^The Plansight server stopped and is not restarted by itself: .*status bar, or your next request starts it/);
    for (const status of ['running', 'starting', 'stopped'] as const) {
      expect(serverDownMessage(status)).toBeUndefined();
    }
  });
});
