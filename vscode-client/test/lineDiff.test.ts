import { describe, expect, it } from 'vitest';
import { cardDiff, lineDiff, lineDiffStat } from '../src/review/lineDiff';

const before = [
  'def greet(name):',
  "    return 'Hello, ' + name",
  '',
  '',
  'def wave():',
  "    return 'o/'",
  '',
  '',
  'def shout(name):',
  '    return name.upper()',
  '',
].join('\n');
const after = before.replace("'Hello, ' + name", "f'Hello, {name}'").replace('name.upper()', "name.upper() + '!'");

describe('the edit card\'s line diff', () => {
  it('counts a two-line change as +2 −2, however far apart the lines are', () => {
    expect(lineDiffStat(before, after)).toEqual({ added: 2, removed: 2 });
  });

  it('shows each changed line in its own hunk, the stretch between said in one line', () => {
    expect(cardDiff(before, after)).toEqual([
      { kind: 'context', text: 'def greet(name):', line: 1 },
      { kind: 'removed', text: "    return 'Hello, ' + name", line: 2 },
      { kind: 'added', text: "    return f'Hello, {name}'", line: 2 },
      { kind: 'context', text: '', line: 3 },
      { kind: 'context', text: '', line: 4 },
      { kind: 'skipped', text: '3 unchanged lines' },
      { kind: 'context', text: '', line: 8 },
      { kind: 'context', text: 'def shout(name):', line: 9 },
      { kind: 'removed', text: '    return name.upper()', line: 10 },
      { kind: 'added', text: "    return name.upper() + '!'", line: 10 },
    ]);
  });

  it('finds the lines that really changed inside a changed block (not the whole block)', () => {
    const a = 'a\nb\nc\nd\ne\n';
    const b = 'a\nB\nc\nD\ne\n';
    expect(lineDiffStat(a, b)).toEqual({ added: 2, removed: 2 });
    expect(lineDiff('x\ny\n', 'y\nz\n').map((o) => `${o.kind[0]}${o.text}`)).toEqual(['rx', 'cy', 'az']);
  });

  it('never ends a new file with "0 more changed lines"', () => {
    for (let n = 1; n <= 30; n += 1) {
      const text = Array.from({ length: n }, (_, i) => `line ${i}`).join('\n') + '\n';
      const diff = cardDiff('', text);
      expect(diff.length).toBeLessThanOrEqual(14);
      const last = diff.at(-1)!;
      if (last.kind === 'skipped') {
        expect(last.text).toBe(`${n - (diff.length - 1)} more changed line${n - (diff.length - 1) === 1 ? '' : 's'}`);
        expect(last.text).not.toMatch(/^0 /);
      } else {
        expect(diff).toHaveLength(n);
      }
    }
  });

  it('falls back to one block where too many lines differ to search', () => {
    const a = Array.from({ length: 50 }, (_, i) => `a${i}`).join('\n');
    const b = Array.from({ length: 50 }, (_, i) => `b${i}`).join('\n');
    expect(lineDiffStat(a, b)).toEqual({ added: 50, removed: 50 });
    expect(lineDiff(a, b, 10).filter((o) => o.kind === 'removed')).toHaveLength(50);
  });
});
