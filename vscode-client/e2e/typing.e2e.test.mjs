// Never lose the user's typing (issue 12), in a real VS Code: the user types a long text into
// notes.txt while the agent proposes three new files one after the other. Every proposal opens
// beside the user's editor without focus; the test accepts each one once its diff is on screen
// with a click that moves no focus (the Accept button of its card in the conversation, clicked
// by the page's script), so keystrokes go on while diffs open and close. It types in small chunks until all three edits were accepted and
// the run ended, so the overlap does not depend on the machine's speed.
//
// Then: every character typed is in notes.txt, in order; each new file holds exactly what was
// proposed (no keystroke went into a proposal); every diff opened in another group; and the
// user's editor is still the active one, with the cursor where the typing left it.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { log, openWorkbench, repoDir, startFakeApi } from './harness.mjs';
import { waitFor, workbench } from './workbench.mjs';

const recording = join(repoDir, 'fixtures/vscode-e2e/typing.json');
const script = JSON.parse(readFileSync(recording, 'utf8'));
const proposals = script.steps.flatMap((step) =>
  (step.content ?? []).filter((b) => b.type === 'tool_use' && b.name === 'write_file').map((b) => b.input),
);
const NOTES = 'Notes for the meeting.\n';
// Plain words, spaces, full stops and newlines: nothing an editor would auto-close or indent.
const SENTENCE = 'the quick brown fox jumps over the lazy dog while plansight works beside me. ';

test('typing goes on while three edits arrive: every character stays in the user file', { timeout: 8 * 60_000 }, async (t) => {
  let fake;
  const { dirs, page, passed } = await openWorkbench(t, {
    name: 'typing',
    env: { ANTHROPIC_API_KEY: 'e2e-test-key' },
    async beforeStart(sandbox, cleanups) {
      writeFileSync(join(sandbox.workspace, 'notes.txt'), NOTES);
      fake = await startFakeApi(recording, join(sandbox.root, 'fakeapi.log'));
      cleanups.push(fake.stop);
      // The editor's own word suggestions would take an Enter: not what this test is about.
      const quiet = { 'editor.wordBasedSuggestions': 'off', 'editor.quickSuggestions': { other: false, comments: false, strings: false }, 'editor.acceptSuggestionOnEnter': 'off' };
      return { settings: { 'plansight.baseUrl': fake.baseUrl, ...quiet } };
    },
  });
  const wb = workbench(page);
  await wb.openPlansight();
  await waitFor('the Plansight status bar item', () => page.locator('.statusbar-item', { hasText: 'Plansight' }).count());
  await wb.quickOpen('notes.txt');

  log('asking for three new files, then typing into notes.txt while they arrive');
  await wb.ask(script.prompt, { showing: 'notes.txt' });
  const conversation = await wb.conversation();
  const notesEditor = page.locator('.editor-group-container', { has: page.locator('.tab.active', { hasText: 'notes.txt' }) });
  await notesEditor.locator('.view-lines').click();
  await page.keyboard.press('Control+End');

  let typed = '';
  let accepted = 0;
  const acceptedPaths = new Set();
  const diffGroups = [];
  const finished = async () =>
    accepted === proposals.length &&
    (await page.locator('.statusbar-item .codicon-sync').count()) === 0 &&
    (await fake.messages()).length >= proposals.length + 1;
  for (let chunk = 0; chunk < 200 && !(await finished()); chunk += 1) {
    let words = SENTENCE.slice((chunk * 10) % SENTENCE.length).slice(0, 10);
    // No line starts with a space: the editor would copy that indentation to the next line.
    words = typed.endsWith('\n') || typed === '' ? words.trimStart() : words;
    const text = chunk % 8 === 7 ? `${words.trimEnd()}\n` : words;
    await page.keyboard.type(text, { delay: 15 });
    typed += text;
    // Where is each open proposal? (It must never be the group the user types in.)
    const groups = await page.locator('.editor-group-container').evaluateAll((nodes) =>
      nodes.map((n) => ({
        active: n.classList.contains('active'),
        tabs: [...n.querySelectorAll('.tab')].map((tab) => tab.getAttribute('aria-label') ?? tab.textContent),
      })),
    );
    for (const group of groups) {
      if (group.tabs.some((label) => /Plansight proposal/.test(label))) {
        if (!diffGroups.length) {
          await wb.shot('17-window-typing-beside-a-proposal'); // a screenshot takes no focus
        }
        diffGroups.push(group);
        assert.ok(!group.tabs.some((label) => /^notes\.txt/.test(label)), `a proposal opened in the user's group: ${JSON.stringify(groups)}`);
      }
    }
    const active = groups.find((g) => g.active);
    assert.ok(active?.tabs.some((label) => /^notes\.txt/.test(label)), `the user's group stays active: ${JSON.stringify(groups)}`);
    // Accept a proposal once its diff is on screen (so keystrokes go on with the diff open).
    const shown = diffGroups
      .flatMap((g) => g.tabs)
      .map((label) => label.match(/^(\S+) \(Plansight proposal\)/)?.[1])
      .filter(Boolean);
    const path = proposals.map((p) => p.path).find((p) => shown.includes(p) && !acceptedPaths.has(p));
    const card = conversation.locator('.card-review.open', { hasText: path ?? '\u0000' });
    if (path && (await card.count()) > 0) {
      acceptedPaths.add(path);
      // A click in the page's script, not the mouse: the webview does not take focus.
      await card.locator('button[data-action="accept"]').evaluate((button) => button.click());
      accepted += 1;
      log(`accepted the proposal for ${path} after ${typed.length} typed characters`);
      await waitFor(`the card for ${path} to settle`, async () =>
        (await conversation.locator('.card-review.open', { hasText: path }).count()) === 0,
      );
    }
  }
  log(`typed ${typed.length} characters; ${accepted} proposals accepted; diffs seen in ${diffGroups.length} polls`);
  assert.equal(accepted, proposals.length, 'all three proposals arrived and were accepted while typing');
  assert.ok(diffGroups.length > 0, 'the proposals opened as diffs');

  log('saving notes.txt (Ctrl+S in the editor that still has focus)');
  await page.keyboard.press('Control+S');
  await waitFor('notes.txt on disk to hold every typed character', () => {
    const text = readFileSync(join(dirs.workspace, 'notes.txt'), 'utf8');
    if (text !== NOTES + typed) throw new Error(`notes.txt has ${text.length} characters, expected ${(NOTES + typed).length}`);
    return true;
  });
  for (const proposal of proposals) {
    assert.equal(readFileSync(join(dirs.workspace, proposal.path), 'utf8'), proposal.content, `${proposal.path} is exactly the proposal`);
  }
  await waitFor('every diff to close', async () => (await wb.diffTab().count()) === 0);
  const activeTab = await page.locator('.editor-group-container.active .tab.active').getAttribute('aria-label');
  assert.match(activeTab, /^notes\.txt/, "the user's editor is still the active one");
  const cursor = await page.locator('.statusbar-item', { hasText: /Ln \d+, Col \d+/ }).first().innerText();
  const lines = (NOTES + typed).split('\n');
  assert.match(cursor, new RegExp(`Ln ${lines.length}, Col ${lines[lines.length - 1].length + 1}`), 'the cursor is where the typing left it');
  passed();
});
