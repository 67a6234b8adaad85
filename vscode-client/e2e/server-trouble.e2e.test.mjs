// A server in trouble, in a real VS Code (issue 31), set up through the user's own settings
// (`plansight.python` in the user settings.json, never a workspace file):
//
// 1. A crash loop: the interpreter is a wrapper that starts the real server and kills it (as the
//    kernel's OOM killer would) shortly after each `initialized`. The extension restarts it, then
//    gives up: the user sees plain words (not vscode-languageclient's "Pending response
//    rejected", "connection got disposed", "Server will not be restarted"), a way forward (Show
//    Log, Restart), the status bar and the Plan view saying the server stopped.
// 2. No bubblewrap: the interpreter is a wrapper that runs the real one with a PATH without bwrap.
//    The server warns that commands run without a sandbox; the warning names a setting the
//    extension contributes (plansight.sandbox.enabled), and its Open Setting button shows that
//    setting in the Settings editor.
//
// Screenshots at a 300 px and a 440 px sidebar: 31-crash-loop-*, 31-no-bwrap-*.
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { clientDir, log, openWorkbench, python } from './harness.mjs';
import { waitFor, workbench } from './workbench.mjs';

/** vscode-languageclient's own words: none may reach the user. */
const LIBRARY_WORDS = /Pending response rejected|connection got disposed|Connection to server got closed|will not be restarted|couldn't create connection|Restarting server failed|The Plansight server crashed \d+ times|Plansight client:/i;

/** The settings the extension contributes. */
function contributedSettings() {
  const { contributes } = JSON.parse(readFileSync(join(clientDir, 'package.json'), 'utf8'));
  const sections = Array.isArray(contributes.configuration) ? contributes.configuration : [contributes.configuration];
  return new Set(sections.flatMap((section) => Object.keys(section.properties ?? {})));
}

/**
 * The crash wrapper: run as the interpreter. Anything but `-m plansight lsp` (the extension's
 * probe) goes to the real Python. The server runs as its child with the pipes relayed; once the
 * editor said `initialized` and a moment passed, the server is killed and the wrapper dies the
 * same way, so the editor sees its server killed (SIGKILL) after a good start, every time.
 */
function crashWrapper(path, starts) {
  writeFileSync(
    path,
    `#!${python}
import os, signal, subprocess, sys, threading, time
REAL = ${JSON.stringify(python)}
if sys.argv[1:4] != ["-m", "plansight", "lsp"]:
    os.execv(REAL, [REAL, *sys.argv[1:]])
with open(${JSON.stringify(starts)}, "a") as f:
    f.write("start\\n")
server = subprocess.Popen([REAL, *sys.argv[1:]], stdin=subprocess.PIPE, stdout=subprocess.PIPE)

def die():
    time.sleep(0.5)
    server.kill()
    server.wait()
    os.kill(os.getpid(), signal.SIGKILL)

def to_server():
    seen = b""
    while chunk := os.read(0, 65536):
        server.stdin.write(chunk)
        server.stdin.flush()
        seen = (seen + chunk)[-4096:]
        if b'"method":"initialized"' in seen:
            threading.Thread(target=die, daemon=True).start()
            seen = b""

def to_editor():
    while chunk := os.read(server.stdout.fileno(), 65536):
        os.write(1, chunk)

threading.Thread(target=to_server, daemon=True).start()
to_editor()
server.wait()
`,
  );
  chmodSync(path, 0o755);
}

/**
 * The no-bwrap wrapper: the real Python with PATH set to a folder of the tools a server and its
 * commands use (sh, bash, git, python3), bubblewrap not among them.
 */
function noBwrapWrapper(path, bin) {
  mkdirSync(bin, { recursive: true });
  for (const tool of ['sh', 'bash', 'git', 'python3', 'env', 'ls', 'cat']) {
    const found = ['/usr/bin', '/bin'].map((dir) => join(dir, tool)).find((p) => existsSync(p));
    if (found) symlinkSync(found, join(bin, tool));
  }
  assert.ok(!existsSync(join(bin, 'bwrap')));
  writeFileSync(path, `#!/bin/sh\nPATH=${JSON.stringify(bin)} exec ${JSON.stringify(python)} "$@"\n`);
  chmodSync(path, 0o755);
}

/** Every notification toast's text, one line each. */
async function toastTexts(page) {
  return page
    .locator('.notifications-toasts .notification-toast')
    .evaluateAll((toasts) => toasts.map((t) => t.innerText.replace(/\s+/g, ' ')));
}

/** Shows a toast's whole message (a long one is cut to one line until expanded). */
async function expandToast(wb, toast) {
  await waitFor('the notification to finish sliding in', async () =>
    /notification-fade-in-done/.test((await toast.getAttribute('class')) ?? ''),
  );
  await toast.hover();
  const expand = toast.locator('.codicon-notifications-expand');
  if ((await expand.count()) > 0 && (await expand.isVisible())) {
    await expand.click();
  }
}

test('a server that keeps crashing is said in plain words, with a way forward', { timeout: 10 * 60_000 }, async (t) => {
  let starts;
  const { page, passed } = await openWorkbench(t, {
    name: 'crash-loop',
    env: { ANTHROPIC_API_KEY: 'e2e-test-key' },
    beforeStart(sandbox) {
      const wrapper = join(sandbox.root, 'crashing-python');
      starts = join(sandbox.root, 'starts.log');
      crashWrapper(wrapper, starts);
      return { settings: { 'plansight.python': wrapper } };
    },
  });
  const wb = workbench(page);
  await wb.openPlansight();
  await wb.sidebarWidth(300);

  const toast = wb.toast("Plansight's server stopped");
  await toast.waitFor({ timeout: 120_000 });
  const message = (await toast.innerText()).replace(/\s+/g, ' ');
  log(`crash loop: ${message}`);
  assert.match(message, /Plansight's server stopped 3 times in 3 minutes; see the output log\./);
  const buttons = await toast.locator('.monaco-button').allInnerTexts();
  assert.deepEqual(buttons.map((b) => b.trim()), ['Show Log', 'Restart'], 'a way forward');
  assert.equal(readFileSync(starts, 'utf8').split('\n').filter(Boolean).length, 3, 'started, restarted twice, then left stopped');

  const status = page.locator('.statusbar-item', { hasText: 'Plansight: server stopped' });
  await status.waitFor();
  const tooltip = await status.locator('a, .statusbar-item-label').first().getAttribute('aria-label');
  log(`status bar: ${tooltip}`);
  await waitFor('the Plan view to say the server stopped', async () => {
    const text = await wb.pane('Plan').innerText();
    if (!/server stopped/i.test(text)) throw new Error(`the Plan view says ${JSON.stringify(text)}`);
    return true;
  });
  const conversation = await wb.conversation();
  await waitFor('the composer to say the server is not running', async () => {
    const text = await conversation.locator('#status').innerText();
    if (!/not running/.test(text)) throw new Error(`the composer says ${JSON.stringify(text)}`);
    return true;
  });

  // Nothing the user can see says it in the library's words.
  const seen = [
    ...(await toastTexts(page)),
    await wb.sidebar.innerText(),
    await conversation.locator('body').innerText(),
    await page.locator('.part.statusbar').innerText(),
  ].join('\n');
  assert.doesNotMatch(seen, LIBRARY_WORDS);
  assert.equal(await page.locator('.notifications-toasts .notification-toast').count(), 1, 'said once');

  await expandToast(wb, toast);
  await wb.shot('31-crash-loop-300px');
  await wb.sidebarWidth(440);
  await wb.shot('31-crash-loop-440px');

  log('Show Log: the output says what happened, in the same words');
  await toast.locator('.monaco-button', { hasText: /^Show Log$/ }).click();
  await waitFor('the Plansight output with the crash words', async () => {
    const text = await page.locator('.part.panel .view-lines').first().innerText();
    if (!/stopped 3 times in 3 minutes/.test(text.replace(/\u00a0/g, ' '))) throw new Error(`the output shows …${JSON.stringify(text.slice(-300))}`);
    return true;
  });
  passed();
});

test('without bubblewrap the warning names a setting that exists and opens it', { timeout: 10 * 60_000 }, async (t) => {
  const { page, passed } = await openWorkbench(t, {
    name: 'no-bwrap',
    env: { ANTHROPIC_API_KEY: 'e2e-test-key' },
    beforeStart(sandbox) {
      const wrapper = join(sandbox.root, 'python-without-bwrap');
      noBwrapWrapper(wrapper, join(sandbox.root, 'bin'));
      return { settings: { 'plansight.python': wrapper } };
    },
  });
  const wb = workbench(page);
  await wb.openPlansight();
  await wb.sidebarWidth(300);

  const toast = wb.toast('commands run without a sandbox');
  await toast.waitFor({ timeout: 90_000 });
  const message = (await toast.innerText()).replace(/\s+/g, ' ');
  log(`warning: ${message}`);
  assert.match(message, /bwrap/);
  const named = [...message.matchAll(/\bplansight\.[\w.]*\w/g)].map((m) => m[0]);
  assert.ok(named.length > 0, 'the warning names a setting');
  const settings = contributedSettings();
  for (const name of named) {
    assert.ok(settings.has(name), `${name} is a setting the extension contributes`);
  }
  assert.doesNotMatch(message, /the option sandbox\.enabled|or false\b/, "not the server's option");
  await expandToast(wb, toast);
  await wb.shot('31-no-bwrap-300px');
  await wb.sidebarWidth(440);
  await wb.shot('31-no-bwrap-440px');

  await toast.locator('.monaco-button', { hasText: /^Open Setting$/ }).click();
  const item = page.locator('.settings-editor .setting-item-contents', { hasText: 'Whether the agent\'s shell commands run in a sandbox' });
  await item.waitFor({ timeout: 30_000 });
  const search = await page.locator('.settings-editor .suggest-input-container .view-lines').innerText();
  assert.match(search.replace(/\u00a0/g, ' '), /plansight\.sandbox\.enabled/, 'the Settings editor searched for that setting');
  assert.match(await item.innerText(), /Sandbox: Enabled/i);
  await wb.shot('31-no-bwrap-setting-440px');
  passed();
});
