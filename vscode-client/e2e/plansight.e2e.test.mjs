// End to end in a REAL VS Code (code-server 4.139 in headless Chromium): the packaged extension
// drives the real Plansight language server, which talks to the fake Anthropic API replaying
// fixtures/vscode-e2e/recording.json (a refactor of fixtures/hello/hello.py). Everything is
// checked through the page, the files on disk, and the requests the fake API received.
//
//   npm run test:e2e      (after scripts/setup-e2e.sh; PLANSIGHT_PYTHON picks the interpreter)
import assert from 'node:assert/strict';
import { createWriteStream, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { chromium as playwright } from 'playwright-core';
import {
  chromium,
  freePort,
  installExtension,
  log,
  makeSandbox,
  packageExtension,
  preflight,
  python,
  repoDir,
  screenshotDir,
  startCodeServer,
  startFakeApi,
  writeUserSettings,
} from './harness.mjs';

const recording = join(repoDir, 'fixtures/vscode-e2e/recording.json');
const ITEMS = ['Add type hints to greet and shout', 'Add docstrings', 'Add a main guard'];
const REJECT_REASON = 'No docstrings please: keep hello.py short';
const USER_LINE = '# Reviewed in VS Code';
const WAIT = Number(process.env.E2E_WAIT_MS ?? 60_000);

/** Polls `probe` until it returns a truthy value; fails with what it last saw. */
async function waitFor(what, probe, timeout = WAIT) {
  const deadline = Date.now() + timeout;
  let last;
  for (;;) {
    try {
      last = await probe();
      if (last) {
        return last;
      }
    } catch (error) {
      last = `error: ${error.message}`;
    }
    if (Date.now() > deadline) {
      throw new Error(`Timed out after ${timeout} ms waiting for ${what}; last saw: ${JSON.stringify(last)}`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
}

test('Plansight in a real VS Code: plan, reminder, reviews, scratchpad', { timeout: 10 * 60_000 }, async (t) => {
  preflight();
  mkdirSync(screenshotDir, { recursive: true });
  const dirs = makeSandbox();
  log(`sandbox ${dirs.root}`);
  const cleanups = [];
  let page;
  t.after(async () => {
    if (failed && page) {
      const path = join(screenshotDir, 'failure.png');
      await page.screenshot({ path }).then(() => log(`failure screenshot: ${path}`), () => undefined);
    }
    for (const cleanup of cleanups.reverse()) {
      await cleanup().catch((error) => log(`cleanup: ${error.message}`));
    }
    if (process.env.E2E_KEEP || failed) {
      log(`kept ${dirs.root} (logs: code-server.log, fakeapi.log, console.log, user-data/logs)`);
    } else {
      rmSync(dirs.root, { recursive: true, force: true });
    }
  });
  let failed = true;

  log('packaging the extension (npm run package)');
  const vsix = packageExtension();
  log(`installing ${vsix} into a fresh extensions dir`);
  installExtension(dirs, vsix);

  log(`starting the fake API (${python} -m plansight.fakeapi)`);
  const fake = await startFakeApi(recording, join(dirs.root, 'fakeapi.log'));
  cleanups.push(fake.stop);
  log(`fake API at ${fake.baseUrl}`);

  writeUserSettings(dirs, {
    'plansight.python': python,
    'plansight.baseUrl': fake.baseUrl,
    'workbench.startupEditor': 'none',
    'workbench.tips.enabled': false,
    'workbench.colorTheme': 'Default Dark Modern',
    'workbench.secondarySideBar.defaultVisibility': 'hidden',
    'chat.disableAIFeatures': true,
    'security.workspace.trust.enabled': false,
    'extensions.ignoreRecommendations': true,
    'telemetry.telemetryLevel': 'off',
    'update.mode': 'none',
    'diffEditor.useInlineViewWhenSpaceIsLimited': false,
    'editor.minimap.enabled': false,
    'files.autoSave': 'off',
    'workbench.view.alwaysShowHeaderActions': true,
  });

  const port = await freePort();
  log(`starting code-server on 127.0.0.1:${port}`);
  const server = await startCodeServer(dirs, {
    port,
    // The API key reaches the language server through the extension host's environment.
    env: { ANTHROPIC_API_KEY: 'e2e-test-key' },
    logFile: join(dirs.root, 'code-server.log'),
  });
  cleanups.push(server.stop);

  log('launching Chromium');
  const browser = await playwright.launch({
    executablePath: chromium,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  cleanups.push(() => browser.close());
  page = await browser.newPage({ viewport: { width: 1500, height: 900 } });
  const consoleLog = createWriteStream(join(dirs.root, 'console.log'));
  page.on('console', (message) => consoleLog.write(`[${message.type()}] ${message.text()}\n`));
  const shot = async (name, locator = page) => {
    const path = join(screenshotDir, `${name}.png`);
    await locator.screenshot({ path });
    log(`screenshot ${path}`);
  };

  // ---------------------------------------------------------------- helpers over the page
  const sidebar = page.locator('#workbench\\.parts\\.sidebar');
  const pane = (title) =>
    sidebar.locator('.pane').filter({ has: page.locator('.pane-header h3.title', { hasText: new RegExp(`^${title}$`, 'i') }) });
  const quickInput = page.locator('.quick-input-widget input');

  /** The plan view's item rows (level 1): label and icon classes. */
  const planItems = () =>
    pane('Plan')
      .locator('.monaco-list-row[aria-level="1"]')
      .evaluateAll((rows) =>
        rows.map((row) => ({
          label: row.querySelector('.label-name')?.textContent ?? row.textContent,
          icon: row.querySelector('.custom-view-tree-node-item-icon')?.className ?? '',
          expanded: row.getAttribute('aria-expanded'),
        })),
      );
  const planDescription = () => pane('Plan').locator('.pane-header').innerText();
  const iconsAre = async (expected) => {
    const items = await planItems();
    const ok =
      items.length === expected.length &&
      items.every((item, i) => expected[i].every((cls) => item.icon.split(/\s+/).includes(cls)));
    return ok ? items : false;
  };
  const planAt = async (progress, icons, labels = ITEMS) =>
    waitFor(`the plan to show ${progress} with icons ${JSON.stringify(icons)}`, async () => {
      const header = await planDescription();
      const items = await iconsAre(icons);
      if (!items) return false;
      assert.deepEqual(items.map((i) => i.label), labels);
      return header.includes(progress) ? items : false;
    });
  const viewAction = (view, label) => pane(view).locator(`.pane-header .action-label[aria-label^="${label}"]`).first();
  const runCommand = async (title) => {
    await page.keyboard.press('F1');
    await quickInput.waitFor({ state: 'visible' });
    await quickInput.fill(`>${title}`);
    await page.locator('.quick-input-list .monaco-list-row', { hasText: title }).first().waitFor();
    await page.keyboard.press('Enter');
  };
  const problems = () =>
    page
      .locator('.markers-panel .monaco-list-row')
      .evaluateAll((rows) => rows.map((row) => row.innerText.replace(/\s+/g, ' ')));
  const reminderInProblems = async () => (await problems()).find((r) => r.includes('plan-reminder') && r.includes('plansight'));
  const diffTab = () => page.locator('.tabs-container .tab', { hasText: 'Plansight proposal' });
  const editorAction = (label) => page.locator(`.editor-actions .action-label[aria-label^="${label}"]`).first();
  /** The text of the visible diff editor's proposed (right) side; Monaco renders spaces as NBSP. */
  const proposedSide = () =>
    page
      .locator('.monaco-diff-editor')
      .filter({ visible: true })
      .locator('.editor.modified .view-lines')
      .first()
      .innerText()
      .then((t) => t.replace(/\u00a0/g, ' '));
  /** The scratchpad webview's text if it includes `needle`. Webviews live in nested iframes
   *  outside the sidebar's DOM: look through every frame. */
  const scratchpadText = async (needle) => {
    for (const frame of page.frames()) {
      const text = await frame
        .evaluate(() => document.querySelector('pre#content')?.textContent ?? null)
        .catch(() => null);
      if (text?.includes(needle)) return text;
    }
    return false;
  };
  const helloOnDisk = () => readFileSync(join(dirs.workspace, 'hello.py'), 'utf8');
  const original = helloOnDisk();

  // ---------------------------------------------------------------- the workbench
  log('opening the workspace in the browser');
  await page.goto(`${server.url}/?folder=${encodeURIComponent(dirs.workspace)}`);
  await page.locator('.monaco-workbench').waitFor({ timeout: WAIT });
  log('workbench ready; opening the Plansight view container');
  const containerIcon = page.locator('.activitybar [aria-label^="Plansight"]').first();
  await containerIcon.waitFor({ timeout: WAIT });
  await containerIcon.click();
  await pane('Plan').waitFor({ timeout: WAIT });
  // A wider sidebar, so that the plan's items read in full on the screenshots.
  const box = await sidebar.boundingBox();
  await page.mouse.move(box.x + box.width + 1, box.y + box.height / 2);
  await page.mouse.down();
  await page.mouse.move(box.x + box.width + 140, box.y + box.height / 2, { steps: 5 });
  await page.mouse.up();
  await waitFor('the Plansight status bar item', () =>
    page.locator('.statusbar-item', { hasText: 'Plansight' }).count(),
  );

  log('opening hello.py (its path goes with the prompt)');
  await page.keyboard.press('F1');
  await quickInput.waitFor({ state: 'visible' });
  await quickInput.fill('hello.py');
  await page.locator('.quick-input-list .monaco-list-row', { hasText: 'hello.py' }).first().waitFor();
  await page.keyboard.press('Enter');
  await page.locator('.tabs-container .tab', { hasText: 'hello.py' }).first().waitFor();

  log('Plansight: Ask');
  await runCommand('Plansight: Ask');
  await page.locator('.quick-input-widget', { hasText: 'Ask Plansight' }).waitFor();
  await quickInput.fill('Refactor hello.py: add type hints, docstrings and a main guard.');
  await page.keyboard.press('Enter');

  // ---------------------------------------------------------------- review 1: accept
  log('waiting for the plan (0/3, #1 in progress) and the first proposed edit');
  await planAt('0/3', [['codicon-sync', 'codicon-modifier-spin'], ['codicon-circle-outline'], ['codicon-circle-outline']]);
  await diffTab().waitFor({ timeout: WAIT });
  await page.locator('.monaco-diff-editor').first().waitFor();
  log('first diff open; checking the reminder in the Problems panel');
  await page.keyboard.press('Control+Shift+M');
  const reminder = await waitFor('a plansight plan-reminder in the Problems panel', reminderInProblems);
  log(`Problems: ${reminder}`);
  await waitFor('the scratchpad to show the notes mid-run', () => scratchpadText('no type hints'));
  await shot('01-window-review-and-reminder');
  await shot('01-sidebar-plan-0of3', sidebar);
  assert.equal(helloOnDisk(), original, 'nothing is written before the review is decided');

  log('accepting edit 1 from the diff editor title bar');
  await editorAction('Accept Edit').click();
  await waitFor('hello.py on disk to have type hints', () => helloOnDisk().includes('def greet(name: str) -> str:'));

  // ---------------------------------------------------------------- review 2: reject
  log('waiting for the plan update (1/3) and the reminder to clear');
  await planAt('1/3', [['codicon-pass'], ['codicon-sync', 'codicon-modifier-spin'], ['codicon-circle-outline']]);
  await waitFor('the reminder to leave the Problems panel', async () => !(await reminderInProblems()));
  await waitFor('the second diff to show the docstring', () => proposedSide().then((t) => t.includes('friendly greeting')));
  await shot('02-sidebar-plan-1of3', sidebar);
  const afterFirst = helloOnDisk();
  log('rejecting edit 2 with a reason');
  await editorAction('Reject Edit').click();
  await page.locator('.quick-input-widget', { hasText: 'Reject the edit' }).waitFor();
  await quickInput.fill(REJECT_REASON);
  await page.keyboard.press('Enter');

  // ---------------------------------------------------------------- review 3: change, accept
  log('waiting for #2 cancelled, #3 in progress, and the third proposed edit');
  await planAt('1/3', [['codicon-pass'], ['codicon-circle-slash'], ['codicon-sync', 'codicon-modifier-spin']]);
  assert.equal(helloOnDisk(), afterFirst, 'a rejected edit leaves the file unchanged');
  await waitFor('the third diff (main guard)', () => proposedSide().then((t) => t.includes('__main__')));
  await shot('03-window-review-3', page);
  log('changing the proposed side by hand, then accepting');
  await page.locator('.monaco-diff-editor').filter({ visible: true }).locator('.editor.modified .view-lines').first().click();
  await page.keyboard.press('Control+End');
  await page.keyboard.type(`${USER_LINE}\n`);
  await waitFor('the typed line in the proposed side', () => proposedSide().then((t) => t.includes(USER_LINE)));
  log('accepting from the notification this time');
  const toast = page.locator('.notifications-toasts .notification-toast', { hasText: 'line 12' });
  await toast.locator('a', { hasText: /^Accept$/ }).click();
  await waitFor('hello.py on disk to have the main guard and the user line', () => {
    const text = helloOnDisk();
    return text.includes('if __name__ == "__main__":') && text.includes(USER_LINE);
  });

  // ---------------------------------------------------------------- a command to approve
  log('approving the test command from its notification');
  const approval = page.locator('.notifications-toasts .notification-toast', { hasText: 'wants to run' });
  await approval.waitFor({ timeout: WAIT });
  assert.match(await approval.innerText(), /python3 -m unittest -q test_hello/);
  await approval.locator('.monaco-button', { hasText: /^Approve$/ }).click();

  // ---------------------------------------------------------------- the end of the run
  log('waiting for the run to finish (2/3)');
  await planAt('2/3', [['codicon-pass'], ['codicon-circle-slash'], ['codicon-pass']]);
  // The view follows the run, so its last row (the result and token usage) is in sight.
  await waitFor('the activity view to show the finished run with its usage', async () => {
    const text = await pane('Activity').innerText();
    if (!/Done\s*12 rounds · [\d,]+ in · [\d,]+ out/.test(text)) throw new Error(`saw ${text}`);
    return text;
  });
  await waitFor('the status bar to stop spinning', async () => {
    const item = page.locator('.statusbar-item', { hasText: '2/3' }).first();
    return (await item.count()) > 0 && (await item.locator('.codicon-sync').count()) === 0;
  });
  const scratchpad = await waitFor('the scratchpad webview to show the final notes', () => scratchpadText('main guard: done'));
  log(`scratchpad: ${JSON.stringify(scratchpad.slice(0, 80))}`);
  assert.equal(await diffTab().count(), 0, 'every review diff is closed after its decision');
  await waitFor('the review notifications to go away', async () =>
    (await page.locator('.notifications-toasts .notification-toast', { hasText: 'proposes an edit' }).count()) === 0,
  );
  await shot('04-sidebar-done-2of3', sidebar);
  await shot('04-window-done', page);

  // ---------------------------------------------------------------- what the model was told
  const requests = await fake.requests();
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

  // ---------------------------------------------------------------- the user edits the plan
  log('adding a plan item from the Plan view title bar (plansight/editPlan)');
  await viewAction('Plan', 'Add Item').click();
  await page.locator('.quick-input-widget', { hasText: 'Add a plan item' }).waitFor();
  await quickInput.fill('Run the tests');
  await page.keyboard.press('Enter');
  const withNew = [...ITEMS, 'Run the tests'];
  await planAt('2/4', [['codicon-pass'], ['codicon-circle-slash'], ['codicon-pass'], ['codicon-circle-outline']], withNew);
  log('marking it done with the row\'s inline button');
  const newRow = pane('Plan').locator('.monaco-list-row[aria-level="1"]', { hasText: 'Run the tests' });
  await newRow.hover();
  await newRow.locator('.actions .action-label[aria-label^="Mark Done"]').click();
  await planAt('3/4', [['codicon-pass'], ['codicon-circle-slash'], ['codicon-pass'], ['codicon-pass']], withNew);

  // ---------------------------------------------------------------- cancel a run
  log('asking again (the recording now hangs), then cancelling from the Plan view title bar');
  const before = (await fake.requests()).length;
  await runCommand('Plansight: Ask');
  await page.locator('.quick-input-widget', { hasText: 'Ask Plansight' }).waitFor();
  await quickInput.fill('Now run the tests.');
  await page.keyboard.press('Enter');
  await waitFor('the run to reach the (hanging) model', async () => (await fake.requests()).length > before);
  const cancelAt = Date.now();
  await viewAction('Plan', 'Cancel Run').click();
  await waitFor('the activity view to show the cancelled run', async () => {
    const text = await pane('Activity').innerText();
    return /Cancelled/.test(text) ? text : false;
  }, 15_000);
  await waitFor('the status bar to stop spinning', async () =>
    (await page.locator('.statusbar-item', { hasText: '3/4' }).locator('.codicon-sync').count()) === 0,
  );
  log(`cancelled in ${Date.now() - cancelAt} ms`);
  assert.ok(!(await viewAction('Plan', 'Cancel Run').isVisible()), 'Cancel Run hides once the run ends');

  // ---------------------------------------------------------------- new session
  log('New Session from the Plan view title bar (plansight/reset)');
  await viewAction('Plan', 'New Session').click();
  await waitFor('the plan to empty and show its welcome', async () => {
    const text = await pane('Plan').innerText();
    return text.includes('No plan yet') && (await planItems()).length === 0;
  });
  await waitFor('the scratchpad to empty', () => scratchpadText('The scratchpad is empty'));
  await shot('05-sidebar-new-session', sidebar);
  failed = false;
});
