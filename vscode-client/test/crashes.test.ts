import { describe, expect, it } from 'vitest';
import { CrashPolicy, crashLoopWords, crashWords, exitWords } from '../src/server/crashes';
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
    expect(crashWords({ code: 1, signal: null }, false, 3 * 60_000, 3)).toBe(
      "Plansight's server stopped 3 times in 3 minutes; see the output log. The last time it exited with code 1. It is not restarted by itself: Restart, Retry or your next request starts it again.",
    );
  });

  it('says a crash loop in plain words (issue 31), counting the stops the policy saw', () => {
    const policy = new CrashPolicy();
    policy.crashed(0);
    policy.crashed(1000);
    policy.crashed(2000);
    expect(policy.recent).toBe(3);
    expect(crashLoopWords(policy.recent)).toBe("Plansight's server stopped 3 times in 3 minutes; see the output log.");
    expect(crashLoopWords(5, 5 * 60_000)).toBe("Plansight's server stopped 5 times in 5 minutes; see the output log.");
    expect(crashWords(undefined, false, 3 * 60_000, 3)).not.toMatch(/Pending response|connection got disposed|crashed \d+ times in the last/);
  });

  it('shows in the status bar, which then restarts it on a click', () => {
    const down = statusText(emptyTodoState, false, 40, undefined, { status: 'crashed', problem: 'It exited with code 1.' });
    expect(down.text).toBe('$(error) Plansight: server stopped');
    expect(down.tooltip).toBe('It exited with code 1.\nClick to restart the server');
    expect(statusText(emptyTodoState, false, 40, undefined, { status: 'failed' }).text).toBe('$(error) Plansight: server not running');
    expect(statusText(emptyTodoState, false, 40, undefined, { status: 'running' }).text).toBe('$(checklist) Plansight');
  });
});

describe('a refused API key (issue 31)', () => {
  it('is told from the server\'s words, and its card offers Set API Key before Retry', async () => {
    const { keyRefused, keyRefusedReason, renderRetryCard } = await import('../src/conversation/runCards');
    const { ConversationModel } = await import('../src/conversation/model');
    const { ConversationRenderer } = await import('../src/conversation/render');
    expect(keyRefused('The model API failed: authentication_error: invalid x-api-key (HTTP 401)')).toBe(true);
    expect(keyRefused('invalid x-api-key (HTTP 401)')).toBe(true);
    expect(keyRefused('overloaded_error: Overloaded (HTTP 529)')).toBe(false);
    expect(keyRefused('Could not reach the model API')).toBe(false);
    const renderer = new ConversationRenderer();
    renderer.registerCard('retry', renderRetryCard);
    const model = new ConversationModel();
    const card = model.addCard('retry', { reason: keyRefusedReason, keyRefused: true, outcome: 'pending' });
    const html = renderer.entry(card);
    expect(html).toContain('data-action="setKey"');
    expect(html.indexOf('data-action="setKey"')).toBeLessThan(html.indexOf('data-action="retry"'));
    expect(html).toContain('ANTHROPIC_API_KEY');
    const other = model.addCard('retry', { reason: 'The run failed: boom', outcome: 'pending' });
    expect(renderer.entry(other)).not.toContain('data-action="setKey"');
  });
});
