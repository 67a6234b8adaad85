// Version 3 in a real VS Code: MCP tools and secret files. The workspace's .mcp.json names a stdio
// MCP server (fixtures/mcp/fault_server.py, run by the venv's python): the trust question is a
// notification naming the command it would run, answered Allow; the server comes up (status bar,
// Plansight: MCP Servers). The model (fixtures/vscode-e2e/mcp.json) calls the server's echo tool:
// an approval card, answered Always Allow, the call shown with its server and result; a second
// call is not asked again. Then it reads the protected .env: one line says it is protected, and
// the secret is neither in the conversation nor in any request the fake API received. After a
// window reload the server starts again without asking; a follow-up's echo is still not asked,
// and a new tool's approval, with the conversation out of sight, is a notification.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { log, openWorkbench, python, repoDir, startFakeApi } from './harness.mjs';
import { WAIT, waitFor, workbench } from './workbench.mjs';

const recording = join(repoDir, 'fixtures/vscode-e2e/mcp.json');
const script = JSON.parse(readFileSync(recording, 'utf8'));
const faultServer = join(repoDir, 'fixtures/mcp/fault_server.py');
const SECRET = 'sk-e2e-do-not-leak-4f9c2a';

test('MCP in a real VS Code: trust, an approved call, always allow; a protected file', { timeout: 8 * 60_000 }, async (t) => {
  let fake;
  const { dirs, page, passed } = await openWorkbench(t, {
    name: 'mcp',
    env: { ANTHROPIC_API_KEY: 'e2e-test-key' },
    async beforeStart(sandbox, cleanups) {
      writeFileSync(
        join(sandbox.workspace, '.mcp.json'),
        // FAULT_SERVER_MARKER: the server appends a line as it starts (the starts are counted
        // below). Through env, not the command line: the trust covers the workspace files the
        // command line names, and this one the server writes itself (it would ask again).
        JSON.stringify({ mcpServers: { faults: { command: python, args: [faultServer], env: { FAULT_SERVER_MARKER: join(sandbox.workspace, '.faults-starts') } } } }, null, 2),
      );
      writeFileSync(join(sandbox.workspace, '.env'), `DATABASE_PASSWORD=${SECRET}\n`);
      fake = await startFakeApi(recording, join(sandbox.root, 'fakeapi.log'));
      cleanups.push(fake.stop);
      return { settings: { 'plansight.baseUrl': fake.baseUrl } };
    },
  });
  const wb = workbench(page);
  const marker = join(dirs.workspace, '.faults-starts');
  const starts = () => (existsSync(marker) ? readFileSync(marker, 'utf8').trim().split('\n').length : 0);

  log('the trust question: a notification naming the command, with Allow and Deny');
  const trust = wb.toast('names the MCP server');
  await trust.waitFor();
  const question = await trust.innerText();
  assert.match(question, /\.mcp\.json names the MCP server "faults"/, 'it names the file and the server');
  assert.ok(question.includes(`runs: ${python} ${faultServer}`), `it names the command: ${JSON.stringify(question)}`);
  for (const label of ['Allow', 'Deny']) {
    assert.equal(await trust.locator('.monaco-button', { hasText: new RegExp(`^${label}$`) }).count(), 1, `a ${label} button`);
  }
  await waitFor('the notification to finish sliding in', async () => /notification-fade-in-done/.test((await trust.getAttribute('class')) ?? ''));
  await wb.shot('24-window-mcp-trust');
  assert.equal(starts(), 0, 'nothing runs before the user allows it');
  await trust.locator('.monaco-button', { hasText: /^Allow$/ }).click();

  log('the server comes up: the status bar says MCP 1/1, the servers list shows its tools');
  const status = page.locator('.statusbar-item', { hasText: /MCP \d+\/\d+/ }).first();
  await waitFor('the MCP status bar item to say 1/1', async () => /MCP 1\/1/.test(await status.innerText()));
  assert.equal(starts(), 1, 'the server started once');
  await wb.openPlansight();
  log('MCP Servers from the conversation view\'s … menu');
  const header = wb.pane('Conversation').locator('.pane-header');
  const more = header.locator('.action-label[aria-label*="More Actions"]').first();
  const menuItem = page.locator('.monaco-menu .action-label', { hasText: /^MCP Servers$/ }).first();
  const row = page.locator('.quick-input-list .monaco-list-row', { hasText: 'faults' }).first();
  // A menu ignores a click that comes right as it opens: click until the list is up.
  await waitFor('the MCP servers list', async () => {
    if (await row.isVisible()) return true;
    if (await menuItem.isVisible()) {
      await menuItem.hover();
      await menuItem.click({ timeout: 2000 });
    } else {
      await header.hover();
      await more.click({ timeout: 2000 });
    }
    return false;
  });
  const listed = await row.innerText();
  assert.match(listed, /ready · \d+ tools/, `the server is ready with its tools: ${JSON.stringify(listed)}`);
  assert.match(listed, /\becho\b/, 'its tools are named');
  assert.match(listed, /\.mcp\.json/, 'its source is named');
  await wb.shot('25-window-mcp-servers');
  await page.keyboard.press('Escape');

  log('the model calls mcp__faults__echo: an approval card with Allow / Deny / Always Allow');
  await wb.ask(script.prompt);
  const frame = await wb.conversation();
  const card = await wb.openCard('mcpTool', 'echo');
  const cardText = await card.innerText();
  assert.match(cardText, /Call echo of the MCP server faults/, 'the card names the tool and its server');
  assert.match(cardText, /first echo from faults/, 'the card shows the input');
  for (const action of ['allow', 'deny', 'always']) {
    assert.equal(await card.locator(`button[data-action="${action}"]`).count(), 1, `a ${action} button`);
  }
  await wb.shot('26-window-mcp-approval');
  await card.locator('button[data-action="always"]').click();

  log('the call runs and shows like any tool call, its server named, with the result');
  await wb.conversationShows('the first echo with its result', /echo \(MCP faults\)[^\n]*→ first echo from faults/);
  await waitFor('the card to say allowed always', async () =>
    /Allowed \(always/.test(await frame.locator('.card-mcpTool').first().innerText()),
  );
  await wb.conversationShows('the second echo with its result', /echo \(MCP faults\)[^\n]*→ second echo from faults/);
  assert.equal(await frame.locator('.card-mcpTool').count(), 1, 'the second call of the tool is not asked again');
  assert.equal(await frame.locator('.card-mcpTool.open').count(), 0, 'no card waits');

  log('read_file on .env: one line says it is protected; the secret is nowhere');
  const text = await wb.conversationShows('the run to finish', /is protected, so I did not read it[\s\S]*Done/);
  const readRow = frame.locator('details.tool', { hasText: 'read_file' }).last();
  const readLine = await readRow.locator('summary').innerText();
  assert.match(readLine, /read_file[\s\S]*\.env[\s\S]*→[^\n]*protected/i, `the read's one line says protected: ${JSON.stringify(readLine)}`);
  await readRow.locator('summary').click();
  await waitFor('the read row to expand to its error', async () => /Error/.test(await readRow.innerText()));
  const error = readRow.locator('pre.wrap');
  assert.match(await error.innerText(), /^\.env is a protected file[\s\S]*Only the user can share it/, 'the whole reason');
  assert.ok(
    await error.evaluate((el) => el.scrollWidth <= el.clientWidth),
    'the reason wraps: all of it in sight in the narrow view, no scrolling sideways',
  );
  const whole = await frame.locator('#log').innerText();
  assert.ok(!whole.includes(SECRET) && !text.includes(SECRET), 'the secret is not in the conversation');
  // The composer sticks to the bottom of the view: center the reason so that it is not under it.
  await error.evaluate((el) => el.scrollIntoView({ block: 'center' }));
  await wb.shot('27-window-protected-file');
  const requests = JSON.stringify(await fake.requests());
  assert.ok(requests.includes('protected'), 'the model was told the file is protected');
  assert.ok(!requests.includes(SECRET), 'the secret is in no request the fake API received');

  log('reloading the window: the server, trusted already, starts again without asking');
  await page.reload();
  await page.locator('.monaco-workbench').waitFor({ timeout: WAIT });
  await waitFor('the server to start a second time', () => starts() === 2);
  await waitFor('the MCP status bar item to say 1/1 again', async () => /MCP 1\/1/.test(await status.innerText()));
  assert.equal(await wb.toast('names the MCP server').count(), 0, 'the trust question is not asked again');
  await wb.openPlansight();
  await wb.conversationShows('the past run after the reload', /is protected, so I did not read it/);

  log('a follow-up: echo is still not asked; sleep is asked by a notification with the conversation out of sight');
  const cardsBefore = await (await wb.conversation()).locator('.card-mcpTool').count();
  await wb.ask(script.followUp);
  await page.keyboard.press('Control+Shift+E');
  const asked = wb.toast('the call of sleep (MCP faults)');
  await asked.waitFor();
  assert.equal(await wb.toast('the call of echo').count(), 0, 'echo is not asked again after the reload');
  const links = await asked.locator('a').allInnerTexts();
  assert.deepEqual(links.filter((l) => /Allow|Deny/.test(l)), ['Allow', 'Deny', 'Always Allow'], 'the card\'s three choices');
  assert.match(await asked.innerText(), /\{"seconds":0\}/, 'the input');
  await wb.toastLinksInSight(asked, ['Allow', 'Deny', 'Always Allow']);
  await wb.shot('28-window-mcp-approval-notification');
  await asked.locator('a', { hasText: /^Allow$/ }).click();
  await waitFor('the notification to go', async () => (await asked.count()) === 0);
  await wb.openPlansight();
  const after = await wb.conversationShows(
    'the follow-up to finish',
    /echo \(MCP faults\)[^\n]*third echo after the reload[\s\S]*sleep \(MCP faults\)[\s\S]*Echoed again and slept\.[\s\S]*Done/,
  );
  const frameNow = await wb.conversation();
  const newCards = (await frameNow.locator('.card-mcpTool').allInnerTexts()).slice(cardsBefore);
  assert.equal(newCards.length, 1, `one approval in the follow-up: ${JSON.stringify(newCards)}`);
  assert.match(newCards[0], /Call sleep of the MCP server faults[\s\S]*Allowed/, 'the sleep call, allowed from the notification');
  const sleepRow = frameNow.locator('details.tool', { hasText: 'sleep (MCP faults)' }).last();
  assert.match(await sleepRow.locator('summary').innerText(), /→ slept/, 'its result');
  assert.ok(!after.includes(SECRET), 'the secret is not in the conversation after the reload either');
  passed();
});
