// The clients' side of the boundary (issue 27) in a real VS Code, at a 300 px sidebar:
// - a command longer than the sidebar is wide shows whole on its approval card, wrapped (its
//   end, `&& touch pwned.txt`, was once out of sight), and the notification shown while the
//   conversation is hidden points to the card instead of showing it cut;
// - with no folder open, the Conversation view asks for one and nothing starts.
// The fake API replays fixtures/vscode-e2e/long-command.json.
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { log, openWorkbench, repoDir, screenshotDir, startFakeApi } from './harness.mjs';
import { waitFor, workbench } from './workbench.mjs';

const recording = join(repoDir, 'fixtures/vscode-e2e/long-command.json');
const script = JSON.parse(readFileSync(recording, 'utf8'));
const command = script.steps[0].content[0].input.command;
const SIDEBAR = 300;

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

/** Saves a screenshot of the e2e run under docs/ too. */
function toDocs(name) {
  copyFileSync(join(screenshotDir, `${name}.png`), join(repoDir, 'docs', `${name}.png`));
}

test('a long command shows whole on its card; the notification points to the card', { timeout: 6 * 60_000 }, async (t) => {
  let fake;
  const { dirs, page, passed } = await openWorkbench(t, {
    name: 'long-command',
    env: { ANTHROPIC_API_KEY: 'e2e-test-key' },
    async beforeStart(sandbox, cleanups) {
      fake = await startFakeApi(recording, join(sandbox.root, 'fakeapi.log'));
      cleanups.push(fake.stop);
      return { settings: { 'plansight.baseUrl': fake.baseUrl } };
    },
  });
  const wb = workbench(page);
  await wb.openPlansight();
  await sidebarWidth(wb, SIDEBAR);
  await wb.ask(script.prompt);

  log('the approval card shows the whole command, wrapped');
  const card = await wb.openCard('approval', 'unittest');
  const shown = card.locator('pre.command');
  assert.equal(await shown.innerText(), command, 'the whole command, nothing cut');
  const fits = await shown.evaluate((el) => ({ scroll: el.scrollWidth, client: el.clientWidth, lines: el.getClientRects()[0].height / parseFloat(getComputedStyle(el).lineHeight || '16') }));
  assert.ok(fits.scroll <= fits.client + 1, `no part scrolled out of sight: ${JSON.stringify(fits)}`);
  const end = await card.locator('pre.command').boundingBox();
  const bar = await wb.sidebar.boundingBox();
  assert.ok(end.x + end.width <= bar.x + bar.width + 1, 'the card fits the sidebar');
  await card.scrollIntoViewIfNeeded();
  await wb.shot('long-command', wb.sidebar);
  toDocs('long-command');

  log('the conversation out of sight: the notification points to the card');
  await wb.runCommand('View: Show Explorer');
  const toast = wb.toast('Plansight: a command waits');
  await toast.waitFor();
  await wb.toastLinksInSight(toast, ['Show Command', 'Reject']);
  const said = await toast.innerText();
  assert.match(said, /on its card/);
  assert.ok(!said.includes('unittest') && !said.includes('touch'), `no cut command in the notification: ${said}`);
  assert.equal(await toast.locator('a', { hasText: /^Approve$/ }).count(), 0, 'no Approve for a command it cannot show');
  await wb.shot('long-command-notification');
  await toast.locator('a', { hasText: /^Show Command$/ }).click();
  const again = await wb.openCard('approval', 'unittest');
  await again.locator('button[data-action="reject"]').click();
  await wb.conversationShows('the run to end without the command', /nothing ran/);
  assert.ok(!existsSync(join(dirs.workspace, 'pwned.txt')), 'the command never ran');
  passed();
});

test('no folder open: the Conversation view asks for one, and nothing starts', { timeout: 4 * 60_000 }, async (t) => {
  const { dirs, page, passed } = await openWorkbench(t, { name: 'no-folder', folder: false, env: { ANTHROPIC_API_KEY: 'e2e-test-key' } });
  const wb = workbench(page);
  await wb.openPlansight();
  await sidebarWidth(wb, SIDEBAR);
  const frame = await wb.conversation();
  await waitFor('the view to ask for a folder', async () => /Open a folder to use Plansight/.test(await frame.locator('#welcome').innerText()));
  assert.equal(await frame.locator('#composer').isVisible(), false, 'no prompt box');
  const open = frame.locator('button[data-command="workbench.action.files.openFolder"]');
  assert.ok(await open.isVisible(), 'an Open Folder button');
  await waitFor('the Plan view to ask for a folder too', async () => /Open a folder to use Plansight/.test(await wb.pane('Plan').innerText()));
  await wb.shot('no-folder', wb.sidebar);
  toDocs('no-folder');
  // Nothing started: no server, so no storage or checkpoints for whatever folder it would use.
  assert.ok(!existsSync(join(dirs.home, '.local/state/plansight')), 'no Plansight storage was made');
  log('Open Folder opens the folder picker');
  await open.click();
  await wb.quickInput.waitFor({ state: 'visible' });
  await page.keyboard.press('Escape');
  passed();
});
