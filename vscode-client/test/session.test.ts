import { describe, expect, it } from 'vitest';
import { SessionStore } from '../src/session';
import { plan } from './fixtures';

describe('SessionStore', () => {
  it('reports changes and derives running', () => {
    const store = new SessionStore();
    const seen: string[] = [];
    const sub = store.onDidChange((c) => seen.push(c));
    store.setTodos(plan);
    store.setServerRunning(true);
    store.setServerRunning(true);
    expect(store.running).toBe(true);
    store.setServerRunning(false);
    store.setRequestRunning(true);
    expect(store.running).toBe(true);
    store.addEdit({ id: 'e', uri: 'file:///a', path: 'a', description: '', outcome: 'pending' });
    expect(store.settleEdit('e', 'accepted')).toBe(true);
    expect(store.findEdit('e')?.outcome).toBe('accepted');
    sub.dispose();
    store.clearEdits();
    expect(seen).toEqual(['todos', 'running', 'running', 'running', 'edits', 'edits']);
  });

  it('keeps the first decision on an edit: a late accept cannot undo a cancel', () => {
    const store = new SessionStore();
    store.addEdit({ id: 'e', uri: 'file:///a', path: 'a', description: '', outcome: 'pending' });
    const seen: string[] = [];
    store.onDidChange((c) => seen.push(c));
    expect(store.settleEdit('e', 'cancelled', 'The run was cancelled.')).toBe(true);
    expect(store.settleEdit('e', 'accepted')).toBe(false);
    expect(store.settleEdit('missing', 'accepted')).toBe(false);
    expect(store.findEdit('e')).toMatchObject({ outcome: 'cancelled', feedback: 'The run was cancelled.' });
    expect(seen).toEqual(['edits']);
  });
});
