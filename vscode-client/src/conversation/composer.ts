/**
 * The composer's rules, shared by the webview script and the tests. Pure: no `vscode` or DOM
 * import.
 */

export interface KeyLike {
  key: string;
  shiftKey: boolean;
  altKey: boolean;
  ctrlKey: boolean;
  metaKey: boolean;
  /** An input method is composing (e.g. Japanese): its Enter confirms the word, never sends. */
  isComposing: boolean;
}

/** What a key press in the prompt does: Enter sends, Shift+Enter is a new line. */
export function composerKey(event: KeyLike): 'send' | 'newline' | 'none' {
  if (event.key !== 'Enter' || event.isComposing) {
    return 'none';
  }
  if (event.shiftKey || event.altKey) {
    return 'newline';
  }
  return 'send';
}

/**
 * What Enter does with the prompt: send it, or, while a run goes on, queue it as a follow-up
 * that goes out when the run ends (shown at once, marked queued); nothing for only whitespace.
 */
export function sendAction(text: string, running: boolean): 'send' | 'queue' | 'none' {
  if (!text.trim()) {
    return 'none';
  }
  return running ? 'queue' : 'send';
}

/** Whether the Send button sends (the Stop button stands in for it during a run). */
export function canSend(text: string, running: boolean): boolean {
  return sendAction(text, running) === 'send';
}

/** The textarea's height: its text's, from `minRows` to `maxRows` lines (then it scrolls). */
export function composerHeight(contentHeight: number, lineHeight: number, padding: number, minRows = 2, maxRows = 12): number {
  const min = minRows * lineHeight + padding;
  const max = maxRows * lineHeight + padding;
  return Math.min(max, Math.max(min, Math.ceil(contentHeight)));
}

/** The cursor is on the box's first line (ArrowUp there recalls, as in a shell). */
export function onFirstLine(value: string, cursor: number): boolean {
  return !value.slice(0, cursor).includes('\n');
}

/** The cursor is on the box's last line (ArrowDown there goes forward again). */
export function onLastLine(value: string, cursor: number): boolean {
  return !value.slice(cursor).includes('\n');
}

/**
 * The prompts sent, for ArrowUp/ArrowDown as in a shell: Up goes to older prompts, Down back
 * to newer ones and at last to what was being typed (kept when the browsing began).
 */
export class PromptRecall {
  private readonly entries: string[];
  /** Where the browsing is: entries.length when not browsing. */
  private at: number;
  private draft = '';

  constructor(entries: readonly string[] = [], private readonly max = 100) {
    this.entries = entries.slice(-max);
    this.at = this.entries.length;
  }

  get all(): readonly string[] {
    return this.entries;
  }

  /** A prompt was sent: the newest entry (once, if the same as the one before). */
  add(text: string): void {
    if (text.trim() && this.entries[this.entries.length - 1] !== text) {
      this.entries.push(text);
      if (this.entries.length > this.max) {
        this.entries.shift();
      }
    }
    this.at = this.entries.length;
    this.draft = '';
  }

  /** The older prompt to show, or undefined when there is none. */
  up(current: string): string | undefined {
    if (this.at === 0) {
      return undefined;
    }
    if (this.at === this.entries.length) {
      this.draft = current;
    }
    this.at -= 1;
    return this.entries[this.at];
  }

  /** The newer prompt (or the draft) to show, or undefined when not browsing. */
  down(): string | undefined {
    if (this.at >= this.entries.length) {
      return undefined;
    }
    this.at += 1;
    return this.at === this.entries.length ? this.draft : this.entries[this.at];
  }

  /** The user typed: what shows is theirs now, no longer a recalled entry. */
  typed(): void {
    this.at = this.entries.length;
  }
}

/** An `@` mention being typed at the cursor: where its `@` is and what follows it. */
export function mentionAt(value: string, cursor: number): { start: number; query: string } | undefined {
  const before = value.slice(0, cursor);
  const match = /(^|\s)@([^\s@]*)$/.exec(before);
  if (!match) {
    return undefined;
  }
  return { start: cursor - match[2]!.length - 1, query: match[2]! };
}

/** The prompt with the mention at `start` (up to the cursor) replaced by `@path `. */
export function insertMention(value: string, start: number, cursor: number, path: string): { value: string; cursor: number } {
  const quoted = /\s/.test(path) ? `"${path}"` : path;
  const text = `@${quoted} `;
  const rest = value.slice(cursor).replace(/^\S*/, ''); // the rest of a word typed after the cursor goes too
  return { value: value.slice(0, start) + text + rest.replace(/^ /, ''), cursor: start + text.length };
}

/**
 * The workspace files that match a mention's query, best first: a file whose name starts with
 * it, then whose name holds it, then whose path holds it, then whose path holds its letters in
 * order; shorter paths first within each.
 */
export function rankPaths(paths: readonly string[], query: string, limit = 12): string[] {
  const q = query.toLowerCase();
  const score = (path: string): number => {
    const p = path.toLowerCase();
    const name = p.slice(p.lastIndexOf('/') + 1);
    if (!q) return 3;
    if (name.startsWith(q)) return 0;
    if (name.includes(q)) return 1;
    if (p.includes(q)) return 2;
    let i = 0;
    for (const ch of p) {
      if (ch === q[i]) i += 1;
      if (i === q.length) return 4;
    }
    return -1;
  };
  return paths
    .map((path) => ({ path, score: score(path) }))
    .filter((p) => p.score >= 0)
    .sort((a, b) => a.score - b.score || a.path.length - b.path.length || a.path.localeCompare(b.path))
    .slice(0, limit)
    .map((p) => p.path);
}

/** Messages from the webview to the extension. */
export type FromWebview =
  | { type: 'ready' }
  | { type: 'send'; text: string; includeContext: boolean; mode?: 'act' | 'plan' }
  /** The prompt box's text as typed (kept by the extension: see `draftKey`). */
  | { type: 'draft'; text: string }
  /** Files for an `@` mention (answered with `mentionFiles`). */
  | { type: 'mention'; query: string }
  /** A code block's Copy button. */
  | { type: 'copy'; text: string }
  /** A button of the welcome text: one of `welcomeCommands`. */
  | { type: 'command'; command: string }
  | { type: 'cancel' }
  | { type: 'newSession' }
  /** A click in the sessions control: new, open, rename or delete (sessions/sessionsModel.ts). */
  | { type: 'session'; action: string; id?: string }
  | { type: 'action'; entry: string; action: string; fields: Record<string, string> }
  | { type: 'openLink'; href: string };

/** What the composer shows as the context that goes with the prompt. */
export interface ComposerContext {
  path?: string;
  selection?: { startLine: number; endLine: number };
}

/** Messages from the extension to the webview. */
export type ToWebview =
  /** The unsent prompt kept over a reload (sent on `ready`). */
  | { type: 'draft'; text: string }
  /** The kept draft turned out to be a prompt sent since (the history came): out of the box
   *  if the box still holds just that. */
  | { type: 'staleDraft'; text: string }
  | { type: 'reset'; html: string }
  | { type: 'run'; id: string; html: string }
  | { type: 'entry'; runId: string; id: string; html: string }
  | { type: 'removeRun'; id: string }
  | { type: 'state'; running: boolean; status: string; context: ComposerContext | null }
  | { type: 'focus' }
  | { type: 'setPrompt'; text: string }
  | { type: 'mentionFiles'; query: string; paths: string[] }
  /** The prompts sent in this workspace so far (ArrowUp recalls them), oldest first. */
  | { type: 'recall'; prompts: string[] }
  /** The sessions control's HTML (empty: none). */
  | { type: 'sessions'; html: string }
  /** The header's line naming the project instructions the model reads (empty: none). */
  | { type: 'instructions'; html: string };

/** The commands the welcome text's buttons may run (nothing else goes through). */
export const welcomeCommands: readonly string[] = [
  'plansight.runDemo',
  'plansight.setApiKey',
  'plansight.planFirst',
  'workbench.action.files.openFolder',
];

/** The label of the context chip, e.g. "hello.py · lines 3–5". */
export function contextLabel(context: ComposerContext): string {
  const { path, selection } = context;
  const lines = selection
    ? selection.startLine === selection.endLine
      ? `line ${selection.startLine}`
      : `lines ${selection.startLine}–${selection.endLine}`
    : '';
  return [path, lines].filter(Boolean).join(' · ');
}

/** The Send button's label: "Plan" while "Plan first" is on (the run plans, then waits). */
export function sendLabel(planFirst: boolean): string {
  return planFirst ? 'Plan' : 'Send';
}
