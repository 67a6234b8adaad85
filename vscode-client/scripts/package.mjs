// Packages the extension for linux-x64: the production build, the bundled server
// (bundle-python.mjs), then `vsce package`.
//
// vsce scans every packaged file for secrets; over the bundled server's 77 MB of PyPI wheels
// that scan takes over ten minutes here, so it runs on the extension's own files only (with
// vsce's own scanner) and vsce is told to skip it. Zipping takes most of a minute: when
// nothing that goes into the .vsix changed (its own files, and the bundle's manifest, whose
// `inputs` stands for the bundle), the .vsix already there is kept; each e2e test file
// packages the extension. Usage: node scripts/package.mjs
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const clientDir = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);

function step(command, args) {
  const result = spawnSync(command, args, { cwd: clientDir, stdio: 'inherit' });
  if (result.error || result.status !== 0) {
    process.stderr.write(`[package] ${command} ${args.join(' ')} failed\n`);
    process.exit(result.status || 1);
  }
}

step('node', ['scripts/build.mjs', '--production']);
step('node', ['scripts/bundle-python.mjs']);
// Bytecode a local run of bundled/launch.py left (for one Python version) is not shipped:
// .vscodeignore cannot exclude it (its `!bundled/libs/**` wins over any other pattern).
for (const entry of readdirSync(join(clientDir, 'bundled'), { recursive: true, withFileTypes: true })) {
  if (entry.isDirectory() && entry.name === '__pycache__') {
    rmSync(join(entry.parentPath, entry.name), { recursive: true, force: true });
  }
}

const own = [
  'package.json',
  'README.md',
  'bundled/launch.py',
  ...['dist', 'media'].flatMap((dir) =>
    readdirSync(join(clientDir, dir), { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile())
      .map((entry) => join(entry.parentPath, entry.name)),
  ),
];
const { lintFiles, prettyPrintLintResult } = require('@vscode/vsce/out/secretLint');
const scan = await lintFiles(own.map((file) => resolve(clientDir, file)), true, true);
if (!scan.ok) {
  process.stderr.write(`[package] secrets in the extension's own files:\n${scan.results.map(prettyPrintLintResult).join('\n')}\n`);
  process.exit(1);
}

const { version } = JSON.parse(readFileSync(join(clientDir, 'package.json'), 'utf8'));
const vsix = join(clientDir, `plansight-linux-x64-${version}.vsix`);
const hash = createHash('sha256');
for (const file of [...own, 'bundled/manifest.json', '.vscodeignore'].sort()) {
  hash.update(file).update('\0').update(readFileSync(resolve(clientDir, file))).update('\0');
}
const key = hash.digest('hex');
const stamp = `${vsix}.inputs`;
if (existsSync(vsix) && existsSync(stamp) && readFileSync(stamp, 'utf8') === key) {
  process.stderr.write(`[package] ${vsix} is up to date\n`);
} else {
  step('npx', [
    'vsce', 'package', '--target', 'linux-x64', '--allow-missing-repository', '--no-dependencies', '--skip-license',
    '--allow-package-all-secrets',
  ]);
  writeFileSync(stamp, key);
}
