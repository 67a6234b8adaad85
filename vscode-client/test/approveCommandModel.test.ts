import { describe, expect, it } from 'vitest';
import { sandboxSummary, sandboxUnavailable } from '../src/review/approveCommandModel';

const base = { command: 'make test', cwd: '/ws' };

describe('sandboxSummary', () => {
  it('says what a sandboxed command may do', () => {
    expect(sandboxSummary({ ...base, sandbox: { network: false, writable: ['/ws'] } })).toEqual({
      sandboxed: true,
      text: 'sandboxed: workspace only, no network',
    });
    expect(sandboxSummary({ ...base, sandbox: { network: true, writable: ['/ws', '/var/cache/x'] } })).toEqual({
      sandboxed: true,
      text: 'sandboxed: workspace and /var/cache/x, with network',
    });
  });

  it('says plainly when a command is not sandboxed', () => {
    const summary = sandboxSummary({ ...base, sandbox: null });
    expect(summary.sandboxed).toBe(false);
    expect(summary.text).toMatch(/^not sandboxed/);
  });

  it('says nothing for an older server', () => {
    expect(sandboxSummary(base)).toEqual({ sandboxed: undefined, text: '' });
  });
});

describe('sandboxUnavailable', () => {
  it("finds the server's warning among its log messages", () => {
    expect(sandboxUnavailable('plansight.workspace.sandbox: commands run without a sandbox: no bwrap. Install')).toBe(
      'Plansight: commands run without a sandbox: no bwrap. Install',
    );
    expect(sandboxUnavailable('workspace /x, storage /y')).toBeUndefined();
  });
});
