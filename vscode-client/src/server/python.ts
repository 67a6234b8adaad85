/**
 * Which Python runs the server: the `plansight.python` setting, else the Python extension's
 * active interpreter (as in Microsoft's python-tools-extension-template), else `python3`.
 */
import { execFile } from 'node:child_process';
import * as os from 'node:os';
import * as vscode from 'vscode';
import { expandPath } from './options';

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

export interface PythonChoice {
  python: string;
  source: 'setting' | 'Python extension' | 'default';
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
  const configured = vscode.workspace.getConfiguration('plansight', resource).get<string>('python', '');
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
