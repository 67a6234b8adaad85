/**
 * `plansight.runDemo`: replays the recorded demo with no API key, the way `plansight demo` does
 * in a terminal (server/plansight/cli/demo.py) and the e2e test serves its recording:
 *   1. the recording and the project it was recorded on ship inside the plansight package
 *      (`plansight/recordings/hello_refactor.json` and `hello_project.json`): the server's own
 *      interpreter, started as the server is (its plansight or the bundled one), says where;
 *   2. when the workspace lacks the project's files as recorded, the demo offers to write them
 *      to a new folder and opens it in a new window, where the demo then starts by itself;
 *   3. `plansight.fakeapi --script <recording> --port 0`, run as the server is, serves it and
 *      prints `{"baseUrl": ...}` on its first stdout line;
 *   4. the language server restarts with ANTHROPIC_BASE_URL pointing there, a dummy key, and a
 *      storage folder of its own (the demo never touches the workspace's stored session);
 *   5. the recording's prompt runs in a new session.
 * The next `plansight.ask` leaves the demo: the fake API stops and the server restarts on the
 * user's settings.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import * as vscode from 'vscode';
import type { PlansightServer } from '../server/client';
import { commandLine, type Launch } from '../server/launch';
import { runQuick } from '../server/python';
import type { RunController } from './run';

export const defaultDemoPrompt =
  'Refactor hello.py: add type hints, docstrings and a main guard, then run its tests';

/** The key `plansight demo` gives the fake API: any key works there, and it is no secret. */
const demoApiKey = 'plansight-demo-offline-key';

const pendingDemoKey = 'plansight.pendingDemoFolder';

/** Prints the shipped recordings' folder (importlib.resources: works for any install). */
const recordingsScript =
  "import importlib.resources as r; print(r.files('plansight').joinpath('recordings'))";

interface Demo {
  recording: string;
  prompt: string;
  /** The files the session was recorded on, by workspace-relative path (if known). */
  project?: Record<string, string>;
}

async function readJson(path: string): Promise<unknown> {
  return JSON.parse(await readFile(path, 'utf8'));
}

/** Finds the recording (and its prompt and project) with the server's interpreter. */
async function locateDemo(launch: Exclude<Launch, { kind: 'error' }>, cwd: string | undefined): Promise<Demo | string> {
  const { command, args } = commandLine(launch, '-c', [recordingsScript]);
  const asked = await runQuick(command, args, { cwd });
  const folder = asked.code === 0 ? asked.stdout.trim().split('\n').pop()?.trim() : undefined;
  if (!folder) {
    return asked.spawnError ?? (asked.stderr.trim().split('\n').pop() || 'the plansight package has no recordings');
  }
  const recording = join(folder, 'hello_refactor.json');
  let prompt = defaultDemoPrompt;
  try {
    const data = (await readJson(recording)) as { prompt?: unknown };
    if (typeof data.prompt === 'string' && data.prompt.trim()) {
      prompt = data.prompt;
    }
  } catch (error) {
    return `cannot read ${recording}: ${String(error)}`;
  }
  const demo: Demo = { recording, prompt };
  try {
    const project = (await readJson(join(folder, 'hello_project.json'))) as {
      files?: Record<string, unknown>;
    };
    if (project.files) {
      demo.project = Object.fromEntries(
        Object.entries(project.files).filter((e): e is [string, string] => typeof e[1] === 'string'),
      );
    }
  } catch {
    // No project description: replay in the current workspace as it is.
  }
  return demo;
}

/** Whether `folder` holds the demo project as recorded (the replay only fits those files). */
async function holdsProject(folder: string, files: Record<string, string>): Promise<boolean> {
  for (const [name, text] of Object.entries(files)) {
    try {
      if ((await readFile(join(folder, name), 'utf8')) !== text) {
        return false;
      }
    } catch {
      return false;
    }
  }
  return true;
}

/** Starts the fake API and resolves with its base URL (the first stdout line's JSON). */
function startFakeApi(
  launch: Exclude<Launch, { kind: 'error' }>,
  recording: string,
  cwd: string | undefined,
  output: vscode.LogOutputChannel,
): Promise<{ process: ChildProcess; baseUrl: string }> {
  return new Promise((resolve, reject) => {
    const { command, args } = commandLine(launch, 'plansight.fakeapi', ['--script', recording, '--port', '0']);
    const child = spawn(command, args, {
      cwd,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let buffer = '';
    const timer = setTimeout(() => {
      child.kill();
      reject(new Error('the fake API did not print its address within 20 s'));
    }, 20_000);
    child.stderr?.on('data', (chunk: Buffer) => output.debug(`[fakeapi] ${chunk.toString().trimEnd()}`));
    child.stdout?.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      const newline = buffer.indexOf('\n');
      if (newline < 0) {
        return;
      }
      clearTimeout(timer);
      try {
        const { baseUrl } = JSON.parse(buffer.slice(0, newline)) as { baseUrl?: unknown };
        if (typeof baseUrl !== 'string') {
          throw new Error('no baseUrl');
        }
        resolve({ process: child, baseUrl });
      } catch {
        child.kill();
        reject(new Error(`the fake API printed ${JSON.stringify(buffer.slice(0, newline))}`));
      }
    });
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the fake API exited with code ${code}`));
    });
  });
}

export class DemoRunner implements vscode.Disposable {
  private fake: ChildProcess | undefined;
  /** The demo session's storage folder (temporary, removed when the demo is left). */
  private state: string | undefined;

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly server: PlansightServer,
    private readonly runs: RunController,
    private readonly output: vscode.LogOutputChannel,
  ) {}

  get active(): boolean {
    return this.fake !== undefined;
  }

  async run(): Promise<void> {
    const folder = vscode.workspace.workspaceFolders?.[0];
    const cwd = folder?.uri.fsPath;
    const launch = await this.server.resolveLaunch();
    if (launch.kind === 'error') {
      this.output.error(`Demo: ${launch.message}`);
      void vscode.window.showErrorMessage(launch.message);
      return;
    }
    const demo = await locateDemo(launch, cwd);
    if (typeof demo === 'string') {
      this.output.error(`Demo: ${demo}`);
      void vscode.window.showErrorMessage(`Plansight: the demo is not available (${demo}).`);
      return;
    }
    if (demo.project && (!cwd || !(await holdsProject(cwd, demo.project)))) {
      await this.offerProject(demo.project);
      return;
    }
    this.stopFake();
    let started: { process: ChildProcess; baseUrl: string };
    try {
      started = await startFakeApi(launch, demo.recording, cwd, this.output);
    } catch (error) {
      void vscode.window.showErrorMessage(`Plansight: could not start the demo: ${String(error)}`);
      return;
    }
    this.fake = started.process;
    started.process.on('exit', () => {
      if (this.fake === started.process) {
        this.fake = undefined;
      }
    });
    this.output.info(`Demo: replaying ${demo.recording} from ${started.baseUrl}`);
    const previous = this.state;
    this.state = await mkdtemp(join(tmpdir(), 'plansight-demo-state-'));
    this.server.setOverrides({ baseUrl: started.baseUrl, apiKey: demoApiKey, storageDir: this.state });
    await this.server.restart();
    if (previous) {
      await rm(previous, { recursive: true, force: true }).catch(() => undefined);
    }
    await this.runs.run(demo.prompt, { newSession: true });
  }

  /** Writes the demo project to a new folder and opens it; the demo starts there. */
  private async offerProject(files: Record<string, string>): Promise<void> {
    const choice = await vscode.window.showInformationMessage(
      'The demo replays a recorded session on a small project (hello.py and its tests), and ' +
        'this folder does not hold that project as recorded. Open a copy in a new window and ' +
        'run the demo there?',
      'Open Demo Project',
    );
    if (choice !== 'Open Demo Project') {
      return;
    }
    const dir = await mkdtemp(join(tmpdir(), 'plansight-demo-'));
    for (const [name, text] of Object.entries(files)) {
      if (name.includes('..') || name.startsWith('/')) {
        continue;
      }
      await mkdir(dirname(join(dir, name)), { recursive: true });
      await writeFile(join(dir, name), text, 'utf8');
    }
    const uri = vscode.Uri.file(dir);
    await this.context.globalState.update(pendingDemoKey, uri.toString());
    await vscode.commands.executeCommand('vscode.openFolder', uri, { forceNewWindow: true });
  }

  /** On activation: runs the demo when this window was opened for it. */
  async resumePending(): Promise<void> {
    const pending = this.context.globalState.get<string>(pendingDemoKey);
    const folder = vscode.workspace.workspaceFolders?.[0];
    if (pending && folder && folder.uri.toString() === pending) {
      await this.context.globalState.update(pendingDemoKey, undefined);
      await this.run();
    }
  }

  /** Back to the user's settings, if the demo was on. */
  async leave(): Promise<void> {
    if (!this.server.hasOverrides && !this.fake) {
      return;
    }
    this.stopFake();
    this.server.setOverrides({});
    await this.server.restart();
    await this.removeState();
  }

  private stopFake(): void {
    this.fake?.kill();
    this.fake = undefined;
  }

  private async removeState(): Promise<void> {
    const state = this.state;
    this.state = undefined;
    if (state) {
      await rm(state, { recursive: true, force: true }).catch(() => undefined);
    }
  }

  dispose(): void {
    this.stopFake();
    void this.removeState();
  }
}
