import { describe, expect, it } from 'vitest';
import { addItem, markDone, moveBefore, moveItem, nextId, removeItem, setStatus, setText } from '../src/plan/planEdits';
import { plan, state } from './fixtures';

const ids = (p: { items: { id: string }[] }) => p.items.map((i) => i.id);

describe('plan edits', () => {
  it('sends the version and only id, text, status', () => {
    const params = markDone(plan, '2');
    expect(params.version).toBe(3);
    expect(params.items[1]).toEqual({ id: '2', text: 'Add docstrings', status: 'completed' });
    expect(params.items[4]).toEqual({ id: '5', text: 'Run the tests', status: 'failed' });
  });

  it('starting an item pauses the one in progress', () => {
    const params = setStatus(plan, '3', 'in_progress');
    expect(params.items.map((i) => i.status)).toEqual(['completed', 'pending', 'in_progress', 'cancelled', 'failed']);
  });

  it('edits text', () => {
    expect(setText(plan, '3', 'Guard it').items[2]!.text).toBe('Guard it');
  });

  it('adds after an item or at the end with a fresh id', () => {
    expect(nextId(plan)).toBe('6');
    expect(ids(addItem(plan, 'New', '1'))).toEqual(['1', '6', '2', '3', '4', '5']);
    expect(addItem(plan, 'New').items[5]).toEqual({ id: '6', text: 'New', status: 'pending' });
  });

  it("gives a new item the server's next id, else the lowest number no item uses, as the server does", () => {
    const gap = state([
      { id: '1', text: 'x', status: 'completed' },
      { id: '4', text: 'y', status: 'pending' },
    ]);
    expect(nextId(gap)).toBe('2');
    expect(nextId(state([{ id: 'a', text: 'x', status: 'pending' }]))).toBe('1');
    expect(nextId(state([]))).toBe('1');
    // What the server sends wins: it is the one rule.
    expect(addItem({ ...gap, nextId: '7' }, 'New').items[2]).toEqual({ id: '7', text: 'New', status: 'pending' });
  });

  it('removes and reorders', () => {
    expect(ids(removeItem(plan, '3'))).toEqual(['1', '2', '4', '5']);
    expect(ids(moveItem(plan, '3', -1))).toEqual(['1', '3', '2', '4', '5']);
    expect(ids(moveItem(plan, '1', -1))).toEqual(['1', '2', '3', '4', '5']);
    expect(ids(moveItem(plan, '5', 1))).toEqual(['1', '2', '3', '4', '5']);
    expect(ids(moveBefore(plan, '5', '2'))).toEqual(['1', '5', '2', '3', '4']);
    expect(ids(moveBefore(plan, '1'))).toEqual(['2', '3', '4', '5', '1']);
  });

  it('never changes the state it was given', () => {
    const before = JSON.stringify(plan);
    markDone(plan, '1');
    moveItem(plan, '2', 1);
    removeItem(plan, '1');
    expect(JSON.stringify(plan)).toBe(before);
  });
});
