import { describe, expect, it } from 'vitest';
import { editFromEvent, editsFromHistory, loadHistory } from '../src/conversation/history';
import { type CardEntry, ConversationModel } from '../src/conversation/model';
import { ConversationRenderer } from '../src/conversation/render';
import { registerRunCards } from '../src/conversation/runCards';
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
      [true, ['user', 'tool', 'card', 'card', 'text', 'result']],
      [false, ['notice']],
      [true, ['user', 'notice']],
    ]);
  });

  it('brings each past edit back as a read-only card saying how it was decided, and not again for one this window reviewed', () => {
    const model = new ConversationModel();
    loadHistory(model, runs.slice(0, 1));
    const cards = model.runs[0]!.entries.filter((e): e is CardEntry => e.kind === 'card');
    expect(cards.map((c) => [c.card, c.open])).toEqual([
      ['pastReview', false],
      ['pastReview', false],
    ]);
    const renderer = new ConversationRenderer();
    registerRunCards(renderer);
    const shown = cards.map((c) => renderer.entry(c));
    expect(shown[0]).toContain('Edit <strong>hello.py</strong>');
    expect(shown[0]).toContain('Type hints');
    expect(shown[0]).toContain('Accepted');
    expect(shown[1]).toContain('Rejected: No');
    expect(shown.join('')).not.toContain('data-action'); // read-only: no buttons
    const live = new ConversationModel();
    live.addCard('review', { reviewId: 'e9' });
    live.apply({ type: 'editReviewed', id: 'e9', path: 'a.py', description: '', outcome: 'accepted' });
    expect(live.current!.entries.map((e) => e.kind)).toEqual(['card']);
  });

  it('shows a past edit\'s change from its tool call in the history', () => {
    const model = new ConversationModel();
    loadHistory(model, [
      {
        prompt: 'Hint it',
        startedAt: '',
        result: { status: 'done', text: 'ok', rounds: 1, usage },
        events: [
          { type: 'runStarted', prompt: 'Hint it' },
          { type: 'toolCall', id: 't1', name: 'edit_file', input: { path: 'hello.py', old_text: 'def greet(name):', new_text: 'def greet(name: str) -> str:' } },
          { type: 'editReviewed', id: 'e1', path: 'hello.py', description: 'Type hints', outcome: 'accepted' },
          { type: 'toolResult', id: 't1', name: 'edit_file', isError: false, summary: 'Edited' },
        ],
      },
    ]);
    const card = model.runs[0]!.entries.find((e): e is CardEntry => e.kind === 'card')!;
    const renderer = new ConversationRenderer();
    registerRunCards(renderer);
    const html = renderer.entry(card);
    expect(html).toContain('<span class="removed">− def greet(name):</span>');
    expect(html).toContain('<span class="added">+ def greet(name: str) -&gt; str:</span>');
    expect(html).toContain('+1</span> <span class="removed">−1');
  });

  it('reads line by line as the live card did: two changed lines far apart are +2 −2, not a block (issue 31)', async () => {
    const { cardDiff } = await import('../src/review/lineDiff');
    const before = ['def a():', ...Array.from({ length: 12 }, (_, i) => `    x${i} = ${i}`), 'def b():', '    return 1'].join('\n');
    const after = before.replace('def a():', 'def a() -> None:').replace('    return 1', '    return 2');
    const model = new ConversationModel();
    loadHistory(model, [
      {
        prompt: 'Two fixes',
        startedAt: '',
        result: { status: 'done', text: 'ok', rounds: 1, usage },
        events: [
          { type: 'runStarted', prompt: 'Two fixes' },
          { type: 'toolCall', id: 't1', name: 'edit_file', input: { path: 'm.py', old_text: before, new_text: after } },
          { type: 'editReviewed', id: 'e1', path: 'm.py', description: 'Two fixes', outcome: 'accepted' },
        ],
      },
    ]);
    const card = model.runs[0]!.entries.find((e): e is CardEntry => e.kind === 'card')!;
    const renderer = new ConversationRenderer();
    registerRunCards(renderer);
    const html = renderer.entry(card);
    expect(html).toContain('+2</span> <span class="removed">−2');
    expect(html).not.toContain('− ' + '    x5 = 5'); // the unchanged middle is not shown as removed
    const live = cardDiff(before, after).map((l) => l.text);
    for (const text of live) {
      expect(html).toContain(text.replace(/>/g, '&gt;'));
    }
  });
});

describe('a settled review card', () => {
  it('shows what was written when the user changed the proposal (issue 31)', async () => {
    const { writtenPatch } = await import('../src/review/lineDiff');
    const patch = writtenPatch('a\nb\n', 'a\nB (mine)\n');
    expect(patch.added).toBe(1);
    expect(patch.removed).toBe(1);
    expect(patch.diff.map((l) => [l.kind, l.text])).toContainEqual(['added', 'B (mine)']);
  });
});

describe('undos and restores after a reload', () => {
  it('come back as the lines they were, under the run they followed', () => {
    const model = new ConversationModel();
    loadHistory(model, [
      {
        prompt: 'Edit',
        startedAt: '',
        result: { status: 'done', text: 'ok', rounds: 1, usage },
        events: [{ type: 'runStarted', prompt: 'Edit' }],
        after: [
          { type: 'restored', todoId: '1', restored: ['hello.py'], deleted: ['new.txt'], skipped: [] },
          { type: 'restored', checkpoint: 'c7', conversation: true, restored: [], deleted: [], skipped: [{ path: 'a.py', reason: 'changed since' }] },
          { type: 'somethingElse' },
        ],
      },
    ]);
    const lines = model.runs[0]!.entries.filter((e) => e.kind === 'notice').map((e) => (e as { text: string }).text);
    expect(lines).toEqual([
      'Undid step #1: hello.py put back, new.txt deleted.',
      'Restored checkpoint c7 with the conversation: a.py skipped (changed since).',
    ]);
  });
});
