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
    store.updateEdit('e', { outcome: 'accepted' });
    expect(store.findEdit('e')?.outcome).toBe('accepted');
    sub.dispose();
    store.clearEdits();
    expect(seen).toEqual(['todos', 'running', 'running', 'running', 'edits', 'edits']);
  });
});
