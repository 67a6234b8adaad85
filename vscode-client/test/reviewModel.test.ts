import { describe, expect, it } from 'vitest';
import {
  acceptResult,
  autoAcceptable,
  baseName,
  controlNotice,
  rejectResult,
  reviewIdFromQuery,
  reviewLocation,
  reviewNotice,
} from '../src/review/reviewModel';

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

describe('review locations', () => {
  it('keep the relative path and round-trip ids, including odd characters', () => {
    for (const id of ['1', 'edit-7', 'a/b c?%&=']) {
      const location = reviewLocation(id, 'src/hello.py');
      expect(location.path).toBe('/src/hello.py');
      expect(reviewIdFromQuery(location.query)).toBe(id);
    }
    expect(reviewLocation('x', 'hello.py', 'proposed')).toEqual({ path: '/hello.py', query: 'id=x&side=proposed' });
    expect(reviewIdFromQuery('side=proposed&id=y')).toBe('y');
    expect(reviewIdFromQuery('nope')).toBeUndefined();
  });
  it('takes the base name of a URI', () => {
    expect(baseName('file:///w/src/hello%20world.py')).toBe('hello world.py');
    expect(baseName('file:///w/a.py?x#y')).toBe('a.py');
  });
});


describe('reviewNotice', () => {
  it('offers Accept, Reject and Show Diff for this review first, then the file and what the edit does', () => {
    const notice = reviewNotice('r-4', 'src/deep/path/hello.py', 'Add type hints\nto greet');
    expect(notice.title).toBe('Plansight');
    const links = [...notice.message.matchAll(/\[([^\]]+)\]\(command:([\w.]+)\?([^)]*)\)/g)].map((m) => [
      m[1],
      m[2],
      JSON.parse(decodeURIComponent(m[3] ?? '')),
    ]);
    expect(links).toEqual([
      ['Accept', 'plansight.acceptEdit', ['r-4']],
      ['Reject', 'plansight.rejectEdit', ['r-4']],
      ['Show Diff', 'plansight.plan.openEdit', ['r-4']],
    ]);
    expect(notice.message).toMatch(/\) — proposes an edit to src\/deep\/path\/hello\.py: Add type hints to greet$/);
    const visible = `${notice.title}: ${notice.message.replace(/\]\([^)]*\)/g, ']')}`;
    // The three choices fit a collapsed toast's line (about 45 characters before its buttons).
    expect(visible.indexOf('[Show Diff]') + '[Show Diff]'.length).toBeLessThan(45);
  });
  it('names the file alone without a description', () => {
    expect(reviewNotice('r-1', 'a.py', '').message).toMatch(/\) — proposes an edit to a\.py$/);
  });
});

describe('control files', () => {
  it('are named as such in the notification', () => {
    expect(reviewNotice('r-2', '.envrc', 'New file', true).message).toMatch(
      /— proposes an edit to a control file, \.envrc \(it controls your tools\): New file$/,
    );
  });
  it('are never accepted by Accept All in This Run', () => {
    expect(autoAcceptable({ control: true })).toBe(false);
    expect(autoAcceptable({})).toBe(true);
    expect(autoAcceptable({ control: false })).toBe(true);
  });
  it('are named plainly on the card', () => {
    expect(controlNotice('.vscode/settings.json')).toBe(
      'This changes .vscode/settings.json, a file that controls your tools (git, the editor, Plansight). Accept it only if you have read the change.',
    );
  });
});
