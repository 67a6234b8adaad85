// The offline demo in a real VS Code: no API key and no base URL are configured; Plansight: Run
// Demo serves the recording shipped with the plansight package and replays it on a copy of
// fixtures/hello. The test accepts every edit and approves every command until the run ends,
// so it does not depend on the recording's details.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { log, openWorkbench } from './harness.mjs';
import { waitFor, workbench } from './workbench.mjs';

test('Plansight: Run Demo replays the recorded session with no API key', { timeout: 5 * 60_000 }, async (t) => {
  const env = { ...process.env };
  delete env.ANTHROPIC_API_KEY;
  delete env.ANTHROPIC_BASE_URL;
  const { dirs, page, passed } = await openWorkbench(t, { name: 'demo', env: { ANTHROPIC_API_KEY: '' } });
  const wb = workbench(page);
  const before = readFileSync(join(dirs.workspace, 'hello.py'), 'utf8');
  await wb.openPlansight();
  log('Plansight: Run Demo');
  await wb.runCommand('Plansight: Run Demo');

  let accepted = 0;
  let approved = 0;
  const conversation = await wb.conversation();
  await waitFor('the demo run to finish (accepting every edit and command from their cards)', async () => {
    const text = await conversation.locator('#log').innerText();
    if (/\bDone\s*\d+ rounds?/.test(text)) return text;
    if (/\bError\b/.test(text)) throw new Error(`the demo failed: ${text}`);
    const review = conversation.locator('.card-review.open button[data-action="accept"]');
    if ((await review.count()) > 0) {
      await review.first().click({ timeout: 5000 });
      accepted += 1;
      log(`accepted edit ${accepted}`);
    }
    const approve = conversation.locator('.card-approval.open button[data-action="approve"]');
    if ((await approve.count()) > 0) {
      await approve.first().click({ timeout: 5000 });
      approved += 1;
      log(`approved command ${approved}`);
    }
    return false;
  }, 120_000);
  const items = await wb.planItems();
  log(`demo plan: ${items.map((i) => i.label).join(' | ')}`);
  assert.ok(items.length > 0, 'the demo shows a plan');
  assert.ok(accepted > 0, 'the demo proposed at least one edit');
  assert.notEqual(readFileSync(join(dirs.workspace, 'hello.py'), 'utf8'), before, 'the accepted edits were written');
  await wb.shot('06-window-demo-done');
  passed();
});
