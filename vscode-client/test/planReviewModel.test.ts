import { describe, expect, it } from 'vitest';
import { ConversationModel } from '../src/conversation/model';
import { ConversationRenderer } from '../src/conversation/render';
import {
  approveResult,
  cancelResult,
  changeNotes,
  changeRows,
  itemIdOfLine,
  newComment,
  openCommentLines,
  proposalText,
  notificationMessage,
  outcomeOf,
  planMarkdown,
  type PlanReviewCardData,
  planReviewCard,
  planReviewCardData,
  renderPlanReviewCard,
  plainSummary,
  proposedDescription,
  reviewBadgeTooltip,
  reviewMessage,
  reviseResult,
  settledCardPatch,
} from '../src/plan/planReviewModel';
import { SessionStore } from '../src/session';
import { plan, state } from './fixtures';

const proposed = state([
  { id: '1', text: 'Add type hints', status: 'pending' },
  { id: '2', text: 'Add <docstrings>', status: 'pending' },
]);
const params = { todos: proposed, summary: 'Hints **first**, then docstrings.', scratchpad: 'notes' };

function renderer(): ConversationRenderer {
  const r = new ConversationRenderer();
  r.registerCard(planReviewCard, renderPlanReviewCard);
  return r;
}

describe('plan review answers', () => {
  it('approves the plan as the view shows it now: its items go with the answer', () => {
    const edited = state([{ id: '2', text: 'Add docstrings', status: 'pending', retries: 1 }], 9);
    expect(approveResult(edited)).toEqual({ decision: 'approve', items: [{ id: '2', text: 'Add docstrings', status: 'pending' }] });
  });

  it('revises with the feedback trimmed (none when blank), cancels with nothing', () => {
    expect(reviseResult('  Docstrings first ', proposed)).toMatchObject({ decision: 'revise', feedback: 'Docstrings first' });
    expect(reviseResult('   ', proposed)).not.toHaveProperty('feedback');
    expect(reviseResult('x', proposed).items).toHaveLength(2);
    expect(cancelResult()).toEqual({ decision: 'cancel' });
    expect(outcomeOf(cancelResult())).toBe('cancelled');
    expect(outcomeOf(approveResult(proposed))).toBe('approved');
    expect(outcomeOf(reviseResult('x', proposed))).toBe('revised');
  });
});

describe('the plan card', () => {
  it('shows the summary in full as Markdown and every item, escaped, with the decisions', () => {
    const model = new ConversationModel();
    const card = model.addCard<PlanReviewCardData>(planReviewCard, planReviewCardData('plan-1', params));
    const html = renderer().entry(card);
    expect(html).toContain('<strong>first</strong>');
    expect(html).toContain('#2</strong> Add &lt;docstrings&gt;');
    for (const action of ['approve', 'revise', 'cancel', 'markdown']) {
      expect(html).toContain(`data-action="${action}"`);
    }
    expect(html).toContain('data-field="feedback"');
  });

  it('says why the server asked again, and what was decided once settled', () => {
    const model = new ConversationModel();
    const card = model.addCard<PlanReviewCardData>(
      planReviewCard,
      planReviewCardData('plan-1', { ...params, problem: 'Your edited plan was not accepted: Too many items' }),
    );
    expect(renderer().entry(card)).toContain('Your edited plan was not accepted: Too many items');
    model.updateCard<PlanReviewCardData>(card.id, { outcome: 'revised', feedback: 'Shorter' }, false);
    const settled = renderer().entry(card);
    expect(settled).toContain('Sent back for revision: Shorter');
    expect(settled).not.toContain('data-action="approve"');
  });
});

describe('the plan as text', () => {
  it('is a Markdown document with the summary and a task list', () => {
    expect(planMarkdown(plan, 'Why: *clarity*.')).toBe(
      [
        '# Plan',
        '',
        'Why: *clarity*.',
        '',
        '- [x] **#1** Add type hints',
        '- [ ] **#2** Add docstrings _(in progress)_',
        '- [ ] **#3** Add a main guard',
        '- [ ] **#4** ~~Rename greet~~ _(cancelled)_',
        '- [ ] **#5** Run the tests _(failed)_',
        '',
        '2 of 5 done (1 cancelled).',
        '',
      ].join('\n'),
    );
    expect(planMarkdown(state([]))).toBe('# Plan\n\n_No plan yet._\n');
  });

  it('says one short line at the top of the Plan view, the summary in the notification', () => {
    const shown = reviewMessage('A problem.');
    expect(shown).toBe('A problem.\nApprove, Revise… or Cancel it above.');
    const message = notificationMessage('x'.repeat(500), 'Not accepted.');
    expect(message.startsWith('[Approve](command:plansight.plan.approve) · [Revise…]')).toBe(true);
    expect(message).toContain('— a plan waits for you: Not accepted. xxx');
    expect(message.length).toBeLessThan(600);
    expect(reviewBadgeTooltip('Add **hints** to `__main__`.')).toBe('A proposed plan waits for your approval: Add hints to __main__.');
  });

  it('keeps the Plan view\'s message short whatever the summary or the problem (issue 31)', () => {
    // The summary no longer reaches the view's message: the items stay in sight at 300 px.
    expect(reviewMessage()).toBe('Approve, Revise… or Cancel it above.');
    const problem = Array.from({ length: 20 }, (_, i) => `Reason ${i}.`).join(' ');
    const [first, second] = reviewMessage(problem).split('\n');
    expect(first!.length).toBeLessThanOrEqual(90);
    expect(first).toContain('Reason 0.');
    expect(second).toBe('Approve, Revise… or Cancel it above.');
    const long = Array.from({ length: 60 }, (_, i) => `Sentence number ${i} of the summary.`).join(' ');
    expect(reviewBadgeTooltip(long).length).toBeLessThan(360);
  });

  it('reduces a summary\'s Markdown table and marks to plain text (no pipes)', () => {
    const summary = 'Two changes:\n\n| File | Change |\n|---|:---:|\n| `hello.py` | **type hints** |\n| [README](README.md) | a note |\n\n- [x] keep _tests_';
    const plain = plainSummary(summary);
    expect(plain).toBe('Two changes: File, Change; hello.py, type hints; README, a note; keep tests');
    for (const shown of [reviewBadgeTooltip(summary), notificationMessage(summary)]) {
      expect(shown).not.toMatch(/\||---|\*\*|`/);
      expect(shown).toContain('hello.py, type hints; README, a note');
    }
    expect(plainSummary('snake_case_name and 2 * 3 * 4')).toBe('snake_case_name and 2 * 3 * 4');
  });

  it('titles the Plan view so that it fits: "Proposed · review"', () => {
    expect(proposedDescription('0/3')).toBe('Proposed · review · 0/3');
    expect(proposedDescription('').length).toBeLessThanOrEqual(20);
    expect(notificationMessage('S').startsWith('[Approve](command:plansight.plan.approve) · [Revise…](command:plansight.plan.revise) · [Cancel](command:plansight.plan.cancelReview) —')).toBe(true);
  });

  it('shows, once approved, the items as the user edited them, not as proposed', () => {
    const model = new ConversationModel();
    const card = model.addCard<PlanReviewCardData>(planReviewCard, planReviewCardData('plan-1', params));
    const edited = state([{ id: '1', text: 'Add type hints to greet', status: 'pending' }]);
    const patch = settledCardPatch(approveResult(edited), false);
    expect(patch).toEqual({ outcome: 'approved', items: [{ id: '1', text: 'Add type hints to greet', status: 'pending' }] });
    model.updateCard<PlanReviewCardData>(card.id, patch, false);
    const html = renderer().entry(card);
    expect(html).toContain('Approved plan');
    expect(html).toContain('Add type hints to greet');
    expect(html).not.toContain('docstrings&gt;');
    expect(settledCardPatch(cancelResult(), false)).toEqual({ outcome: 'cancelled' });
    expect(settledCardPatch(approveResult(edited), true)).toEqual({ outcome: 'withdrawn' });
  });

  it('is what the store says the client waits for while a plan is proposed', () => {
    const store = new SessionStore();
    const changes: string[] = [];
    store.onDidChange((c) => changes.push(c));
    store.setWaiting('reviews', 1);
    store.setPlanReview({ summary: 'S' });
    expect(store.waitingFor).toBe('waiting for you to approve the plan');
    expect(changes).toContain('planReview');
    store.setPlanReview(undefined);
    expect(store.planSummary).toBe('S');
    expect(store.waitingFor).toBe('waiting for your review');
    store.setWaiting('reviews', 0);
    store.setWaiting('questions', 1);
    expect(store.waitingFor).toBe('waiting for your answer');
  });
});

describe('plan review with comments (version 4)', () => {
  const second = {
    ...params,
    todos: state([
      { id: '1', text: 'Add type hints', status: 'pending' },
      { id: '2', text: 'Add docstrings to public functions', status: 'pending' },
      { id: '3', text: 'Run the tests', status: 'pending' },
    ]),
    previous: { items: proposed.items },
    addressed: [{ commentId: 'c1', how: 'Public functions only' }],
    openComments: [{ id: 'c2', text: 'Keep the diff <small>' }],
    addressedComments: [{ id: 'c1', todoId: '2', text: 'Only public ones' }],
    changes: [
      { kind: 'reworded' as const, todoId: '2', text: 'Add docstrings to public functions', before: 'Add <docstrings>', commentIds: ['c1'] },
      { kind: 'added' as const, todoId: '3', text: 'Run the tests', commentIds: [] },
    ],
  };

  it('sends comments with Approve with Comments and Revise, none with a plain Approve', () => {
    const comment = newComment('plan-1-c1', '  Google style  ', '2');
    expect(comment).toEqual({ id: 'plan-1-c1', todoId: '2', text: 'Google style' });
    expect(newComment('x', '   ')).toBeUndefined();
    expect(approveResult(proposed, [comment!]).comments).toEqual([comment]);
    expect(approveResult(proposed)).not.toHaveProperty('comments');
    expect(reviseResult('', proposed, [comment!])).toEqual({
      decision: 'revise',
      items: [
        { id: '1', text: 'Add type hints', status: 'pending' },
        { id: '2', text: 'Add <docstrings>', status: 'pending' },
      ],
      comments: [comment],
    });
  });

  it('shows each change beside the comment that asked for it, and the open comments', () => {
    expect(changeRows(params)).toEqual([]);
    expect(changeRows(second)).toEqual([
      {
        line: 'reworded #2: "Add <docstrings>" → "Add docstrings to public functions"',
        kind: 'reworded',
        todoId: '2',
        comments: [{ text: 'Only public ones', how: 'Public functions only' }],
      },
      { line: 'added #3: Run the tests', kind: 'added', todoId: '3', comments: [] },
    ]);
    expect(openCommentLines(second)).toEqual(['Keep the diff <small>']);
    const model = new ConversationModel();
    const card = model.addCard<PlanReviewCardData>(planReviewCard, { ...planReviewCardData('plan-2', second), comments: [{ id: 'k', todoId: '1', text: 'a <b>note</b>' }] });
    const html = renderer().entry(card);
    expect(html).toContain('data-action="approveWithComments"');
    expect(html).toContain('a &lt;b&gt;note&lt;/b&gt;');
    expect(html).toContain('What changed since the proposal you saw');
    expect(html).toContain('&lt;docstrings&gt;');
    expect(html).toContain('Public functions only');
    expect(html).toContain('Keep the diff &lt;small&gt;');
    expect(html).not.toContain('<small>');
  });

  it('writes the diff documents, the right side with each change\'s comment under its item', () => {
    expect(proposalText(proposed.items)).toBe('- [ ] #1 Add type hints\n- [ ] #2 Add <docstrings>\n');
    expect(proposalText(second.todos.items, changeNotes(second))).toBe(
      '- [ ] #1 Add type hints\n- [ ] #2 Add docstrings to public functions\n' +
        '  > your comment: "Only public ones" — Public functions only\n- [ ] #3 Run the tests\n',
    );
    expect(itemIdOfLine('- [ ] #12 Something')).toBe('12');
    expect(itemIdOfLine('  > your comment')).toBeUndefined();
  });
});
