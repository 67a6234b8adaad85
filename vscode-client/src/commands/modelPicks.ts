/**
 * The model picker's rows (`plansight.pickModel`): the models the server's Models API lists
 * (`plansight/models`), the one in use marked, the server's default, and extended thinking on
 * or off. Pure: no `vscode` import, so vitest can test it.
 */
import type { ModelsResult } from '../protocol';

export type ModelChoice =
  | { kind: 'model'; model: string }
  | { kind: 'default' }
  | { kind: 'thinking'; on: boolean }
  | { kind: 'typed' };

export interface ModelPick {
  label: string;
  description?: string;
  detail?: string;
  /** A separator row (`QuickPickItemKind.Separator`) when true. */
  separator?: boolean;
  picked?: boolean;
  choice?: ModelChoice;
}

export interface ModelSettingsNow {
  /** `plansight.model` ("" for the server's default). */
  model: string;
  thinking: boolean;
  budgetTokens: number;
}

/** The rows, models newest first as the API lists them; `listed` undefined when the server
 * could not list them (`problem` says why): the model can then be typed. */
export function modelPicks(listed: ModelsResult | undefined, now: ModelSettingsNow, problem?: string): ModelPick[] {
  const rows: ModelPick[] = [{ label: 'Model', separator: true }];
  const inUse = now.model.trim() || listed?.current || '';
  for (const model of listed?.models ?? []) {
    const current = model.id === inUse;
    rows.push({
      label: `${current ? '$(check) ' : ''}${model.displayName}`,
      description: model.id,
      ...(model.thinking === false ? { detail: 'No extended thinking' } : {}),
      ...(current ? { picked: true } : {}),
      choice: { kind: 'model', model: model.id },
    });
  }
  if (!listed) {
    rows.push({
      label: '$(warning) The models could not be listed',
      ...(problem ? { detail: problem } : {}),
    });
  }
  rows.push({ label: '$(edit) Type a model id…', choice: { kind: 'typed' } });
  if (now.model.trim()) {
    rows.push({
      label: "$(discard) The server's default model",
      description: listed && !now.model.trim() ? listed.current : 'clears plansight.model',
      choice: { kind: 'default' },
    });
  }
  rows.push({ label: 'Extended thinking', separator: true });
  rows.push(
    now.thinking
      ? {
          label: '$(lightbulb-autofix) Extended thinking is on: turn it off',
          description: `budget ${now.budgetTokens.toLocaleString('en-US')} tokens`,
          choice: { kind: 'thinking', on: false },
        }
      : {
          label: '$(lightbulb) Extended thinking is off: turn it on',
          description: 'the model thinks before it answers (slower, more tokens)',
          choice: { kind: 'thinking', on: true },
        },
  );
  return rows;
}

/** What the status says after a choice (the server restarts with the new settings). */
export function choiceMessage(choice: ModelChoice, typed?: string): string {
  switch (choice.kind) {
    case 'model':
      return `Plansight: model ${choice.model}; the server restarts to use it.`;
    case 'typed':
      return `Plansight: model ${typed ?? ''}; the server restarts to use it.`;
    case 'default':
      return "Plansight: the server's default model; the server restarts.";
    case 'thinking':
      return `Plansight: extended thinking ${choice.on ? 'on' : 'off'}; the server restarts.`;
  }
}
