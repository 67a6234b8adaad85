/**
 * Entries → HTML for the conversation webview. Everything the model or the user wrote is
 * escaped or goes through the Markdown renderer (raw HTML off); the page's script only places
 * these fragments and turns clicks on `data-action` buttons into messages. Pure: no `vscode`
 * import.
 *
 * Card types register a renderer (`registerCard`); a card's buttons carry `data-action`, its
 * inputs `data-field`: a click sends `{ entry, action, fields }` to the view, which hands it to
 * the actions the card type registered there.
 */
import { escapeHtml, oneLine, truncate } from '../text';
import { mcpToolParts, toolDisplayName } from '../mcp/mcpModel';
import { createMarkdown } from './markdown';
import { keyRefused } from './runCards';
import {
  callSummary,
  type CardEntry,
  type Entry,
  type ReminderEntry,
  resultLabels,
  type Run,
  type ToolEntry,
  usageText,
} from './model';

export type CardRenderer = (card: CardEntry, r: RenderHelpers) => string;

/** What card renderers get: escaping, Markdown and the button/field markup the page expects. */
export interface RenderHelpers {
  escape(text: string): string;
  markdown(text: string): string;
  icon(id: string): string;
  button(action: string, label: string, options?: { primary?: boolean; icon?: string; title?: string }): string;
  field(name: string, placeholder: string, options?: { multiline?: boolean; value?: string }): string;
}

const icon = (id: string): string => `<i class="codicon codicon-${escapeHtml(id)}" aria-hidden="true"></i>`;

/** The helpers, with `markdown` the renderer's own markdown-it instance. */
export function makeHelpers(markdown: (text: string) => string): RenderHelpers {
  return {
    escape: escapeHtml,
    markdown,
    icon,
    button: (action, label, options = {}) =>
      `<button type="button" class="${options.primary ? 'primary' : 'secondary'}" data-action="${escapeHtml(action)}"` +
      `${options.title ? ` title="${escapeHtml(options.title)}"` : ''}>` +
      `${options.icon ? icon(options.icon) : ''}${escapeHtml(label)}</button>`,
    field: (name, placeholder, options = {}) =>
      options.multiline
        ? `<textarea data-field="${escapeHtml(name)}" rows="2" placeholder="${escapeHtml(placeholder)}">${escapeHtml(options.value ?? '')}</textarea>`
        : `<input type="text" data-field="${escapeHtml(name)}" placeholder="${escapeHtml(placeholder)}" value="${escapeHtml(options.value ?? '')}">`,
  };
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
  ask_user: 'question',
  submit_plan: 'checklist',
};

const resultIcons: Readonly<Record<string, string>> = {
  done: 'pass',
  cancelled: 'circle-slash',
  error: 'error',
  limit: 'warning',
  refused: 'circle-slash',
};

/** Longest text shown in a tool row's body (the whole input is in the stored conversation). */
const maxBody = 4000;

function clip(text: string): string {
  return text.length > maxBody ? `${text.slice(0, maxBody)}\n… (${text.length - maxBody} more characters)` : text;
}

function toolBody(entry: ToolEntry, markdown: (text: string) => string): string {
  const { name, input } = entry;
  const pre = (label: string, text: string, wrap = false): string =>
    `<div class="label">${escapeHtml(label)}</div><pre${wrap ? ' class="wrap"' : ''}>${escapeHtml(clip(text))}</pre>`;
  const parts: string[] = [];
  if (name === 'bash' && typeof input['command'] === 'string') {
    parts.push(pre('Command', input['command']));
  } else if (name === 'edit_file' && typeof input['old_text'] === 'string' && typeof input['new_text'] === 'string') {
    parts.push(pre('Path', String(input['path'] ?? '')), pre('Replace', input['old_text']), pre('With', input['new_text']));
  } else if (name === 'write_file' && typeof input['content'] === 'string') {
    parts.push(pre('Path', String(input['path'] ?? '')), pre('Content', input['content']));
  } else if (name === 'write_scratchpad' && typeof input['content'] === 'string') {
    parts.push(pre('Notes', input['content']));
  } else if (name === 'submit_plan' && typeof input['summary'] === 'string') {
    // The summary is the model's Markdown, shown as the proposed plan's card shows it.
    parts.push(`<div class="label">Summary</div><div class="md">${markdown(input['summary'])}</div>`);
  } else if (Object.keys(input).length) {
    parts.push(pre('Input', JSON.stringify(input, null, 2)));
  }
  if (entry.result) {
    // An error is a sentence to read (e.g. why a file is protected), not output to line up:
    // wrapped, so that the narrow sidebar shows all of it without scrolling sideways.
    const { isError, summary } = entry.result;
    parts.push(pre(isError ? 'Error' : 'Result', summary || '(no output)', isError));
  } else {
    parts.push('<div class="label">Running…</div>');
  }
  return parts.join('');
}

function renderTool(entry: ToolEntry, markdown: (text: string) => string): string {
  const state = entry.result ? (entry.result.isError ? 'error' : 'ok') : 'running';
  const iconId = state === 'running' ? 'loading codicon-modifier-spin' : state === 'error' ? 'error' : (toolIcons[entry.name] ?? (mcpToolParts(entry.name) ? 'plug' : 'tools'));
  const input = callSummary(entry);
  const result = entry.result ? truncate(oneLine(entry.result.summary), 160) : '';
  return (
    `<details class="entry tool ${state}" data-entry="${entry.id}">` +
    `<summary>${icon(iconId)}<span class="name">${escapeHtml(toolDisplayName(entry.name))}</span>` +
    `${input ? ` <span class="input">${escapeHtml(input)}</span>` : ''}` +
    `${result ? ` <span class="result">→ ${escapeHtml(result)}</span>` : ''}</summary>` +
    `<div class="body">${toolBody(entry, markdown)}</div></details>`
  );
}

function renderReminder(entry: ReminderEntry): string {
  const rounds = entry.rounds ? ` after ${entry.rounds} rounds without a plan update` : '';
  return (
    `<div class="entry reminder level-${Math.min(3, Math.max(1, entry.level))}" data-entry="${entry.id}">` +
    `${icon(entry.level >= 2 ? 'warning' : 'bell')}<span><strong>Plan reminder</strong>${escapeHtml(rounds)}: ` +
    `${escapeHtml(entry.text)}</span></div>`
  );
}

export class ConversationRenderer {
  private readonly cards = new Map<string, CardRenderer>();
  private readonly md = createMarkdown();
  readonly helpers: RenderHelpers = makeHelpers((text) => this.md.render(text));

  registerCard(type: string, render: CardRenderer): { dispose(): void } {
    this.cards.set(type, render);
    return { dispose: () => this.cards.delete(type) };
  }

  entry(entry: Entry): string {
    const id = entry.id;
    switch (entry.kind) {
      case 'user': {
        const { text, path, selection } = entry.prompt;
        const chips: string[] = [];
        if (path) {
          chips.push(`<span class="chip">${icon('file')}${escapeHtml(path)}</span>`);
        }
        if (selection) {
          const lines =
            selection.startLine === selection.endLine ? `line ${selection.startLine}` : `lines ${selection.startLine}–${selection.endLine}`;
          chips.push(`<span class="chip">${icon('selection')}${escapeHtml(lines)}</span>`);
        }
        return (
          `<div class="entry user" data-entry="${id}"><div class="bubble">${escapeHtml(text)}</div>` +
          `${chips.length ? `<div class="chips">${chips.join('')}</div>` : ''}</div>`
        );
      }
      case 'text':
        return `<div class="entry text md" data-entry="${id}">${this.helpers.markdown(entry.text)}</div>`;
      case 'thinking':
        return (
          `<details class="entry thinking" data-entry="${id}"><summary>${icon('lightbulb')}Thinking</summary>` +
          `<div class="body md">${this.helpers.markdown(entry.text)}</div></details>`
        );
      case 'tool':
        return renderTool(entry, (text) => this.helpers.markdown(text));
      case 'reminder':
        return renderReminder(entry);
      case 'notice':
        return `<div class="entry notice ${entry.tone ?? 'info'}" data-entry="${id}">${icon(entry.icon)}<span>${escapeHtml(entry.text)}</span></div>`;
      case 'result': {
        const { result } = entry;
        const label = resultLabels[result.status] ?? result.status;
        // A refused key is said once, in words, on the card below (Set API Key): the API's own
        // line above it ("authentication_error: invalid x-api-key") said it a second time.
        const error = result.status === 'error' && result.error && !keyRefused(result.error) ? `: ${result.error}` : '';
        const text = entry.showText && !(result.status === 'error' && result.error && result.text.includes(result.error)) ? result.text : '';
        return (
          `<div class="entry result ${escapeHtml(result.status)}" data-entry="${id}">` +
          `<div class="line">${icon(resultIcons[result.status] ?? 'info')}<strong>${escapeHtml(label + error)}</strong>` +
          `<span class="usage">${escapeHtml(usageText(result.rounds, result.usage))}</span></div>` +
          `${text ? `<div class="md">${this.helpers.markdown(text)}</div>` : ''}</div>`
        );
      }
      case 'card': {
        const render = this.cards.get(entry.card);
        const body = render
          ? render(entry, this.helpers)
          : `<div class="card-body">${escapeHtml(entry.card)}</div>`;
        return `<div class="entry card card-${escapeHtml(entry.card)} ${entry.open ? 'open' : 'settled'}" data-entry="${id}">${body}</div>`;
      }
    }
  }

  /** A run's container with all its entries. */
  run(run: Run): string {
    const state = run.queued ? 'queued' : run.running ? 'running' : run.result ? run.result.status : 'stopped';
    const when = run.startedAt ? ` title="${escapeHtml(run.startedAt)}"` : '';
    return (
      `<section class="run ${escapeHtml(state)}${run.past ? ' past' : ''}" data-run="${run.id}"${when}>` +
      run.entries.map((e) => this.entry(e)).join('') +
      `${run.queued ? '<div class="queued-note">' + icon('clock') + 'Queued: goes out when the current run ends.</div>' : ''}` +
      `${run.running ? '<div class="working">' + icon('loading codicon-modifier-spin') + 'Working…</div>' : ''}` +
      `</section>`
    );
  }
}
