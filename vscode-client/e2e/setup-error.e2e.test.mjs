// An interpreter without the plansight package: the extension says so, with the fix and a button
// that opens the plansight.python setting; the plan view and the status bar show the failure.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { test } from 'node:test';
import { log, openWorkbench } from './harness.mjs';
import { waitFor, workbench } from './workbench.mjs';

const bare = '/usr/bin/python3';

test('a Python without plansight gets a clear error and a way to the setting', { timeout: 3 * 60_000, skip: !existsSync(bare) && `${bare} missing` }, async (t) => {
  const { page, passed } = await openWorkbench(t, { name: 'setup-error', settings: { 'plansight.python': bare } });
  const wb = workbench(page);
  await wb.openPlansight();
  const toast = wb.toast('cannot import the plansight package');
  await toast.waitFor({ timeout: 60_000 });
  const message = await toast.innerText();
  log(`error: ${message.replace(/\s+/g, ' ')}`);
  assert.match(message, /pip install -e/);
  assert.match(message, /plansight\.python/);
  await waitFor('the plan view to say the server is not running', () =>
    wb.pane('Plan').innerText().then((s) => s.includes('server is not running')),
  );
  await wb.shot('07-window-setup-error');
  await toast.locator('.monaco-button', { hasText: /^Open Setting$/ }).click();
  await waitFor('the Settings editor on plansight.python', async () =>
    (await page.locator('.settings-editor .setting-item-contents', { hasText: 'Python interpreter that runs the Plansight server' }).count()) > 0,
  );
  passed();
});
