// A second window on the same folder (issue 31), in a real VS Code, and the project's
// instructions in the conversation's header: the workspace has an AGENTS.md; the first window
// shows "Reads AGENTS.md" in its header and runs a prompt. A second window (a second browser
// tab: its own extension host) on the same folder is refused the session by the server of the
// first; it says "Plansight is open in another window", shows the session read-only (the first
// window's run is in its conversation) and sends nothing. When it closes (its tab), its server
// process ends: none is left behind. At 300 px and 440 px.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { log, openWorkbench, repoDir, startFakeApi } from './harness.mjs';
import { waitFor, workbench } from './workbench.mjs';

const recording = join(repoDir, 'fixtures/vscode-e2e/second-window.json');
const script = JSON.parse(readFileSync(recording, 'utf8'));

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

/** The Plansight language servers working in `workspace` (their cwd), by pid. */
function serversIn(workspace) {
  const found = [];
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      if (cmdline.includes('lsp') && cmdline.some((a) => /plansight/.test(a)) && readlinkSync(`/proc/${pid}/cwd`) === workspace) {
        found.push(pid);
      }
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return found;
}

test('a second window shows the session read-only and leaves no server behind; the header names AGENTS.md', { timeout: 8 * 60_000 }, async (t) => {
  let fake;
  const { dirs, page, passed } = await openWorkbench(t, {
    name: 'second-window',
    env: { ANTHROPIC_API_KEY: 'e2e-test-key' },
    async beforeStart(sandbox, cleanups) {
      writeFileSync(join(sandbox.workspace, 'AGENTS.md'), '# Agents\n\nRun `python3 -m unittest` before you finish.\n');
      fake = await startFakeApi(recording, join(sandbox.root, 'fakeapi.log'));
      cleanups.push(fake.stop);
      return { settings: { 'plansight.baseUrl': fake.baseUrl } };
    },
  });
  const first = workbench(page);
  await first.openPlansight();
  await sidebarWidth(first, 300);
  const conversation = await first.conversation();
  await waitFor('the header to name AGENTS.md', async () => {
    const text = await conversation.locator('#instructions').innerText().catch(() => '');
    if (!/Reads AGENTS\.md/.test(text)) throw new Error(`the header says ${JSON.stringify(text)}`);
    return true;
  });
  const title = await conversation.locator('#instructions .instructions').getAttribute('title');
  assert.match(title, /Project instructions the model reads: AGENTS\.md \(\d+ bytes\)/);
  log('the first window runs a prompt');
  await first.ask(script.prompt);
  await first.conversationShows('the answer', /Hello from the first window/);
  await first.shot('31-header-instructions-300px', first.sidebar);
  await waitFor('one server for the workspace', () => serversIn(dirs.workspace).length === 1);
  const [firstServer] = serversIn(dirs.workspace);

  log('a second window on the same folder');
  const second = await page.context().browser().newPage({ viewport: { width: 1500, height: 900 } });
  await second.goto(page.url());
  await second.locator('.monaco-workbench').waitFor({ timeout: 60_000 });
  const wb2 = workbench(second);
  await wb2.openPlansight(); // 440 px
  await wb2.toast('Plansight is open in another window').waitFor({ timeout: 60_000 });
  // Said once, in our words: not the language client's ("couldn't create connection", "Restarting server failed").
  assert.equal(await second.locator('.notifications-toasts .notification-toast', { hasText: /couldn't create connection|Restarting server failed|did not start/ }).count(), 0);
  const conversation2 = await wb2.conversation();
  await wb2.conversationShows('the first window\'s run, read-only', /Hello from the first window/);
  await waitFor('the composer to say read-only', async () => {
    const status = await conversation2.locator('#status').innerText();
    if (!/open in another window: read-only here/.test(status)) throw new Error(`status ${JSON.stringify(status)}`);
    return true;
  });
  assert.match(await conversation2.locator('#instructions').innerText(), /Reads AGENTS\.md/);
  await wb2.shot('31-second-window-read-only-440px');
  await sidebarWidth(wb2, 300);
  await wb2.shot('31-second-window-read-only-300px', wb2.sidebar);
  // Two servers now: the first window's, and the second's read-only one (the refused one ended).
  await waitFor('the first server and one read-only server', () => serversIn(dirs.workspace).length === 2);
  assert.ok(serversIn(dirs.workspace).includes(firstServer), 'the first window keeps its server');

  log('a prompt from the second window is refused, the first window is untouched');
  const before = (await fake.messages()).length;
  await wb2.ask('Say hello again.');
  await wb2.conversationShows('the refusal', /read-only/);
  assert.equal((await fake.messages()).length, before, 'nothing was sent from the read-only window');

  log('the second window closes: its server ends');
  await second.close({ runBeforeUnload: true });
  await waitFor('only the first window\'s server left', () => {
    const left = serversIn(dirs.workspace);
    if (left.length !== 1 || left[0] !== firstServer) throw new Error(`servers ${JSON.stringify(left)}`);
    return true;
  });
  passed();
});
