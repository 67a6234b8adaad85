// Checkpoints in a real VS Code (issue 11): a two-step run (step 1 edits hello.py and runs a
// command that creates TYPES.txt and changes test_hello.py; step 2 writes NOTES.md), the Changes
// view listing each step's files, the multi-file diff of step 1, Undo Step on #1 from the Plan
// view with its confirmation, the files on disk and the plan after it; then a reload, and
// Restore to Checkpoint (with the conversation) from the list, which undoes the undo. The fake
// API replays fixtures/vscode-e2e/changes.json.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { log, openWorkbench, repoDir, startFakeApi } from './harness.mjs';
import { waitFor, workbench } from './workbench.mjs';

const recording = join(repoDir, 'fixtures/vscode-e2e/changes.json');
const script = JSON.parse(readFileSync(recording, 'utf8'));
const PENDING = ['codicon-circle-outline'];
const DONE = ['codicon-pass'];
const ITEMS = ['Add type hints to greet', 'Write release notes'];

test('checkpoints: each step\'s changes, Undo Step, a reload, Restore to Checkpoint', { timeout: 10 * 60_000 }, async (t) => {
  let fake;
  const { dirs, page, passed } = await openWorkbench(t, {
    name: 'changes',
    settings: {
      'workbench.reduceMotion': 'on',
      'plansight.autoApprove.edits': true,
      'plansight.autoApprove.commands': true,
    },
    env: { ANTHROPIC_API_KEY: 'e2e-test-key' },
    async beforeStart(sandbox, cleanups) {
      fake = await startFakeApi(recording, join(sandbox.root, 'fakeapi.log'));
      cleanups.push(fake.stop);
      return { settings: { 'plansight.baseUrl': fake.baseUrl } };
    },
  });
  const wb = workbench(page);
  const read = (rel) => readFileSync(join(dirs.workspace, rel), 'utf8');
  const exists = (rel) => existsSync(join(dirs.workspace, rel));
  const original = { hello: read('hello.py'), test: read('test_hello.py') };
  const changes = () => wb.pane('Changes');
  /** Each row of the Changes view as "label · description". */
  const changeRows = () =>
    changes()
      .locator('.monaco-list-row')
      .evaluateAll((rows) =>
        rows.map((row) => {
          const label = row.querySelector('.label-name')?.textContent ?? row.textContent;
          const description = row.querySelector('.label-description')?.textContent ?? '';
          return `${label} · ${description}`;
        }),
      );
  const listed = (...texts) => async () => {
    const rows = await changeRows();
    if (!texts.every((text) => rows.some((row) => row.includes(text)))) throw new Error(`the Changes view shows ${JSON.stringify(rows)}`);
    return rows;
  };

  await wb.openPlansight();
  await wb.expandPane('Changes');

  // ---------------------------------------------------------------- the run
  log('a two-step run (edits and commands accepted by the settings)');
  await wb.ask(script.prompt);
  await wb.conversationShows('the run to finish', /Both steps are done/);
  await wb.planAt('2/2', [DONE, DONE], ITEMS);
  const afterRun = { hello: read('hello.py'), test: read('test_hello.py'), types: read('TYPES.txt'), notes: read('NOTES.md') };
  assert.match(afterRun.hello, /def greet\(name: str\) -> str:/);

  log('the Changes view: each step with the files it changed');
  await waitFor(
    'both steps and their files in the Changes view',
    listed(
      '#1 Add type hints to greet · 3 files',
      'hello.py · changed',
      'TYPES.txt · created by the step',
      'test_hello.py · changed',
      '#2 Write release notes · 1 file',
      'NOTES.md · created by the step',
    ),
  );

  // ---------------------------------------------------------------- a step's diff
  log('Open Changes on step 1: VS Code\'s multi-file diff, before the step → now');
  const step1 = changes().locator('.monaco-list-row[aria-level="1"]', { hasText: '#1 Add type hints' });
  await step1.hover();
  await step1.locator('.actions .action-label[aria-label^="Open Changes"]').click();
  await page.locator('.tabs-container .tab', { hasText: 'before ↔ now' }).first().waitFor();
  await waitFor('the diff of hello.py, TYPES.txt and test_hello.py', async () => {
    const text = (await page.locator('.editor-instance').first().innerText()).replace(/\u00a0/g, ' ');
    if (!['hello.py', 'TYPES.txt', 'test_hello.py'].every((name) => text.includes(name)) || !text.includes('def greet(name: str) -> str:')) {
      throw new Error(`the changes editor shows ${JSON.stringify(text.slice(0, 400))}`);
    }
    return true;
  });
  await wb.shot('20-window-step-changes');

  log('one file\'s diff from the Changes view');
  await changes().locator('.monaco-list-row', { hasText: 'test_hello.py' }).first().click();
  await page.locator('.tabs-container .tab', { hasText: 'test_hello.py (before step #1' }).first().waitFor();

  // ---------------------------------------------------------------- Undo Step on #1
  log('Undo Step on #1 from the Plan view, and its confirmation');
  const dialog = page.locator('.monaco-dialog-box');
  await wb.planItemMenu(ITEMS[0], 'Undo Step', dialog);
  const said = (await dialog.innerText()).replace(/\s+/g, ' ');
  assert.match(said, /Undo step #1 Add type hints to greet\?/);
  // One sentence says what the undo does (issue 31).
  assert.match(said, /Undo Step puts back hello\.py, test_hello\.py, deletes TYPES\.txt \(made since\) and makes step #1 pending in the plan\./);
  assert.equal(read('hello.py'), afterRun.hello, 'nothing changes before the confirmation');
  await wb.shot('21-window-undo-step-confirmation');
  await dialog.locator('.monaco-button', { hasText: /^Undo Step$/ }).click();

  await waitFor('step 1\'s files back as they were before it', () =>
    read('hello.py') === original.hello && read('test_hello.py') === original.test && !exists('TYPES.txt'),
  );
  assert.equal(read('NOTES.md'), afterRun.notes, 'step 2\'s file stays');
  await wb.planAt('1/2', [PENDING, DONE], ITEMS);
  await wb.toast('step #1 undone').waitFor();
  await waitFor('only step 2 left in the Changes view', async () => {
    const rows = await listed('#2 Write release notes', 'NOTES.md')();
    if (rows.some((row) => row.includes('#1'))) throw new Error(`still ${JSON.stringify(rows)}`);
    return rows;
  });
  await wb.shot('22-sidebar-after-undo-step', wb.sidebar);

  // ---------------------------------------------------------------- after a reload
  log('reloading the window: the Changes view comes back from the server');
  await page.reload();
  await page.locator('.monaco-workbench').waitFor({ timeout: 60_000 });
  await wb.openPlansight();
  await wb.expandPane('Changes');
  await wb.planAt('1/2', [PENDING, DONE], ITEMS);
  await waitFor('step 2 and its file in the Changes view after the reload', listed('#2 Write release notes', 'NOTES.md'));

  log('Restore to Checkpoint: the one taken before the undo, with the conversation');
  await wb.viewAction('Changes', 'Restore to Checkpoint').click();
  await page.locator('.quick-input-list .monaco-list-row', { hasText: 'Before undoing step #1' }).first().click();
  await page.locator('.quick-input-list .monaco-list-row', { hasText: 'Files and the conversation' }).first().click();
  await dialog.waitFor();
  const restoreSaid = (await dialog.innerText()).replace(/\s+/g, ' ');
  assert.match(restoreSaid, /Restore checkpoint \d+ “Before undoing step #1”\?/);
  assert.match(restoreSaid, /The conversation and the plan go back to that point as well\./);
  assert.match(restoreSaid, /TYPES\.txt/);
  await dialog.locator('.monaco-button', { hasText: 'Restore Files and Conversation' }).click();
  await waitFor('the run\'s files back', () =>
    exists('TYPES.txt') && read('hello.py') === afterRun.hello && read('test_hello.py') === afterRun.test,
  );
  await wb.planAt('2/2', [DONE, DONE], ITEMS);
  await waitFor('both steps listed again', listed('#1 Add type hints to greet', 'TYPES.txt', '#2 Write release notes'));
  await wb.shot('23-window-restored-to-checkpoint');

  log('Undo File on test_hello.py: that file alone goes back');
  const fileRow = changes().locator('.monaco-list-row', { hasText: 'test_hello.py' }).first();
  await fileRow.hover();
  await fileRow.locator('.actions .action-label[aria-label^="Undo File"]').click();
  await dialog.waitFor();
  assert.match((await dialog.innerText()).replace(/\s+/g, ' '), /Undo what step #1 Add type hints to greet did to test_hello\.py\? Undo File puts back test_hello\.py\./);
  await dialog.locator('.monaco-button', { hasText: /^Undo File$/ }).click();
  await waitFor('test_hello.py back, the rest of step 1 kept', () =>
    read('test_hello.py') === original.test && read('hello.py') === afterRun.hello && exists('TYPES.txt'),
  );
  await waitFor('test_hello.py gone from step 1 in the Changes view', async () => {
    const rows = await listed('#1 Add type hints to greet · 2 files', 'TYPES.txt')();
    if (rows.some((row) => row.includes('test_hello.py'))) throw new Error(`still ${JSON.stringify(rows)}`);
    return rows;
  });

  const requests = await fake.messages();
  assert.equal(requests.length, script.steps.length, 'the model was asked once per recorded step (restores ask it nothing)');
  passed();
});
