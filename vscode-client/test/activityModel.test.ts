import { describe, expect, it } from 'vitest';
import { ActivityLog, promptLabel, runHeader, toolInputSummary, usageText } from '../src/activity/activityModel';
import type { RunResult } from '../src/protocol';

const result: RunResult = {
  status: 'done',
  text: 'All three items are done.',
  rounds: 7,
  usage: { inputTokens: 12345, outputTokens: 678, cacheReadInputTokens: 9000, cacheCreationInputTokens: 0 },
};

describe('ActivityLog', () => {
  it('lists a run as it happens', () => {
    const log = new ActivityLog();
    log.apply({ type: 'runStarted', prompt: 'Refactor hello.py' });
    log.apply({ type: 'textDelta', text: 'I will ' });
    log.apply({ type: 'textDelta', text: 'plan first.' });
    log.apply({ type: 'toolCall', id: 't1', name: 'read_file', input: { path: 'hello.py' } });
    log.apply({ type: 'toolResult', id: 't1', name: 'read_file', isError: false, summary: '13 lines' });
    log.apply({ type: 'toolCall', id: 't2', name: 'edit_file', input: { path: 'hello.py', old_text: 'a', new_text: 'b' } });
    log.apply({ type: 'toolResult', id: 't2', name: 'edit_file', isError: true, summary: 'Rejected: too long' });
    log.apply({ type: 'reminder', text: '<reminder>Update your todos.</reminder>', level: 1 });
    log.apply({ type: 'filesChanged', paths: ['hello.py', 'test_hello.py'] });
    log.apply({ type: 'runFinished', result });

    expect(log.runs).toHaveLength(1);
    const run = log.runs[0]!;
    expect(run.running).toBe(false);
    expect(run.rows.map((r) => [r.kind, r.label, r.description, r.iconId])).toEqual([
      ['text', 'I will plan first.', undefined, 'comment'],
      ['tool', 'read_file', 'hello.py → 13 lines', 'file'],
      ['tool', 'edit_file', 'hello.py → Rejected: too long', 'error'],
      ['reminder', 'Update your todos.', 'reminder, level 1', 'bell'],
      ['files', 'Files changed: hello.py, test_hello.py', '2', 'files'],
      ['finished', 'Done', '7 rounds · 12,345 in · 678 out · 9,000 cache read', 'pass'],
    ]);
    expect(run.rows[5]!.tooltip).toContain('All three items are done.');
    expect(runHeader(run)).toMatchObject({ label: 'Refactor hello.py', iconId: 'pass' });
  });

  it('shows a call as running until its result arrives', () => {
    const log = new ActivityLog();
    log.apply({ type: 'runStarted', prompt: 'p' });
    log.apply({ type: 'toolCall', id: 't1', name: 'bash', input: { command: 'pytest -q' } });
    expect(log.runs[0]!.rows[0]).toMatchObject({ iconId: 'loading~spin', description: 'pytest -q' });
    expect(runHeader(log.runs[0]!)).toMatchObject({ iconId: 'sync~spin', description: 'running' });
  });

  it('ignores unknown event types and malformed finishes', () => {
    const log = new ActivityLog();
    expect(log.apply({ type: 'somethingNew', x: 1 })).toBeUndefined();
    expect(log.apply({ type: 'toolInputDelta', id: 't', partialJson: '{' })).toBeUndefined();
    expect(log.apply({ type: 'runFinished' })).toBeUndefined();
    expect(log.runs).toHaveLength(0);
  });

  it('reports errors and failed runs', () => {
    const log = new ActivityLog();
    log.addError('A run is already in progress.');
    expect(log.runs[0]!.rows[0]).toMatchObject({ kind: 'error', iconId: 'error' });
    log.apply({ type: 'runStarted', prompt: 'again' });
    log.apply({
      type: 'runFinished',
      result: { ...result, status: 'error', error: 'Overloaded', rounds: 1 },
    });
    expect(log.runs[0]!.rows[0]).toMatchObject({ label: 'Error: Overloaded', iconId: 'error' });
    expect(log.runs).toHaveLength(2);
  });

  it('keeps the newest runs and rows only', () => {
    const log = new ActivityLog({ maxRuns: 2, maxRowsPerRun: 3 });
    for (let i = 0; i < 3; i++) {
      log.apply({ type: 'runStarted', prompt: `run ${i}` });
    }
    expect(log.runs.map((r) => r.prompt)).toEqual(['run 2', 'run 1']);
    for (let i = 0; i < 5; i++) {
      log.apply({ type: 'filesChanged', paths: [`f${i}`] });
    }
    expect(log.runs[0]!.rows.map((r) => r.tooltip)).toEqual(['f2', 'f3', 'f4']);
  });
});

describe('summaries', () => {
  it('shows a prompt without the editor context', () => {
    expect(promptLabel('Fix it\n\n<editor-context>\nActive file: a.py\n</editor-context>')).toBe('Fix it');
    expect(promptLabel('Fix it <editor-context> cut')).toBe('Fix it');
  });
  it('summarises every tool input', () => {
    expect(toolInputSummary('read_file', { path: 'a.py', offset: 10, limit: 5 })).toBe('a.py:10-14');
    expect(toolInputSummary('write_file', { path: 'b.py', content: 'x\ny' })).toBe('b.py (2 lines)');
    expect(toolInputSummary('list_files', { pattern: '**/*.py' })).toBe('**/*.py');
    expect(toolInputSummary('list_files', {})).toBe('.');
    expect(toolInputSummary('grep', { pattern: 'def ', path: 'src', glob: '*.py' })).toBe('/def / in src *.py');
    expect(toolInputSummary('bash', { command: 'ls\n-la' })).toBe('ls -la');
    expect(toolInputSummary('todo', { items: [{}, {}, {}] })).toBe('3 items');
    expect(toolInputSummary('read_scratchpad', {})).toBe('');
    expect(toolInputSummary('write_scratchpad', { content: 'Notes:\n- one' })).toBe('Notes: - one');
    expect(toolInputSummary('mystery', { a: 1 })).toBe('{"a":1}');
  });
  it('formats usage', () => {
    expect(usageText(1, undefined)).toBe('1 round');
    expect(usageText(2, { inputTokens: 1, outputTokens: 2, cacheReadInputTokens: 0, cacheCreationInputTokens: 5 })).toBe(
      '2 rounds · 1 in · 2 out · 5 cache write',
    );
  });
});
