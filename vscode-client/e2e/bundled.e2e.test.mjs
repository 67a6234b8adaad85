// The extension as a user gets it (issue 21): the .vsix alone, installed into a clean profile,
// and a bare Python 3.11+ (a venv without pip: the standard library and nothing else) as the
// `python3` on PATH; no plansight.python setting, no Python extension, nobody's PYTHONPATH. The
// server that ships inside the .vsix starts on that interpreter: a scripted run's grep (ripgrep
// from the .vsix) finds hello.py's functions, and Plansight: Run Demo replays the recorded
// session to the end. Without a browser: the installed extension's server answers `initialize`
// on every CPython 3.11+ this machine has, each from a bare venv.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import {
  bareInterpreter, findInterpreters, installedExtensionDir, installExtension, log, makeSandbox, nodeBinDir,
  openWorkbench, packageExtension, repoDir, startFakeApi,
} from './harness.mjs';
import { waitFor, workbench } from './workbench.mjs';

const recording = join(repoDir, 'fixtures/vscode-e2e/bundled.json');
const { prompt } = JSON.parse(readFileSync(recording, 'utf8'));
const interpreters = findInterpreters();
const supported = [...interpreters].filter(([v]) => /^3\.(1[1-9])$/.test(v));
// What a user has on PATH: the system's python3 where it is new enough, else any 3.11+.
const base = supported.find(([, p]) => p === '/usr/bin/python3') ?? supported[0];
// The environment of someone who installed nothing but Python: PATH without pyenv or a venv.
const plainPath = '/usr/local/bin:/usr/bin:/bin';

/** One LSP initialize/shutdown/exit over stdio; resolves with the initialize result. */
function initialize(command, args, { cwd, env }) {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(command, args, { cwd, env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stderr = '';
    let buffer = Buffer.alloc(0);
    let result;
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`no initialize answer within 90 s from ${command} ${args.join(' ')}:\n${stderr}`));
    }, 90_000);
    const send = (message) => {
      const body = Buffer.from(JSON.stringify({ jsonrpc: '2.0', ...message }));
      child.stdin.write(Buffer.concat([Buffer.from(`Content-Length: ${body.length}\r\n\r\n`), body]));
    };
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    child.stdout.on('data', (chunk) => {
      buffer = Buffer.concat([buffer, chunk]);
      for (;;) {
        const end = buffer.indexOf('\r\n\r\n');
        const length = end >= 0 ? Number(/Content-Length: (\d+)/i.exec(buffer.subarray(0, end).toString())?.[1]) : NaN;
        if (Number.isNaN(length) || buffer.length < end + 4 + length) break;
        const message = JSON.parse(buffer.subarray(end + 4, end + 4 + length).toString());
        buffer = buffer.subarray(end + 4 + length);
        if (message.id === 1) {
          result = message.result ?? { error: message.error };
          send({ id: 2, method: 'shutdown' });
        } else if (message.id === 2) {
          send({ method: 'exit' });
        }
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      if (result) resolvePromise({ result, code, stderr });
      else reject(new Error(`${command} exited (${code}) before answering initialize:\n${stderr}`));
    });
    send({ id: 1, method: 'initialize', params: { processId: null, rootUri: pathToFileURL(cwd).href, capabilities: {} } });
  });
}

test('the installed .vsix runs its server on each CPython 3.11+ here, from a bare venv', { timeout: 10 * 60_000, skip: !supported.length && 'no Python 3.11+ here' }, async (t) => {
  const dirs = makeSandbox();
  t.after(() => rmSync(dirs.root, { recursive: true, force: true }));
  log('packaging the extension (npm run package) and installing it');
  const vsix = packageExtension();
  log(`${vsix}: ${(statSync(vsix).size / 1e6).toFixed(1)} MB`);
  installExtension(dirs, vsix);
  const extension = installedExtensionDir(dirs);
  const manifest = JSON.parse(readFileSync(join(extension, 'bundled/manifest.json'), 'utf8'));
  assert.deepEqual(manifest.pythons, ['3.11', '3.12', '3.13', '3.14'], 'the bundle is built for CPython 3.11 to 3.14');
  assert.ok(readdirSync(join(extension, 'bundled/bin')).includes('rg'), 'ripgrep ships in the .vsix');
  for (const [version, python] of supported) {
    const bare = bareInterpreter(python, join(dirs.root, `bare-${version}`));
    log(`Python ${version} (${python}): plansight lsp from the installed extension`);
    const { result, code, stderr } = await initialize(bare.python, ['-I', '-u', join(extension, 'bundled/launch.py'), 'plansight', 'lsp'], {
      cwd: dirs.workspace,
      env: { PATH: plainPath, HOME: dirs.home, LANG: 'C.UTF-8' },
    });
    assert.ok(result.capabilities?.experimental?.plansight?.version >= 1, `Python ${version}: the server announces the protocol (${JSON.stringify(result)})\n${stderr}`);
    assert.equal(code, 0, `Python ${version}: the server exits cleanly after shutdown\n${stderr}`);
  }
});

test('only the .vsix and a bare python3 on PATH: a run with grep, then the demo', { timeout: 10 * 60_000, skip: !base && 'no Python 3.11+ here' }, async (t) => {
  const venvs = mkdtempSync(join(tmpdir(), 'plansight-bare-'));
  t.after(() => rmSync(venvs, { recursive: true, force: true }));
  const bare = bareInterpreter(base[1], join(venvs, 'bare'));
  log(`bare interpreter: ${bare.python} (a venv of ${base[1]}, Python ${base[0]}, no pip)`);
  let fake;
  const { dirs, page, passed } = await openWorkbench(t, {
    name: 'bundled',
    installOnly: true,
    env: {
      PATH: `${bare.bin}:${nodeBinDir}:${plainPath}`,
      PYTHONPATH: '',
      VIRTUAL_ENV: '',
      PYENV_VERSION: '',
      ANTHROPIC_API_KEY: 'e2e-test-key',
    },
    async beforeStart(sandbox, cleanups) {
      fake = await startFakeApi(recording, join(sandbox.root, 'fakeapi.log'));
      cleanups.push(fake.stop);
      return { settings: { 'plansight.baseUrl': fake.baseUrl } };
    },
  });
  const wb = workbench(page);
  await wb.openPlansight();
  log('asking: the answer needs a grep');
  await wb.ask(prompt);
  await wb.conversationShows('the answer and the end of the run', /defines greet and shout\.[\s\S]*Done/);
  const messages = await fake.messages();
  assert.equal(messages.length, 2, 'the run sent two requests: the prompt, then the grep result');
  const grepResult = JSON.stringify(messages[1].body.messages.at(-1));
  assert.match(grepResult, /tool_result/);
  assert.match(grepResult, /def greet\(name\):/, 'ripgrep from the .vsix found greet');
  assert.match(grepResult, /def shout\(name, times\):/, 'and shout');

  const logs = join(dirs.userData, 'logs');
  const output = readdirSync(logs, { recursive: true })
    .filter((f) => /plansight/i.test(f) && f.endsWith('.log'))
    .map((f) => readFileSync(join(logs, f), 'utf8'))
    .join('\n');
  const started = /server: plansight \S+ bundled with the extension/.exec(output);
  assert.ok(started, `the Plansight output says the bundled server runs:\n${output.slice(0, 2000)}`);
  assert.match(output, /Python: python3 \(from default\)/, 'on python3 from PATH');
  assert.match(output, new RegExp(`Python ${base[0].replace('.', '\\.')}\\.\\d+ \\(CPython`), 'the bare interpreter');
  await wb.shot('11-window-bundled-run');

  log('Plansight: Run Demo (its fake API, too, runs from the .vsix)');
  const before = readFileSync(join(dirs.workspace, 'hello.py'), 'utf8');
  await wb.runCommand('Plansight: Run Demo');
  const conversation = await wb.conversation();
  let accepted = 0;
  await waitFor('the demo run to finish (accepting every edit and command from their cards)', async () => {
    const text = await conversation.locator('#log').innerText();
    if (/Refactor hello\.py[\s\S]*\bDone\s*\d+ rounds?/.test(text)) return text;
    if (/\bError\b/.test(text)) throw new Error(`the demo failed: ${text}`);
    const review = conversation.locator('.card-review.open button[data-action="accept"]');
    if ((await review.count()) > 0) {
      await review.first().click({ timeout: 5000 });
      accepted += 1;
    }
    const approve = conversation.locator('.card-approval.open button[data-action="approve"]');
    if ((await approve.count()) > 0) {
      await approve.first().click({ timeout: 5000 });
    }
    return false;
  }, 180_000);
  assert.ok(accepted > 0, 'the demo proposed edits');
  assert.notEqual(readFileSync(join(dirs.workspace, 'hello.py'), 'utf8'), before, 'the accepted edits were written');
  await wb.shot('12-window-bundled-demo-done');
  passed();
});
