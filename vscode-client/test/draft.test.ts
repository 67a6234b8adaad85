import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { draftToRestore, fileDraftStore, parseDraft } from '../src/conversation/draft';

const at = (iso: string): number => Date.parse(iso);
const sent = [{ text: 'Explain what shout does and who calls it.', startedAt: '2026-12-03T07:45:31Z' }];

describe('the draft put back after a reload', () => {
  it('is dropped when a prompt sent after it was saved starts with it or is it (issue 31)', () => {
    expect(draftToRestore({ text: 'Explain what shou', savedAt: at('2026-12-03T07:45:29.400Z') }, sent)).toBe('');
    expect(draftToRestore({ text: 'Explain what shout does and who calls it.', savedAt: at('2026-12-03T07:45:30Z') }, sent)).toBe('');
  });

  it('is dropped when saved in the second its prompt started (the server says the second only)', () => {
    expect(draftToRestore({ text: 'Explain what', savedAt: at('2026-12-03T07:45:31.700Z') }, sent)).toBe('');
  });

  it('is kept when saved after the prompt was sent, whatever it starts with: the user typed anew', () => {
    const anew = { text: 'Explain', savedAt: at('2026-12-03T07:46:10Z') };
    expect(draftToRestore(anew, sent)).toBe('Explain');
  });

  it('is kept when no prompt sent starts with it, as it was typed (spaces too)', () => {
    const other = { text: 'Then rename shout to yell ', savedAt: at('2026-12-03T07:40:00Z') };
    expect(draftToRestore(other, sent)).toBe('Then rename shout to yell ');
    expect(draftToRestore(other, [])).toBe('Then rename shout to yell ');
    expect(draftToRestore(undefined, sent)).toBe('');
    expect(draftToRestore({ text: '  ', savedAt: 0 }, [])).toBe('');
  });

  it('ignores a run with no readable start', () => {
    expect(draftToRestore({ text: 'Explain', savedAt: 0 }, [{ text: 'Explain it', startedAt: '' }])).toBe('Explain');
  });

  it('takes a draft an earlier version kept (a string, no time) as saved before every run', () => {
    expect(parseDraft('Explain what')).toEqual({ text: 'Explain what', savedAt: 0 });
    expect(draftToRestore(parseDraft('Explain what'), sent)).toBe('');
    expect(parseDraft('')).toBeUndefined();
    expect(parseDraft({ text: 'a', savedAt: 'now' })).toBeUndefined();
    expect(parseDraft({ text: 'a', savedAt: 5 })).toEqual({ text: 'a', savedAt: 5 });
  });
});

describe('the draft in a file', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it('is on disk as soon as it is set, and gone once cleared', () => {
    const dir = mkdtempSync(join(tmpdir(), 'plansight-draft-'));
    dirs.push(dir);
    const path = join(dir, 'storage', 'conversation-draft.json'); // the folder made on first write
    const errors: unknown[] = [];
    const store = fileDraftStore(path, (e) => errors.push(e));
    expect(store.get()).toBeUndefined();
    store.set({ text: 'Explain', savedAt: 7 });
    expect(JSON.parse(readFileSync(path, 'utf8'))).toEqual({ text: 'Explain', savedAt: 7 });
    expect(fileDraftStore(path, (e) => errors.push(e)).get()).toEqual({ text: 'Explain', savedAt: 7 }); // a new window reads it
    store.set(undefined);
    expect(fileDraftStore(path, (e) => errors.push(e)).get()).toBeUndefined();
    expect(errors).toEqual([]);
  });

  it('says when it cannot write, and keeps the draft for this window', () => {
    const dir = mkdtempSync(join(tmpdir(), 'plansight-draft-'));
    dirs.push(dir);
    const errors: unknown[] = [];
    const store = fileDraftStore(join(dir, 'missing\0name'), (e) => errors.push(e));
    store.set({ text: 'Explain', savedAt: 7 });
    expect(errors).toHaveLength(1);
    expect(store.get()).toEqual({ text: 'Explain', savedAt: 7 });
  });
});
