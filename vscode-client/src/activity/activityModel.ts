/**
 * `plansight/event` → rows of the activity view. Pure: no `vscode` import.
 *
 * The log is a list of runs (newest first); each run holds its rows in order. Text deltas
 * are gathered into one row per stretch of model text; a tool result updates its call's row.
 */
import type { PlansightEvent, RunResult, Usage } from '../protocol';
import { escapeIcons, formatCount, oneLine, truncate } from '../text';

export type RowKind = 'text' | 'tool' | 'reminder' | 'files' | 'finished' | 'error' | 'info';

export interface ActivityRow {
  key: string;
  kind: RowKind;
  label: string;
  description?: string;
  tooltip: string;
  iconId: string;
  iconColor?: string;
  /** For tool rows: the call id, to match its result. */
  callId?: string;
}

export interface ActivityRun {
  key: string;
  prompt: string;
  running: boolean;
  result?: RunResult;
  rows: ActivityRow[];
}

const toolIcons: Readonly<Record<string, string>> = {
  read_file: 'file',
  write_file: 'new-file',
  edit_file: 'edit',
  list_files: 'list-tree',
  grep: 'search',
  bash: 'terminal',
  todo: 'checklist',
  read_scratchpad: 'note',
  write_scratchpad: 'note',
};

function str(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/** A short human summary of a tool call's input. */
export function toolInputSummary(name: string, input: Record<string, unknown>): string {
  const path = str(input['path']);
  switch (name) {
    case 'read_file': {
      const offset = input['offset'];
      const limit = input['limit'];
      const range =
        typeof offset === 'number'
          ? typeof limit === 'number'
            ? `:${offset}-${offset + limit - 1}`
            : `:${offset}-`
          : '';
      return `${path ?? ''}${range}`;
    }
    case 'write_file': {
      const content = str(input['content']) ?? '';
      const lines = content === '' ? 0 : content.split('\n').length;
      return `${path ?? ''} (${lines} line${lines === 1 ? '' : 's'})`;
    }
    case 'edit_file':
      return path ?? '';
    case 'list_files':
      return [str(input['pattern']), path].filter(Boolean).join(' in ') || '.';
    case 'grep': {
      const where = [path, str(input['glob'])].filter(Boolean).join(' ');
      return `/${str(input['pattern']) ?? ''}/${where ? ` in ${where}` : ''}`;
    }
    case 'bash':
      return truncate(oneLine(str(input['command']) ?? ''), 100);
    case 'todo': {
      const items = Array.isArray(input['items']) ? input['items'].length : 0;
      return `${items} item${items === 1 ? '' : 's'}`;
    }
    case 'read_scratchpad':
      return '';
    case 'write_scratchpad':
      return truncate(oneLine(str(input['content']) ?? ''), 80);
    default:
      return truncate(oneLine(JSON.stringify(input) ?? ''), 100);
  }
}

/** "3 rounds · 1,234 in · 567 out · 100 cache read · 50 cache write" */
export function usageText(rounds: number, usage: Usage | undefined): string {
  const parts = [`${rounds} round${rounds === 1 ? '' : 's'}`];
  if (usage) {
    parts.push(`${formatCount(usage.inputTokens)} in`, `${formatCount(usage.outputTokens)} out`);
    if (usage.cacheReadInputTokens) {
      parts.push(`${formatCount(usage.cacheReadInputTokens)} cache read`);
    }
    if (usage.cacheCreationInputTokens) {
      parts.push(`${formatCount(usage.cacheCreationInputTokens)} cache write`);
    }
  }
  return parts.join(' · ');
}

const finishedLabels: Readonly<Record<RunResult['status'], string>> = {
  done: 'Done',
  cancelled: 'Cancelled',
  error: 'Error',
  limit: 'Stopped at the round limit',
};

const finishedIcons: Readonly<Record<RunResult['status'], [string, string?]>> = {
  done: ['pass', 'testing.iconPassed'],
  cancelled: ['circle-slash'],
  error: ['error', 'testing.iconFailed'],
  limit: ['warning', 'list.warningForeground'],
};

export function finishedRow(key: string, result: RunResult): ActivityRow {
  const [iconId, iconColor] = finishedIcons[result.status] ?? ['info'];
  const error = result.status === 'error' && result.error ? `: ${oneLine(result.error)}` : '';
  const label = `${finishedLabels[result.status] ?? result.status}${error}`;
  const usage = usageText(result.rounds, result.usage);
  return {
    key,
    kind: 'finished',
    label: escapeIcons(truncate(label, 160)),
    description: usage,
    tooltip: [label, usage, result.text].filter(Boolean).join('\n\n'),
    iconId,
    ...(iconColor ? { iconColor } : {}),
  };
}

/** A prompt without the editor context the client appended to it (see commands/prompt.ts). */
export function promptLabel(prompt: string): string {
  return oneLine(prompt.replace(/<editor-context>[\s\S]*?(<\/editor-context>|$)/g, ''));
}

/** The header of a run in the view. */
export function runHeader(run: ActivityRun): Omit<ActivityRow, 'kind'> {
  const base = { key: run.key, label: escapeIcons(truncate(promptLabel(run.prompt), 120)) };
  if (run.running) {
    return { ...base, iconId: 'sync~spin', description: 'running', tooltip: run.prompt };
  }
  if (run.result) {
    const [iconId, iconColor] = finishedIcons[run.result.status] ?? ['info'];
    return {
      ...base,
      iconId,
      ...(iconColor ? { iconColor } : {}),
      description: `${run.result.status} · ${usageText(run.result.rounds, run.result.usage)}`,
      tooltip: run.prompt,
    };
  }
  return { ...base, iconId: 'history', tooltip: run.prompt };
}

export interface ActivityLogOptions {
  maxRuns?: number;
  maxRowsPerRun?: number;
}

export class ActivityLog {
  /** Newest first. */
  readonly runs: ActivityRun[] = [];
  private counter = 0;
  private readonly maxRuns: number;
  private readonly maxRows: number;

  constructor(options: ActivityLogOptions = {}) {
    this.maxRuns = options.maxRuns ?? 20;
    this.maxRows = options.maxRowsPerRun ?? 2000;
  }

  private key(prefix: string): string {
    this.counter += 1;
    return `${prefix}${this.counter}`;
  }

  /** The run events go to: the newest, or a new one when there is none. */
  private currentRun(): ActivityRun {
    const run = this.runs[0];
    if (run) {
      return run;
    }
    return this.startRun('(session)', false);
  }

  private startRun(prompt: string, running: boolean): ActivityRun {
    const run: ActivityRun = { key: this.key('run'), prompt, running, rows: [] };
    this.runs.unshift(run);
    this.runs.splice(this.maxRuns);
    return run;
  }

  private push(run: ActivityRow[], row: ActivityRow): void {
    run.push(row);
    if (run.length > this.maxRows) {
      run.splice(0, run.length - this.maxRows);
    }
  }

  /**
   * Applies one `plansight/event`. Returns the run that changed, or undefined when the event
   * was ignored (unknown types are ignored, as the protocol asks).
   */
  apply(event: PlansightEvent): ActivityRun | undefined {
    switch (event.type) {
      case 'runStarted': {
        const prompt = typeof event['prompt'] === 'string' ? event['prompt'] : '';
        return this.startRun(prompt, true);
      }
      case 'textDelta': {
        const text = typeof event['text'] === 'string' ? event['text'] : '';
        if (!text) {
          return undefined;
        }
        const run = this.currentRun();
        const last = run.rows[run.rows.length - 1];
        if (last && last.kind === 'text') {
          last.tooltip += text;
          last.label = escapeIcons(truncate(oneLine(last.tooltip), 200));
        } else {
          this.push(run.rows, {
            key: this.key('text'),
            kind: 'text',
            label: escapeIcons(truncate(oneLine(text), 200)),
            tooltip: text,
            iconId: 'comment',
          });
        }
        return run;
      }
      case 'toolCall': {
        const e = event as { id?: unknown; name?: unknown; input?: unknown };
        const name = typeof e.name === 'string' ? e.name : 'tool';
        const input =
          e.input && typeof e.input === 'object' ? (e.input as Record<string, unknown>) : {};
        const summary = toolInputSummary(name, input);
        const run = this.currentRun();
        this.push(run.rows, {
          key: this.key('tool'),
          kind: 'tool',
          label: name,
          description: escapeIcons(summary),
          tooltip: `${name} ${summary}`.trim(),
          iconId: 'loading~spin',
          ...(typeof e.id === 'string' ? { callId: e.id } : {}),
        });
        return run;
      }
      case 'toolResult': {
        const e = event as { id?: unknown; name?: unknown; isError?: unknown; summary?: unknown };
        const name = typeof e.name === 'string' ? e.name : 'tool';
        const isError = e.isError === true;
        const summary = typeof e.summary === 'string' ? e.summary : '';
        const run = this.currentRun();
        const call = run.rows.find((r) => r.kind === 'tool' && r.callId === e.id && r.callId);
        const icon = isError ? 'error' : (toolIcons[name] ?? 'tools');
        if (call) {
          call.iconId = icon;
          if (isError) {
            call.iconColor = 'testing.iconFailed';
          }
          const input = call.description ?? '';
          const shortSummary = escapeIcons(truncate(oneLine(summary), 100));
          call.description = [input, shortSummary].filter(Boolean).join(' → ');
          call.tooltip = `${call.tooltip}\n${isError ? 'Error: ' : ''}${summary}`;
        } else {
          this.push(run.rows, {
            key: this.key('result'),
            kind: 'tool',
            label: name,
            description: escapeIcons(truncate(oneLine(summary), 100)),
            tooltip: `${name}\n${summary}`,
            iconId: icon,
            ...(isError ? { iconColor: 'testing.iconFailed' } : {}),
          });
        }
        return run;
      }
      case 'reminder': {
        const text = typeof event['text'] === 'string' ? event['text'] : 'Update your todos.';
        const level = typeof event['level'] === 'number' ? event['level'] : 1;
        const run = this.currentRun();
        this.push(run.rows, {
          key: this.key('reminder'),
          kind: 'reminder',
          label: escapeIcons(truncate(oneLine(text.replace(/<\/?reminder>/g, '')), 160)),
          description: `reminder, level ${level}`,
          tooltip: text,
          iconId: level >= 2 ? 'warning' : 'bell',
          iconColor: level >= 2 ? 'list.warningForeground' : 'charts.yellow',
        });
        return run;
      }
      case 'filesChanged': {
        const paths = Array.isArray(event['paths'])
          ? (event['paths'] as unknown[]).filter((p): p is string => typeof p === 'string')
          : [];
        const run = this.currentRun();
        this.push(run.rows, {
          key: this.key('files'),
          kind: 'files',
          label: `Files changed: ${escapeIcons(truncate(paths.join(', '), 160))}`,
          description: `${paths.length}`,
          tooltip: paths.join('\n'),
          iconId: 'files',
        });
        return run;
      }
      case 'runFinished': {
        const result = event['result'] as RunResult | undefined;
        if (!result || typeof result !== 'object') {
          return undefined;
        }
        const run = this.currentRun();
        run.running = false;
        run.result = result;
        this.push(run.rows, finishedRow(this.key('finished'), result));
        return run;
      }
      default:
        return undefined;
    }
  }

  /** An error seen by the client (a refused request, a server that did not start). */
  addError(message: string): ActivityRun {
    const run = this.currentRun();
    this.push(run.rows, {
      key: this.key('error'),
      kind: 'error',
      label: escapeIcons(truncate(oneLine(message), 200)),
      tooltip: message,
      iconId: 'error',
      iconColor: 'testing.iconFailed',
    });
    return run;
  }

  /** Marks the newest run as no longer running (e.g. the server went away). */
  stopRunning(): ActivityRun | undefined {
    const run = this.runs[0];
    if (run?.running) {
      run.running = false;
      return run;
    }
    return undefined;
  }

  clear(): void {
    this.runs.length = 0;
  }
}
