import { describe, expect, it } from 'vitest';
import { ServerLogLines } from '../src/server/serverLog';

describe('ServerLogLines', () => {
  it('reads the server records at their level, across chunks', () => {
    const lines = new ServerLogLines();
    expect(lines.push('2026-12-01 09:30:00,123 INFO plansight.lsp.server: workspace /w, stor')).toEqual([]);
    expect(lines.push('age /s\n2026-12-01 09:30:01,000 WARNING pygls: slow\n')).toEqual([
      { level: 'info', text: 'plansight.lsp.server: workspace /w, storage /s' },
      { level: 'warn', text: 'pygls: slow' },
    ]);
  });

  it('keeps a traceback at the level of the record it follows', () => {
    const lines = new ServerLogLines();
    const out = lines.push(
      '2026-12-01 09:30:00,123 ERROR plansight.events: event listener failed on runStarted\nTraceback (most recent call last):\n  File "x.py", line 1\nValueError: boom\n\n',
    );
    expect(out.map((l) => l.level)).toEqual(['error', 'error', 'error', 'error']);
    expect(out[3]).toEqual({ level: 'error', text: 'ValueError: boom' });
  });

  it('gives back a last line without its newline at the end', () => {
    const lines = new ServerLogLines();
    expect(lines.push('Fatal Python error: Aborted')).toEqual([]);
    expect(lines.end()).toEqual([{ level: 'warn', text: 'Fatal Python error: Aborted' }]);
    expect(lines.end()).toEqual([]);
  });
});
