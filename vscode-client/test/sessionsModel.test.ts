import { describe, expect, it } from 'vitest';
import type { SessionInfo } from '../src/protocol';
import { SessionStore } from '../src/session';
import { parseSessions, renderSessions, sessionOf, SessionsModel, sessionTitle, timeAgo } from '../src/sessions/sessionsModel';

const now = Date.parse('2026-12-02T10:00:00Z');

function info(id: string, over: Partial<SessionInfo> = {}): SessionInfo {
  return {
    id,
    title: `Session ${id}`,
    createdAt: '2026-12-02T09:00:00Z',
    updatedAt: '2026-12-02T09:55:00Z',
    status: 'idle',
    current: false,
    ...over,
  };
}

describe('parseSessions', () => {
  it('keeps the well-formed sessions of the answer, in its order', () => {
    const list = parseSessions({
      sessions: [info('b', { current: true }), { id: 'x' }, null, info('a'), { ...info('c'), status: 'sleeping' }],
    });
    expect(list.map((s) => s.id)).toEqual(['b', 'a']);
  });

  it('is empty for an answer without sessions', () => {
    expect(parseSessions(null)).toEqual([]);
    expect(parseSessions({ sessions: 'no' })).toEqual([]);
  });
});

describe('timeAgo and titles', () => {
  it('says how long ago, shortly', () => {
    expect(timeAgo('2026-12-02T09:59:40Z', now)).toBe('just now');
    expect(timeAgo('2026-12-02T09:55:00Z', now)).toBe('5 min ago');
    expect(timeAgo('2026-12-02T07:00:00Z', now)).toBe('3 h ago');
    expect(timeAgo('2026-12-01T08:00:00Z', now)).toBe('yesterday');
    expect(timeAgo('2026-11-20T08:00:00Z', now)).toBe('2026-11-20');
    expect(timeAgo('not a date', now)).toBe('');
  });

  it('shows the server\'s title on one line, and an unnamed session as new', () => {
    expect(sessionTitle({ title: 'Fix the parser\nand more' })).toBe('Fix the parser and more');
    expect(sessionTitle({ title: '  ' })).toBe('New session');
  });
});

describe('SessionsModel', () => {
  it('shows the server\'s current session once it lists them', () => {
    const model = new SessionsModel();
    expect(model.isShown('anything')).toBe(true); // nothing listed yet: nothing filtered
    model.update([info('b'), info('a', { current: true })]);
    expect(model.shown).toBe('a');
    expect(model.current?.id).toBe('a');
  });

  it('keeps the shown session across updates, and follows the current one when it is deleted', () => {
    const model = new SessionsModel();
    model.update([info('b'), info('a', { current: true })]);
    model.shown = 'b';
    model.update([info('b'), info('a', { current: true })]);
    expect(model.shown).toBe('b');
    model.update([info('a', { current: true })]);
    expect(model.shown).toBe('a');
  });

  it('draws only what is about the shown session (or names none: a version 1-3 server)', () => {
    const model = new SessionsModel();
    model.update([info('b'), info('a', { current: true })]);
    expect(model.isShown('a')).toBe(true);
    expect(model.isShown('b')).toBe(false);
    expect(model.isShown(undefined)).toBe(true);
    expect(model.isShown(sessionOf({ type: 'textDelta', text: 'x', sessionId: 'b' }))).toBe(false);
    expect(model.isShown(sessionOf({ type: 'textDelta', text: 'x' }))).toBe(true);
  });

  it('adopts a new session only for a run this window awaits', () => {
    const model = new SessionsModel();
    model.update([info('b'), info('a', { current: true })]);
    expect(model.adopt('b', true)).toBe(false); // a listed session: another window's or the user's switch
    expect(model.adopt('n', false)).toBe(false); // not asked for here
    expect(model.shown).toBe('a');
    expect(model.adopt('n', true)).toBe(true);
    expect(model.shown).toBe('n');
  });

  it('names a run going on in another session', () => {
    const model = new SessionsModel();
    model.update([info('b', { status: 'running' }), info('a', { current: true })]);
    expect(model.runningElsewhere()?.id).toBe('b');
    model.shown = 'b';
    expect(model.runningElsewhere()).toBeUndefined();
  });

  it('is the store\'s, one per window', () => {
    const store = new SessionStore();
    store.sessions.update([info('a', { current: true })]);
    expect(store.sessions.isShown('a')).toBe(true);
    expect(new SessionStore().sessions.shown).toBeUndefined();
  });
});

describe('renderSessions', () => {
  /** Each list row's HTML, in order. */
  const rowsOf = (html: string): string[] => html.split('<li ').slice(1).map((r) => r.slice(0, r.indexOf('</li>')));
  const text = (html: string, cls: string): string | undefined =>
    new RegExp(`class="${cls}">([^<]*)<`).exec(html)?.[1];

  it('draws nothing before the server listed sessions', () => {
    expect(renderSessions(new SessionsModel(), now)).toBe('');
  });

  it('heads with the shown session and lists each with its time and status', () => {
    const model = new SessionsModel();
    model.update([
      info('c', { title: 'Add tests', status: 'running', updatedAt: '2026-12-02T09:59:50Z' }),
      info('b', { title: 'Rename things', status: 'waiting' }),
      info('a', { title: 'Fix the parser', current: true, counts: { total: 3, done: 1, completed: 1, cancelled: 0, failed: 0, pending: 2, inProgress: 0, open: 2 } }),
    ]);
    const html = renderSessions(model, now);
    expect(html).toMatch(/^<details class="sessions">/); // nothing opens on its own
    const summary = html.slice(0, html.indexOf('</summary>'));
    expect(text(summary, 'title')).toBe('Fix the parser');
    expect(text(summary, 'count')).toBe('3');
    expect(summary).toContain('class="elsewhere"'); // another session runs
    const rows = rowsOf(html);
    expect(rows.map((r) => /data-session-id="([^"]*)"/.exec(r)?.[1])).toEqual(['c', 'b', 'a']);
    expect(rows.map((r) => text(r, 'meta'))).toEqual(['running · just now', 'waiting for you · 5 min ago', '5 min ago · 1/3']);
    expect(rows[2]).toMatch(/^class="session idle shown"/);
    expect(rows[2]).toContain('aria-current="true"');
    expect(rows.filter((r) => r.includes('aria-current'))).toHaveLength(1);
    expect(rows[0]).toContain('codicon-loading');
    expect(rows[1]).toContain('codicon-bell-dot');
    // Each row: open, rename, delete; the running one cannot be deleted.
    expect([...rows[1]!.matchAll(/data-session="(\w+)"/g)].map((m) => m[1])).toEqual(['open', 'rename', 'delete']);
    expect([...rows[0]!.matchAll(/data-session="(\w+)"/g)].map((m) => m[1])).toEqual(['open', 'rename']);
    expect(rows[0]).toMatch(/<button[^>]* disabled title="A running session cannot be deleted"/);
    expect(html).toContain('data-session="new"');
    expect(html).not.toMatch(/autofocus|tabindex/);
  });

  it('keeps an open list open when drawn again', () => {
    const model = new SessionsModel();
    model.update([info('a', { current: true })]);
    expect(renderSessions(model, now, true)).toMatch(/^<details class="sessions" open>/);
  });

  it('escapes what the titles and ids say', () => {
    const model = new SessionsModel();
    model.update([info('a"><img src=x>', { title: '<script>alert(1)</script>', current: true })]);
    const html = renderSessions(model, now);
    expect(html).not.toContain('<script>');
    expect(html).not.toContain('<img');
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(html).toContain('data-session-id="a&quot;&gt;&lt;img src=x&gt;"');
  });
});
