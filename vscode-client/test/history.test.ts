import { describe, expect, it } from 'vitest';
import { editFromEvent, editsFromHistory, loadHistory } from '../src/conversation/history';
import { ConversationModel } from '../src/conversation/model';
import type { HistoryRun } from '../src/protocol';

const usage = { inputTokens: 1, outputTokens: 1, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 };
const runs: HistoryRun[] = [
  {
    prompt: 'Add hints',
    startedAt: '2026-12-01T09:00:00Z',
    result: { status: 'done', text: 'Done.', rounds: 3, usage },
    events: [
      { type: 'runStarted', prompt: 'Add hints' },
      { type: 'toolCall', id: 't1', name: 'edit_file', input: { path: 'hello.py' } },
      { type: 'editReviewed', id: 'e1', uri: 'file:///w/hello.py', path: 'hello.py', description: 'Type hints', outcome: 'accepted', todoId: '1' },
      { type: 'toolResult', id: 't1', name: 'edit_file', isError: false, summary: 'Edited' },
      { type: 'editReviewed', id: 'e2', path: 'hello.py', description: 'Docstring', outcome: 'rejected', feedback: 'No', todoId: '2' },
      { type: 'textDelta', text: 'Done.' },
      { type: 'runFinished', result: { status: 'done', text: 'Done.', rounds: 3, usage } },
    ],
  },
  { prompt: 'Again', startedAt: '2026-12-01T09:05:00Z', events: [{ type: 'runStarted', prompt: 'Again' }], newSession: true } as HistoryRun,
];

describe('history', () => {
  it('brings back the reviewed edits for the plan tree', () => {
    expect(editsFromHistory(runs)).toEqual([
      { id: 'e1', uri: '', path: 'hello.py', description: 'Type hints', outcome: 'accepted', todoId: '1' },
      { id: 'e2', uri: '', path: 'hello.py', description: 'Docstring', outcome: 'rejected', todoId: '2', feedback: 'No' },
    ]);
    expect(editFromEvent({ type: 'editReviewed', id: 'x', path: 'a', outcome: 'exploded' })).toBeUndefined();
    expect(editFromEvent({ type: 'textDelta', text: 'x' })).toBeUndefined();
  });

  it('replays past runs into the conversation, a new session marked', () => {
    const model = new ConversationModel();
    loadHistory(model, runs);
    expect(model.runs.map((r) => [r.past ?? false, r.entries.map((e) => e.kind)])).toEqual([
      [true, ['user', 'tool', 'notice', 'notice', 'text', 'result']],
      [false, ['notice']],
      [true, ['user', 'notice']],
    ]);
  });

  it('says how each past edit was decided, and not again for one this window reviewed', () => {
    const model = new ConversationModel();
    loadHistory(model, runs.slice(0, 1));
    const notices = model.runs[0]!.entries.filter((e) => e.kind === 'notice').map((e) => (e as { text: string }).text);
    expect(notices).toEqual(['Edit hello.py accepted', 'Edit hello.py rejected: No']);
    const live = new ConversationModel();
    live.addCard('review', { reviewId: 'e9' });
    live.apply({ type: 'editReviewed', id: 'e9', path: 'a.py', description: '', outcome: 'accepted' });
    expect(live.current!.entries.map((e) => e.kind)).toEqual(['card']);
  });
});
