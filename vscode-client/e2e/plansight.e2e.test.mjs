// End to end in a REAL VS Code (code-server 4.139 in headless Chromium): the packaged extension
// drives the real Plansight language server, which talks to the fake Anthropic API replaying
// fixtures/vscode-e2e/recording.json (a refactor of fixtures/hello/hello.py). Everything is
// checked through the page, the files on disk, and the requests the fake API received.
//
//   npm run test:e2e      (after scripts/setup-e2e.sh; PLANSIGHT_PYTHON picks the interpreter)
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { log, openWorkbench, python, repoDir, startFakeApi } from './harness.mjs';
import { WAIT, waitFor, workbench } from './workbench.mjs';

const recording = join(repoDir, 'fixtures/vscode-e2e/recording.json');
const ITEMS = ['Add type hints to greet and shout', 'Add docstrings', 'Add a main guard'];
const REJECT_REASON = 'No docstrings please: keep hello.py short';
const USER_LINE = '# Reviewed in VS Code';
const SPIN = ['codicon-sync', 'codicon-modifier-spin'];
const PENDING = ['codicon-circle-outline'];
const DONE = ['codicon-pass'];
const CANCELLED = ['codicon-circle-slash'];

test('Plansight in a real VS Code: plan, reminder, reviews, approval, plan edits, cancel', { timeout: 10 * 60_000 }, async (t) => {
  let fake;
  const { dirs, page, passed } = await openWorkbench(t, {
    name: 'refactor',
    // The API key reaches the language server through the extension host's environment.
    env: { ANTHROPIC_API_KEY: 'e2e-test-key' },
    async beforeStart(sandbox, cleanups) {
      log(`starting the fake API (${python} -m plansight.fakeapi)`);
      fake = await startFakeApi(recording, join(sandbox.root, 'fakeapi.log'));
      cleanups.push(fake.stop);
      log(`fake API at ${fake.baseUrl}`);
      return { settings: { 'plansight.baseUrl': fake.baseUrl } };
    },
  });
  const wb = workbench(page);
  const helloOnDisk = () => readFileSync(join(dirs.workspace, 'hello.py'), 'utf8');
  const original = helloOnDisk();
  const reminderInProblems = async () =>
    (await wb.problems()).find((r) => r.includes('plan-reminder') && r.includes('plansight'));

  log('workbench ready; opening the Plansight view container');
  await wb.openPlansight();
  await wb.expandPane('Scratchpad');
  await waitFor('the Plansight status bar item', () => page.locator('.statusbar-item', { hasText: 'Plansight' }).count());
  log('opening hello.py (its path goes with the prompt)');
  await wb.quickOpen('hello.py');

  log('asking from the conversation view');
  // The composer names what goes with the prompt, once the extension sees hello.py as active.
  await wb.ask('Refactor hello.py: add type hints, docstrings and a main guard.', { showing: 'hello.py' });

  // ---------------------------------------------------------------- review 1: accept
  log('waiting for the plan (0/3, #1 in progress) and the first proposed edit');
  await wb.planAt('0/3', [SPIN, PENDING, PENDING], ITEMS);
  await wb.diffTab().waitFor({ timeout: WAIT });
  await page.locator('.monaco-diff-editor').first().waitFor();
  log('first diff open; checking the reminder in the Problems panel');
  await page.keyboard.press('Control+Shift+M');
  const problem = await waitFor('a plansight plan-reminder in the Problems panel', reminderInProblems);
  log(`Problems: ${problem}`);
  assert.match(problem, /about the agent's plan, not about this code/, 'the reminder says what it is about');
  log('opening the reminder from the Problems panel selects nothing a keystroke would replace');
  await page.locator('.markers-panel .monaco-list-row', { hasText: 'plan-reminder' }).first().dblclick();
  await waitFor('the cursor on the reminder line, nothing selected', async () => {
    const status = await page.locator('.statusbar-item', { hasText: /Ln \d+, Col \d+/ }).first().innerText();
    if (!/Ln 1, Col 1/.test(status) || /selected/.test(status)) throw new Error(`the status bar says ${status}`);
    return true;
  });
  await waitFor('the scratchpad to show the notes mid-run', () => wb.scratchpadText('no type hints'));
  await wb.shot('01-window-review-and-reminder');
  await wb.shot('01-sidebar-plan-0of3', wb.sidebar);
  assert.equal(helloOnDisk(), original, 'nothing is written before the review is decided');

  log('accepting edit 1 from the diff editor title bar');
  await wb.diffTitleAction('Accept Edit');
  await waitFor('hello.py on disk to have type hints', () => helloOnDisk().includes('def greet(name: str) -> str:'));

  // ---------------------------------------------------------------- review 2: reject
  log('waiting for the plan update (1/3) and the reminder to clear');
  await wb.planAt('1/3', [DONE, SPIN, PENDING], ITEMS);
  await waitFor('the reminder to leave the Problems panel', async () => !(await reminderInProblems()));
  await waitFor('the second diff to show the docstring', () => wb.proposedSide().then((s) => s.includes('friendly greeting')));
  await wb.shot('02-sidebar-plan-1of3', wb.sidebar);
  const afterFirst = helloOnDisk();
  log('rejecting edit 2 with a reason');
  await wb.diffTitleAction('Reject Edit');
  await wb.answerInput('Reject the edit', REJECT_REASON);

  // ---------------------------------------------------------------- review 3: change, accept
  log('waiting for #2 cancelled, #3 in progress, and the third proposed edit');
  await wb.planAt('2/3', [DONE, CANCELLED, SPIN], ITEMS);
  assert.equal(helloOnDisk(), afterFirst, 'a rejected edit leaves the file unchanged');
  await waitFor('the third diff (main guard)', () => wb.proposedSide().then((s) => s.includes('__main__')));
  await wb.shot('03-window-review-3');
  log('changing the proposed side by hand, then accepting from its card in the conversation');
  await page.locator('.monaco-diff-editor').filter({ visible: true }).locator('.editor.modified .view-lines').first().click();
  await page.keyboard.press('Control+End');
  await page.keyboard.type(`${USER_LINE}\n`);
  await waitFor('the typed line in the proposed side', () => wb.proposedSide().then((s) => s.includes(USER_LINE)));
  await (await wb.openCard('review', 'line 12')).locator('button[data-action="accept"]').click();
  await waitFor('hello.py on disk to have the main guard and the user line', () => {
    const text = helloOnDisk();
    return text.includes('if __name__ == "__main__":') && text.includes(USER_LINE);
  });
  // The settled card shows what was written, the user's line with it, not the proposal (issue 31).
  const writtenCard = (await wb.conversation()).locator('.card-review', { hasText: 'line 12' }).last();
  await waitFor('the settled card to show what was written', async () => {
    const text = await writtenCard.innerText();
    if (!text.includes(USER_LINE) || !/Accepted with your changes/.test(text)) throw new Error(text);
    return true;
  });

  // ---------------------------------------------------------------- a command to approve
  log('approving the test command from its card');
  const approval = await wb.openCard('approval');
  assert.match(await approval.innerText(), /python3 -m unittest -q test_hello/);
  await approval.locator('button[data-action="approve"]').click();
  assert.equal(await wb.toast('wants to run').count(), 0, 'no notification while the conversation is in sight');

  // ---------------------------------------------------------------- the end of the run
  log('waiting for the run to finish (3/3: the cancelled item counts as closed)');
  await wb.planAt('3/3', [DONE, CANCELLED, DONE], ITEMS);
  await wb.conversationShows('the finished run with its usage', /Done\s*12 rounds · [\d,]+ in \([\d,]+ cached[^)]*\) · [\d,]+ out/);
  await waitFor('the status bar to stop spinning', async () => {
    const item = page.locator('.statusbar-item', { hasText: '3/3' }).first();
    return (await item.count()) > 0 && (await item.locator('.codicon-sync').count()) === 0;
  });
  const scratchpad = await waitFor('the scratchpad to show the final notes', () => wb.scratchpadText('main guard: done'));
  log(`scratchpad: ${JSON.stringify(scratchpad.slice(0, 60))}…`);
  assert.equal(await wb.diffTab().count(), 0, 'every review diff is closed after its decision');
  assert.equal(await (await wb.conversation()).locator('.card.open').count(), 0, 'every card is settled');
  await wb.shot('04-sidebar-done-2of3', wb.sidebar);
  await wb.shot('04-window-done');

  await wb.pane('Scratchpad').locator('.pane-header').click(); // room for the plan's rows
  log('opening a decided edit from the plan tree');
  await wb.pane('Plan').locator('.monaco-list-row[aria-level="2"]', { hasText: 'line 12' }).click();
  await page.locator('.tabs-container .tab', { hasText: 'Plansight edit, changed' }).waitFor();
  await waitFor('the reopened diff to show what was written', () => wb.proposedSide().then((s) => s.includes(USER_LINE)));

  // ---------------------------------------------------------------- what the model was told
  const requests = await fake.messages();
  const bodies = requests.map((r) => JSON.stringify(r.body ?? ''));
  assert.ok(bodies[0].includes('Active file: hello.py'), 'the active file goes with the prompt');
  const rejection = bodies.findIndex((b) => b.includes(REJECT_REASON) && b.includes('tool_result'));
  assert.ok(rejection > 0, 'the rejection reason reaches the model in a tool_result');
  assert.ok(
    bodies.slice(rejection).some((b) => b.includes('Reviewed in VS Code')),
    'the model hears of the change the user made to the proposal',
  );
  const bashResult = bodies.find((b) => b.includes('toolu_e2e_13') && b.includes('tool_result'));
  assert.ok(bashResult && /Ran 2 tests/.test(bashResult), 'the approved command ran (its output reaches the model)');
  log(`the fake API got ${requests.length} requests; request ${rejection + 1} carries the reason`);

  log('the settled card with what was written, at 300 px and 440 px');
  await wb.sidebarWidth(300);
  await writtenCard.scrollIntoViewIfNeeded();
  await wb.shot('31-card-what-was-written-300px', wb.sidebar);
  await wb.sidebarWidth(440);
  await writtenCard.scrollIntoViewIfNeeded();
  await wb.shot('31-card-what-was-written-440px', wb.sidebar);

  // ---------------------------------------------------------------- the user edits the plan
  log('adding a plan item from the Plan view title bar (plansight/editPlan)');
  await wb.viewAction('Plan', 'Add Item').click();
  await wb.answerInput('Add a plan item', 'Run the tests');
  const withNew = [...ITEMS, 'Run the tests'];
  await wb.planAt('3/4', [DONE, CANCELLED, DONE, PENDING], withNew);
  log("marking it done with the row's inline button");
  const newRow = wb.pane('Plan').locator('.monaco-list-row[aria-level="1"]', { hasText: 'Run the tests' });
  await newRow.hover();
  await newRow.locator('.actions .action-label[aria-label^="Mark Done"]').click();
  await wb.planAt('4/4', [DONE, CANCELLED, DONE, DONE], withNew);

  // ---------------------------------------------------------------- cancel a run mid-review
  log('asking again; collapsing the conversation while the edit waits; cancelling the run');
  const before = (await fake.messages()).length;
  const beforeCancel = helloOnDisk();
  await wb.ask('Say in a comment what sys is for.');
  await wb.openCard('review', 'hello.py');
  await wb.diffTab().waitFor({ timeout: WAIT });
  await wb.pane('Conversation').locator('.pane-header').click(); // out of sight: a notification tells
  const reviewToast = wb.toast('proposes an edit');
  await reviewToast.waitFor({ timeout: WAIT });
  await wb.toastLinksInSight(reviewToast, ['Accept', 'Reject', 'Show Diff']);
  const cancelAt = Date.now();
  await wb.viewAction('Plan', 'Cancel Run').click();
  await waitFor('the status bar to stop spinning', async () =>
    (await page.locator('.statusbar-item', { hasText: '4/4' }).locator('.codicon-sync').count()) === 0,
  );
  log(`cancelled in ${Date.now() - cancelAt} ms`);
  await waitFor('the review diff to close', async () => (await wb.diffTab().count()) === 0);
  await waitFor('the review notification to go away', async () => (await reviewToast.count()) === 0);
  await wb.expandPane('Conversation');
  await wb.conversationShows('the cancelled run and its settled card', /Cancelled: the run ended before a decision, nothing was written[\s\S]*Cancelled/);
  log('the cancelled edit shows as cancelled in the plan tree');
  const other = wb.pane('Plan').locator('.monaco-list-row[aria-level="1"]', { hasText: 'Other edits' });
  await other.click();
  const cancelledEdit = wb.pane('Plan').locator('.monaco-list-row[aria-level="2"]', { hasText: 'hello.py' });
  await waitFor('the edit row with the cancelled icon', async () =>
    (await cancelledEdit.locator('.codicon-circle-slash').count()) === 1,
  );
  log('the cancelled edit offers no Accept any more');
  const cancelledRow = wb.pane('Plan').locator('.monaco-list-row[aria-level="2"]').filter({ has: page.locator('.codicon-circle-slash') });
  await cancelledRow.hover();
  assert.equal(await cancelledRow.locator('.actions .action-label[aria-label^="Accept Edit"]').count(), 0);
  assert.ok(!(await wb.viewAction('Plan', 'Cancel Run').isVisible()), 'Cancel Run hides once the run ends');
  assert.equal(helloOnDisk(), beforeCancel, 'the edit of a cancelled run is not written');
  const after = (await fake.messages()).slice(before);
  assert.equal(after.length, 2, 'the cancelled run asked the model twice (a read, then the edit) and no more');

  // ---------------------------------------------------------------- new session
  log('New Session from the Plan view title bar (plansight/reset)');
  await wb.viewAction('Plan', 'New Session').click();
  await waitFor('the plan to empty and show its welcome', async () =>
    (await wb.pane('Plan').innerText()).includes('No plan yet') && (await wb.planItems()).length === 0,
  );
  await wb.expandPane('Scratchpad');
  await waitFor('the scratchpad to empty', () => wb.scratchpadText('The scratchpad is empty'));
  await wb.shot('05-sidebar-new-session', wb.sidebar);
  passed();
});
