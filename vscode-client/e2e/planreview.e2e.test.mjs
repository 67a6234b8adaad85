// Plan review with comments in a real VS Code (issue 30): a comment on an item from the Plan
// view's context menu ("Comment on Item…", an InputBox opened by that command only), sent with
// Revise from the card; the second proposal's card shows what changed beside the comment and
// the model's how; Show Changes opens the diff of the two proposals with the comment under its
// item; a comment on a line of the proposal document (the Comments API); Approve with Comments;
// the notes on their items. Screenshots at a 300 px sidebar. The fake API replays
// fixtures/vscode-e2e/planreview.json.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { log, openWorkbench, repoDir, startFakeApi } from './harness.mjs';
import { waitFor, workbench } from './workbench.mjs';

const recording = join(repoDir, 'fixtures/vscode-e2e/planreview.json');
const script = JSON.parse(readFileSync(recording, 'utf8'));
const FIRST = 'Only public functions need docstrings';
const SECOND = 'Use PEP 604 unions';
const LINE = 'Run them with pytest -q';

test('plan review: comment on an item, revise, the changes beside it, a line comment, approve with comments', { timeout: 10 * 60_000 }, async (t) => {
  let fake;
  const { page, passed } = await openWorkbench(t, {
    name: 'planreview',
    settings: { 'workbench.reduceMotion': 'on' },
    env: { ANTHROPIC_API_KEY: 'e2e-test-key' },
    async beforeStart(sandbox, cleanups) {
      fake = await startFakeApi(recording, join(sandbox.root, 'fakeapi.log'));
      cleanups.push(fake.stop);
      return { settings: { 'plansight.baseUrl': fake.baseUrl } };
    },
  });
  const wb = workbench(page);
  await wb.openPlansight();
  log('the sidebar at 300 px');
  const box = await wb.sidebar.boundingBox();
  await page.mouse.move(box.x + box.width + 1, box.y + box.height / 2);
  await page.mouse.down();
  await page.mouse.move(box.x + 300, box.y + box.height / 2, { steps: 5 });
  await page.mouse.up();
  await waitFor('the sidebar at about 300 px', async () => Math.abs((await wb.sidebar.boundingBox()).width - 300) <= 4);

  const frame = await wb.conversation();
  await frame.locator('#planFirst').click();
  await wb.ask(script.prompt);
  await wb.openCard('planReview', 'Add docstrings');

  /** "Comment on Item…" from a plan row's context menu, answered in its InputBox. */
  const commentOn = async (itemText, id, text) => {
    const input = page.locator('.quick-input-widget', { hasText: `Comment on plan item #${id}` });
    assert.equal(await input.count(), 0, 'no InputBox opens by itself');
    await wb.planItemMenu(itemText, 'Comment on Item…', input);
    await wb.answerInput(`Comment on plan item #${id}`, text);
  };

  log('a comment on #2 from the Plan view, then Revise from the card');
  await commentOn('Add docstrings', '2', FIRST);
  const first = await wb.openCard('planReview', FIRST);
  assert.match(await first.innerText(), /Your comments[\s\S]*#2 Only public functions/);
  await first.locator('button[data-action="revise"]').click();
  await waitFor('the first card to say it went back', async () =>
    /Sent back for revision/.test(await frame.locator('.card-planReview').first().innerText()),
  );

  log('the second proposal: what changed, beside the comment that asked for it');
  const second = await wb.openCard('planReview', 'What changed');
  const shown = (await second.innerText()).replace(/\s+/g, ' ');
  assert.match(shown, /reworded #2: "Add docstrings" → "Add docstrings to public functions"/);
  assert.match(shown, new RegExp(`“${FIRST}” — Docstrings on public functions only`));
  assert.match(shown, /added #3: Run the tests/);
  await second.scrollIntoViewIfNeeded();
  const fits = await frame.evaluate(() => document.documentElement.scrollWidth <= document.documentElement.clientWidth);
  assert.ok(fits, 'nothing runs past the view\'s right edge at 300 px');
  await wb.shot('30-sidebar-plan-changes-300px', wb.sidebar);

  log('Show Changes: the diff of the two proposals');
  await wb.runCommand('Show Plan Changes');
  const modified = page.locator('.editor-instance .modified-in-monaco-diff-editor .view-lines').first();
  await waitFor('the diff with the comment under #2', async () => {
    const text = (await modified.innerText()).replace(/\u00a0/g, ' ').replace(/\s+/g, ' ');
    return text.includes('#3 Run the tests') && text.includes(`your comment: "${FIRST}"`);
  });
  await wb.shot('31-window-plan-diff');

  log('a comment on the line of #3 in the proposal document (the Comments API)');
  const line = page.locator('.modified-in-monaco-diff-editor .view-line', { hasText: '#3 Run the tests' }).first();
  const glyphs = page.locator('.modified-in-monaco-diff-editor .comment-range-glyph');
  const form = page.locator('.review-widget .comment-form .monaco-editor').first();
  await waitFor('the comment widget on #3', async () => {
    if (await form.isVisible()) return true;
    const at = await line.boundingBox();
    await page.mouse.move(at.x + 5, at.y + at.height / 2);
    // The commenting glyph in the gutter on the same row as #3's line (each commentable line
    // has one; the one on the hovered row shows a +).
    for (const glyph of await glyphs.all()) {
      const g = await glyph.boundingBox();
      if (g && Math.abs(g.y + g.height / 2 - (at.y + at.height / 2)) < at.height / 2) {
        await glyph.click({ timeout: 2000 });
        break;
      }
    }
    return false;
  });
  // The comment box is a small editor, not a textarea: click into it and type.
  await form.click();
  await page.keyboard.type(LINE);
  await page.locator('.review-widget .monaco-button', { hasText: /^Add Comment$/ }).first().click();
  await waitFor('the comment in its thread', async () => /Run them with pytest/.test(await page.locator('.review-widget').first().innerText()));
  await wb.shot('32-window-plan-line-comment');

  log('one more comment from the tree, then Approve with Comments');
  await commentOn('Add type hints', '1', SECOND);
  const card = await wb.openCard('planReview', SECOND);
  assert.match((await card.innerText()).replace(/\s+/g, ' '), /#3 Run them with pytest -q/);
  await wb.shot('33-sidebar-comments-300px', wb.sidebar);
  await card.locator('button[data-action="approveWithComments"]').click();
  await wb.conversationShows('the run to end', /with your notes/);

  log('the notes stay on their items');
  const row1 = wb.pane('Plan').locator('.monaco-list-row[aria-level="1"]', { hasText: 'Add type hints' }).first();
  await waitFor('#1 to show it has notes', async () => /notes/.test(await row1.innerText()));
  await wb.shot('34-sidebar-notes-300px', wb.sidebar);

  const bodies = (await fake.messages()).map((r) => JSON.stringify(r.body ?? ''));
  assert.ok(bodies.some((b) => b.includes(`[comment plan-1-c1] on #2 (Add docstrings): ${FIRST}`)), 'the revise comment reached the model, on its item');
  assert.ok(bodies.some((b) => b.includes(`on #3 (Run the tests): ${LINE}`)), 'the line comment reached the model, on #3');
  assert.ok(bodies.some((b) => b.includes(`on #1 (Add type hints): ${SECOND}`) && b.includes('approved your plan')), 'approved with notes');
  passed();
});
