// Version 3 in a real VS Code: a workspace's MCP server the user does not trust. The trust
// notification is answered Deny: nothing runs (the server's start marker stays absent), the
// status bar and Plansight: MCP Servers say it is untrusted, and a run is offered none of its
// tools. The fake API replays fixtures/vscode-e2e/mcp-deny.json.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { log, openWorkbench, python, repoDir, startFakeApi } from './harness.mjs';
import { waitFor, workbench } from './workbench.mjs';

const recording = join(repoDir, 'fixtures/vscode-e2e/mcp-deny.json');
const script = JSON.parse(readFileSync(recording, 'utf8'));
const faultServer = join(repoDir, 'fixtures/mcp/fault_server.py');

test('MCP in a real VS Code: a workspace server denied never runs', { timeout: 6 * 60_000 }, async (t) => {
  let fake;
  const { dirs, page, passed } = await openWorkbench(t, {
    name: 'mcp-deny',
    env: { ANTHROPIC_API_KEY: 'e2e-test-key' },
    async beforeStart(sandbox, cleanups) {
      writeFileSync(
        join(sandbox.workspace, '.mcp.json'),
        // --marker: the server appends a line as it starts; it must never start here.
        JSON.stringify({ mcpServers: { faults: { command: python, args: [faultServer, '--marker', join(sandbox.workspace, '.faults-starts')] } } }, null, 2),
      );
      fake = await startFakeApi(recording, join(sandbox.root, 'fakeapi.log'));
      cleanups.push(fake.stop);
      return { settings: { 'plansight.baseUrl': fake.baseUrl } };
    },
  });
  const wb = workbench(page);
  const marker = join(dirs.workspace, '.faults-starts');

  log('the trust question, answered Deny');
  const trust = wb.toast('names the MCP server');
  await trust.waitFor();
  assert.ok((await trust.innerText()).includes(`runs: ${python} ${faultServer}`), 'it names the command');
  await trust.locator('.monaco-button', { hasText: /^Deny$/ }).click();
  await waitFor('the notification to go', async () => (await trust.count()) === 0);

  log('the status bar and the servers list say untrusted');
  const status = page.locator('.statusbar-item', { hasText: /MCP \d+\/\d+/ }).first();
  await waitFor('the MCP status bar item to say 0/1', async () => /MCP 0\/1/.test(await status.innerText()));
  await status.click();
  const row = page.locator('.quick-input-list .monaco-list-row', { hasText: 'faults' }).first();
  await row.waitFor();
  assert.match(await row.innerText(), /untrusted/, 'the server is listed as untrusted');
  await wb.shot('29-window-mcp-denied');
  await page.keyboard.press('Escape');

  log('a run is offered none of its tools; the server never started');
  await wb.openPlansight();
  await wb.ask(script.prompt);
  await wb.conversationShows('the answer', /no MCP server is running[\s\S]*Done/);
  const [request] = await fake.messages();
  const offered = (request.body.tools ?? []).map((tool) => tool.name);
  assert.ok(offered.includes('read_file'), `Plansight's own tools are offered: ${JSON.stringify(offered)}`);
  assert.deepEqual(offered.filter((name) => name.startsWith('mcp')), [], 'no MCP tool is offered');
  assert.equal(existsSync(marker), false, 'the denied server never ran');
  passed();
});
