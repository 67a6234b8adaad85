import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildPrompt } from '../src/commands/prompt';
import { type ApprovalCardData, registerCoreCards, type ReviewCardData } from '../src/conversation/cards';
import { compactDiff } from '../src/conversation/diff';
import { ConversationModel } from '../src/conversation/model';
import { ConversationRenderer } from '../src/conversation/render';

function setup(): { model: ConversationModel; renderer: ConversationRenderer } {
  const renderer = new ConversationRenderer();
  registerCoreCards(renderer);
  return { model: new ConversationModel(), renderer };
}

describe('ConversationRenderer', () => {
  it('shows the prompt as typed, with its context as chips, escaped', () => {
    const { model, renderer } = setup();
    model.apply({
      type: 'runStarted',
      prompt: buildPrompt('Make <b>it</b> fast', { path: 'src/a.py', selection: { text: 'x', startLine: 3, endLine: 5 } }),
    });
    const html = renderer.run(model.runs[0]!);
    expect(html).toContain('<div class="bubble">Make &lt;b&gt;it&lt;/b&gt; fast</div>');
    expect(html).toContain('src/a.py');
    expect(html).toContain('lines 3–5');
    expect(html).not.toContain('editor-context');
  });

  it('says a refused key once, on the card below, not as the API\'s raw line (issue 31)', () => {
    const { model, renderer } = setup();
    const usage = { inputTokens: 0, outputTokens: 0 };
    model.apply({ type: 'runStarted', prompt: 'x' });
    const error = 'authentication_error: invalid x-api-key (HTTP 401)';
    model.apply({ type: 'runFinished', result: { status: 'error', text: `The model API failed: ${error}`, rounds: 1, usage, error } });
    const html = renderer.entry(model.runs[0]!.entries.at(-1)!);
    expect(html).toContain('class="entry result error"');
    expect(html).not.toContain('x-api-key');
    expect(html).not.toContain('authentication_error');
    // Any other error keeps its words on the line.
    model.apply({ type: 'runStarted', prompt: 'y' });
    model.apply({ type: 'runFinished', result: { status: 'error', text: 'The model API failed: overloaded', rounds: 1, usage, error: 'overloaded_error (HTTP 529)' } });
    expect(renderer.entry(model.runs[1]!.entries.at(-1)!)).toContain('overloaded_error (HTTP 529)');
  });

  it('renders the model text as Markdown, with HTML escaped', () => {
    const { model, renderer } = setup();
    model.apply({ type: 'textDelta', text: '# Title\n\n<script>alert(1)</script>' });
    const html = renderer.entry(model.current!.entries[0]!);
    expect(html).toContain('<h1>Title</h1>');
    expect(html).not.toContain('<script>');
  });

  it('renders tool calls as rows that expand to their input and result', () => {
    const { model, renderer } = setup();
    model.apply({ type: 'toolCall', id: 't1', name: 'bash', input: { command: 'python3 -m unittest' }, summary: '$ python3 -m unittest' });
    const running = renderer.entry(model.current!.entries[0]!);
    expect(running).toMatch(/^<details class="entry tool running"/);
    expect(running).toContain('codicon-loading');
    model.apply({ type: 'toolResult', id: 't1', name: 'bash', isError: false, summary: 'Ran 2 tests: OK (exit status 0)' });
    const html = renderer.entry(model.current!.entries[0]!);
    expect(html).toMatch(/<summary>.*bash.*<span class="input">\$ python3 -m unittest<\/span>.*→ Ran 2 tests: OK \(exit status 0\)<\/span><\/summary>/);
    expect(html).toContain('<div class="label">Command</div><pre>python3 -m unittest</pre>');
    expect(html).toContain('<div class="label">Result</div><pre>Ran 2 tests: OK (exit status 0)</pre>');
  });

  it('wraps an error result (a sentence to read in a narrow view), not other results', () => {
    const { model, renderer } = setup();
    model.apply({ type: 'toolCall', id: 't1', name: 'read_file', input: { path: '.env' }, summary: '.env' });
    model.apply({ type: 'toolResult', id: 't1', name: 'read_file', isError: true, summary: '.env is a protected file' });
    const html = renderer.entry(model.current!.entries[0]!);
    expect(html).toMatch(/^<details class="entry tool error"/);
    expect(html).toContain('<div class="label">Error</div><pre class="wrap">.env is a protected file</pre>');
    expect(html).toMatch(/<div class="label">Input<\/div><pre>\{/);
  });

  it('shows a submitted plan as words on its row and as Markdown in its body', () => {
    const { model, renderer } = setup();
    const summary = '## Approach\n\n- Rename **greet** in `hello.py`\n- Run the [tests](tests/)';
    // The row's words are the server's (the submit_plan tool's summary of its input).
    const words = 'Approach Rename greet in hello.py Run the tests';
    model.apply({ type: 'toolCall', id: 't1', name: 'submit_plan', input: { summary }, summary: words });
    const html = renderer.entry(model.current!.entries[0]!);
    expect(html).toMatch(/<span class="input">Approach Rename greet in hello\.py Run the tests<\/span>/);
    expect(html).toContain('<h2>Approach</h2>');
    expect(html).toContain('<strong>greet</strong>');
    expect(html).not.toContain('## Approach');
  });

  it("shows a call's summary as the server made it, escaped, else its input as the server would", () => {
    const { model, renderer } = setup();
    model.apply({ type: 'toolCall', id: 't1', name: 'read_file', input: { path: 'a.py', offset: 3 }, summary: 'a<b>.py:3-' });
    model.apply({ type: 'toolCall', id: 't2', name: 'read_file', input: { path: 'a.py', offset: 3 } });
    model.apply({ type: 'toolCall', id: 't3', name: 'read_scratchpad', input: {} });
    const [sent, old, empty] = model.current!.entries.map((e) => renderer.entry(e));
    expect(sent).toContain('<span class="input">a&lt;b&gt;.py:3-</span>');
    expect(old).toContain('<span class="input">{&quot;path&quot;:&quot;a.py&quot;,&quot;offset&quot;:3}</span>');
    expect(empty).not.toContain('<span class="input">');
  });

  it('keeps thinking collapsed and says what a compaction did', () => {
    const { model, renderer } = setup();
    model.apply({ type: 'thinkingDelta', text: 'Let me think.' });
    model.apply({ type: 'compacted', beforeTokens: 1000, afterTokens: 100, strategy: 'clearToolResults' });
    const [thinking, notice] = model.current!.entries;
    expect(renderer.entry(thinking!)).toMatch(/^<details class="entry thinking"[^>]*><summary>/);
    expect(renderer.entry(thinking!)).not.toContain(' open');
    expect(renderer.entry(notice!)).toContain('old tool results cleared');
  });

  it('shows the result with its token usage', () => {
    const { model, renderer } = setup();
    model.apply({
      type: 'runFinished',
      result: { status: 'done', text: 'ok', rounds: 3, usage: { inputTokens: 1234, outputTokens: 56, cacheReadInputTokens: 7890, cacheCreationInputTokens: 0 } },
    });
    const html = renderer.entry(model.current!.entries.at(-1)!);
    expect(html).toContain('Done');
    expect(html).toContain('3 rounds · 9,124 in (7,890 cached) · 56 out');
    // The server's total is shown as it is, not added up again.
    model.apply({
      type: 'runFinished',
      result: { status: 'done', text: 'ok', rounds: 1, usage: { inputTokens: 1, outputTokens: 2, cacheReadInputTokens: 3, cacheCreationInputTokens: 4, totalInputTokens: 9999 } },
    });
    expect(renderer.entry(model.current!.entries.at(-1)!)).toContain('1 round · 9,999 in (3 cached, 4 newly cached) · 2 out');
  });

  it('renders a review card with its diff and buttons, then its outcome', () => {
    const { model, renderer } = setup();
    const data: ReviewCardData = {
      reviewId: 'e1',
      path: 'hello.py',
      description: 'Add <hints>',
      diff: compactDiff('def f(x):\n', 'def f(x: int):\n'),
      added: 1,
      removed: 1,
      outcome: 'pending',
    };
    const card = model.addCard('review', data);
    const open = renderer.entry(card);
    expect(open).toContain('class="entry card card-review open"');
    expect(open).toContain('Add &lt;hints&gt;');
    expect(open).toContain('<span class="added">+ def f(x: int):</span>');
    for (const action of ['accept', 'reject', 'showDiff', 'acceptAll']) {
      expect(open).toContain(`data-action="${action}"`);
    }
    expect(open).toContain('data-field="reason"');
    model.updateCard<ReviewCardData>(card.id, { outcome: 'rejected', feedback: 'Too long' }, false);
    const settled = renderer.entry(card);
    expect(settled).toContain('Rejected: Too long');
    expect(settled).not.toContain('data-action="accept"');
  });

  it('says plainly that a review changes a control file, and offers no Accept All on it', () => {
    const { model, renderer } = setup();
    const data: ReviewCardData = {
      reviewId: 'e2',
      path: '.vscode/settings.json',
      description: 'New file',
      diff: compactDiff('', '{}\n'),
      added: 1,
      removed: 0,
      outcome: 'pending',
      control: true,
    };
    const open = renderer.entry(model.addCard('review', data));
    expect(open).toContain('This changes .vscode/settings.json, a file that controls your tools');
    expect(open).toContain('data-action="accept"');
    expect(open).not.toContain('data-action="acceptAll"');
    const plain = renderer.entry(model.addCard('review', { ...data, reviewId: 'e3', path: 'a.py', control: undefined }));
    expect(plain).toContain('data-action="acceptAll"');
    expect(plain).not.toContain('controls your tools');
  });

  it("says a worker's change comes from its worker, and a conflict plainly, with no Accept All on it", () => {
    const { model, renderer } = setup();
    const data: ReviewCardData = {
      reviewId: 'w1',
      path: 'a.py',
      description: 'Worker #2 changed a.py',
      diff: compactDiff('x\n', '<<<<<<< workspace\nx\n=======\ny\n>>>>>>> worker #2\n'),
      added: 4,
      removed: 0,
      outcome: 'pending',
      worker: '2',
      conflict: true,
    };
    const open = renderer.entry(model.addCard('review', data));
    expect(open).toContain('<strong>a.py</strong> from worker #2');
    expect(open).toContain('Conflict: your workspace and worker #2 changed the same lines of a.py');
    expect(open).toContain('it is never accepted unseen');
    expect(open).toContain('data-action="accept"');
    expect(open).not.toContain('data-action="acceptAll"');
    const clean = renderer.entry(model.addCard('review', { ...data, reviewId: 'w2', conflict: undefined }));
    expect(clean).toContain('from worker #2');
    expect(clean).not.toContain('Conflict:');
    expect(clean).toContain('data-action="acceptAll"');
    const gone = renderer.entry(model.addCard('review', { ...data, reviewId: 'w3', conflict: undefined, deleted: true }));
    expect(gone).toContain('Delete <strong>a.py</strong>');
  });

  it('renders a command card', () => {
    const { model, renderer } = setup();
    const card = model.addCard<ApprovalCardData>('approval', { approvalId: 'c1', command: 'rm -rf build && make', cwd: '/w', outcome: 'pending' });
    expect(renderer.entry(card)).toContain('<pre class="command wrap">rm -rf build &amp;&amp; make</pre>');
    expect(renderer.entry(card)).not.toContain('sandbox');
  });

  it('shows a long command whole, wrapped, never cut (open and settled)', () => {
    const { model, renderer } = setup();
    const command = `python3 -m unittest ${'tests.test_module '.repeat(20)}&& touch /tmp/x\necho "second line"`;
    const card = model.addCard<ApprovalCardData>('approval', { approvalId: 'c1', command, cwd: '/w', outcome: 'pending' });
    const escaped = command.replace(/&/g, '&amp;').replace(/"/g, '&quot;');
    for (const html of [renderer.entry(card), (model.updateCard<ApprovalCardData>(card.id, { outcome: 'approved' }, false), renderer.entry(card))]) {
      expect(html).toContain(`<pre class="command wrap">${escaped}</pre>`);
      expect(html).not.toContain('…');
    }
    // The stylesheet wraps it: no horizontal scrolling or ellipsis hides its end.
    const css = readFileSync(join(__dirname, '..', 'media', 'conversation.css'), 'utf8');
    const rule = /pre\.command\s*\{([^}]*)\}/.exec(css)?.[1] ?? '';
    expect(rule).toContain('white-space: pre-wrap');
    expect(rule).toContain('overflow-wrap: anywhere');
    expect(/pre\.wrap\s*\{[^}]*white-space: pre-wrap/.test(css)).toBe(true);
  });

  it('says on a command card whether it runs sandboxed', () => {
    const { model, renderer } = setup();
    const base = { approvalId: 'c1', command: 'make', cwd: '/w', outcome: 'pending' as const };
    const boxed = model.addCard<ApprovalCardData>('approval', {
      ...base,
      sandbox: 'sandboxed: workspace only, no network',
      sandboxed: true,
    });
    expect(renderer.entry(boxed)).toContain('class="card-text sandbox sandboxed"');
    expect(renderer.entry(boxed)).toContain('sandboxed: workspace only, no network');
    const open = model.addCard<ApprovalCardData>('approval', {
      ...base,
      approvalId: 'c2',
      sandbox: 'not sandboxed: it can change any file you can, and use the network',
      sandboxed: false,
    });
    expect(renderer.entry(open)).toContain('class="card-text sandbox unsandboxed"');
  });

  it('renders a card type registered by another feature', () => {
    const { model, renderer } = setup();
    renderer.registerCard('planReview', (card, h) => `<p>${h.escape((card.data as { summary: string }).summary)}</p>${h.button('approve', 'Approve')}`);
    const card = model.addCard('planReview', { summary: 'Plan <3 steps>' });
    expect(renderer.entry(card)).toBe(
      `<div class="entry card card-planReview open" data-entry="${card.id}"><p>Plan &lt;3 steps&gt;</p>` +
        '<button type="button" class="secondary" data-action="approve">Approve</button></div>',
    );
  });
});
