// Undo Step forgets overlaps with steps already undone (issue 31), in a real VS Code. Step 1 and
// step 2 both change hello.py, and step 1 is taken up again after step 2 (so the server finds
// the two overlapping whichever is undone). Undo Step on #2 warns that #1's change goes too; once
// #2 is undone, the dialog of Undo Step on #1 must not say that it undoes or loses anything of
// #2: nothing of #2 is left to lose. Its dialog at 440 px and at 300 px. The fake API replays
// fixtures/vscode-e2e/undone.json (edits accepted by the settings). An existing e2e was not
// extended: neither changes.e2e nor edits.e2e has a step taken up again after another, the one
// way the server still names a step already undone.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { log, openWorkbench, repoDir, withFakeApi } from './harness.mjs';
import { waitFor, workbench } from './workbench.mjs';

const recording = join(repoDir, 'fixtures/vscode-e2e/undone.json');
const script = JSON.parse(readFileSync(recording, 'utf8'));
const ITEMS = ['Type greet and its greeting', 'Mark the greeting'];
const DONE = ['codicon-pass'];
const PENDING = ['codicon-circle-outline'];

test('Undo Step on #1 after #2 was undone does not name #2', { timeout: 6 * 60_000 }, async (t) => {
  const { dirs, page, passed } = await openWorkbench(t, {
    name: 'undone',
    settings: { 'plansight.autoApprove.edits': true },
    env: { ANTHROPIC_API_KEY: 'e2e-test-key' },
    beforeStart: withFakeApi(recording),
  });
  const wb = workbench(page);
  const hello = () => readFileSync(join(dirs.workspace, 'hello.py'), 'utf8');
  const original = hello();
  const dialog = page.locator('.monaco-dialog-box');
  /** Undo Step from the plan row's context menu; the dialog's text as the user reads it. */
  const undoStep = async (item) => {
    await wb.planItemMenu(item, 'Undo Step', dialog);
    return (await dialog.innerText()).replace(/\s+/g, ' ');
  };
  const answer = async (button) => {
    await dialog.locator('.monaco-button', { hasText: new RegExp(`^${button}$`) }).click();
    await dialog.waitFor({ state: 'hidden' });
  };

  await wb.openPlansight();
  await wb.ask(script.prompt);
  await wb.conversationShows('the run to finish', /Both steps are done/);
  await wb.planAt('2/2', [DONE, DONE], ITEMS);
  const afterRun = hello();
  assert.match(afterRun, /def greet\(name: str\) -> str:\n {4}return f"Hello, \{name\}!" {2}# the greeting/);

  log('Undo Step on #2: #1 rewrote its line since, and the dialog says so');
  const second = await undoStep(ITEMS[1]);
  assert.match(second, /Undo step #2 Mark the greeting\?/);
  assert.match(second, /overlaps the changes of #1/, `the overlap with #1, not undone, is said: ${second}`);
  await wb.shot('31-undo-step-2-names-1-440px');
  await answer('Undo Anyway');
  await waitFor('hello.py as before step #2', () => hello() === original.replace('def greet(name):', 'def greet(name: str) -> str:'));
  await wb.planAt('1/2', [DONE, PENDING], ITEMS);

  log('Undo Step on #1: #2 is undone, nothing of it is left to lose');
  for (const width of [440, 300]) {
    await wb.sidebarWidth(width);
    const first = await undoStep(ITEMS[0]);
    assert.match(first, /Undo step #1 Type greet and its greeting\?/);
    assert.doesNotMatch(first, /#2/, `at ${width} px the dialog names the undone step #2: ${first}`);
    // What the dialog still says of the file (the server finds the steps interleaved in it).
    assert.match(first, /Undo Anyway does the same and also puts back hello\.py\./);
    await wb.shot(`31-undo-step-1-after-2-undone-${width}px`);
    if (width === 440) await answer('Cancel');
  }
  assert.equal(hello(), original.replace('def greet(name):', 'def greet(name: str) -> str:'), 'nothing changes before the answer');
  await answer('Undo Anyway');
  await waitFor('hello.py as before the run', () => hello() === original);
  await wb.planAt('0/2', [PENDING, PENDING], ITEMS);
  passed();
});
