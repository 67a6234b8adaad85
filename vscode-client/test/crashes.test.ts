import { describe, expect, it } from 'vitest';
import { CrashPolicy, crashWords, exitWords } from '../src/server/crashes';
import { statusText } from '../src/status/statusText';
import { emptyTodoState } from '../src/protocol';

describe('a server that stops on its own', () => {
  it('is restarted twice within three minutes, then left stopped until the user starts it', () => {
    const policy = new CrashPolicy();
    expect(policy.crashed(0)).toBe(true);
    expect(policy.crashed(10_000)).toBe(true);
    expect(policy.crashed(20_000)).toBe(false);
    // Long after, crashes count afresh; a deliberate restart starts over too.
    expect(policy.crashed(10 * 60_000)).toBe(true);
    policy.reset();
    expect(policy.crashed(10 * 60_000 + 1)).toBe(true);
  });

  it('is said in words, never as the library\'s "Pending response rejected"', () => {
    expect(exitWords({ code: 1, signal: null })).toBe('exited with code 1');
    expect(exitWords({ code: null, signal: 'SIGKILL' })).toBe('was killed (SIGKILL)');
    expect(crashWords({ code: null, signal: 'SIGKILL' }, true)).toBe(
      'The Plansight server stopped unexpectedly: it was killed (SIGKILL). It is being restarted.',
    );
    expect(crashWords({ code: 1, signal: null }, false)).toMatch(/exited with code 1\. It stopped repeatedly within 3 minutes, so it is not restarted by itself: Restart Server, Retry or your next request starts it again/);
  });

  it('shows in the status bar, which then restarts it on a click', () => {
    const down = statusText(emptyTodoState, false, 40, undefined, { status: 'crashed', problem: 'It exited with code 1.' });
    expect(down.text).toBe('$(error) Plansight: server stopped');
    expect(down.tooltip).toBe('It exited with code 1.\nClick to restart the server');
    expect(statusText(emptyTodoState, false, 40, undefined, { status: 'failed' }).text).toBe('$(error) Plansight: server not running');
    expect(statusText(emptyTodoState, false, 40, undefined, { status: 'running' }).text).toBe('$(checklist) Plansight');
  });
});
