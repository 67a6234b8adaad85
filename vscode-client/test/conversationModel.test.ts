import { describe, expect, it } from 'vitest';
import { buildPrompt } from '../src/commands/prompt';
import { type Change, ConversationModel, type Entry } from '../src/conversation/model';
import type { CheckpointEvent, PlansightEvent, RunResult } from '../src/protocol';

const usage = { inputTokens: 10, outputTokens: 20, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 };
const done = (text: string, rounds = 2): RunResult => ({ status: 'done', text, rounds, usage });

function kinds(entries: Entry[]): string[] {
  return entries.map((e) => (e.kind === 'card' ? `card:${e.card}` : e.kind));
}

describe('ConversationModel', () => {
  it('puts what comes outside any run (a worker taken in, files changed) in a run that does not spin', () => {
    const model = new ConversationModel();
    model.apply({ type: 'filesChanged', paths: ['hello.py'] });
    model.addCard('review', { path: 'hello.py', worker: '1' }, model.outsideRun());
    expect(model.runs).toHaveLength(1);
    expect(model.runs[0]!.running).toBe(false); // no runFinished will come to end a "Working…"
    expect(kinds(model.runs[0]!.entries)).toEqual(['notice', 'card:review']);
    // With a run going on, they join it.
    model.apply({ type: 'runStarted', prompt: 'Fix it' });
    model.apply({ type: 'filesChanged', paths: ['a.py'] });
    expect(model.runs).toHaveLength(2);
    expect(model.runs[1]!.running).toBe(true);
    expect(kinds(model.runs[1]!.entries)).toEqual(['user', 'notice']);
  });

  it('builds a run from its events: text merged, tool calls with their results', () => {
    const model = new ConversationModel();
    const events: PlansightEvent[] = [
      { type: 'runStarted', prompt: buildPrompt('Fix it', { path: 'a.py' }) },
      { type: 'textDelta', text: 'I will ' },
      { type: 'textDelta', text: 'read it.' },
      { type: 'toolCall', id: 't1', name: 'read_file', input: { path: 'a.py' } },
      { type: 'thinkingDelta', text: 'Hmm, ' },
      { type: 'thinkingDelta', text: 'the loop.' },
      { type: 'toolResult', id: 't1', name: 'read_file', isError: false, summary: '3 lines' },
      { type: 'reminder', text: '<reminder>Update your todos.</reminder>', level: 1, rounds: 3 },
      { type: 'compacted', beforeTokens: 150000, afterTokens: 20000, strategy: 'summary' },
      { type: 'somethingNew', detail: 1 },
      { type: 'textDelta', text: 'Done.' },
      { type: 'runFinished', result: done('Done.') },
    ];
    events.forEach((e) => model.apply(e));
    expect(model.runs).toHaveLength(1);
    const run = model.runs[0]!;
    expect(run.running).toBe(false);
    expect(kinds(run.entries)).toEqual(['user', 'text', 'tool', 'thinking', 'reminder', 'notice', 'text', 'result']);
    const [user, text, tool, thinking, reminder, notice, , result] = run.entries;
    expect(user).toMatchObject({ prompt: { text: 'Fix it', path: 'a.py' } });
    expect(text).toMatchObject({ text: 'I will read it.' });
    expect(tool).toMatchObject({ name: 'read_file', input: { path: 'a.py' }, result: { isError: false, summary: '3 lines' } });
    expect(thinking).toMatchObject({ text: 'Hmm, the loop.' });
    expect(reminder).toMatchObject({ text: 'Update your todos.', level: 1, rounds: 3 });
    expect(notice).toMatchObject({ icon: 'fold' });
    expect((notice as { text: string }).text).toContain('150,000 → 20,000 tokens');
    // The final answer was streamed: the result does not repeat it.
    expect(result).toMatchObject({ kind: 'result', showText: false });
  });

  it('says in words when nothing could be compacted', () => {
    const model = new ConversationModel();
    model.apply({ type: 'runStarted', prompt: 'x' });
    model.apply({ type: 'compacted', beforeTokens: 4210, afterTokens: 4210, strategy: 'summary', unchanged: true });
    const notice = model.runs[0]!.entries.at(-1) as { kind: string; text: string };
    expect(notice).toMatchObject({ kind: 'notice', icon: 'fold' });
    expect(notice.text).toContain('not compacted');
    expect(notice.text).toContain('4,210 tokens');
    expect(notice.text).not.toContain('→');
  });

  it('shows why a run stopped when the streamed text does not say it', () => {
    const model = new ConversationModel();
    model.apply({ type: 'runStarted', prompt: 'x' });
    model.apply({ type: 'runFinished', result: { status: 'error', text: 'The model API failed: 529', rounds: 1, usage, error: '529' } });
    expect(model.runs[0]!.entries.at(-1)).toMatchObject({ kind: 'result', showText: true });
  });

  it('shows the prompt the user sent at once and adopts it when the server starts it', () => {
    const model = new ConversationModel();
    const changes: Change['kind'][] = [];
    model.onDidChange((c) => changes.push(c.kind));
    const prompt = buildPrompt('Add hints', { path: 'hello.py' });
    const pending = model.addPending(prompt);
    expect(pending).toMatchObject({ started: false, running: true });
    model.apply({ type: 'runStarted', prompt });
    expect(model.runs).toHaveLength(1);
    expect(pending.started).toBe(true);
    expect(kinds(pending.entries)).toEqual(['user']);
    // Another prompt (the demo's, say) is a run of its own.
    model.apply({ type: 'runStarted', prompt: 'Something else' });
    expect(model.runs).toHaveLength(2);
    expect(changes).toContain('run');
  });

  it('keeps a refused prompt with the reason', () => {
    const model = new ConversationModel();
    const run = model.addPending('Again');
    model.stopPending(run, { icon: 'warning', text: 'Not sent: a run is in progress', tone: 'warning' });
    expect(run.running).toBe(false);
    expect(kinds(run.entries)).toEqual(['user', 'notice']);
  });

  it('lets features add and settle cards of their own type', () => {
    const model = new ConversationModel();
    model.apply({ type: 'runStarted', prompt: 'x' });
    const card = model.addCard('planReview', { summary: 'Three steps' });
    expect(model.openCards('planReview')).toHaveLength(1);
    model.updateCard<{ summary: string; decision?: string }>(card.id, { decision: 'approve' }, false);
    expect(model.findEntry(card.id)?.entry).toMatchObject({ open: false, data: { summary: 'Three steps', decision: 'approve' } });
    expect(model.openCards('planReview')).toHaveLength(0);
  });

  it('turns unknown events into entries through a registered handler', () => {
    const model = new ConversationModel();
    model.onEvent('checkpoint', (m, event) => {
      m.addNotice({ icon: 'history', text: `Checkpoint ${(event as CheckpointEvent).checkpoint.label}` });
    });
    model.apply({ type: 'checkpoint', checkpoint: { id: 'c1', label: 'before #2', createdAt: '', paths: [] } });
    expect(model.current?.entries.at(-1)).toMatchObject({ kind: 'notice', text: 'Checkpoint before #2' });
  });

  it('replays past runs from history, the unfinished one marked', () => {
    const model = new ConversationModel();
    model.addPastRun('First', [{ type: 'textDelta', text: 'Answer.' }], '2026-12-01T09:00:00Z', done('Answer.'));
    model.addPastRun('Second', [{ type: 'toolCall', id: 't', name: 'bash', input: { command: 'ls' } }]);
    expect(model.runs.map((r) => [r.past, r.running, kinds(r.entries)])).toEqual([
      [true, false, ['user', 'text', 'result']],
      [true, false, ['user', 'tool', 'notice']],
    ]);
  });

  it('keeps a bounded number of runs', () => {
    const model = new ConversationModel({ maxRuns: 2 });
    const removed: string[] = [];
    model.onDidChange((c) => c.kind === 'removeRun' && removed.push(c.runId));
    for (const prompt of ['a', 'b', 'c']) {
      model.apply({ type: 'runStarted', prompt });
    }
    expect(model.runs.map((r) => (r.entries[0] as { prompt: { text: string } }).prompt.text)).toEqual(['b', 'c']);
    expect(removed).toHaveLength(1);
  });
});

describe('ConversationModel: turns, follow-ups and the server stopping', () => {
  it('keeps two turns that arrived as one stretch apart, and does not repeat the answer under Done', () => {
    const model = new ConversationModel();
    model.apply({ type: 'runStarted', prompt: 'Check it' });
    // The run asked the model once more at its end: no event came between the two turns.
    model.apply({ type: 'textDelta', text: 'The type hints are in.' });
    model.apply({ type: 'textDelta', text: 'I left the tests as they were.' });
    model.apply({ type: 'runFinished', result: done('I left the tests as they were.') });
    const run = model.runs[0]!;
    expect(run.entries.filter((e) => e.kind === 'text').map((e) => (e as { text: string }).text)).toEqual([
      'The type hints are in.',
      'I left the tests as they were.',
    ]);
    expect(run.entries.at(-1)).toMatchObject({ kind: 'result', showText: false });
    // One sentence that ends with the answer's words is one turn.
    const one = new ConversationModel();
    one.apply({ type: 'runStarted', prompt: 'x' });
    one.apply({ type: 'textDelta', text: 'It is all done.' });
    one.apply({ type: 'runFinished', result: done('done.') });
    expect(one.runs[0]!.entries.filter((e) => e.kind === 'text')).toHaveLength(1);
  });

  it('starts a new text entry where the server says a new model turn began, even mid-run', () => {
    const model = new ConversationModel();
    model.apply({ type: 'runStarted', prompt: 'Plan it' });
    model.apply({ type: 'textDelta', text: 'I read the code ', turn: 1 });
    model.apply({ type: 'textDelta', text: 'and planned.', turn: 1 });
    model.apply({ type: 'textDelta', text: 'Shall I ', turn: 2 });
    model.apply({ type: 'textDelta', text: 'go on?', turn: 2 });
    const texts = () => model.runs[0]!.entries.filter((e) => e.kind === 'text').map((e) => (e as { text: string }).text);
    // Split while the run streams, not only once the answer is known.
    expect(texts()).toEqual(['I read the code and planned.', 'Shall I go on?']);
    model.apply({ type: 'textDelta', text: 'The plan waits for you.', turn: 3 });
    model.apply({ type: 'runFinished', result: done('The plan waits for you.', 3) });
    expect(texts()).toEqual(['I read the code and planned.', 'Shall I go on?', 'The plan waits for you.']);
    expect(model.runs[0]!.entries.at(-1)).toMatchObject({ kind: 'result', showText: false });
    // The same from the history, where each turn is one delta.
    const past = new ConversationModel();
    past.addPastRun('Plan it', [
      { type: 'textDelta', text: 'Planned.', turn: 1 },
      { type: 'textDelta', text: 'The plan waits.', turn: 2 },
    ], undefined, done('The plan waits.'));
    expect(past.runs[0]!.entries.filter((e) => e.kind === 'text').map((e) => (e as { text: string }).text)).toEqual([
      'Planned.',
      'The plan waits.',
    ]);
  });

  it('shows a follow-up sent during a run at once, queued below it, and the run\'s events stay in the run', () => {
    const model = new ConversationModel();
    model.apply({ type: 'runStarted', prompt: 'First' });
    const queued = model.addQueued('Then this');
    model.apply({ type: 'textDelta', text: 'Working on the first.' });
    const [first] = model.runs;
    expect(kinds(first!.entries)).toEqual(['user', 'text']);
    expect(kinds(queued.entries)).toEqual(['user']);
    expect(queued.queued).toBe(true);
    model.apply({ type: 'runFinished', result: done('Working on the first.') });
    model.sendQueued(queued);
    expect(queued).toMatchObject({ queued: false, running: true });
    model.apply({ type: 'runStarted', prompt: 'Then this' });
    model.apply({ type: 'textDelta', text: 'Now the second.' });
    expect(model.runs).toHaveLength(2);
    expect(kinds(queued.entries)).toEqual(['user', 'text']);
  });

  it('says a queued follow-up was not sent when the user stopped the run', () => {
    const model = new ConversationModel();
    model.apply({ type: 'runStarted', prompt: 'First' });
    const queued = model.addQueued('Then this');
    model.dropQueued(queued, 'Not sent: you stopped the run before it.');
    expect(queued.queued).toBe(false);
    expect(queued.entries.at(-1)).toMatchObject({ kind: 'notice', text: 'Not sent: you stopped the run before it.' });
  });

  it('says in words why the server stopped mid-run', () => {
    const model = new ConversationModel();
    model.apply({ type: 'runStarted', prompt: 'First' });
    model.serverStopped('The Plansight server stopped unexpectedly: it was killed (SIGKILL). It is being restarted.');
    expect(model.runs[0]!.entries.at(-1)).toMatchObject({ kind: 'notice', text: expect.stringContaining('killed (SIGKILL)') });
  });
});
