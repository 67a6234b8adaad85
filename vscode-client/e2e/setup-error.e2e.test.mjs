// An interpreter that cannot run the server: the extension says why, naming the Python it
// needs and the one it found, with a button that opens the plansight.python setting; the plan
// view and the status bar show the failure. Since the .vsix bundles the server, a Python 3.11+
// without plansight runs it (bundled.e2e.test.mjs): what remains is a Python too old for it,
// here the oldest 3.x this machine has (else one that cannot be started at all).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { findInterpreters, log, openWorkbench } from './harness.mjs';
import { waitFor, workbench } from './workbench.mjs';

const old = [...findInterpreters()].find(([v]) => /^3\.([0-9]|10)$/.test(v));
const setting = old?.[1] ?? '/nonexistent/bin/python3';

test('a Python too old for the server gets a clear error and a way to the setting', { timeout: 3 * 60_000 }, async (t) => {
  const { page, passed } = await openWorkbench(t, { name: 'setup-error', settings: { 'plansight.python': setting } });
  const wb = workbench(page);
  await wb.openPlansight();
  const toast = wb.toast(old ? 'Plansight needs Python 3.11 or newer' : 'could not be started');
  await toast.waitFor({ timeout: 60_000 });
  const message = (await toast.innerText()).replace(/\s+/g, ' ');
  log(`error: ${message}`);
  if (old) {
    assert.match(message, new RegExp(`is Python ${old[0].replace('.', '\\.')}\\.\\d+\\.`), 'names the version found');
  }
  assert.match(message, /Python 3\.11 or newer/, 'names the version needed');
  assert.ok(message.includes(setting), 'names the interpreter');
  assert.match(message, /plansight\.python/);
  await waitFor('the plan view to say the server is not running', () =>
    wb.pane('Plan').innerText().then((s) => s.includes('server is not running')),
  );
  // The screenshot shows the whole notification, not its slide from below the status bar.
  await waitFor('the notification to finish sliding in', async () =>
    /notification-fade-in-done/.test((await toast.getAttribute('class')) ?? ''),
  );
  await wb.shot('07-window-setup-error');
  await toast.locator('.monaco-button', { hasText: /^Open Setting$/ }).click();
  await waitFor('the Settings editor on plansight.python', async () =>
    (await page.locator('.settings-editor .setting-item-contents', { hasText: 'Python interpreter that runs the Plansight server' }).count()) > 0,
  );
  passed();
});
