/**
 * What the client does when the server stops on its own: restart it, at most `maxRestarts`
 * times within `windowMs` (a server that keeps crashing is left stopped, and the user starts
 * it again: Restart Server, Retry, or the next Send), and the words that say what happened.
 * Pure: no `vscode` import.
 */

export interface ServerExit {
  code: number | null;
  signal: string | null;
}

export class CrashPolicy {
  private readonly times: number[] = [];

  constructor(
    readonly maxRestarts = 2,
    readonly windowMs = 3 * 60_000,
  ) {}

  /** The server stopped on its own at `now`: whether to restart it. */
  crashed(now: number): boolean {
    this.times.push(now);
    while (this.times.length && now - this.times[0]! > this.windowMs) {
      this.times.shift();
    }
    return this.times.length <= this.maxRestarts;
  }

  /** How many times it stopped within the window (the last call to `crashed` counted). */
  get recent(): number {
    return this.times.length;
  }

  /** The user started it again: counting starts over. */
  reset(): void {
    this.times.length = 0;
  }
}

/** How the process ended, in words: "exited with code 1", "was killed (SIGKILL)". */
export function exitWords(exit: ServerExit | undefined): string {
  if (!exit) {
    return 'closed its connection';
  }
  if (exit.signal) {
    return `was killed (${exit.signal})`;
  }
  return exit.code === null ? 'stopped' : `exited with code ${exit.code}`;
}

/**
 * The sentence the conversation and the status bar's tooltip show. A crash loop (`times`
 * stops within the window) is said in plain words, not the language client's: how often, and
 * where to look.
 */
export function crashWords(exit: ServerExit | undefined, restarting: boolean, windowMs = 3 * 60_000, times = 0): string {
  if (restarting) {
    return `The Plansight server stopped unexpectedly: it ${exitWords(exit)}. It is being restarted.`;
  }
  return `${crashLoopWords(times, windowMs)} The last time it ${exitWords(exit)}. It is not restarted by itself: Restart, Retry or your next request starts it again.`;
}

/** "Plansight's server stopped 3 times in 3 minutes; see the output log." */
export function crashLoopWords(times: number, windowMs = 3 * 60_000): string {
  const minutes = Math.round(windowMs / 60_000);
  const often = times > 1 ? `${times} times in ${minutes} minutes` : 'again';
  return `Plansight's server stopped ${often}; see the output log.`;
}
