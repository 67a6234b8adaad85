// Sessions in the Conversation view (issue 28): a run in one session, a new session from the
// sessions control and a run in it, the list with both (time, status; the shown one marked) at
// the default 300 px sidebar, switching to the first session while the second runs (its
// conversation, and nothing of the running one's; the running one marked and not deletable),
// rename from the row, each session's history on switching, delete with a modal confirm. The fake API replays
// fixtures/vscode-e2e/sessions.json.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { log, openWorkbench, repoDir, startFakeApi } from './harness.mjs';
import { waitFor, workbench } from './workbench.mjs';

const recording = join(repoDir, 'fixtures/vscode-e2e/sessions.json');

test('sessions: new, switch with each one\'s history, rename, delete', { timeout: 6 * 60_000 }, async (t) => {
  let fake;
  const { page, passed } = await openWorkbench(t, {
    name: 'sessions',
    env: { ANTHROPIC_API_KEY: 'e2e-test-key' },
    async beforeStart(sandbox, cleanups) {
      fake = await startFakeApi(recording, join(sandbox.root, 'fakeapi.log'));
      cleanups.push(fake.stop);
      return { settings: { 'plansight.baseUrl': fake.baseUrl } };
    },
  });
  const wb = workbench(page);
  await wb.openPlansight();
  const frame = await wb.conversation();
  const summaryTitle = () => frame.locator('#sessions summary .title').innerText();
  const rows = frame.locator('#sessions li.session');
  const openList = async () => {
    if (!(await frame.locator('#sessions details[open]').count())) {
      await frame.locator('#sessions summary').click();
    }
    await rows.first().waitFor();
  };

  log('a run in the first session');
  await wb.ask('Tell me about alpha');
  await wb.conversationShows('the first answer', /alpha[\s\S]*Done\s*1 round/);
  await waitFor('the sessions control to name the first session', async () => (await summaryTitle()) === 'Tell me about alpha');
  assert.equal(await frame.locator('#sessions details[open]').count(), 0, 'the list opens only when asked');
  assert.notEqual(
    await frame.evaluate(() => document.activeElement?.closest('#sessions') !== null),
    true,
    'the sessions control takes no focus on its own',
  );

  log('New Session from the sessions control, and a run in it');
  await openList();
  await frame.locator('#sessions [data-session="new"]').click();
  await waitFor('the conversation to start over', async () => (await frame.locator('.entry.user').count()) === 0);
  await wb.ask('Tell me about bravo');
  await wb.conversationShows('the second answer', /bravo[\s\S]*Done\s*1 round/);
  assert.ok(!/alpha/.test(await frame.locator('#log').innerText()), 'the second session shows only its own conversation');
  await waitFor('the control to name the second session', async () => (await summaryTitle()) === 'Tell me about bravo');

  log('the list at the default 300 px sidebar');
  const box = await wb.sidebar.boundingBox();
  await page.mouse.move(box.x + box.width + 1, box.y + box.height / 2);
  await page.mouse.down();
  await page.mouse.move(box.x + 300, box.y + box.height / 2, { steps: 5 });
  await page.mouse.up();
  await waitFor('the sidebar at about 300 px', async () => Math.abs((await wb.sidebar.boundingBox()).width - 300) <= 4);
  await openList();
  await waitFor('both sessions listed', async () => (await rows.count()) === 2);
  const listed = await rows.evaluateAll((lis) => lis.map((li) => ({ title: li.querySelector('.title')?.textContent, meta: li.querySelector('.meta')?.textContent, shown: li.classList.contains('shown') })));
  assert.deepEqual(listed.map((r) => r.title), ['Tell me about bravo', 'Tell me about alpha'], 'newest first');
  assert.deepEqual(listed.map((r) => r.shown), [true, false], 'the shown one is marked');
  assert.ok(listed.every((r) => /ago|just now/.test(r.meta ?? '')), `each with its time: ${JSON.stringify(listed)}`);
  const fits = await frame.evaluate(() => document.documentElement.scrollWidth <= document.documentElement.clientWidth);
  assert.ok(fits, 'nothing runs past the view\'s right edge at 300 px');
  await waitFor('the prompt box fitted again to the narrower view (its placeholder not cut)', async () => {
    const layout = await wb.composerLayout();
    if (layout.promptCut) throw new Error(JSON.stringify(layout));
    return true;
  }, 5_000);
  await wb.shot('28-sidebar-sessions-300px', wb.sidebar);

  log('a run in the second session that takes a while; switching to the first while it goes on');
  await wb.ask('Tell me about charlie');
  await waitFor('the third prompt shown', async () => (await frame.locator('.entry.user').count()) === 2);
  await openList();
  await rows.filter({ hasText: 'alpha' }).locator('[data-session="open"]').click();
  await wb.conversationShows('the first session\'s conversation', /Tell me about alpha[\s\S]*alpha[\s\S]*Done\s*1 round/);
  await waitFor('the control to name the first session', async () => (await summaryTitle()) === 'Tell me about alpha');
  await openList();
  const bravo = rows.filter({ hasText: 'bravo' });
  // Shown while the second session still runs (else this test would check nothing).
  assert.match((await bravo.getAttribute('class')) ?? '', /\brunning\b/, 'the second session is marked running');
  assert.equal(await bravo.locator('[data-session="delete"]').count(), 0, 'the running session cannot be deleted');
  assert.equal(await bravo.locator('button[disabled]').count(), 1, 'its Delete is greyed');
  await waitFor('the status line to name the session that runs', async () =>
    (await frame.locator('#status').innerText()) === 'Working in another session: “Tell me about bravo”.',
  );
  // The composer at 300 px (issue 31): its status on one line (cut, whole in its tooltip), its
  // buttons on one row, icons only but Send's, each in sight and named.
  const narrow = await wb.composerLayout();
  assert.equal(narrow.statusLines, 1, `the status on one line: ${JSON.stringify(narrow)}`);
  assert.equal(narrow.statusTitle, narrow.status, 'the whole status in its tooltip');
  assert.deepEqual(narrow.buttons, ['planFirst', 'newSession', 'stop', 'send'], 'Stop in sight while a run goes on');
  assert.equal(narrow.rows, 1, `the buttons on one row: ${JSON.stringify(narrow)}`);
  assert.deepEqual(narrow.pastTheEdge, [], 'no button past the edge');
  assert.deepEqual(narrow.nameless, [], 'each button named');
  assert.deepEqual(narrow.labelsShown, ['send'], 'icons only, but Send');
  await wb.shot('28-sidebar-sessions-running', wb.sidebar);
  await wb.shot('31-composer-running-300px', frame.locator('#composer'));
  await waitFor('the second session\'s run to end', async () => !/\brunning\b/.test((await bravo.getAttribute('class')) ?? ''), 60_000);
  await waitFor('the fake to have answered the third run', async () => (await fake.messages()).length === 3);
  const shownLog = await frame.locator('#log').innerText();
  assert.ok(!/charlie|bravo/.test(shownLog), `nothing of the second session's run is drawn in the first: ${JSON.stringify(shownLog)}`);
  assert.equal(await frame.locator('.entry.user').count(), 1, 'the first session\'s one prompt');

  log('rename from the row');
  await openList();
  await rows.filter({ hasText: 'alpha' }).locator('[data-session="rename"]').click();
  await wb.answerInput('rename the session', 'Alpha renamed');
  await waitFor('the new title in the control', async () => (await summaryTitle()) === 'Alpha renamed');

  log('switching to the second session shows its whole conversation, the late answer too');
  await openList();
  await bravo.locator('[data-session="open"]').click();
  await wb.conversationShows('the second session\'s history', /Tell me about bravo[\s\S]*bravo[\s\S]*Tell me about charlie[\s\S]*charlie/);
  assert.ok(!/alpha/i.test(await frame.locator('#log').innerText()), 'none of the first session');

  log('delete the other session from its row, with a modal confirm');
  await openList();
  await rows.filter({ hasText: 'Alpha renamed' }).locator('[data-session="delete"]').click();
  const dialog = page.locator('.monaco-dialog-box');
  await dialog.waitFor();
  assert.match(await dialog.innerText(), /Delete the session “Alpha renamed”\?/);
  await dialog.locator('.monaco-button', { hasText: /^Delete$/ }).click();
  await openList();
  await waitFor('one session left', async () => (await rows.count()) === 1);
  assert.equal(await summaryTitle(), 'Tell me about bravo', 'the shown session stays shown');
  assert.equal((await fake.messages()).length, 3, 'one model request per run');

  log('the composer at a 440 px sidebar: its buttons with their names, on one row');
  await wb.sidebarWidth(440);
  await waitFor('the buttons named in full on one row', async () => {
    const wide = await wb.composerLayout();
    if (wide.rows !== 1 || JSON.stringify(wide.labelsShown) !== JSON.stringify(['planFirst', 'newSession', 'send']) || wide.pastTheEdge.length) {
      throw new Error(JSON.stringify(wide));
    }
    return true;
  });
  await wb.shot('31-sidebar-sessions-440px', wb.sidebar);
  passed();
});
