import { describe, expect, it } from 'vitest';
import { emptyTodoState } from '../src/protocol';
import { statusText } from '../src/status/statusText';
import { plan, state } from './fixtures';

describe('statusText', () => {
  it('spins while running and shows progress and the current item', () => {
    expect(statusText(plan, true).text).toBe('$(sync~spin) 2/5 · Add docstrings');
  });
  it('shows a checklist when idle', () => {
    expect(statusText(plan, false).text).toBe('$(checklist) 2/5 · Add docstrings');
    const done = state([{ id: '1', text: 'x', status: 'completed' }]);
    expect(statusText(done, false).text).toBe('$(checklist) 1/1');
  });
  it('names the product without a plan', () => {
    expect(statusText(emptyTodoState, false).text).toBe('$(checklist) Plansight');
    expect(statusText(emptyTodoState, true).text).toBe('$(sync~spin) Plansight');
  });
  it('truncates long items', () => {
    const long = state([{ id: '1', text: 'a'.repeat(100), status: 'in_progress' }]);
    const text = statusText(long, true, 20).text;
    expect(text).toBe(`$(sync~spin) 0/1 · ${'a'.repeat(19)}…`);
  });
  it('explains itself in the tooltip', () => {
    expect(statusText(plan, true).tooltip).toBe(
      'Plansight is running\n2 of 5 done (1 cancelled)\nNow: #2 Add docstrings\nClick to show the plan',
    );
  });
  it('says when the run waits for the user', () => {
    const shown = statusText(plan, true, 40, 'waiting for your review');
    expect(shown.text).toBe('$(bell-dot) 2/5 · Plansight: waiting for your review');
    expect(shown.tooltip).toContain('Plansight is waiting for your review');
  });
});
