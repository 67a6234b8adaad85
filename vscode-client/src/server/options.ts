/**
 * Settings → the server's initializationOptions and environment. Pure: no `vscode` import.
 */
import type { InitializationOptions } from '../protocol';

export interface PlansightSettings {
  model: string;
  baseUrl: string;
  python: string;
  maxRounds: number;
  autoApproveEdits: boolean;
  autoApproveCommands: boolean;
  /** Run sandboxed commands without asking (an unsandboxed one is still asked). */
  autoApproveSandboxedCommands?: boolean;
  /** Extended thinking (`plansight.thinking`), with its budget in tokens. */
  thinking?: boolean;
  thinkingBudgetTokens?: number;
  /** `plansight.sandbox.enabled`: "auto" (sandbox where one can be made), "required", "off". */
  sandbox?: string;
  /** `plansight.plansDirectory`: where the plan files go (relative); empty: no plan files. */
  plansDirectory?: string;
  /** `plansight.parallel.max`: how many workers run plan items at once. */
  parallelMax?: number;
}

/** The smallest thinking budget the API takes (`budget_tokens` >= 1024). */
export const MIN_THINKING_BUDGET = 1024;

export function initializationOptions(
  settings: PlansightSettings,
  overrides: ServerOverrides = {},
): InitializationOptions {
  const options: InitializationOptions = {
    autoApprove: { edits: settings.autoApproveEdits, commands: settings.autoApproveCommands },
  };
  if (settings.autoApproveSandboxedCommands) {
    options.autoApprove.sandboxedCommands = true;
  }
  if (settings.sandbox === 'required' || settings.sandbox === 'off') {
    options.sandbox = { enabled: settings.sandbox === 'required' };
  }
  if (settings.plansDirectory !== undefined && settings.plansDirectory.trim() !== '.plansight/plans') {
    // The server's default needs no option; an empty setting turns plan files off.
    options.plansDirectory = settings.plansDirectory.trim() || false;
  }
  if (Number.isInteger(settings.parallelMax) && settings.parallelMax! > 0 && settings.parallelMax !== 3) {
    options.parallel = { max: settings.parallelMax };
  }
  if (overrides.storageDir) {
    options.storageDir = overrides.storageDir;
  }
  if (settings.model.trim()) {
    options.model = settings.model.trim();
  }
  if (Number.isInteger(settings.maxRounds) && settings.maxRounds > 0) {
    options.maxRounds = settings.maxRounds;
  }
  if (settings.thinking) {
    // The contract's option: the server sends the kind of thinking the model supports
    // (adaptive, else enabled with this budget, raised to 1024 and below max_tokens).
    const budget = settings.thinkingBudgetTokens;
    options.thinking = Number.isInteger(budget) && budget! > 0 ? { budgetTokens: Math.max(MIN_THINKING_BUDGET, budget!) } : {};
  }
  return options;
}

/** What the demo changes for the next server start (the user's settings stay as they are). */
export interface ServerOverrides {
  /** From `context.secrets`; wins over an inherited ANTHROPIC_API_KEY. */
  apiKey?: string;
  /** Wins over the setting (the demo points the server at its fake API). */
  baseUrl?: string;
  /** Where the server keeps the session (the demo's own folder, not the workspace's). */
  storageDir?: string;
}

/** The server process's environment: the editor's, plus the key and base URL. */
export function serverEnv(
  base: Readonly<Record<string, string | undefined>>,
  settings: Pick<PlansightSettings, 'baseUrl'>,
  overrides: ServerOverrides = {},
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(base)) {
    if (v !== undefined) {
      env[k] = v;
    }
  }
  if (overrides.apiKey) {
    env['ANTHROPIC_API_KEY'] = overrides.apiKey;
  }
  const baseUrl = overrides.baseUrl ?? settings.baseUrl.trim();
  if (baseUrl) {
    env['ANTHROPIC_BASE_URL'] = baseUrl;
  }
  // The server's stdout is the LSP channel: keep Python from buffering or colouring it.
  env['PYTHONUNBUFFERED'] = '1';
  return env;
}

/** Replaces ${workspaceFolder}, ${userHome} and a leading ~ in a configured path. */
export function expandPath(value: string, workspaceFolder: string | undefined, home: string): string {
  let out = value.trim();
  if (out.startsWith('~/') || out === '~') {
    out = home + out.slice(1);
  }
  out = out.replace(/\$\{userHome\}/g, home);
  if (workspaceFolder !== undefined) {
    out = out.replace(/\$\{workspaceFolder\}/g, workspaceFolder);
  }
  return out;
}
