// Which server starts on which interpreter, and what the user reads when none can: launch.ts's
// decisions on the probe's output, canned and (where this machine has the interpreters) real.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  type Bundle,
  commandLine,
  decideLaunch,
  parseManifest,
  type PythonChoice,
  probeScript,
} from '../src/server/launch';
import type { ProcessOutput } from '../src/server/python';

const bundle: Bundle = {
  dir: '/ext/bundled',
  manifest: { plansight: '0.1.0', pythons: ['3.11', '3.12', '3.13', '3.14'], platform: 'linux', machine: 'x86_64' },
};
const onPath: PythonChoice = { python: 'python3', source: 'default' };
const fromSetting: PythonChoice = { python: '/opt/py/bin/python3', source: 'setting' };

function probe(info: Record<string, unknown>): ProcessOutput {
  return {
    code: 0,
    stdout: `${JSON.stringify({ implementation: 'CPython', platform: 'linux', machine: 'x86_64', ...info })}\n`,
    stderr: '',
  };
}

describe('decideLaunch', () => {
  it('runs the bundled server on a bare CPython 3.11+ from PATH, isolated from the user\'s PYTHONPATH', () => {
    const launch = decideLaunch(onPath, probe({ version: [3, 12, 1], plansightError: "ModuleNotFoundError: No module named 'plansight'" }), bundle);
    expect(launch.kind).toBe('bundled');
    if (launch.kind === 'error') throw new Error(launch.message);
    expect(commandLine(launch, 'plansight', ['lsp'])).toEqual({
      command: 'python3',
      args: ['-I', '-u', '/ext/bundled/launch.py', 'plansight', 'lsp'],
    });
    expect(commandLine(launch, '-c', ['print(1)']).args).toEqual(['-I', '-u', '/ext/bundled/launch.py', '-c', 'print(1)']);
  });

  it('lets the plansight.python setting win with its own plansight, as before the bundle', () => {
    const launch = decideLaunch(fromSetting, probe({ version: [3, 11, 7], plansight: '0.1.0', plansightPath: '/src/plansight/__init__.py' }), bundle);
    expect(launch.kind).toBe('own');
    if (launch.kind === 'error') throw new Error(launch.message);
    expect(commandLine(launch, 'plansight', ['lsp'])).toEqual({ command: '/opt/py/bin/python3', args: ['-m', 'plansight', 'lsp'] });
  });

  it('runs the bundled server on an interpreter from the setting that has no plansight', () => {
    expect(decideLaunch(fromSetting, probe({ version: [3, 13, 0] }), bundle).kind).toBe('bundled');
  });

  it("prefers the bundled server to a plansight found in the Python extension's interpreter", () => {
    const choice: PythonChoice = { python: '/proj/.venv/bin/python', source: 'Python extension' };
    expect(decideLaunch(choice, probe({ version: [3, 12, 0], plansight: '0.0.9' }), bundle).kind).toBe('bundled');
    expect(decideLaunch(choice, probe({ version: [3, 12, 0], plansight: '0.0.9' }), undefined).kind).toBe('own');
  });

  it('says which version is needed and which was found for an interpreter that is too old', () => {
    const launch = decideLaunch(fromSetting, probe({ version: [3, 10, 13] }), bundle);
    expect(launch.kind).toBe('error');
    if (launch.kind !== 'error') return;
    expect(launch.message).toBe(
      'Plansight needs Python 3.11 or newer; /opt/py/bin/python3 (set in "plansight.python") is Python 3.10.13. ' +
        'Set "plansight.python" to a Python 3.11 or newer.',
    );
    const fromPath = decideLaunch(onPath, probe({ version: [3, 9, 18] }), bundle);
    expect(fromPath.kind === 'error' && fromPath.message).toBe(
      'Plansight needs Python 3.11 or newer; python3 (on PATH) is Python 3.9.18. ' +
        'Install a Python 3.11 or newer and set "plansight.python" to it (or select it in the Python extension).',
    );
  });

  it('names the versions the bundle was built for when the interpreter is newer than all of them', () => {
    const launch = decideLaunch(onPath, probe({ version: [3, 15, 0] }), bundle);
    expect(launch.kind === 'error' && launch.message).toMatch(
      /^Plansight's bundled server is built for Python 3\.11–3\.14; python3 \(on PATH\) is Python 3\.15\.0\. /,
    );
    // An interpreter with its own plansight still runs it from the setting, whatever its version.
    expect(decideLaunch(fromSetting, probe({ version: [3, 15, 0], plansight: '0.2.0' }), bundle).kind).toBe('own');
  });

  it('refuses PyPy and another platform, naming what the bundle needs', () => {
    const pypy = decideLaunch(onPath, probe({ version: [3, 11, 9], implementation: 'PyPy' }), bundle);
    expect(pypy.kind === 'error' && pypy.message).toMatch(/runs on CPython 3\.11–3\.14; python3 \(on PATH\) is PyPy 3\.11\.9/);
    const arm = decideLaunch(onPath, probe({ version: [3, 12, 0], machine: 'aarch64' }), bundle);
    expect(arm.kind === 'error' && arm.message).toMatch(/built for linux x86_64; python3 \(on PATH\) runs on linux aarch64/);
  });

  it('says when the interpreter cannot be started at all', () => {
    const launch = decideLaunch(
      { python: '/nope/python3', source: 'setting' },
      { code: null, stdout: '', stderr: '', spawnError: 'spawn /nope/python3 ENOENT' },
      bundle,
    );
    expect(launch.kind === 'error' && launch.message).toBe(
      'Plansight: /nope/python3 (set in "plansight.python") could not be started (spawn /nope/python3 ENOENT). ' +
        'Plansight needs Python 3.11 or newer. Set "plansight.python" to a Python 3.11 or newer.',
    );
  });

  it('keeps the pip install -e hint for a build without the bundle', () => {
    const launch = decideLaunch(onPath, probe({ version: [3, 11, 2], plansightError: "ModuleNotFoundError: No module named 'plansight'" }), undefined);
    expect(launch.kind === 'error' && launch.message).toMatch(
      /cannot import the plansight package \(ModuleNotFoundError: No module named 'plansight'\)\. .*pip install -e .*"plansight\.python"/,
    );
  });
});

describe('parseManifest', () => {
  it('reads what bundle-python.mjs writes and rejects what it does not', () => {
    expect(parseManifest('{"plansight":"0.1.0","pythons":["3.11"],"platform":"linux","machine":"x86_64","inputs":"x"}')).toEqual({
      plansight: '0.1.0',
      pythons: ['3.11'],
      platform: 'linux',
      machine: 'x86_64',
    });
    expect(parseManifest('{"pythons":[]}')).toBeUndefined();
    expect(parseManifest('not json')).toBeUndefined();
  });
});

/** Interpreters of this machine by version ("3.10"), from pyenv and /usr/bin. */
function interpreters(): Map<string, string> {
  const found = new Map<string, string>();
  const candidates = ['/usr/bin/python3', '/usr/bin/python2'];
  const pyenv = join(homedir(), '.pyenv/versions');
  if (existsSync(pyenv)) {
    for (const name of readdirSync(pyenv)) {
      candidates.push(join(pyenv, name, 'bin/python'));
    }
  }
  for (const python of candidates) {
    const result = spawnSync(python, ['-c', 'import sys; print("%d.%d" % sys.version_info[:2])'], { encoding: 'utf8' });
    if (result.status === 0 && !found.has(result.stdout.trim())) {
      found.set(result.stdout.trim(), python);
    }
  }
  return found;
}

describe("the probe on this machine's interpreters", () => {
  const found = interpreters();
  const run = (python: string): ProcessOutput => ({
    code: 0,
    stdout: execFileSync(python, ['-I', '-c', probeScript], { encoding: 'utf8' }),
    stderr: '',
  });
  const old = ['3.10', '3.9', '3.8', '3.7'].map((v) => found.get(v)).find(Boolean);
  it.skipIf(!old)(`says the version needed and found for an old Python (${old})`, () => {
    const launch = decideLaunch({ python: old!, source: 'setting' }, run(old!), bundle);
    expect(launch.kind === 'error' && launch.message).toMatch(
      new RegExp(`^Plansight needs Python 3\\.11 or newer; .+ is Python 3\\.(10|9|8|7)\\.\\d+\\. Set "plansight\\.python" to a Python 3\\.11 or newer\\.$`),
    );
  });
  const py2 = found.get('2.7');
  it.skipIf(!py2)('names Python 2.7 as too old rather than failing on syntax', () => {
    const output = spawnSync(py2!, ['-c', probeScript], { encoding: 'utf8' });
    const launch = decideLaunch({ python: py2!, source: 'setting' }, { code: output.status, stdout: output.stdout, stderr: output.stderr }, bundle);
    expect(launch.kind === 'error' && launch.message).toMatch(/needs Python 3\.11 or newer; .+ is Python 2\.7\.\d+\./);
  });
  const current = ['3.11', '3.12', '3.13'].map((v) => found.get(v)).find(Boolean);
  it.skipIf(!current)(`runs the bundled server on a CPython 3.11+ (${current})`, () => {
    expect(decideLaunch({ python: current!, source: 'default' }, run(current!), bundle).kind).toBe('bundled');
  });
});
