/**
 * The conversation as the view shows it: runs (a prompt and what followed), each a list of
 * entries. Built from `plansight/event` payloads, live or from `plansight/history`, and from
 * the client's own cards (reviews, approvals, the API key). Pure: no `vscode` import.
 *
 * Extending it: a feature adds a card type without touching this module: it calls
 * `addCard(type, data)` (and `updateCard`) from its request handler, registers how the card
 * renders (`render.ts`, `registerCardRenderer`) and what its buttons do (the view's
 * `registerCardActions`). An event type the core does not know can be turned into entries
 * with `onEvent(type, handler)`.
 */
import type { PlansightEvent, RunResult, Usage } from '../protocol';
import { parsePrompt, type ShownPrompt } from '../commands/prompt';
import { formatCount, oneLine, truncate } from '../text';

export interface UserEntry {
  kind: 'user';
  id: string;
  prompt: ShownPrompt;
}
export interface TextEntry {
  kind: 'text';
  id: string;
  text: string;
  /** The model turn the text is of (`textDelta.turn`, from this server): a later turn's text
   * is an entry of its own, never run on from the earlier one's. */
  turn?: number;
}
export interface ThinkingEntry {
  kind: 'thinking';
  id: string;
  text: string;
}
export interface ToolEntry {
  kind: 'tool';
  id: string;
  callId: string;
  name: string;
  input: Record<string, unknown>;
  /** What the call does in one line, as its tool on the server said it (`toolCall.summary`). */
  summary?: string;
  result?: { isError: boolean; summary: string };
}
export interface ReminderEntry {
  kind: 'reminder';
  id: string;
  text: string;
  level: number;
  rounds?: number;
}
/** A line of information: a compaction, files changed outside, an error, a new session. */
export interface NoticeEntry {
  kind: 'notice';
  id: string;
  /** A codicon id. */
  icon: string;
  text: string;
  tone?: 'info' | 'warning' | 'error';
}
export interface ResultEntry {
  kind: 'result';
  id: string;
  result: RunResult;
  /** Whether `result.text` says something the streamed text did not (an error, a limit). */
  showText: boolean;
}

/** The card of an edit decided elsewhere (an earlier window, or written without asking). */
export const pastReviewCard = 'pastReview';
export interface PastReviewCardData {
  reviewId: string;
  path: string;
  description: string;
  outcome: string;
  feedback?: string;
  /** The change, from the edit tool's input (old and new text), when the history has it. */
  oldText?: string;
  newText?: string;
}
/** A card: something the user can act on. `card` names its type (see render.ts). */
export interface CardEntry<D = unknown> {
  kind: 'card';
  id: string;
  card: string;
  data: D;
  /** Open cards wait for the user; settled ones show what was decided. */
  open: boolean;
}

export type Entry =
  | UserEntry
  | TextEntry
  | ThinkingEntry
  | ToolEntry
  | ReminderEntry
  | NoticeEntry
  | ResultEntry
  | CardEntry;

export interface Run {
  id: string;
  entries: Entry[];
  /** The server said runStarted (false: sent by this client, not started yet, or refused). */
  started: boolean;
  running: boolean;
  /** The prompt as sent, to match the server's runStarted to this client's pending run. */
  prompt?: string;
  startedAt?: string;
  result?: RunResult;
  /** From history: a run of an earlier window. */
  past?: boolean;
  /** A follow-up the user sent during another run: it goes out when that run ends. */
  queued?: boolean;
}

/** What changed, so a view can redraw only that. */
export type Change =
  | { kind: 'reset' }
  | { kind: 'run'; run: Run }
  | { kind: 'entry'; run: Run; entry: Entry }
  | { kind: 'removeRun'; runId: string };

export type EventHandler = (model: ConversationModel, event: PlansightEvent) => void;

export interface ModelOptions {
  maxRuns?: number;
  maxEntriesPerRun?: number;
}

function str(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

export class ConversationModel {
  readonly runs: Run[] = [];
  private counter = 0;
  private readonly listeners = new Set<(change: Change) => void>();
  private readonly handlers = new Map<string, EventHandler>();
  private readonly maxRuns: number;
  private readonly maxEntries: number;

  constructor(options: ModelOptions = {}) {
    this.maxRuns = options.maxRuns ?? 50;
    this.maxEntries = options.maxEntriesPerRun ?? 2000;
  }

  onDidChange(listener: (change: Change) => void): { dispose(): void } {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  }

  /** Turns events of `type` (one the core does not handle) into entries. */
  onEvent(type: string, handler: EventHandler): { dispose(): void } {
    this.handlers.set(type, handler);
    return { dispose: () => this.handlers.delete(type) };
  }

  private emit(change: Change): void {
    for (const listener of [...this.listeners]) {
      listener(change);
    }
  }

  private nextId(prefix: string): string {
    this.counter += 1;
    return `${prefix}${this.counter}`;
  }

  get current(): Run | undefined {
    return this.runs[this.runs.length - 1];
  }

  findEntry(id: string): { run: Run; entry: Entry } | undefined {
    for (let r = this.runs.length - 1; r >= 0; r -= 1) {
      const run = this.runs[r]!;
      const entry = run.entries.find((e) => e.id === id);
      if (entry) {
        return { run, entry };
      }
    }
    return undefined;
  }

  private newRun(fields: Partial<Run> = {}): Run {
    const run: Run = { id: this.nextId('run'), entries: [], started: false, running: false, ...fields };
    this.runs.push(run);
    if (this.runs.length > this.maxRuns) {
      for (const gone of this.runs.splice(0, this.runs.length - this.maxRuns)) {
        this.emit({ kind: 'removeRun', runId: gone.id });
      }
    }
    this.emit({ kind: 'run', run });
    return run;
  }

  /** The run the server's events belong to: the newest not queued behind it. */
  get active(): Run | undefined {
    for (let r = this.runs.length - 1; r >= 0; r -= 1) {
      if (!this.runs[r]!.queued) {
        return this.runs[r];
      }
    }
    return undefined;
  }

  /** The run entries go to: the active one, or a new one (events of a run this view missed). */
  private target(): Run {
    return this.active ?? this.newRun({ started: true, running: true });
  }

  /**
   * The run for what comes outside any run (a worker's change set taken in, files changed
   * between runs): the newest run, else a new one that is not running, as no runFinished will
   * ever end it (`target()`'s would spin "Working…" for good).
   */
  outsideRun(): Run {
    return this.active ?? this.newRun({ started: true, running: false });
  }

  private push<E extends Entry>(run: Run, entry: E): E {
    run.entries.push(entry);
    if (run.entries.length > this.maxEntries) {
      run.entries.splice(1, run.entries.length - this.maxEntries); // keep the prompt
      this.emit({ kind: 'run', run });
    } else {
      this.emit({ kind: 'entry', run, entry });
    }
    return entry;
  }

  private changed(run: Run, entry: Entry): void {
    this.emit({ kind: 'entry', run, entry });
  }

  /** The user sent `prompt` (as it goes on the wire): shown at once, matched to runStarted. */
  addPending(prompt: string): Run {
    const run = this.newRun({ prompt, running: true });
    this.push(run, { kind: 'user', id: this.nextId('user'), prompt: parsePrompt(prompt) });
    return run;
  }

  /** A follow-up sent while another run goes on: shown at once, below it, marked queued. */
  addQueued(prompt: string): Run {
    const run = this.newRun({ prompt, queued: true });
    this.push(run, { kind: 'user', id: this.nextId('user'), prompt: parsePrompt(prompt) });
    return run;
  }

  /** A queued follow-up goes out now: it becomes the pending run. */
  sendQueued(run: Run): void {
    run.queued = false;
    run.running = true;
    // Moved to the end: the runs that started while it waited come before it.
    const at = this.runs.indexOf(run);
    if (at >= 0 && at !== this.runs.length - 1) {
      this.runs.splice(at, 1);
      this.runs.push(run);
      this.emit({ kind: 'removeRun', runId: run.id });
    }
    this.emit({ kind: 'run', run });
  }

  /** A queued follow-up that will not go out (the user stopped the run): it stays, saying so. */
  dropQueued(run: Run, why: string): void {
    run.queued = false;
    this.emit({ kind: 'run', run });
    this.addNotice({ icon: 'circle-slash', text: why }, run);
  }

  /** A pending run that will not start (refused, no key yet): it stays, with why. */
  stopPending(run: Run, notice?: Omit<NoticeEntry, 'kind' | 'id'>): void {
    run.running = false;
    this.emit({ kind: 'run', run });
    if (notice) {
      this.addNotice(notice, run);
    }
  }

  addNotice(notice: Omit<NoticeEntry, 'kind' | 'id'>, run: Run = this.target()): NoticeEntry {
    return this.push(run, { kind: 'notice', id: this.nextId('notice'), ...notice });
  }

  /** Adds a card of type `card` to the current run; returns its entry id. */
  addCard<D>(card: string, data: D, run: Run = this.target()): CardEntry<D> {
    return this.push(run, { kind: 'card', id: this.nextId('card'), card, data, open: true });
  }

  /** Changes a card's data (merged) and whether it is still open. */
  updateCard<D>(id: string, data: Partial<D>, open?: boolean): CardEntry<D> | undefined {
    const found = this.findEntry(id);
    if (!found || found.entry.kind !== 'card') {
      return undefined;
    }
    const card = found.entry as CardEntry<D>;
    card.data = { ...card.data, ...data };
    if (open !== undefined) {
      card.open = open;
    }
    this.changed(found.run, card);
    return card;
  }

  /** Open cards of one type, newest last. */
  openCards<D>(card: string): CardEntry<D>[] {
    return this.runs.flatMap((run) =>
      run.entries.filter((e): e is CardEntry<D> => e.kind === 'card' && e.card === card && e.open),
    );
  }

  clear(): void {
    this.runs.length = 0;
    this.emit({ kind: 'reset' });
  }

  /** Applies one `plansight/event`; unknown types go to a registered handler or are ignored. */
  apply(event: PlansightEvent): void {
    switch (event.type) {
      case 'runStarted':
        this.startRun(str(event['prompt']) ?? '');
        return;
      case 'textDelta': {
        const turn = event['turn'];
        this.appendText('text', str(event['text']) ?? '', typeof turn === 'number' ? turn : undefined);
        return;
      }
      case 'thinkingDelta':
        this.appendText('thinking', str(event['text']) ?? '');
        return;
      case 'toolCall': {
        const input = event['input'];
        const summary = str(event['summary']);
        this.push(this.target(), {
          kind: 'tool',
          id: this.nextId('tool'),
          callId: str(event['id']) ?? '',
          name: str(event['name']) ?? 'tool',
          input: input && typeof input === 'object' ? (input as Record<string, unknown>) : {},
          ...(summary !== undefined ? { summary } : {}),
        });
        return;
      }
      case 'toolResult': {
        const run = this.target();
        const callId = str(event['id']);
        const call = run.entries.find((e): e is ToolEntry => e.kind === 'tool' && e.callId === callId && !e.result);
        const result = { isError: event['isError'] === true, summary: str(event['summary']) ?? '' };
        if (call) {
          call.result = result;
          this.changed(run, call);
        } else {
          this.push(run, { kind: 'tool', id: this.nextId('tool'), callId: callId ?? '', name: str(event['name']) ?? 'tool', input: {}, result });
        }
        return;
      }
      case 'reminder':
        this.push(this.target(), {
          kind: 'reminder',
          id: this.nextId('reminder'),
          text: (str(event['text']) ?? 'Update your todos.').replace(/<\/?reminder>/g, '').trim(),
          level: typeof event['level'] === 'number' ? event['level'] : 1,
          ...(typeof event['rounds'] === 'number' ? { rounds: event['rounds'] } : {}),
        });
        return;
      case 'compacted': {
        const before = typeof event['beforeTokens'] === 'number' ? event['beforeTokens'] : 0;
        const after = typeof event['afterTokens'] === 'number' ? event['afterTokens'] : 0;
        const how = event['strategy'] === 'summary' ? 'summarized' : 'old tool results cleared';
        if (event['unchanged'] === true) {
          // Nothing could be made smaller: said once by the server, and the run goes on.
          this.addNotice({
            icon: 'fold',
            text: `Conversation not compacted: nothing could make its ${formatCount(before)} tokens smaller (the plan, the scratchpad and the last round are kept whole). The run goes on.`,
          });
          return;
        }
        this.addNotice({
          icon: 'fold',
          text: `Conversation compacted (${how}): ${formatCount(before)} → ${formatCount(after)} tokens. The plan and scratchpad are kept verbatim.`,
        });
        return;
      }
      case 'filesChanged': {
        const paths = Array.isArray(event['paths']) ? (event['paths'] as unknown[]).filter((p): p is string => typeof p === 'string') : [];
        if (paths.length) {
          this.addNotice({ icon: 'files', text: `Changed outside Plansight: ${truncate(paths.join(', '), 300)}` }, this.outsideRun());
        }
        return;
      }
      case 'editReviewed': {
        // A review this window showed has its card; one from the history (or written without
        // asking) gets a read-only card saying how it was decided, with the change when the
        // edit tool's input (in the same run) has it.
        const id = str(event['id']);
        const shown = this.runs.some((run) =>
          run.entries.some((e) => e.kind === 'card' && (e.data as { reviewId?: unknown } | null)?.reviewId === id),
        );
        if (!shown) {
          const run = this.target();
          const path = str(event['path']) ?? '';
          const feedback = str(event['feedback']);
          const call = [...run.entries]
            .reverse()
            .find((e): e is ToolEntry => e.kind === 'tool' && (e.name === 'edit_file' || e.name === 'write_file') && sameFile(e.input['path'], path));
          const change = call ? editChange(call) : undefined;
          this.push(run, {
            kind: 'card',
            id: this.nextId('card'),
            card: pastReviewCard,
            open: false,
            data: {
              reviewId: id ?? '',
              path,
              description: str(event['description']) ?? '',
              outcome: str(event['outcome']) ?? '',
              ...(feedback !== undefined ? { feedback } : {}),
              ...(change ?? {}),
            } satisfies PastReviewCardData,
          });
        }
        return;
      }
      case 'runFinished': {
        const result = event['result'];
        if (result && typeof result === 'object') {
          this.finishRun(result as RunResult);
        }
        return;
      }
      default:
        this.handlers.get(event.type)?.(this, event);
    }
  }

  private startRun(prompt: string): void {
    // The run this client sent and shows already, if it is the one starting.
    const pending = [...this.runs].reverse().find((r) => !r.started && r.running && r.prompt === prompt);
    if (pending) {
      pending.started = true;
      this.emit({ kind: 'run', run: pending });
      return;
    }
    const run = this.newRun({ prompt, started: true, running: true });
    this.push(run, { kind: 'user', id: this.nextId('user'), prompt: parsePrompt(prompt) });
  }

  /** Text continues the last entry of its kind, unless it is of another model turn. */
  private appendText(kind: 'text' | 'thinking', text: string, turn?: number): void {
    if (!text) {
      return;
    }
    const run = this.target();
    const last = run.entries[run.entries.length - 1];
    const otherTurn = last?.kind === 'text' && turn !== undefined && last.turn !== undefined && last.turn !== turn;
    if (last && last.kind === kind && !otherTurn) {
      last.text += text;
      this.changed(run, last);
    } else if (kind === 'text') {
      this.push(run, { kind, id: this.nextId(kind), text, ...(turn !== undefined ? { turn } : {}) });
    } else {
      this.push(run, { kind, id: this.nextId(kind), text });
    }
  }

  private finishRun(result: RunResult): void {
    const run = this.target();
    run.running = false;
    run.result = result;
    const streamed = [...run.entries].reverse().find((e): e is TextEntry => e.kind === 'text');
    const lastText = streamed ? this.splitFinalTurn(run, streamed, result.text) : undefined;
    const said = lastText ? oneLine(lastText.text) : '';
    const showText = Boolean(result.text.trim()) && (result.status !== 'done' || oneLine(result.text) !== said);
    this.push(run, { kind: 'result', id: this.nextId('result'), result, showText });
    this.emit({ kind: 'run', run });
  }

  /**
   * The final answer is the last turn's text; with no event between two turns (the run asked
   * the model once more at its end) and no `turn` on the deltas (a server that does not send
   * it), their text arrived as one stretch: split it there, so each turn is its own paragraph
   * and the answer is not repeated under the result.
   */
  private splitFinalTurn(run: Run, entry: TextEntry, answer: string): TextEntry {
    const final = answer.trim();
    const text = entry.text.trimEnd();
    if (!final || text === final || !text.endsWith(final)) {
      return entry;
    }
    const before = text.slice(0, text.length - final.length);
    // A turn's end, not a word of the same sentence ("It is all done." ends with "done." too):
    // the turns were streamed back to back, so the first ends in punctuation or a line break.
    if (!before.trim() || !/[.!?:)\]`*\n]$/.test(before)) {
      return entry;
    }
    entry.text = before.trimEnd();
    const last: TextEntry = { kind: 'text', id: this.nextId('text'), text: final };
    run.entries.splice(run.entries.indexOf(entry) + 1, 0, last);
    this.emit({ kind: 'run', run });
    return last;
  }

  /** A run of an earlier window, from `plansight/history` (its events replayed). */
  addPastRun(prompt: string, events: readonly PlansightEvent[], startedAt?: string, result?: RunResult): Run {
    const run = this.newRun({ prompt, started: true, running: false, past: true, ...(startedAt ? { startedAt } : {}) });
    this.push(run, { kind: 'user', id: this.nextId('user'), prompt: parsePrompt(prompt) });
    for (const event of events) {
      if (event.type !== 'runStarted' && event.type !== 'runFinished') {
        this.apply(event);
      }
    }
    if (result) {
      this.finishRun(result);
    } else {
      run.running = false;
      this.addNotice({ icon: 'debug-disconnect', text: 'This run did not finish (the server stopped).', tone: 'warning' }, run);
    }
    return run;
  }

  /** "New session": a line across the conversation; what follows starts over. */
  addSessionBreak(): void {
    const run = this.newRun();
    this.push(run, {
      kind: 'notice',
      id: this.nextId('notice'),
      icon: 'clear-all',
      text: 'New session: the conversation, plan and scratchpad start over.',
    });
  }

  /** The server went away mid-run; `why` says how, in words. */
  serverStopped(why = 'The Plansight server stopped.'): void {
    const run = this.active;
    if (run?.running) {
      run.running = false;
      this.addNotice({ icon: 'debug-disconnect', text: why, tone: 'warning' }, run);
      this.emit({ kind: 'run', run });
    }
  }
}

function sameFile(input: unknown, path: string): boolean {
  if (typeof input !== 'string' || !path) {
    return false;
  }
  const a = input.replace(/^\.\//, '');
  return a === path || a.endsWith(`/${path}`);
}

/** The old and new text an edit tool's input names (edit_file: the replaced part). */
function editChange(call: ToolEntry): { oldText: string; newText: string } | undefined {
  const { input } = call;
  if (call.name === 'edit_file' && typeof input['old_text'] === 'string' && typeof input['new_text'] === 'string') {
    return { oldText: input['old_text'], newText: input['new_text'] };
  }
  if (call.name === 'write_file' && typeof input['content'] === 'string') {
    return { oldText: '', newText: input['content'] };
  }
  return undefined;
}

// ----- words shared by the renderers ------------------------------------------------------

/**
 * What a tool call does in one line: the summary its tool made on the server, else (a call from
 * an older server) its input as the server shows a tool without a summarizer of its own
 * (`protocol/names.py` `plain_input_summary`): compact JSON, on one line, at most 100 characters.
 */
export function callSummary(entry: Pick<ToolEntry, 'input' | 'summary'>): string {
  if (entry.summary !== undefined) {
    return entry.summary;
  }
  return Object.keys(entry.input).length ? truncate(oneLine(JSON.stringify(entry.input) ?? ''), 100) : '';
}

/**
 * "3 rounds · 9,174 in (7,890 cached, 50 newly cached) · 567 out": the input counted in all,
 * as the API bills it, with its cached parts: the server's `totalInputTokens` (an older server's:
 * RunResult's inputTokens, only the part neither read from nor written to the cache, plus the
 * cached parts).
 */
export function usageText(rounds: number, usage: Usage | undefined): string {
  const parts = rounds > 0 ? [`${rounds} round${rounds === 1 ? '' : 's'}`] : [];
  if (usage) {
    const read = usage.cacheReadInputTokens ?? 0;
    const written = usage.cacheCreationInputTokens ?? 0;
    const cached: string[] = [];
    if (read) cached.push(`${formatCount(read)} cached`);
    if (written) cached.push(`${formatCount(written)} newly cached`);
    const total = formatCount(usage.totalInputTokens ?? usage.inputTokens + read + written);
    parts.push(
      cached.length ? `${total} in (${cached.join(', ')})` : `${total} in`,
      `${formatCount(usage.outputTokens)} out`,
    );
  }
  return parts.join(' · ');
}

export const editOutcomeWords: Readonly<Record<string, string>> = {
  accepted: 'accepted',
  changed: 'accepted with your changes',
  rejected: 'rejected',
  cancelled: 'cancelled (the run ended before a decision)',
};

export const editOutcomeIcons: Readonly<Record<string, string>> = {
  accepted: 'check',
  changed: 'edit',
  rejected: 'close',
  cancelled: 'circle-slash',
};

export const resultLabels: Readonly<Record<string, string>> = {
  done: 'Done',
  cancelled: 'Cancelled',
  error: 'Error',
  limit: 'Stopped at the round limit',
  refused: 'The model declined',
};
