/**
 * The extension's settings as the server gets them. Pure: no `vscode` import (it is given the
 * configuration object), so the rule is unit-tested.
 *
 * The settings that widen the boundary (which Python runs the server, where the key goes, what
 * runs or is written without asking) are the user's alone (PROTOCOL.md version 4, "Settings
 * that widen the boundary are user-level only"). package.json declares them `"scope":
 * "application"`, so VS Code does not apply a workspace's `.vscode/settings.json` to them
 * (not "machine": in a remote window, code-server's or Remote-SSH's, VS Code takes a machine
 * setting from the remote machine's settings, not the user's, so the user's were lost); and
 * because an older VS Code, or one a bug lets through, would still hand `get()` the
 * workspace's value, they are read here from `inspect()`: the user's value, else the
 * default, never `workspaceValue` or `workspaceFolderValue`. A command the agent runs can
 * write `.vscode/settings.json`; nothing it writes there reaches these.
 */
import type { PlansightSettings } from './options';

/** The boundary settings (keys under `plansight.`), each `"scope": "application"` in package.json. */
export const boundarySettings = [
  'python',
  'baseUrl',
  'autoApprove.edits',
  'autoApprove.commands',
  'autoApprove.sandboxedCommands',
  'sandbox.enabled',
  'plansDirectory',
  'parallel.max',
] as const;

export type BoundarySetting = (typeof boundarySettings)[number];

/** What `WorkspaceConfiguration.inspect` answers (the parts read here). */
export interface Inspected<T> {
  defaultValue?: T;
  globalValue?: T;
  workspaceValue?: T;
  workspaceFolderValue?: T;
}

/** The part of `vscode.WorkspaceConfiguration` this module uses. */
export interface ConfigurationReader {
  get<T>(section: string, defaultValue: T): T;
  inspect<T>(section: string): Inspected<T> | undefined;
}

/** The user's own value of a setting (user settings, else the default, else `fallback`):
 * whatever a workspace or folder says is left out. A value of the wrong type is the fallback. */
export function userValue<T extends string | number | boolean>(
  config: ConfigurationReader,
  key: string,
  fallback: T,
): T {
  const inspected = config.inspect<unknown>(key);
  for (const value of [inspected?.globalValue, inspected?.defaultValue]) {
    if (value !== undefined && value !== null && typeof value === typeof fallback) {
      return value as T;
    }
  }
  return fallback;
}

/** The settings the server starts with: the boundary ones from the user alone, the rest
 * (model, thinking, rounds: nothing that reaches past the workspace) as VS Code resolves them. */
export function readPlansightSettings(config: ConfigurationReader): PlansightSettings {
  return {
    model: config.get<string>('model', ''),
    baseUrl: userValue(config, 'baseUrl', ''),
    python: userValue(config, 'python', ''),
    maxRounds: config.get<number>('maxRounds', 0),
    autoApproveEdits: userValue(config, 'autoApprove.edits', false),
    autoApproveCommands: userValue(config, 'autoApprove.commands', false),
    autoApproveSandboxedCommands: userValue(config, 'autoApprove.sandboxedCommands', false),
    sandbox: userValue(config, 'sandbox.enabled', 'auto'),
    plansDirectory: userValue(config, 'plansDirectory', '.plansight/plans'),
    parallelMax: userValue(config, 'parallel.max', 3),
    thinking: config.get<boolean>('thinking', false),
    thinkingBudgetTokens: config.get<number>('thinkingBudgetTokens', 4096),
  };
}

/** Whether two readings differ in anything the server starts with: a settings change that
 * does not (a workspace value of a user-level setting, say) restarts nothing. */
export function settingsDiffer(a: PlansightSettings, b: PlansightSettings): boolean {
  return JSON.stringify(a) !== JSON.stringify(b);
}
