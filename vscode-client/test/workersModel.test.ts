import { describe, expect, it } from 'vitest';
import { todoRow } from '../src/plan/planModel';
import {
  afterServerChange,
  applyWorkerEvent,
  conflictNotice,
  dropQuestion,
  isWorkerEvent,
  itemWorker,
  mergeRecords,
  refusedMessage,
  reviewTitle,
  runParallelMessage,
  selectedTodoIds,
  strayWorkerRow,
  strayWorkers,
  takeInMessage,
  type WorkerView,
  type Workers,
  withWorker,
  workerDescription,
  workerLiveRow,
  workerFileRow,
  workerKey,
  workerTarget,
} from '../src/plan/workersModel';
import type { PlansightEvent, TodoItem } from '../src/protocol';
import { autoAcceptable, hasConflictMarkers, markersQuestion, reviewNotice } from '../src/review/reviewModel';

const item: TodoItem = { id: '2', text: 'Add a farewell to b.py', status: 'pending' };
const none: Workers = new Map();
/** The key of an item's worker from a server that names no session (versions before sessions). */
const key = (todoId: string): string => workerKey(undefined, todoId);

function play(events: PlansightEvent[], start: Workers = none): Workers {
  return events.reduce(applyWorkerEvent, start);
}

const started: PlansightEvent = { type: 'workerStarted', todoId: '2', sessionId: 'w-2' };
const reading: PlansightEvent = { type: 'workerProgress', todoId: '2', sessionId: 'w-2', tool: 'read_file', summary: 'b.py', rounds: 1 };
const testing: PlansightEvent = { type: 'workerProgress', todoId: '2', sessionId: 'w-2', tool: 'bash', summary: '$ make test\nand more', rounds: 3 };
const finished: PlansightEvent = {
  type: 'workerFinished',
  todoId: '2',
  sessionId: 'w-2',
  status: 'completed',
  files: [
    { path: 'b.py', added: 12, removed: 3 },
    { path: 'docs/b.md', added: 1, removed: 0 },
  ],
  summary: 'Added farewell().',
};

describe('worker events', () => {
  it('are told apart from other events (they carry the worker session id, not the shown one)', () => {
    expect(isWorkerEvent(started)).toBe(true);
    expect(isWorkerEvent({ type: 'runStarted', sessionId: 'w-2' })).toBe(false);
    expect(isWorkerEvent({ type: 'workerStarted' })).toBe(false);
    expect(applyWorkerEvent(none, { type: 'textDelta', text: 'x' })).toBe(none);
  });

  it('show the current tool while the worker runs, and its change set when done', () => {
    const running = play([started, reading, testing]);
    expect(running.get(key('2'))).toEqual({ todoId: '2', status: 'running', rounds: 3, files: [], tool: 'bash', toolSummary: '$ make test\nand more' });
    expect(workerDescription(running.get(key('2'))!)).toBe('bash: $ make test and more (3 tools)');
    expect(workerDescription(play([started]).get(key('2'))!)).toBe('starting');

    const done = play([finished], running).get(key('2'))!;
    expect(done.status).toBe('completed');
    expect(done.files).toEqual([
      { path: 'b.py', added: 12, removed: 3 },
      { path: 'docs/b.md', added: 1, removed: 0 },
    ]);
    expect(done.summary).toBe('Added farewell().');
    expect(workerDescription(done)).toBe('worker done · 2 files +13 −3 to take in');
  });

  it('leave other items alone, and a fresh worker replaces an old change set', () => {
    const other: PlansightEvent = { type: 'workerStarted', todoId: '3', sessionId: 'w-3' };
    const both = play([started, other, finished]);
    expect(both.get(key('3'))?.status).toBe('running');
    expect(both.get(key('2'))?.status).toBe('completed');
    expect(play([started], both).get(key('2'))).toEqual({ todoId: '2', status: 'running', rounds: 0, files: [] });
  });

  it('say a worker that changed nothing plainly, and read a failure without files', () => {
    const failed = play([started, { type: 'workerFinished', todoId: '2', sessionId: 'w-2', status: 'failed', summary: 'API error' }]).get(key('2'))!;
    expect(failed.files).toEqual([]);
    expect(workerDescription(failed)).toBe('worker failed, no changes');
  });
});

describe('stored change sets (plansight/workers)', () => {
  it('are shown after a restart like a finished worker, and running ones are kept', () => {
    const running = play([{ type: 'workerStarted', todoId: '1', sessionId: 'w-1' }]);
    const merged = mergeRecords(running, [
      { todoId: '2', sessionId: 'w-2', status: 'failed', files: [{ path: 'b.py', added: 2, removed: 1 }], startedAt: 'now', summary: 'interrupted' },
      { todoId: '1', sessionId: 'old', status: 'completed', files: [], startedAt: 'then' },
    ]);
    expect(merged.get(key('1'))?.status).toBe('running');
    expect(merged.get(key('2'))).toEqual({ todoId: '2', status: 'failed', rounds: 0, files: [{ path: 'b.py', added: 2, removed: 1 }], summary: 'interrupted' });
  });

  it('lose the spinners of a server that stopped (its workers send nothing more), keep the change sets', () => {
    const both = play([started, { type: 'workerStarted', todoId: '3', sessionId: 'w-3' }, finished]);
    const after = afterServerChange(both);
    expect([...after.values()].map((w) => w.todoId)).toEqual(['2']);
    expect(after.get(key('2'))?.status).toBe('completed');
    expect(afterServerChange(after)).toBe(after); // nothing running: the same map, no redraw
  });

  it('drop a finished worker no longer listed (taken in or dropped)', () => {
    expect(mergeRecords(play([started, finished]), []).size).toBe(0);
  });
});

describe('plan rows with a worker', () => {
  it('show a spinner and the current tool on a running item, with Cancel Worker', () => {
    const worker = play([started, testing]).get(key('2'));
    const row = withWorker(todoRow(item, 0), worker);
    expect(row.iconId).toBe('sync~spin');
    expect(row.iconColor).toBeUndefined();
    expect(row.description).toBe('#2 · worker running');
    expect(row.contextValue).toBe('todo.pending.worker.running');
    // Its current tool is a row of its own under the item: on the item's row, after a long
    // label, a 300 px sidebar cut it off.
    expect(row.hasChildren).toBe(true);
    expect(row.id).toBe('todo:2:running'); // a new id, so VS Code shows it expanded
    expect(row.tooltip).toContain('Nothing reaches your workspace until you take its changes in.');
    expect(workerLiveRow(worker!)).toMatchObject({
      id: 'worker:2:live',
      label: 'bash',
      description: '$ make test and more · 3 tools',
      contextValue: 'workerLive',
      hasChildren: false,
    });
    expect(workerLiveRow(play([started]).get(key('2'))!)).toMatchObject({ label: 'starting', description: '' });
  });

  it('show a finished item with its change set as children, Take In and Drop Changes', () => {
    const worker = play([started, finished]).get(key('2'));
    const row = withWorker(todoRow({ ...item, status: 'completed' }, 0), worker);
    expect(row.iconId).toBe('pass');
    expect(row.iconColor).toBe('testing.iconPassed');
    expect(row.description).toBe('#2 · worker done · 2 files +13 −3 to take in');
    expect(row.contextValue).toBe('todo.completed.worker.changes');
    expect(row.hasChildren).toBe(true);
    expect(row.id).toBe('todo:2:worker'); // a new id, so VS Code shows it expanded
    expect(row.tooltip).toContain('Worker: Added farewell().');
    expect(workerFileRow('2', { path: 'b.py', added: 12, removed: 3 })).toMatchObject({
      id: 'worker:2:b.py',
      label: 'b.py',
      description: '+12 −3',
      contextValue: 'workerFile',
      hasChildren: false,
    });
  });

  it('leave the item as it is without a worker, and its own actions after one that changed nothing', () => {
    const plain = todoRow(item, 0);
    expect(withWorker(plain, undefined)).toBe(plain);
    const empty: WorkerView = { todoId: '2', status: 'cancelled', rounds: 2, files: [] };
    expect(withWorker(plain, empty).contextValue).toBe('todo.pending');
    expect(withWorker(plain, empty).description).toBe('#2 · worker cancelled, no changes');
  });

  it('defuse $(icon) syntax in a tool summary', () => {
    const worker: WorkerView = { todoId: '2', status: 'running', rounds: 1, files: [], tool: 'bash', toolSummary: 'echo $(rm)' };
    expect(withWorker(todoRow(item, 0), worker).description).not.toContain('$(rm)');
    expect(workerLiveRow(worker).description).not.toContain('$(rm)');
  });
});

describe('change sets of items no longer in the plan', () => {
  it('get rows of their own, with Take In and Drop Changes; running or empty ones do not', () => {
    const workers = play([
      started,
      finished,
      { type: 'workerStarted', todoId: '7', sessionId: 'w-7' },
      { type: 'workerFinished', todoId: '8', sessionId: 'w-8', status: 'cancelled', files: [] },
    ]);
    expect(strayWorkers(workers, ['1', '2'])).toEqual([]);
    const stray = strayWorkers(workers, ['1']);
    expect(stray.map((w) => w.todoId)).toEqual(['2']);
    expect(strayWorkerRow(stray[0]!)).toMatchObject({
      label: "Worker #2's changes",
      description: 'worker done · 2 files +13 −3 to take in',
      contextValue: 'stray.worker.changes',
      hasChildren: true,
    });
    expect(strayWorkerRow(stray[0]!).tooltip).toContain('Item #2 is no longer in the plan.');
  });
});

describe('Run in Parallel', () => {
  it('sends the selected items in plan order, once each, and no edits', () => {
    const nodes = [
      { kind: 'todo', item: { id: '3' } },
      { kind: 'edit', edit: { id: 'e1' } },
      { kind: 'todo', item: { id: '1' } },
      { kind: 'todo', item: { id: '3' } },
    ];
    expect(selectedTodoIds(nodes, ['1', '2', '3'])).toEqual(['1', '3']);
    expect(selectedTodoIds([undefined, 'x'], ['1'])).toEqual([]);
  });

  it("says the answer's started, waiting and skipped in plain words", () => {
    expect(
      runParallelMessage({
        started: ['1', '2'],
        waiting: [{ todoId: '3', after: ['1'] }, { todoId: '4', after: [] }],
        skipped: [{ todoId: '5', reason: 'its last change set is still stored' }],
      }),
    ).toEqual({
      text: 'Started a worker on #1, #2. #3 waits until #1 is done. #4 waits for a free place. #5 not started: its last change set is still stored.',
      ok: true,
    });
    expect(runParallelMessage({ started: [], waiting: [], skipped: [{ todoId: '1', reason: 'it is completed.' }] })).toEqual({
      text: '#1 not started: it is completed.',
      ok: false,
    });
  });

  it('says a refusal (no sandbox) with the server reason', () => {
    expect(refusedMessage('no sandbox: bubblewrap is not installed')).toBe(
      'Plansight cannot run plan items in parallel here: no sandbox: bubblewrap is not installed',
    );
  });

  it('says what Take In did and asks before Drop Changes', () => {
    expect(takeInMessage('2', { applied: ['b.py'], rejected: [], conflicts: ['a.py'], skipped: [{ path: 'c.bin', reason: 'binary' }] })).toBe(
      "Worker #2's changes: 1 applied, 0 rejected, 1 with conflicts; skipped: c.bin (binary).",
    );
    expect(dropQuestion(play([started, finished]).get(key('2'))!)).toBe(
      "Drop worker #2's changes (2 files)? They never reached your workspace; dropping discards them for good.",
    );
  });
});

describe("a worker's review", () => {
  it('names its worker in the diff title and the notification', () => {
    expect(reviewTitle('b.py', {})).toBe('b.py (Plansight proposal)');
    expect(reviewTitle('b.py', { worker: '2' })).toBe('b.py (Plansight proposal from worker #2)');
    expect(reviewTitle('b.py', { worker: '2', conflict: true })).toBe('b.py (Plansight conflict from worker #2)');
    expect(reviewTitle('b.py', { worker: '2', deleted: true })).toBe('b.py (Plansight deletion from worker #2)');
    expect(reviewNotice('e1', 'b.py', '', false, { worker: '2', conflict: true }).message).toContain(
      'proposes an edit to b.py from worker #2 (a conflict to settle)',
    );
  });

  it('says a conflict plainly and is never accepted unasked', () => {
    expect(conflictNotice('a.py', '2')).toContain('your workspace and worker #2 changed the same lines of a.py');
    expect(autoAcceptable({ conflict: true })).toBe(false);
    expect(autoAcceptable({ worker: '2' } as { conflict?: boolean })).toBe(true);
    // Its notification offers Show Diff and Reject, no Accept.
    const toast = reviewNotice('e9', 'a.py', 'merged', false, { worker: '2', conflict: true }).message;
    expect(toast).toMatch(/^\[Show Diff\]\(command:plansight\.plan\.openEdit\?[^)]*\) · \[Reject\]/);
    expect(toast).not.toContain('plansight.acceptEdit');
    expect(reviewNotice('e9', 'a.py', 'merged', false, { worker: '2' }).message).toContain('plansight.acceptEdit');
  });

  it('asks before markers left in a conflict are written', () => {
    expect(hasConflictMarkers('a\n<<<<<<< workspace\nx\n=======\ny\n>>>>>>> worker #2\n')).toBe(true);
    expect(hasConflictMarkers('a\n=======\n')).toBe(true);
    expect(hasConflictMarkers('x = "<<<<<<<"\n# ======== banner\nsettled\n')).toBe(false);
    expect(markersQuestion('a.py')).toBe(
      'a.py still has conflict markers (<<<<<<<, =======, >>>>>>>). Accept it with the markers in the file?',
    );
  });
});

describe("two sessions' items of one id", () => {
  const a = 'session-a';
  const b = 'session-b';
  const aDone: PlansightEvent = {
    type: 'workerFinished',
    todoId: '1',
    sessionId: 'w-a1',
    parentSessionId: a,
    status: 'completed',
    files: [{ path: 'a.py', added: 1, removed: 1 }],
    summary: 'A',
  };
  const bRunning: PlansightEvent = { type: 'workerStarted', todoId: '1', sessionId: 'w-b1', parentSessionId: b };

  it('are two workers: one session\'s events never cover the other\'s change set', () => {
    const workers = play([aDone, bRunning]);
    expect(workers.size).toBe(2);
    expect(itemWorker(workers, a, '1')).toMatchObject({ parentSessionId: a, status: 'completed', files: [{ path: 'a.py', added: 1, removed: 1 }] });
    expect(itemWorker(workers, b, '1')).toMatchObject({ parentSessionId: b, status: 'running' });
    expect(itemWorker(workers, 'session-c', '1')).toBeUndefined();
  });

  it('are kept apart in plansight/workers, a running one kept against a record of the other session', () => {
    const merged = mergeRecords(play([bRunning]), [
      { todoId: '1', sessionId: 'w-a1', parentSessionId: a, status: 'completed', files: [{ path: 'a.py', added: 1, removed: 1 }] },
      { todoId: '1', sessionId: 'w-b0', parentSessionId: b, status: 'failed', files: [{ path: 'b.py', added: 1, removed: 0 }] },
    ]);
    expect(merged.size).toBe(2);
    expect(itemWorker(merged, b, '1')?.status).toBe('running');
    expect(itemWorker(merged, a, '1')?.files).toEqual([{ path: 'a.py', added: 1, removed: 1 }]);
  });

  it("draw under the shown plan only its session's worker; the other's change set is a row of its own", () => {
    const bDone: PlansightEvent = { ...aDone, sessionId: 'w-b1', parentSessionId: b, files: [{ path: 'b.py', added: 2, removed: 0 }] };
    const workers = play([aDone, bDone]);
    // Shown: B. Its item "1" has B's change set; A's is listed below, saying whose it is.
    expect(itemWorker(workers, b, '1')?.files).toEqual([{ path: 'b.py', added: 2, removed: 0 }]);
    const stray = strayWorkers(workers, ['1'], b);
    expect(stray.map((w) => w.parentSessionId)).toEqual([a]);
    const row = strayWorkerRow(stray[0]!, b, (id) => (id === a ? 'Greeting work' : undefined));
    expect(row.description).toBe('from session Greeting work · worker done · 1 file +1 −1 to take in');
    expect(row.tooltip).toContain('Item #1 is in session "Greeting work", not the one shown.');
    expect(row.contextValue).toBe('stray.worker.changes');
    // Rows of both sessions' change sets can be in the tree at once: their ids differ.
    expect(row.id).not.toBe(strayWorkerRow(itemWorker(workers, b, '1')!, b).id);
    expect(workerFileRow(stray[0]!, { path: 'a.py', added: 1, removed: 1 }).id).not.toBe(
      workerFileRow(itemWorker(workers, b, '1')!, { path: 'a.py', added: 1, removed: 1 }).id,
    );
    // Nothing of another session with nothing stored, nor a running one, is listed.
    expect(strayWorkers(play([aDone, bRunning]), ['1'], b).map((w) => w.parentSessionId)).toEqual([a]);
    expect(strayWorkers(play([bRunning]), ['1'], a)).toEqual([]);
  });

  it('send the session of the worker acted on with Take In, Drop Changes and Cancel Worker', () => {
    const workers = play([aDone, bRunning]);
    expect(workerTarget(itemWorker(workers, a, '1')!)).toEqual({ todoId: '1', sessionId: a });
    expect(workerTarget(itemWorker(workers, b, '1')!)).toEqual({ todoId: '1', sessionId: b });
    // A server that names no session: the item id alone, as before.
    expect(workerTarget(play([finished]).get(JSON.stringify([null, '2']))!)).toEqual({ todoId: '2' });
  });
});
