// The keyboard shortcuts (issue 31), in a real VS Code at a 300 px sidebar: Ctrl+Escape puts
// the cursor in the conversation's prompt from the editor; a question that arrives opens
// nothing, and Ctrl+Alt+Enter opens its picker (Escape closes it, the question still waits);
// Escape in the Conversation view stops the run; Ctrl+Shift+Alt+N there starts a new session.
// In it, a plan run: Ctrl+Alt+Enter approves the proposed plan, accepts an edit, and approves a
// command; Ctrl+Alt+Backspace rejects an edit (outside a text box). Then at a 440 px sidebar.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { log, openWorkbench, repoDir, startFakeApi } from './harness.mjs';
import { waitFor, workbench } from './workbench.mjs';

const recording = join(repoDir, 'fixtures/vscode-e2e/shortcuts.json');
const script = JSON.parse(readFileSync(recording, 'utf8'));

/** Drags the sidebar's edge until it is `width` px wide. */
async function sidebarWidth(wb, width) {
  await waitFor(`the sidebar to be ${width} px wide`, async () => {
    const box = await wb.sidebar.boundingBox();
    if (Math.abs(box.width - width) <= 2) return true;
    await wb.page.mouse.move(box.x + box.width + 1, box.y + box.height / 2);
    await wb.page.mouse.down();
    await wb.page.mouse.move(box.x + width + 1, box.y + box.height / 2, { steps: 5 });
    await wb.page.mouse.up();
    return false;
  });
}

test('shortcuts: focus the conversation, answer, stop, new session, approve, accept, reject', { timeout: 8 * 60_000 }, async (t) => {
  let fake;
  const { dirs, page, passed } = await openWorkbench(t, {
    name: 'shortcuts',
    env: { ANTHROPIC_API_KEY: 'e2e-test-key' },
    async beforeStart(sandbox, cleanups) {
      writeFileSync(join(sandbox.workspace, 'notes.txt'), 'Notes.\n');
      fake = await startFakeApi(recording, join(sandbox.root, 'fakeapi.log'));
      cleanups.push(fake.stop);
      return { settings: { 'plansight.baseUrl': fake.baseUrl } };
    },
  });
  const wb = workbench(page);
  await wb.openPlansight();
  await sidebarWidth(wb, 300);
  await waitFor('the Plansight status bar item', () => page.locator('.statusbar-item', { hasText: 'Plansight' }).count());
  await wb.quickOpen('notes.txt');
  const conversation = await wb.conversation();
  const inPrompt = () => conversation.evaluate(() => document.hasFocus() && document.activeElement?.id === 'prompt').catch(() => false);

  log('Ctrl+Escape from the editor: the cursor goes to the prompt');
  await page.locator('.editor-group-container .view-lines').first().click();
  assert.equal(await inPrompt(), false);
  await page.keyboard.press('Control+Escape');
  await waitFor('the prompt to have the focus', inPrompt);
  await page.keyboard.type(script.prompt);
  await page.keyboard.press('Enter');

  log('a question arrives: nothing opens; Ctrl+Alt+Enter opens its picker');
  const picker = page.locator('.quick-input-widget', { hasText: 'Plansight asks' });
  await conversation.locator('.card-question.open').waitFor();
  assert.equal(await picker.isVisible(), false, 'nothing opened by itself');
  await page.locator('.editor-group-container .view-lines').first().click();
  await page.keyboard.press('Control+Alt+Enter');
  await picker.waitFor({ state: 'visible' });
  await wb.shot('31-shortcut-answer-picker-300px');
  await page.keyboard.press('Escape');
  await picker.waitFor({ state: 'hidden' });
  assert.equal(await conversation.locator('.card-question.open').count(), 1, 'Escape closed the picker: the question still waits');

  log('Escape in the Conversation view stops the run');
  await page.keyboard.press('Control+Escape');
  await waitFor('the prompt to have the focus', inPrompt);
  await page.keyboard.press('Escape');
  await waitFor('the run to stop', async () => (await conversation.locator('.card-question.open').count()) === 0 && (await conversation.locator('#stop').isHidden()));
  await wb.conversationShows('the question withdrawn', /The run ended before an answer/);

  log('Ctrl+Shift+Alt+N in the Conversation view: a new session (and nothing else)');
  await waitFor('the prompt to have the focus', inPrompt);
  const tabs = await page.locator('.tabs-container .tab').count();
  await page.keyboard.press('Control+Shift+Alt+N');
  await waitFor('a new, empty conversation', async () => !/Which docstring style/.test(await conversation.locator('#log').innerText()));
  assert.equal(await page.locator('.tabs-container .tab').count(), tabs, 'no editor opened (VS Code for the Web has Ctrl+Alt+N for New Untitled File)');
  assert.deepEqual(page.context().pages().map((p) => p.url()), [page.url()], 'no window opened (VS Code for the Web has Ctrl+Shift+Alt+N for New Window)');
  await wb.shot('31-shortcut-new-session-300px', wb.sidebar);

  const hello = () => readFileSync(join(dirs.workspace, 'hello.py'), 'utf8');
  const original = hello();
  const editor = page.locator('.editor-group-container', { has: page.locator('.tab.active', { hasText: 'notes.txt' }) }).locator('.view-lines');
  log('a plan run: Ctrl+Alt+Enter in the editor approves the proposed plan');
  await conversation.locator('#planFirst').click();
  await wb.ask(script.planPrompt);
  await wb.openCard('planReview');
  await editor.click();
  await page.keyboard.press('Control+Alt+Enter');
  await wb.conversationShows('the plan approved', /Approved/);

  log('Ctrl+Alt+Enter in the editor accepts the edit under review');
  await wb.openCard('review', 'def greet');
  await editor.click();
  await page.keyboard.press('Control+Alt+Enter');
  await waitFor('hello.py on disk with greet\'s type hints', () => hello().includes('def greet(name: str) -> str:'));

  log('Ctrl+Alt+Backspace outside a text box (the Plan view) rejects the next edit');
  await wb.openCard('review', 'def shout');
  await wb.pane('Plan').locator('.monaco-list-row[aria-level="1"]', { hasText: 'Run the tests' }).click();
  await page.keyboard.press('Control+Alt+Backspace');
  await wb.answerInput('Reject the edit to hello.py', 'Keep shout as it is.');
  await waitFor('the second card to say rejected', async () => /Rejected/.test(await conversation.locator('.card-review', { hasText: 'def shout' }).last().innerText()));
  assert.ok(hello().includes('def shout(name, times):'), 'shout as it was on disk');

  log('Ctrl+Alt+Enter approves the test command');
  await wb.openCard('approval', 'unittest');
  await wb.shot('31-shortcut-approve-command-300px', wb.sidebar);
  await page.keyboard.press('Control+Alt+Enter');
  await wb.conversationShows('the run to finish', /you kept shout as it was[\s\S]*Done/);
  assert.notEqual(hello(), original);
  const messages = await fake.messages();
  const bodies = messages.map((m) => JSON.stringify(m.body));
  assert.ok(bodies.some((b) => b.includes('This edit was rejected by the user') && b.includes('Keep shout as it is.')), 'the model was told the second edit was rejected, and why');
  assert.equal(messages.length, script.steps.length - 1, 'the model was asked once per recorded step but the hanging one');
  await wb.sidebarWidth(440);
  await wb.shot('31-shortcuts-done-440px', wb.sidebar);
  passed();
});
