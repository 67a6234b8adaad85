import { describe, expect, it } from 'vitest';
import { acceptResult, baseName, rejectResult, reviewIdFromPath, reviewPath } from '../src/review/reviewModel';

describe('review results', () => {
  it('accepts as proposed without newText', () => {
    expect(acceptResult('a\n', 'a\n')).toEqual({ accepted: true });
  });
  it('sends the whole settled text when the user changed it', () => {
    expect(acceptResult('a\n', 'a\nb\n')).toEqual({ accepted: true, newText: 'a\nb\n' });
  });
  it('rejects with a trimmed reason, or none', () => {
    expect(rejectResult('  too long ')).toEqual({ accepted: false, feedback: 'too long' });
    expect(rejectResult('')).toEqual({ accepted: false });
    expect(rejectResult(undefined)).toEqual({ accepted: false });
  });
});

describe('review paths', () => {
  it('round-trips ids, including odd characters', () => {
    for (const id of ['1', 'edit-7', 'a/b c?%']) {
      expect(reviewIdFromPath(reviewPath(id, 'hello.py'))).toBe(id);
    }
    expect(reviewPath('x', 'hello.py')).toBe('/x/hello.py');
    expect(reviewIdFromPath('/nope')).toBeUndefined();
  });
  it('takes the base name of a URI', () => {
    expect(baseName('file:///w/src/hello%20world.py')).toBe('hello world.py');
    expect(baseName('file:///w/a.py?x#y')).toBe('a.py');
  });
});
