import { describe, expect, it } from 'vitest';
import {
  checkpointPicks,
  fileNodes,
  fileRow,
  restoreConfirmation,
  resultMessage,
  stepNodes,
  stepRow,
  undoCheckpoint,
  undoFileConfirmation,
  undoFileWhat,
  undoStepConfirmation,
  undoneSteps,
  when,
} from '../src/changes/changesModel';
import type { ChangesResult, Checkpoint, TodoItem } from '../src/protocol';

const items: TodoItem[] = [
  { id: '1', text: 'Change the greeting', status: 'completed' },
  { id: '2', text: 'Write the notes', status: 'in_progress' },
  { id: '3', text: 'Nothing changed here', status: 'pending' },
];
const changes: ChangesResult = {
  steps: [
    {
      todoId: '1',
      files: [
        { path: 'app.py', change: 'modified', before: '3' },
        { path: 'README.md', change: 'deleted', before: '4' },
        { path: 'made.txt', change: 'added', before: '4' },
      ],
    },
    { todoId: '2', files: [{ path: 'notes.txt', change: 'added' }] },
    { todoId: '3', files: [] },
  ],
};

describe('the rows of the Changes view', () => {
  it('shows the steps that changed files, in order, with their plan text and status', () => {
    expect(stepNodes(changes).map((s) => s.todoId)).toEqual(['1', '2']);
    const row = stepRow(changes, '1', items);
    expect(row).toMatchObject({
      id: 'step:1',
      label: '#1 Change the greeting',
      iconId: 'pass',
      description: '3 files',
      contextValue: 'changes.step',
      hasChildren: true,
    });
    expect(stepRow(changes, '2', []).label).toBe('#2'); // an item no longer in the plan
    expect(stepRow(changes, '2', []).description).toBe('1 file');
  });

  it('shows each file with what the step did to it, and whether it can be diffed', () => {
    const [app, readme, made] = fileNodes(changes, '1');
    expect(fileRow(app!)).toMatchObject({ label: 'app.py', iconId: 'diff-modified', description: 'changed', contextValue: 'changes.file' });
    expect(fileRow(readme!).description).toBe('deleted by the step');
    expect(fileRow(made!).iconId).toBe('diff-added');
    const pruned = fileNodes(changes, '2')[0]!;
    expect(fileRow(pruned).contextValue).toBe('changes.file.pruned');
    expect(fileRow(pruned).tooltip).toMatch(/pruned/);
  });
});

describe('confirmations say what will change', () => {
  it('undoing a step: put back, deleted, brought back, left alone, and the plan', () => {
    const preview = {
      restored: ['README.md', 'app.py', 'made.txt'],
      skipped: [{ path: 'util.py', reason: 'it was changed outside Plansight after checkpoint 4' }],
    };
    const said = undoStepConfirmation('1', items, fileNodes(changes, '1'), preview);
    expect(said.message).toBe('Undo step #1 Change the greeting?');
    expect(said.action).toBe('Undo Step');
    expect(said.detail.split('\n')).toEqual([
      'Undo Step puts back app.py, deletes made.txt (made since), brings back README.md (deleted since), ' +
        'leaves util.py as it is (it was changed outside Plansight after checkpoint 4) and makes step #1 pending in the plan.',
      'A checkpoint is taken first: Restore to Checkpoint can undo this.',
    ]);
  });

  it('undoing one file, and a restore that has nothing to do', () => {
    const made = fileNodes(changes, '1')[2]!;
    const said = undoFileConfirmation(made, items, { restored: ['made.txt'], skipped: [] });
    expect(said.message).toBe('Undo what step #1 Change the greeting did to made.txt?');
    expect(said.detail).toContain('Undo File deletes made.txt (made since).');
    const nothing = undoFileConfirmation(made, items, { restored: [], skipped: [] });
    expect(nothing.detail).toContain('Undo File changes no file.');
  });

  it('restoring a checkpoint, with the conversation', () => {
    const checkpoint: Checkpoint = { id: '2', label: 'Run started', createdAt: '2026-12-01T10:00:00Z', paths: [], kind: 'runStart' };
    const said = restoreConfirmation(checkpoint, { restored: ['a.py', 'b.py'], skipped: [] }, true);
    expect(said.message).toBe('Restore checkpoint 2 “Run started”?');
    expect(said.detail).toContain('Puts back a.py, b.py.');
    expect(said.detail).toContain('The conversation and the plan go back to that point as well.');
    expect(said.action).toBe('Restore Files and Conversation');
    expect(restoreConfirmation(checkpoint, { restored: [], skipped: [] }, false).action).toBe('Restore Files');
  });
});

describe('after a restore', () => {
  it('says what it did and which checkpoint undoes it', () => {
    const checkpoints: Checkpoint[] = [
      { id: '8', label: 'Before undoing step #1', createdAt: '', paths: [], kind: 'beforeRestore' },
      { id: '9', label: 'Undid step #1 (3 files)', createdAt: '', paths: ['a'], kind: 'restore' },
    ];
    expect(undoCheckpoint(checkpoints)).toBe('8');
    expect(resultMessage('step #1 undone', { restored: ['a', 'b'], skipped: [] }, '8')).toBe(
      'Plansight: step #1 undone: restored 2 files. Restore checkpoint 8 to undo it.',
    );
    expect(resultMessage('step #1 undone', { restored: [], skipped: [{ path: 'a', reason: 'unsaved' }] }, '8')).toBe(
      'Plansight: step #1 undone: no file needed restoring; left a (unsaved).',
    );
  });
});

describe('version 3: deleted files and the later steps\' work an undo loses', () => {
  it('the confirmation says deleted for deleted files and names the later steps', () => {
    const preview = {
      restored: ['app.py'],
      deleted: ['hello.py'],
      skipped: [{ path: 'same.py', reason: 'overlaps the changes of #2 (undo with force to put it back as it was before it, losing them)' }],
      alsoUndone: [{ path: 'hello.py', todoIds: ['3'] }],
    };
    const said = undoStepConfirmation('1', items, fileNodes(changes, '1'), preview);
    expect(said.detail.split('\n')).toEqual([
      'Undo Step puts back app.py, deletes hello.py (made since), also undoes what step #3 changed in hello.py (the changes overlap), ' +
        'leaves same.py as it is (overlaps the changes of #2) and makes step #1 pending in the plan.',
      'A checkpoint is taken first: Restore to Checkpoint can undo this.',
    ]);
    // A checkpoint's restore: what it deletes is said as deleted, not put back.
    const checkpoint: Checkpoint = { id: '2', label: 'Run started', createdAt: '', paths: [], kind: 'runStart' };
    const restored = restoreConfirmation(checkpoint, { restored: ['a.py'], deleted: ['new.py'], skipped: [] }, false);
    expect(restored.detail).toContain('Puts back a.py.');
    expect(restored.detail).toContain('Deletes new.py (made since).');
    expect(restored.detail).not.toContain('Puts back a.py, new.py');
  });

  it('the notification says deleted, and whose work was lost too', () => {
    const result = {
      restored: ['app.py'],
      deleted: ['hello.py'],
      skipped: [],
      alsoUndone: [{ path: 'hello.py', todoIds: ['3', '4'] }],
    };
    expect(resultMessage('step #1 undone', result, '8')).toBe(
      'Plansight: step #1 undone: restored 1 file, deleted hello.py; also undid hello.py (the changes of #3, #4). Restore checkpoint 8 to undo it.',
    );
    expect(resultMessage('step #1 undone', { restored: [], deleted: ['made.txt'], skipped: [] }, '8')).toBe(
      'Plansight: step #1 undone: deleted made.txt. Restore checkpoint 8 to undo it.',
    );
  });
});

describe('Undo Anyway: the forced undo, offered where the plain one leaves files', () => {
  const overlap = 'overlaps the changes of #3 (undo with force to put it back as it was before it, losing them)';
  const preview = { restored: ['app.py'], deleted: [], skipped: [{ path: 'hello.py', reason: overlap }] };
  const forced = { restored: ['app.py', 'hello.py'], deleted: [], skipped: [], alsoUndone: [{ path: 'hello.py', todoIds: ['3'] }] };

  it('names, before anything happens, what else goes with it', () => {
    const said = undoStepConfirmation('1', items, fileNodes(changes, '1'), preview, forced);
    expect(said.action).toBe('Undo Step');
    expect(said.force).toBe('Undo Anyway');
    expect(said.detail.split('\n')).toEqual([
      'Undo Step puts back app.py, leaves hello.py as it is (overlaps the changes of #3) and makes step #1 pending in the plan.',
      'Undo Anyway does the same and also puts back hello.py, losing what step #3 changed in hello.py.',
      'A checkpoint is taken first: Restore to Checkpoint can undo this.',
    ]);
    expect(said.detail).not.toMatch(/with force/);
  });

  it('forgets overlaps with steps already undone: no work of theirs is lost (issue 31)', () => {
    const checkpoints: Checkpoint[] = [
      { id: '4', todoId: '2', label: 'Edit hello.py', createdAt: '', paths: ['hello.py'], kind: 'edit' },
      { id: '5', todoId: '3', label: 'Edit hello.py', createdAt: '', paths: ['hello.py'], kind: 'edit' },
      { id: '6', label: 'Before undoing step #3', createdAt: '', paths: [], kind: 'beforeRestore' },
      { id: '7', label: 'Undid step #3 (1 file)', createdAt: '', paths: ['hello.py'], kind: 'restore' },
      { id: '8', label: 'Undid step #2 (1 file)', createdAt: '', paths: ['hello.py'], kind: 'restore' },
      { id: '9', todoId: '2', label: 'Run make', createdAt: '', paths: ['hello.py'], kind: 'command' },
    ];
    const undone = undoneSteps(checkpoints);
    expect([...undone]).toEqual(['3']); // #2 was worked on again after its undo
    const both = { restored: ['app.py', 'hello.py'], deleted: [], skipped: [], alsoUndone: [{ path: 'hello.py', todoIds: ['3', '2'] }] };
    const said = undoStepConfirmation('1', items, fileNodes(changes, '1'), both, undefined, undone);
    expect(said.detail).toContain('also undoes what step #2 changed in hello.py');
    expect(said.detail).not.toContain('#3');
    const onlyThree = undoStepConfirmation('1', items, fileNodes(changes, '1'), preview, forced, undone);
    expect(onlyThree.detail).not.toContain('#3');
    expect(onlyThree.detail).toContain('leaves hello.py as it is (overlaps later changes to it)');
    expect(onlyThree.detail).toContain('Undo Anyway does the same and also puts back hello.py.');
    // Without the checkpoints' word, every overlap is said.
    expect(undoStepConfirmation('1', items, fileNodes(changes, '1'), preview, forced).detail).toContain('losing what step #3 changed');
  });

  it('is not offered where forcing changes nothing (an unsaved file stays skipped)', () => {
    const unsaved = { restored: [], skipped: [{ path: 'a.py', reason: 'it has unsaved changes in the editor' }] };
    expect(undoStepConfirmation('1', items, fileNodes(changes, '1'), unsaved, unsaved).force).toBeUndefined();
    expect(undoStepConfirmation('1', items, fileNodes(changes, '1'), preview).force).toBeUndefined();
  });

  it('says after the undo whose work went, and a deletion as deleted', () => {
    expect(resultMessage('step #1 undone', forced, '9')).toBe(
      'Plansight: step #1 undone: restored 2 files; also undid hello.py (the changes of #3). Restore checkpoint 9 to undo it.',
    );
    expect(resultMessage('step #1 undone', { restored: [], deleted: ['a.txt', 'b.txt'], skipped: [] }, '9')).toBe(
      'Plansight: step #1 undone: deleted a.txt, b.txt. Restore checkpoint 9 to undo it.',
    );
    const what = undoFileWhat({ todoId: '2', path: 'cli.py' });
    expect(what.charAt(0).toUpperCase() + what.slice(1)).toBe('Step #2 undone in cli.py'); // as the notice shows it
    expect(resultMessage(what, { restored: ['cli.py'], skipped: [] }, undefined)).toBe(
      'Plansight: step #2 undone in cli.py: restored 1 file.',
    );
  });
});

describe('the checkpoint list', () => {
  it('is newest first, with step, time and files', () => {
    const now = new Date('2026-12-01T12:00:00');
    const picks = checkpointPicks(
      [
        { id: '1', label: 'Run started', createdAt: new Date('2026-12-01T10:00:00').toISOString(), paths: [] },
        { id: '2', label: 'Edited app.py', todoId: '1', createdAt: new Date('2026-12-01T10:00:05').toISOString(), paths: ['app.py'] },
      ],
      now,
    );
    // Label, description and detail each say one thing: the rows do not run together.
    expect(picks.map((p) => p.label)).toEqual(['Edited app.py', 'Run started']);
    expect(picks[0]!.description).toBe('checkpoint 2 · step #1 · 10:00:05');
    expect(picks[1]!.description).toBe('checkpoint 1 · 10:00:00');
    expect(picks[0]!.detail).toBe('Changed: app.py');
    expect(picks[1]!.detail).toBe('No file changed since the one before');
    expect(when(new Date('2026-11-02T09:30:00').toISOString(), now)).toBe('Nov 2, 09:30');
  });
});
