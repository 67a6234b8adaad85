/**
 * What the server last said about the session: plan, scratchpad, whether a run goes on, and
 * the edits proposed so far. Views read it and listen for changes. Pure: no `vscode` import.
 */
import { type InstructionFile, instructionFiles } from './conversation/instructions';
import type { EditOutcome, EditRecord } from './plan/planModel';
import type { Workers } from './plan/workersModel';
import { emptyTodoState, type TodoState } from './protocol';
import { SessionsModel } from './sessions/sessionsModel';

export type SessionChange = 'todos' | 'scratchpad' | 'running' | 'edits' | 'server' | 'waiting' | 'planReview' | 'instructions' | 'workers';

/** `failed`: it could not start; `crashed`: it stopped on its own and is not restarted. */
export type ServerStatus = 'stopped' | 'starting' | 'running' | 'failed' | 'crashed';

export class SessionStore {
  todos: TodoState = emptyTodoState;
  scratchpad = '';
  /** The server said a run goes on (state at start, runStarted … runFinished). */
  serverRunning = false;
  /** This client awaits the answer to a `plansight/run`. */
  requestRunning = false;
  serverStatus: ServerStatus = 'stopped';
  /** Why the server is not running, in words (set with `failed` and `crashed`). */
  serverProblem: string | undefined;
  /** The last time the server stopped on its own, in words (cleared by a deliberate stop). */
  serverCrash: string | undefined;
  /** Another window's server keeps the session: this one shows it read-only. */
  readOnly = false;
  readonly edits: EditRecord[] = [];
  /** Requests of the server that wait for the user: edits to review, commands to approve,
   *  questions to answer (a plan to approve is `planReview`). */
  readonly waiting = { reviews: 0, approvals: 0, questions: 0 };
  /** The proposed plan waiting for the user's approval (`plansight/reviewPlan`), if any. */
  planReview: { summary: string; problem?: string } | undefined;
  /** The summary of the last plan proposed in this window (for "Open Plan as Markdown"). */
  planSummary: string | undefined;
  /** The workspace's sessions (protocol version 4) and the one this window shows: what the
   *  server sends about another session is not drawn here. */
  readonly sessions = new SessionsModel();
  /** The project's instruction files the session's model reads (`plansight/state`). */
  instructions: InstructionFile[] = [];
  /** Version 4: each plan item's parallel worker, running or with a stored change set. */
  workers: Workers = new Map();
  private readonly listeners = new Set<(change: SessionChange) => void>();

  get running(): boolean {
    return this.serverRunning || this.requestRunning;
  }

  onDidChange(listener: (change: SessionChange) => void): { dispose(): void } {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  }

  private emit(change: SessionChange): void {
    for (const listener of [...this.listeners]) {
      listener(change);
    }
  }

  setTodos(todos: TodoState): void {
    this.todos = todos;
    this.emit('todos');
  }

  /** From `plansight/state`'s `instructions` (absent from an older server: none). */
  setInstructions(raw: unknown): void {
    const files = instructionFiles(raw);
    if (JSON.stringify(files) !== JSON.stringify(this.instructions)) {
      this.instructions = files;
      this.emit('instructions');
    }
  }

  setWorkers(workers: Workers): void {
    if (workers !== this.workers) {
      this.workers = workers;
      this.emit('workers');
    }
  }

  setScratchpad(content: string): void {
    this.scratchpad = content;
    this.emit('scratchpad');
  }

  setServerRunning(running: boolean): void {
    if (this.serverRunning !== running) {
      this.serverRunning = running;
      this.emit('running');
    }
  }

  setRequestRunning(running: boolean): void {
    if (this.requestRunning !== running) {
      this.requestRunning = running;
      this.emit('running');
    }
  }

  setServerStatus(status: ServerStatus, problem?: string): void {
    const kept = status === 'failed' || status === 'crashed' ? (problem ?? this.serverProblem) : undefined;
    if (this.serverStatus !== status || this.serverProblem !== kept) {
      this.serverStatus = status;
      this.serverProblem = kept;
      this.emit('server');
    }
  }

  setPlanReview(review: { summary: string; problem?: string } | undefined): void {
    this.planReview = review;
    if (review) {
      this.planSummary = review.summary;
    }
    this.emit('planReview');
    this.emit('waiting');
  }

  setWaiting(kind: 'reviews' | 'approvals' | 'questions', count: number): void {
    if (this.waiting[kind] !== count) {
      this.waiting[kind] = count;
      this.emit('waiting');
    }
  }

  /** "waiting for your review" while the server waits for the user, else undefined. */
  get waitingFor(): string | undefined {
    if (this.planReview) {
      return 'waiting for you to approve the plan';
    }
    if (this.waiting.questions > 0) {
      return 'waiting for your answer';
    }
    if (this.waiting.reviews > 0) {
      return this.waiting.reviews === 1 ? 'waiting for your review' : `waiting for your review (${this.waiting.reviews} edits)`;
    }
    if (this.waiting.approvals > 0) {
      return 'waiting for your approval';
    }
    return undefined;
  }

  addEdit(edit: EditRecord): void {
    const at = this.edits.findIndex((e) => e.id === edit.id);
    if (at >= 0) {
      this.edits[at] = edit;
    } else {
      this.edits.push(edit);
    }
    this.emit('edits');
  }

  /**
   * Records the decision on a pending edit and returns true; an edit already decided (or
   * cancelled with its run) keeps its outcome, so a late Accept cannot mark as written an edit
   * that the server no longer waits for.
   */
  settleEdit(id: string, outcome: Exclude<EditOutcome, 'pending'>, feedback?: string): boolean {
    const edit = this.edits.find((e) => e.id === id);
    if (!edit || edit.outcome !== 'pending') {
      return false;
    }
    edit.outcome = outcome;
    if (feedback !== undefined) {
      edit.feedback = feedback;
    }
    this.emit('edits');
    return true;
  }

  findEdit(id: string): EditRecord | undefined {
    return this.edits.find((e) => e.id === id);
  }

  clearEdits(): void {
    this.edits.length = 0;
    this.emit('edits');
  }
}
