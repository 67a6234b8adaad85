import { describe, expect, it } from 'vitest';
import { compactDiff, diffStat } from '../src/conversation/diff';

describe('compactDiff', () => {
  it('shows the changed stretch with context', () => {
    const before = 'a\nb\nc\nd\ne\nf\n';
    const after = 'a\nb\nc\nD\ne\nf\n';
    expect(compactDiff(before, after)).toEqual([
      { kind: 'context', text: 'b', line: 2 },
      { kind: 'context', text: 'c', line: 3 },
      { kind: 'removed', text: 'd', line: 4 },
      { kind: 'added', text: 'D', line: 4 },
      { kind: 'context', text: 'e', line: 5 },
      { kind: 'context', text: 'f', line: 6 },
    ]);
    expect(diffStat(before, after)).toEqual({ added: 1, removed: 1 });
  });

  it('shows a new file as added lines', () => {
    expect(compactDiff('', 'x\ny\n')).toEqual([
      { kind: 'added', text: 'x', line: 1 },
      { kind: 'added', text: 'y', line: 2 },
    ]);
  });

  it('cuts a long change and says how much is left out', () => {
    const after = Array.from({ length: 100 }, (_, i) => `line ${i}`).join('\n');
    const diff = compactDiff('', after, 10);
    expect(diff).toHaveLength(10);
    expect(diff.at(-1)).toEqual({ kind: 'skipped', text: '91 more changed lines' });
  });
});
