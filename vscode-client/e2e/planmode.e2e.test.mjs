// Plan mode in a real VS Code (issue 10): "Plan first" in the conversation's box; the proposed
// plan in the Plan view (marked as waiting, its summary at the top, Approve / Revise… / Cancel
// in its title), in a notification and as a card; revised with feedback from the notification; one item
// edited in the Plan view; approved from the view's title; the agent's question answered from
// the QuickPick; the execution's edits reviewed; then "Run This Step" on the item left open, and
// the plan opened as Markdown. The fake API replays fixtures/vscode-e2e/planmode.json.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { log, openWorkbench, repoDir, startFakeApi } from './harness.mjs';
import { waitFor, workbench } from './workbench.mjs';

const recording = join(repoDir, 'fixtures/vscode-e2e/planmode.json');
const script = JSON.parse(readFileSync(recording, 'utf8'));
const FEEDBACK = 'Also move the script code behind a main guard';
const EDITED = 'Add type hints to greet and shout';
const PENDING = ['codicon-circle-outline'];
const DONE = ['codicon-pass'];

test('plan mode: plan, revise, edit an item, approve, a question, reviews, Run This Step', { timeout: 10 * 60_000 }, async (t) => {
  let fake;
  const { dirs, page, passed } = await openWorkbench(t, {
    name: 'planmode',
    // No fade-in: a screenshot shows the QuickPick as it settles, not half drawn.
    settings: { 'workbench.reduceMotion': 'on' },
    env: { ANTHROPIC_API_KEY: 'e2e-test-key' },
    async beforeStart(sandbox, cleanups) {
      fake = await startFakeApi(recording, join(sandbox.root, 'fakeapi.log'));
      cleanups.push(fake.stop);
      return { settings: { 'plansight.baseUrl': fake.baseUrl } };
    },
  });
  const wb = workbench(page);
  const hello = () => readFileSync(join(dirs.workspace, 'hello.py'), 'utf8');
  const original = hello();
  await wb.openPlansight();
  await wb.quickOpen('hello.py');

  // ---------------------------------------------------------------- plan first
  log('turning on "Plan first" in the conversation box and asking');
  const frame = await wb.conversation();
  const toggle = frame.locator('#planFirst');
  await toggle.click();
  await waitFor('the toggle to be on and Send to say Plan', async () =>
    (await toggle.getAttribute('aria-pressed')) === 'true' && (await frame.locator('#sendLabel').innerText()) === 'Plan',
  );
  await wb.ask(script.prompt, { showing: 'hello.py' });

  log('the proposed plan: a card, a notification, the Plan view marked as waiting');
  const first = await wb.openCard('planReview', 'Add docstrings');
  assert.match(await first.innerText(), /Add type hints to greet and shout, then a docstring for each/, 'the summary in full');
  await wb.toast('a plan waits for you').waitFor();
  const toastText = await wb.toast('a plan waits for you').innerText();
  for (const link of ['Approve', 'Revise…', 'Cancel']) {
    assert.ok(toastText.includes(link), `the notification offers ${link}`);
  }
  const planHeader = () => wb.pane('Plan').locator('.pane-header').innerText();
  await waitFor('the Plan view to say the plan waits', async () => /Proposed · review/.test(await planHeader()));
  await waitFor('one short line at the top of the Plan view, not the summary (issue 31)', async () => {
    const message = await wb.pane('Plan').locator('.pane-body .message').innerText();
    if (message.trim() !== 'Approve, Revise… or Cancel it above.') throw new Error(message);
    return true;
  });
  assert.ok(await wb.viewAction('Plan', 'Approve Plan').isVisible(), 'Approve in the Plan view title');
  assert.ok(await wb.viewAction('Plan', 'Revise Plan').isVisible(), 'Revise… in the Plan view title');
  assert.ok(await wb.viewAction('Plan', 'Cancel Plan').isVisible(), 'Cancel in the Plan view title');
  assert.equal(hello(), original, 'nothing changes in plan mode');
  await wb.shot('10-window-plan-review');

  // ---------------------------------------------------------------- revise with feedback
  log('revising from the notification\'s Revise… link, with feedback');
  await wb.toast('a plan waits for you').locator('a', { hasText: 'Revise…' }).click();
  await wb.answerInput('Revise the plan', FEEDBACK);
  await waitFor('the first card to say it went back', async () =>
    /Sent back for revision: Also move/.test(await frame.locator('.card-planReview').first().innerText()),
  );

  // ---------------------------------------------------------------- edit one item, approve
  log('the second proposal: editing item #1 in the Plan view before approving');
  await wb.openCard('planReview', 'Add a main guard');
  await wb.planAt('0/3', [PENDING, PENDING, PENDING], ['Add type hints', 'Add docstrings', 'Add a main guard']);
  const row = wb.pane('Plan').locator('.monaco-list-row[aria-level="1"]', { hasText: 'Add type hints' });
  await row.hover();
  await row.locator('.actions .action-label[aria-label^="Edit Text"]').click();
  await wb.answerInput('Edit plan item #1', EDITED);
  await wb.planAt('0/3', [PENDING, PENDING, PENDING], [EDITED, 'Add docstrings', 'Add a main guard']);
  log('a 424-character summary: the Plan view\'s message stays one line, every item in sight at 440 and 300 px (issue 31)');
  assert.match(await frame.locator('.card-planReview.open .summary').innerText(), /so the existing tests keep passing as they are/, 'the whole summary on the card');
  for (const width of [440, 300]) {
    await wb.sidebarWidth(width);
    await waitFor(`the message on one line and the three items in sight at ${width} px`, async () => {
      const shown = await wb.pane('Plan').locator('.pane-body').evaluate((body) => {
        const box = body.getBoundingClientRect();
        const message = body.querySelector('.message');
        const line = message ? parseFloat(getComputedStyle(message).lineHeight) || 18 : 0;
        const rows = [...body.querySelectorAll('.monaco-list-row[aria-level="1"]')].map((row) => {
          const r = row.getBoundingClientRect();
          return { label: row.innerText.split('\n')[0], inSight: r.height > 0 && r.top >= box.top - 1 && r.bottom <= box.bottom + 1 };
        });
        return { messageLines: message ? Math.round(message.getBoundingClientRect().height / line) : 0, rows };
      });
      if (shown.messageLines > 1 || shown.rows.length !== 3 || !shown.rows.every((r) => r.inSight)) throw new Error(JSON.stringify(shown));
      return shown;
    });
    await wb.shot(`31-plan-proposed-long-summary-${width}px`, wb.sidebar);
  }
  await wb.shot('11-sidebar-plan-proposed', wb.sidebar);
  log('approving from the Plan view title');
  await wb.viewAction('Plan', 'Approve Plan').click();
  await waitFor('the notification to go', async () => (await wb.toast('a plan waits for you').count()) === 0);

  // ---------------------------------------------------------------- the agent's question
  log('the agent asks: the question waits on its card (nothing opens by itself); Answer… opens the picker');
  const card = await wb.openCard('question', 'Which docstring style');
  const picker = page.locator('.quick-input-widget', { hasText: 'Which docstring style' });
  assert.equal(await picker.isVisible(), false, 'no picker opened by itself');
  await card.locator('button[data-action="answer"]').evaluate((button) => button.click());
  await picker.waitFor();
  await page.locator('.quick-input-list .monaco-list-row', { hasText: 'reStructuredText' }).waitFor();
  await wb.shot('12-window-ask-user');
  await page.locator('.quick-input-list .monaco-list-row', { hasText: 'Google' }).first().click();
  await waitFor('the question card to show the answer', async () =>
    /You answered: Google/.test(await frame.locator('.card-question').first().innerText()),
  );

  // ---------------------------------------------------------------- execution with reviews
  log('the approved plan runs: accepting its two edits from their cards');
  await (await wb.openCard('review', 'hello.py')).locator('button[data-action="accept"]').click();
  await waitFor('the type hints on disk', () => hello().includes('def greet(name: str) -> str:'));
  await waitFor('the second edit (the docstring)', async () =>
    (await frame.locator('.card-review.open').count()) === 1 && /Google|friendly greeting/.test(await frame.locator('.card-review.open').innerText()),
  );
  await (await wb.openCard('review', 'hello.py')).locator('button[data-action="accept"]').click();
  await waitFor('the docstring on disk', () => hello().includes('Return a friendly greeting for name.'));
  await wb.planAt('2/3', [DONE, DONE, PENDING], [EDITED, 'Add docstrings', 'Add a main guard']);
  await wb.conversationShows('the run to end, #3 left open', /I left #3 \(the main guard\) open[\s\S]*Done/);

  // ---------------------------------------------------------------- run this step
  log('"Run This Step" on #3');
  const third = wb.pane('Plan').locator('.monaco-list-row[aria-level="1"]', { hasText: 'Add a main guard' });
  await third.hover();
  await third.locator('.actions .action-label[aria-label^="Run This Step"]').click();
  await (await wb.openCard('review', 'hello.py')).locator('button[data-action="accept"]').click();
  await waitFor('the main guard on disk', () => hello().includes('if __name__ == "__main__":'));
  await wb.planAt('3/3', [DONE, DONE, DONE], [EDITED, 'Add docstrings', 'Add a main guard']);
  await wb.conversationShows('the step run to finish', /The main guard is in[\s\S]*Done/);
  await wb.shot('13-sidebar-step-done', wb.sidebar);

  // ---------------------------------------------------------------- the plan as Markdown
  log('Open Plan as Markdown');
  await wb.runCommand('Open Plan as Markdown');
  await waitFor('an untitled Markdown document with the plan and its summary', async () => {
    const text = (await page.locator('.editor-instance .view-lines').first().innerText()).replace(/\u00a0/g, ' ');
    return text.includes('# Plan') && text.includes('__main__') && text.includes(`**#1** ${EDITED}`) ? text : false;
  });
  await wb.shot('14-window-plan-markdown');

  // ---------------------------------------------------------------- what the model was told
  const requests = await fake.messages();
  const bodies = requests.map((r) => JSON.stringify(r.body ?? ''));
  assert.ok(bodies[0].includes('<plan-mode>'), 'the run started in plan mode');
  const tools = requests.map((r) => JSON.stringify(r.body.tools));
  assert.ok(tools.every((x) => x === tools[0]), 'every request offered the same tools (the cached prefix holds)');
  assert.ok(bodies.some((b) => b.includes(`Their feedback: ${FEEDBACK}`)), 'the feedback reached the model');
  assert.ok(
    bodies.some((b) => b.includes('The user approved your plan') || b.includes('approved it as it is now')),
    'the approval reached the model',
  );
  assert.ok(bodies.some((b) => b.includes(`#1: ${EDITED}`) && b.includes('approved')), 'the approved plan has the edited item');
  assert.ok(bodies.some((b) => b.includes('The user answered: Google')), 'the answer reached the model');
  assert.ok(bodies.some((b) => b.includes('<focus>Work on plan item #3: Add a main guard')), 'Run This Step focuses the run on #3');
  assert.equal(requests.length, script.steps.length, 'the model was asked once per recorded step');
  assert.equal(await frame.locator('.card.open').count(), 0, 'every card is settled');
  passed();
});
