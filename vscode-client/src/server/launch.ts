/**
 * How the server starts on the chosen interpreter: with the plansight package installed in it,
 * or with the server the extension bundles (bundled/, laid out by scripts/bundle-python.mjs),
 * or not at all, with a message that says why and what to do. Pure: no `vscode` import.
 *
 * The rule: an interpreter named by the `plansight.python` setting that imports plansight runs
 * its own (a clone installed with `pip install -e`, as before the bundle). Otherwise the bundled
 * server runs on the interpreter when it is a CPython the bundle was built for; the Python
 * extension's interpreter or `python3` runs the bundled server even when it has a plansight of
 * its own, so that the server always matches the extension. A build without bundled/ (a
 * development build) falls back to the interpreter's own plansight.
 */
import { join } from 'node:path';
import type { ProcessOutput } from './python';

export const minimumPython: readonly [number, number] = [3, 11];

export type PythonSource = 'setting' | 'Python extension' | 'default';

export interface PythonChoice {
  python: string;
  source: PythonSource;
}

/** bundled/manifest.json: what the bundle holds. */
export interface BundleManifest {
  plansight: string;
  /** CPython versions with compiled parts under libs/cp3XX, e.g. ["3.11", "3.12"]. */
  pythons: string[];
  platform: string;
  machine: string;
}

export interface Bundle {
  dir: string;
  manifest: BundleManifest;
}

/**
 * Run as `<python> -c probeScript` (any Python, 2.7 included, so that an old one is named
 * rather than failing on syntax): one JSON line about the interpreter and its own plansight.
 */
export const probeScript = [
  'import sys, json, platform',
  'info = {"version": list(sys.version_info[:3]), "implementation": platform.python_implementation(),',
  '        "platform": sys.platform, "machine": platform.machine()}',
  'try:',
  '    import plansight',
  '    info["plansight"] = getattr(plansight, "__version__", "unknown")',
  '    info["plansightPath"] = getattr(plansight, "__file__", "")',
  'except Exception as error:',
  '    info["plansightError"] = "%s: %s" % (type(error).__name__, error)',
  'print(json.dumps(info))',
].join('\n');

export interface PythonInfo {
  version: [number, number, number];
  implementation: string;
  platform: string;
  machine: string;
  plansight?: string;
  plansightPath?: string;
  plansightError?: string;
}

export type Launch =
  | { kind: 'own'; python: string; source: PythonSource; info: PythonInfo }
  | { kind: 'bundled'; python: string; source: PythonSource; info: PythonInfo; bundle: Bundle }
  | { kind: 'error'; python: string; source: PythonSource; message: string; detail: string };

export function parseManifest(text: string): BundleManifest | undefined {
  try {
    const data = JSON.parse(text) as Partial<BundleManifest>;
    if (typeof data.plansight === 'string' && Array.isArray(data.pythons) && data.pythons.length > 0) {
      return {
        plansight: data.plansight,
        pythons: data.pythons.filter((v): v is string => typeof v === 'string'),
        platform: String(data.platform ?? 'linux'),
        machine: String(data.machine ?? 'x86_64'),
      };
    }
  } catch {
    // A broken manifest is no bundle: the caller logs it.
  }
  return undefined;
}

/** The probe's JSON line (the last line of stdout), or undefined when there is none. */
export function parseProbe(output: ProcessOutput): PythonInfo | undefined {
  const line = output.stdout.trim().split('\n').pop()?.trim();
  if (output.code !== 0 || !line) {
    return undefined;
  }
  try {
    const data = JSON.parse(line) as Partial<PythonInfo>;
    const version = data.version;
    if (!Array.isArray(version) || version.length < 2 || !version.every((n) => typeof n === 'number')) {
      return undefined;
    }
    return {
      version: [version[0]!, version[1]!, version[2] ?? 0],
      implementation: String(data.implementation ?? ''),
      platform: String(data.platform ?? ''),
      machine: String(data.machine ?? ''),
      ...(typeof data.plansight === 'string' ? { plansight: data.plansight } : {}),
      ...(typeof data.plansightPath === 'string' ? { plansightPath: data.plansightPath } : {}),
      ...(typeof data.plansightError === 'string' ? { plansightError: data.plansightError } : {}),
    };
  } catch {
    return undefined;
  }
}

/** "/usr/bin/python3 (the plansight.python setting)", for messages. */
export function describePython({ python, source }: PythonChoice): string {
  switch (source) {
    case 'setting':
      return `${python} (set in "plansight.python")`;
    case 'Python extension':
      return `${python} (the Python extension's interpreter)`;
    default:
      return `${python} (on PATH)`;
  }
}

function versionRange(pythons: readonly string[]): string {
  const sorted = [...pythons].sort((a, b) => compare(parse(a), parse(b)));
  return sorted.length === 1 ? sorted[0]! : `${sorted[0]}–${sorted[sorted.length - 1]}`;
}

function parse(version: string): number[] {
  return version.split('.').map(Number);
}

function compare(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < Math.max(a.length, b.length); i += 1) {
    const d = (a[i] ?? 0) - (b[i] ?? 0);
    if (d !== 0) {
      return d;
    }
  }
  return 0;
}

/** Where to turn when this interpreter cannot be used. */
function remedy(choice: PythonChoice, wanted: string): string {
  return choice.source === 'setting'
    ? `Set "plansight.python" to ${wanted}.`
    : `Install ${wanted} and set "plansight.python" to it (or select it in the Python extension).`;
}

export function decideLaunch(choice: PythonChoice, probe: ProcessOutput, bundle: Bundle | undefined): Launch {
  const who = describePython(choice);
  const minimum = minimumPython.join('.');
  const fail = (message: string, detail: string): Launch => ({ kind: 'error', ...choice, message, detail });
  if (probe.spawnError) {
    return fail(
      `Plansight: ${who} could not be started (${probe.spawnError}). Plansight needs Python ${minimum} or newer. ` +
        remedy(choice, `a Python ${minimum} or newer`),
      probe.spawnError,
    );
  }
  const info = parseProbe(probe);
  if (!info) {
    const why = probe.stderr.trim().split('\n').pop() || `exit code ${probe.code}`;
    return fail(
      `Plansight: ${who} did not run as a Python ${minimum} or newer (${why}). ` + remedy(choice, `a Python ${minimum} or newer`),
      `${probe.stdout}${probe.stderr}`,
    );
  }
  const found = info.version.join('.');
  if (info.plansight !== undefined && (choice.source === 'setting' || !bundle)) {
    return { kind: 'own', ...choice, info };
  }
  if (compare(info.version, minimumPython) < 0) {
    return fail(
      `Plansight needs Python ${minimum} or newer; ${who} is Python ${found}. ` + remedy(choice, `a Python ${minimum} or newer`),
      `Python ${found} at ${choice.python}`,
    );
  }
  if (!bundle) {
    const why = info.plansightError ?? 'no plansight package';
    return fail(
      `Plansight: ${who} cannot import the plansight package (${why}). Install it into that interpreter ` +
        `(${choice.python} -m pip install -e <path to the plansight repository>) or set "plansight.python" ` +
        'to an interpreter that has it.',
      why,
    );
  }
  const range = versionRange(bundle.manifest.pythons);
  const wanted = `a CPython ${range}, or an interpreter with plansight installed`;
  if (info.implementation !== 'CPython') {
    return fail(
      `Plansight's bundled server runs on CPython ${range}; ${who} is ${info.implementation} ${found}. ` + remedy(choice, wanted),
      `${info.implementation} ${found}`,
    );
  }
  const platform = `${bundle.manifest.platform} ${bundle.manifest.machine}`;
  // sys.platform is "linux" (Python 2 said "linux2"); platform.machine() is "x86_64" there.
  if (!info.platform.startsWith(bundle.manifest.platform) || info.machine !== bundle.manifest.machine) {
    return fail(
      `Plansight's bundled server is built for ${platform}; ${who} runs on ${info.platform} ${info.machine}. ` +
        remedy(choice, 'an interpreter with plansight installed'),
      `${info.platform} ${info.machine}`,
    );
  }
  if (!bundle.manifest.pythons.includes(`${info.version[0]}.${info.version[1]}`)) {
    return fail(
      `Plansight's bundled server is built for Python ${range}; ${who} is Python ${found}. ` + remedy(choice, wanted),
      `Python ${found} at ${choice.python}`,
    );
  }
  return { kind: 'bundled', ...choice, info, bundle };
}

/** The command line that runs `module` (or `-c code`) as this launch does. */
export function commandLine(
  launch: Exclude<Launch, { kind: 'error' }>,
  module: string,
  args: readonly string[] = [],
): { command: string; args: string[] } {
  const target = module === '-c' ? ['-c', ...args] : [module, ...args];
  if (launch.kind === 'own') {
    return { command: launch.python, args: module === '-c' ? target : ['-m', ...target] };
  }
  // -I: the user's PYTHONPATH and user site stay out of the bundled server; -u: its stdout is
  // the LSP channel (and -I drops PYTHONUNBUFFERED).
  return { command: launch.python, args: ['-I', '-u', join(launch.bundle.dir, 'launch.py'), ...target] };
}

/** One line for the output channel: which Python and which server. */
export function describeLaunch(launch: Exclude<Launch, { kind: 'error' }>): string {
  const { info } = launch;
  const python = `Python ${info.version.join('.')} (${info.implementation}, ${info.platform} ${info.machine})`;
  if (launch.kind === 'own') {
    return `${python}; server: plansight ${info.plansight} installed in that interpreter (${info.plansightPath ?? ''})`;
  }
  return `${python}; server: plansight ${launch.bundle.manifest.plansight} bundled with the extension (${launch.bundle.dir})`;
}
