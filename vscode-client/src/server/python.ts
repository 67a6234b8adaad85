/**
 * Which Python runs the server: the `plansight.python` setting, else the Python extension's
 * active interpreter (as in Microsoft's python-tools-extension-template), else `python3`; and
 * how the server starts on it (launch.ts decides: its own plansight or the bundled one).
 */
import { execFile } from 'node:child_process';
import * as os from 'node:os';
import * as vscode from 'vscode';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type Bundle, decideLaunch, type Launch, parseManifest, type PythonChoice, probeScript } from './launch';
import { expandPath } from './options';
import { userValue } from './userSettings';

/** The part of the ms-python.python API this extension uses. */
interface PythonEnvironmentPath {
  id: string;
  path: string;
}
interface ResolvedEnvironment {
  executable: { uri?: vscode.Uri };
}
interface PythonExtensionApi {
  environments: {
    getActiveEnvironmentPath(resource?: vscode.Uri): PythonEnvironmentPath;
    resolveEnvironment(
      environment: PythonEnvironmentPath | string,
    ): Promise<ResolvedEnvironment | undefined>;
    onDidChangeActiveEnvironmentPath: vscode.Event<unknown>;
  };
}


async function pythonExtensionApi(): Promise<PythonExtensionApi | undefined> {
  const extension = vscode.extensions.getExtension<PythonExtensionApi>('ms-python.python');
  if (!extension) {
    return undefined;
  }
  try {
    if (!extension.isActive) {
      await extension.activate();
    }
    return extension.exports?.environments ? extension.exports : undefined;
  } catch {
    return undefined;
  }
}

export async function findPython(resource?: vscode.Uri): Promise<PythonChoice> {
  // The user's setting only: a workspace's `.vscode/settings.json` never picks the program
  // that runs the server (userSettings.ts).
  const configured = userValue(vscode.workspace.getConfiguration('plansight', resource), 'python', '');
  if (configured.trim()) {
    const folder = resource
      ? vscode.workspace.getWorkspaceFolder(resource)
      : vscode.workspace.workspaceFolders?.[0];
    return { python: expandPath(configured, folder?.uri.fsPath, os.homedir()), source: 'setting' };
  }
  const api = await pythonExtensionApi();
  if (api) {
    try {
      const active = api.environments.getActiveEnvironmentPath(resource);
      const environment = await api.environments.resolveEnvironment(active);
      const executable = environment?.executable.uri?.fsPath;
      if (executable) {
        return { python: executable, source: 'Python extension' };
      }
    } catch {
      // Fall through to the default.
    }
  }
  return { python: 'python3', source: 'default' };
}

/** The server bundled in the extension (bundled/manifest.json), if this build has one. */
export async function findBundle(extensionPath: string): Promise<Bundle | string | undefined> {
  const dir = join(extensionPath, 'bundled');
  let text: string;
  try {
    text = await readFile(join(dir, 'manifest.json'), 'utf8');
  } catch {
    return undefined;
  }
  const manifest = parseManifest(text);
  return manifest ? { dir, manifest } : `${join(dir, 'manifest.json')} is not a bundle manifest`;
}

/**
 * Picks the interpreter, asks it what it is (launch.ts's probe, run as the server would be:
 * same folder, same environment), and decides how the server starts on it.
 */
export async function resolveLaunch(
  extensionPath: string,
  resource: vscode.Uri | undefined,
  options: { cwd?: string; env?: NodeJS.ProcessEnv; log?: (message: string) => void } = {},
): Promise<Launch> {
  const choice = await findPython(resource);
  const found = await findBundle(extensionPath);
  if (typeof found === 'string') {
    options.log?.(found);
  }
  const bundle = typeof found === 'string' ? undefined : found;
  const probe = await runQuick(choice.python, ['-c', probeScript], { cwd: options.cwd, env: options.env });
  return decideLaunch(choice, probe, bundle);
}

/** Calls `listener` when the Python extension's active interpreter changes. */
export async function onDidChangePython(
  listener: () => void,
): Promise<vscode.Disposable | undefined> {
  const api = await pythonExtensionApi();
  return api?.environments.onDidChangeActiveEnvironmentPath(() => listener());
}

export interface ProcessOutput {
  code: number | null;
  stdout: string;
  stderr: string;
  /** Set when the program could not be started at all (e.g. ENOENT). */
  spawnError?: string;
}

/** Runs a short command and collects its output; never rejects. */
export function runQuick(
  command: string,
  args: string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {},
): Promise<ProcessOutput> {
  return new Promise((resolve) => {
    execFile(
      command,
      args,
      { cwd: options.cwd, env: options.env, timeout: options.timeoutMs ?? 30_000, windowsHide: true },
      (error, stdout, stderr) => {
        if (error && typeof (error as NodeJS.ErrnoException).code === 'string') {
          resolve({ code: null, stdout, stderr, spawnError: error.message });
          return;
        }
        const code = error ? ((error as { code?: number }).code ?? 1) : 0;
        resolve({ code: typeof code === 'number' ? code : 1, stdout, stderr });
      },
    );
  });
}
