// Plan items run in parallel (issue 32's VS Code part), in a real VS Code: two items added in
// the Plan view, both selected (Ctrl+click) and run with "Run in Parallel" from the context
// menu; worker #2 seen running on its row (a spinner, its current tool) and cancelled from the
// row; worker #1's change set under its item (hello.py +1 −0), the workspace untouched until
// Take In puts it to the user as a review "from worker #1", accepted from its card. The fake
// API serves one conversation per worker (fixtures/vscode-e2e/parallel.json, `conversations`);
// the server needs a sandbox (bubblewrap), as it refuses workers without one.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { log, openWorkbench, python, repoDir, startFakeApi } from './harness.mjs';
import { waitFor, workbench } from './workbench.mjs';

const recording = join(repoDir, 'fixtures/vscode-e2e/parallel.json');
const ONE = 'Add a docstring to greet';
const TWO = 'Add a farewell test';
const THREE = 'Document greet briefly';
const SIDEBAR = 300;

/** Why no sandbox can be made here ('' when one can): the server refuses workers without one,
 * as the Python tests skip (tests/test_parallel_workers.py). */
function noSandbox() {
  const probe = spawnSync(python, ['-c', 'from plansight.workspace.sandbox import detect; d = detect(); print("" if d.available else d.reason or "unavailable")'], {
    encoding: 'utf8',
  });
  return probe.status === 0 ? probe.stdout.trim() : `the probe failed: ${probe.stderr.trim().split('\n').pop()}`;
}

test('Run in Parallel: workers live on their items, a change set taken in through the review', { timeout: 10 * 60_000 }, async (t) => {
  const why = noSandbox();
  if (why) {
    t.skip(`no sandbox can be made here: ${why}`);
    return;
  }
  const { dirs, page, passed } = await openWorkbench(t, {
    name: 'parallel',
    settings: { 'workbench.reduceMotion': 'on' },
    env: { ANTHROPIC_API_KEY: 'e2e-test-key' },
    async beforeStart(sandbox, cleanups) {
      const fake = await startFakeApi(recording, join(sandbox.root, 'fakeapi.log'));
      cleanups.push(fake.stop);
      return { settings: { 'plansight.baseUrl': fake.baseUrl } };
    },
  });
  const wb = workbench(page);
  const read = (rel) => readFileSync(join(dirs.workspace, rel), 'utf8');
  const original = read('hello.py');
  const plan = () => wb.pane('Plan');
  const row = (text) => plan().locator('.monaco-list-row[aria-level="1"]', { hasText: text });
  /** Each row of the Plan view as "label · description" (children indented by level). */
  const planRows = () =>
    plan()
      .locator('.monaco-list-row')
      .evaluateAll((rows) =>
        rows.map((r) => {
          const label = r.querySelector('.label-name')?.textContent ?? r.textContent;
          const description = r.querySelector('.label-description')?.textContent ?? '';
          const icon = r.querySelector('.custom-view-tree-node-item-icon')?.className ?? '';
          return `${'  '.repeat(Number(r.getAttribute('aria-level')) - 1)}${label} · ${description} · ${icon}`;
        }),
      );
  const shows = (what, ...patterns) =>
    waitFor(what, async () => {
      const rows = await planRows();
      if (!patterns.every((p) => rows.some((r) => p.test(r)))) throw new Error(`the plan shows ${JSON.stringify(rows)}`);
      return rows;
    });
  /** Clicks a context menu entry of a row (a context menu may ignore a click as it opens). */
  const contextMenu = async (target, entry, done) => {
    const item = page.locator('.monaco-menu .action-label', { hasText: new RegExp(`^${entry}$`) }).first();
    await waitFor(`"${entry}" from the context menu`, async () => {
      if (await done()) return true;
      if (await item.isVisible()) {
        await item.hover();
        await item.click({ timeout: 2000 });
      } else {
        await target.click({ button: 'right' });
      }
      return false;
    });
  };

  await wb.openPlansight();
  log(`the sidebar at ${SIDEBAR} px`);
  const box = await wb.sidebar.boundingBox();
  await page.mouse.move(box.x + box.width + 1, box.y + box.height / 2);
  await page.mouse.down();
  await page.mouse.move(box.x + SIDEBAR, box.y + box.height / 2, { steps: 5 });
  await page.mouse.up();
  await waitFor(`the sidebar at about ${SIDEBAR} px`, async () => Math.abs((await wb.sidebar.boundingBox()).width - SIDEBAR) <= 4);

  log('three plan items added from the Plan view');
  // The first edit can meet a plan version the window has not heard of yet ("The plan
  // changed"): as a user would, add it again until the row is there.
  await waitFor('the first item in the plan', async () => {
    if (await row(ONE).isVisible()) return true;
    await wb.viewAction('Plan', 'Add Item').click();
    await wb.answerInput('Add a plan item', ONE);
    await row(ONE).waitFor({ timeout: 5000 }).catch(() => undefined);
    return row(ONE).isVisible();
  });
  await wb.viewAction('Plan', 'Add Item').click();
  await wb.answerInput('Add a plan item', TWO);
  await row(TWO).waitFor();
  await wb.viewAction('Plan', 'Add Item').click();
  await wb.answerInput('Add a plan item', THREE);
  await row(THREE).waitFor();

  log('all three selected (Ctrl+click), Run in Parallel from the context menu');
  await row(ONE).click();
  await row(TWO).click({ modifiers: ['Control'] });
  await row(THREE).click({ modifiers: ['Control'] });
  await waitFor('three rows selected', async () => (await plan().locator('.monaco-list-row.selected').count()) === 3);
  const toast = page.locator('.notification-toast', { hasText: 'Started a worker on #1, #2, #3.' });
  await contextMenu(row(TWO), 'Run in Parallel', () => toast.isVisible());

  log('worker #2 running on its row, worker #1 done with its change set under its item');
  const rows = await shows(
    'worker #2 running (spinner, its tool) and worker #1 done with hello.py +1 −0',
    new RegExp(`^${TWO} · #2 · read_file.*\\(1 tool\\) · .*codicon-sync.*codicon-modifier-spin`),
    new RegExp(`^${ONE} · #1 · worker done · 1 file \\+1 −0 to take in · .*codicon-pass`),
    new RegExp(`^${THREE} · #3 · worker done · 1 file \\+1 −0 to take in · .*codicon-pass`),
    /^ {2}hello\.py · \+1 −0 · /,
  );
  log(`plan rows: ${JSON.stringify(rows)}`);
  assert.equal(read('hello.py'), original, 'nothing reaches the workspace before it is taken in');
  await wb.shot('90-sidebar-parallel-workers', wb.sidebar);

  log('Cancel Worker on #2 (inline on its row)');
  await row(TWO).hover();
  await row(TWO).locator('.actions .action-label[aria-label^="Cancel Worker"]').click();
  await shows('worker #2 cancelled', new RegExp(`^${TWO} · #2 · worker cancelled, no changes · .*codicon-circle-slash`));

  log('Take In on #1: its file put to the user as a review from worker #1');
  await row(ONE).hover();
  await row(ONE).locator('.actions .action-label[aria-label^="Take In"]').click();
  await page.locator('.tabs-container .tab', { hasText: 'Plansight proposal from worker #1' }).first().waitFor();
  const card = await wb.openCard('review', 'hello.py');
  const said = (await card.innerText()).replace(/\s+/g, ' ');
  assert.match(said, /Edit hello\.py from worker #1/);
  assert.doesNotMatch(said, /Conflict/);
  await wb.shot('91-window-take-in-review');
  assert.equal(read('hello.py'), original, 'still nothing written before the Accept');
  await card.locator('button[data-action="accept"]').click();
  await waitFor('hello.py written with worker #1\'s docstring', () => read('hello.py').includes('"""Say hello to name."""'));
  await page.locator('.notification-toast', { hasText: "Worker #1's changes: 1 applied" }).first().waitFor();
  await waitFor('the change set gone from under #1 once taken in', async () => {
    const now = await planRows();
    // #1's row and its first child (now the accepted edit, not the change set); #3's stays.
    if (now[0].includes('to take in') || now[1].includes('+1 −0')) throw new Error(`the plan shows ${JSON.stringify(now)}`);
    return true;
  });
  await wb.shot('92-sidebar-after-take-in', wb.sidebar);
  const afterOne = read('hello.py');

  log('Take In on #3: the same lines as #1 changed, so a conflict, said plainly, never merged silently');
  await row(THREE).hover();
  await row(THREE).locator('.actions .action-label[aria-label^="Take In"]').click();
  await page.locator('.tabs-container .tab', { hasText: 'Plansight conflict from worker #3' }).first().waitFor();
  const conflict = await wb.openCard('review', 'hello.py');
  const told = (await conflict.innerText()).replace(/\s+/g, ' ');
  assert.match(told, /Edit hello\.py from worker #3/);
  assert.match(told, /Conflict: your workspace and worker #3 changed the same lines of hello\.py/);
  assert.match(told, /never accepted unseen/);
  assert.equal(await conflict.locator('button[data-action="acceptAll"]').count(), 0, 'no Accept All on a conflict');
  await conflict.scrollIntoViewIfNeeded();
  await wb.shot('93-sidebar-conflict-card-300px', wb.sidebar);
  assert.equal(read('hello.py'), afterOne, 'nothing merged before a decision');
  await conflict.locator('button[data-action="reject"]').click();
  await page.locator('.notification-toast', { hasText: "Worker #3's changes: 0 applied, 1 rejected" }).first().waitFor();
  assert.equal(read('hello.py'), afterOne, 'a rejected conflict leaves the file as it was');
  passed();
});
