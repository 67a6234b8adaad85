import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { choiceMessage, modelPicks } from '../src/commands/modelPicks';
import { initializationOptions, type PlansightSettings } from '../src/server/options';

const listed = {
  models: [
    { id: 'claude-new', displayName: 'Claude New', thinking: true },
    { id: 'claude-old', displayName: 'Claude Old', thinking: false },
  ],
  current: 'claude-new',
};
const off = { model: '', thinking: false, budgetTokens: 4096 };

describe('the model picker', () => {
  it('offers the models the Models API lists, the one in use marked, and thinking', () => {
    const rows = modelPicks(listed, off);
    expect(rows.map((r) => r.label)).toEqual([
      'Model',
      '$(check) Claude New',
      'Claude Old',
      '$(edit) Type a model id…',
      'Extended thinking',
      '$(lightbulb) Extended thinking is off: turn it on',
    ]);
    expect(rows[1]).toMatchObject({ description: 'claude-new', picked: true, choice: { kind: 'model', model: 'claude-new' } });
    expect(rows[2]).toMatchObject({ detail: 'No extended thinking' });
    expect(rows.at(-1)!.choice).toEqual({ kind: 'thinking', on: true });
  });

  it('marks the configured model, offers the default back, and turning thinking off', () => {
    const rows = modelPicks(listed, { model: 'claude-old', thinking: true, budgetTokens: 8000 });
    expect(rows.find((r) => r.picked)?.description).toBe('claude-old');
    expect(rows.some((r) => r.choice?.kind === 'default')).toBe(true);
    expect(rows.at(-1)).toMatchObject({ description: 'budget 8,000 tokens', choice: { kind: 'thinking', on: false } });
    expect(choiceMessage({ kind: 'thinking', on: false })).toBe('Plansight: extended thinking off; the server restarts.');
  });

  it('says why where the models cannot be listed, and still lets one be typed', () => {
    const rows = modelPicks(undefined, off, 'The Models API did not answer: Not found');
    expect(rows.map((r) => r.label)).toContain('$(warning) The models could not be listed');
    expect(rows.find((r) => r.label.startsWith('$(warning)'))?.detail).toBe('The Models API did not answer: Not found');
    expect(rows.some((r) => r.choice?.kind === 'typed')).toBe(true);
  });
});

describe('the thinking setting', () => {
  const base: PlansightSettings = {
    model: '',
    baseUrl: '',
    python: '',
    maxRounds: 0,
    autoApproveEdits: false,
    autoApproveCommands: false,
  };

  it('turns on the contract\'s thinking option with its budget (at least 1024)', () => {
    expect(initializationOptions(base).thinking).toBeUndefined();
    expect(initializationOptions({ ...base, thinking: true, thinkingBudgetTokens: 6000 }).thinking).toEqual({ budgetTokens: 6000 });
    expect(initializationOptions({ ...base, thinking: true, thinkingBudgetTokens: 100 }).thinking).toEqual({ budgetTokens: 1024 });
    expect(initializationOptions({ ...base, thinking: true }).thinking).toEqual({});
  });

  it('is contributed as settings, and the picker is in the Conversation view\'s menu', () => {
    const pkg = JSON.parse(readFileSync(join(__dirname, '..', 'package.json'), 'utf8'));
    const props = pkg.contributes.configuration.properties;
    expect(props['plansight.thinking']).toMatchObject({ type: 'boolean', default: false });
    expect(props['plansight.thinkingBudgetTokens']).toMatchObject({ type: 'integer', minimum: 1024 });
    expect(props['plansight.model'].markdownDescription).toContain('command:plansight.pickModel');
    const menu = pkg.contributes.menus['view/title'] as { command: string; when: string }[];
    expect(menu.some((m) => m.command === 'plansight.pickModel' && m.when === 'view == plansight.conversation')).toBe(true);
  });
});
