// An agent question never takes the keyboard (issue 31), in a real VS Code: the user types in
// notes.txt while the agent asks a question (ask_user). Before, a QuickPick opened by itself,
// took the keys, and Enter sent what the user typed as the answer. Now the question waits on its
// card in the conversation, in the status bar and in a notification; nothing opens by itself.
// The test types on (Enter included) for a while after the question arrived, then answers it
// from the card's Answer… button, at a 300 px and a 440 px sidebar.
//
// Then: every character typed is in notes.txt, in order; the answer the model got is the option
// picked, not typed text.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { log, openWorkbench, repoDir, startFakeApi } from './harness.mjs';
import { waitFor, workbench } from './workbench.mjs';

const recording = join(repoDir, 'fixtures/vscode-e2e/question.json');
const script = JSON.parse(readFileSync(recording, 'utf8'));
const NOTES = 'Notes for the meeting.\n';
const SENTENCE = 'the quick brown fox jumps over the lazy dog while plansight asks me something. ';

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

test('a question waits on its card while the user types: no key goes to a picker', { timeout: 8 * 60_000 }, async (t) => {
  let fake;
  const { dirs, page, passed } = await openWorkbench(t, {
    name: 'question',
    env: { ANTHROPIC_API_KEY: 'e2e-test-key' },
    async beforeStart(sandbox, cleanups) {
      writeFileSync(join(sandbox.workspace, 'notes.txt'), NOTES);
      fake = await startFakeApi(recording, join(sandbox.root, 'fakeapi.log'));
      cleanups.push(fake.stop);
      const quiet = { 'editor.wordBasedSuggestions': 'off', 'editor.quickSuggestions': { other: false, comments: false, strings: false }, 'editor.acceptSuggestionOnEnter': 'off' };
      return { settings: { 'plansight.baseUrl': fake.baseUrl, ...quiet } };
    },
  });
  const wb = workbench(page);
  await wb.openPlansight();
  await sidebarWidth(wb, 300);
  await waitFor('the Plansight status bar item', () => page.locator('.statusbar-item', { hasText: 'Plansight' }).count());
  await wb.quickOpen('notes.txt');

  log('asking, then typing into notes.txt while the question arrives');
  await wb.ask(script.prompt, { showing: 'notes.txt' });
  const conversation = await wb.conversation();
  const notesEditor = page.locator('.editor-group-container', { has: page.locator('.tab.active', { hasText: 'notes.txt' }) });
  await notesEditor.locator('.view-lines').click();
  await page.keyboard.press('Control+End');

  const card = conversation.locator('.card-question.open');
  const picker = page.locator('.quick-input-widget');
  let typed = '';
  let afterQuestion = 0;
  for (let chunk = 0; chunk < 200 && afterQuestion < 12; chunk += 1) {
    let words = SENTENCE.slice((chunk * 10) % SENTENCE.length).slice(0, 10);
    words = typed.endsWith('\n') || typed === '' ? words.trimStart() : words;
    // Enter every few chunks: the key that sent the typed words as the answer before.
    const text = chunk % 4 === 3 ? `${words.trimEnd()}\n` : words;
    await page.keyboard.type(text, { delay: 15 });
    typed += text;
    if ((await card.count()) > 0) {
      afterQuestion += 1;
      assert.equal(await picker.isVisible(), false, 'no picker opened by itself while the user types');
    }
  }
  assert.ok(afterQuestion >= 12, 'the question arrived while typing, and typing went on after it');
  log(`typed ${typed.length} characters, ${afterQuestion} chunks of them after the question arrived`);

  // The question waits: its card, a notification and the status bar say so.
  await wb.toast('Plansight asks: Which docstring style').waitFor();
  await waitFor('the status bar to say Plansight waits for an answer', () =>
    page.locator('.statusbar-item', { hasText: 'waiting for your answer' }).count(),
  );
  assert.equal(await picker.isVisible(), false, 'still no picker');
  await wb.shot('31-question-waits-300px');

  log('saving notes.txt (Ctrl+S in the editor that still has focus)');
  await page.keyboard.press('Control+S');
  await waitFor('notes.txt on disk to hold every typed character', () => {
    const text = readFileSync(join(dirs.workspace, 'notes.txt'), 'utf8');
    if (text !== NOTES + typed) throw new Error(`notes.txt has ${JSON.stringify(text.slice(-80))}, expected …${JSON.stringify((NOTES + typed).slice(-80))}`);
    return true;
  });

  await sidebarWidth(wb, 440);
  await wb.shot('31-question-waits-440px', wb.sidebar);

  log('answering from the card: Answer… opens the picker');
  await card.locator('button[data-action="answer"]').evaluate((button) => button.click());
  await picker.waitFor({ state: 'visible' });
  await page.locator('.quick-input-list .monaco-list-row', { hasText: 'NumPy' }).first().click();
  await wb.conversationShows('the card to say what was answered', /You answered: NumPy/);
  await wb.conversationShows('the run to finish', /I will use that style/);
  const messages = await fake.messages();
  const last = JSON.stringify(messages[messages.length - 1].body);
  assert.match(last, /NumPy/, 'the model got the option picked');
  assert.ok(!last.includes('quick brown'), 'no typed text reached the model as the answer');
  await wb.shot('31-question-answered-440px', wb.sidebar);
  passed();
});
