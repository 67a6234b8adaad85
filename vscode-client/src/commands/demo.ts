/**
 * `plansight.runDemo`: replays the recorded demo with no API key.
 *
 * How the demo is served is not settled on the server side yet, so it is all in this file:
 *   1. `<python> -m plansight.demo --recording-path` prints the recording's path;
 *   2. `<python> -m plansight.fakeapi --script <recording> --port 0` serves it and prints
 *      `{"baseUrl": ...}` on its first stdout line;
 *   3. the language server restarts with ANTHROPIC_BASE_URL pointing there (and a dummy key);
 *   4. the demo prompt runs in a new session.
 * The next `plansight.ask` leaves the demo: the fake API stops and the server restarts on the
 * user's settings.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import * as vscode from 'vscode';
import type { PlansightServer } from '../server/client';
import { findPython, runQuick } from '../server/python';
import type { RunController } from './run';

export const defaultDemoPrompt =
  'Refactor hello.py: add type hints, docstrings and a main guard, and keep the tests passing.';

/** The demo prompt: the recording's `prompt` field when it has one. */
async function demoPrompt(recording: string): Promise<string> {
  try {
    const data = JSON.parse(await readFile(recording, 'utf8')) as { prompt?: unknown };
    return typeof data.prompt === 'string' && data.prompt.trim() ? data.prompt : defaultDemoPrompt;
  } catch {
    return defaultDemoPrompt;
  }
}

/** Starts the fake API and resolves with its base URL (the first stdout line's JSON). */
function startFakeApi(
  python: string,
  recording: string,
  cwd: string | undefined,
  output: vscode.LogOutputChannel,
): Promise<{ process: ChildProcess; baseUrl: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(python, ['-m', 'plansight.fakeapi', '--script', recording, '--port', '0'], {
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

  constructor(
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
    const { python } = await findPython(folder?.uri);
    const located = await runQuick(python, ['-m', 'plansight.demo', '--recording-path'], { cwd });
    const recording = located.stdout.trim().split('\n').pop()?.trim();
    if (located.spawnError || located.code !== 0 || !recording) {
      const why = located.spawnError ?? (located.stderr.trim() || `exit code ${located.code}`);
      this.output.error(`plansight.demo --recording-path: ${why}`);
      void vscode.window.showErrorMessage(`Plansight: the demo is not available (${why}).`);
      return;
    }
    this.stopFake();
    let started: { process: ChildProcess; baseUrl: string };
    try {
      started = await startFakeApi(python, recording, cwd, this.output);
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
    this.output.info(`Demo: replaying ${recording} from ${started.baseUrl}`);
    this.server.setOverrides({ baseUrl: started.baseUrl, apiKey: 'plansight-demo' });
    await this.server.restart();
    await this.runs.run(await demoPrompt(recording), { newSession: true });
  }

  /** Back to the user's settings, if the demo was on. */
  async leave(): Promise<void> {
    if (!this.server.hasOverrides && !this.fake) {
      return;
    }
    this.stopFake();
    this.server.setOverrides({});
    await this.server.restart();
  }

  private stopFake(): void {
    this.fake?.kill();
    this.fake = undefined;
  }

  dispose(): void {
    this.stopFake();
  }
}
