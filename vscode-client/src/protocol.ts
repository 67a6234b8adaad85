/**
 * The Plansight wire contract (version 3, docs/protocol.md), as TypeScript types. The server's
 * `server/plansight/protocol.py` holds the same names; tests/test_protocol.py checks that the
 * two agree. No `vscode` import: shared by the extension and the unit tests.
 */

export const Methods = {
  run: 'plansight/run',
  state: 'plansight/state',
  editPlan: 'plansight/editPlan',
  reset: 'plansight/reset',
  compact: 'plansight/compact',
  checkpoints: 'plansight/checkpoints',
  restore: 'plansight/restore',
  history: 'plansight/history',
  changes: 'plansight/changes',
  checkpointFile: 'plansight/checkpointFile',
  models: 'plansight/models',
  todos: 'plansight/todos',
  scratchpad: 'plansight/scratchpad',
  event: 'plansight/event',
  reviewEdit: 'plansight/reviewEdit',
  approveCommand: 'plansight/approveCommand',
  reviewPlan: 'plansight/reviewPlan',
  askUser: 'plansight/askUser',
  mcp: 'plansight/mcp',
  approveMcpServer: 'plansight/approveMcpServer',
  approveTool: 'plansight/approveTool',
  sessions: 'plansight/sessions',
  newSession: 'plansight/newSession',
  openSession: 'plansight/openSession',
  renameSession: 'plansight/renameSession',
  deleteSession: 'plansight/deleteSession',
  // Version 4, "Running plan items in parallel".
  runParallel: 'plansight/runParallel',
  workers: 'plansight/workers',
  takeIn: 'plansight/takeIn',
  dropChanges: 'plansight/dropChanges',
  cancel: 'plansight/cancel',
} as const;

/** JSON-RPC error codes the client reacts to. */
export const ErrorCodes = {
  requestCancelled: -32800,
  requestFailed: -32803,
  invalidParams: -32602,
  methodNotFound: -32601,
} as const;

/** What the client announces in `initialize` (capabilities.experimental.plansight). */
export const clientCapability = {
  reviewEdit: true,
  approveCommand: true,
  reviewPlan: true,
  askUser: true,
  approveMcpServer: true,
  approveTool: true,
} as const;

export type TodoStatus = 'pending' | 'in_progress' | 'completed' | 'cancelled' | 'failed';
export const todoStatuses: readonly TodoStatus[] = [
  'pending',
  'in_progress',
  'completed',
  'cancelled',
  'failed',
];

/**
 * An item needs no more work once completed or cancelled (counted as done: "2/5"); the others are
 * open (the done gate asks about them). The server's `protocol/names.py` holds the same.
 */
export const doneStatuses: readonly TodoStatus[] = ['completed', 'cancelled'];
export const openStatuses: readonly TodoStatus[] = ['pending', 'in_progress', 'failed'];

export interface TodoItem {
  id: string;
  text: string;
  status: TodoStatus;
  retries?: number;
  /** Version 4: the item's notes (the user's review comments approved with the plan among them). */
  notes?: string;
}

/** `TodoState.counts`: items by status, `done` (completed or cancelled) and `open` (the rest). */
export interface PlanCounts {
  total: number;
  completed: number;
  cancelled: number;
  failed: number;
  pending: number;
  inProgress: number;
  done: number;
  open: number;
}

/** How `TodoState.current` and `next` name an item. */
export interface ItemRef {
  id: string;
  text: string;
}

export interface TodoState {
  items: TodoItem[];
  completed: number;
  total: number;
  rendered: string;
  source: 'model' | 'user' | 'restore';
  version: number;
  /** Optional fields this server adds: what clients show, computed once by the server. */
  counts?: PlanCounts;
  /** The item in progress. */
  current?: ItemRef | null;
  /** The first item still to start (pending or failed). */
  next?: ItemRef | null;
  /** The id an item added to this plan gets: the lowest number no item uses. */
  nextId?: string;
  /** Which plan this is: it changes when a new plan begins (edits carry it as well, so that an
   * item lists only what was done under it in this plan). Empty while there is no plan. */
  planId?: string;
}

export interface Usage {
  inputTokens: number;
  outputTokens: number;
  cacheReadInputTokens: number;
  cacheCreationInputTokens: number;
  /** Optional (this server's): the whole input, the three above added up by the server. */
  totalInputTokens?: number;
}

export type RunStatus = 'done' | 'cancelled' | 'error' | 'limit' | 'refused';

export interface RunResult {
  status: RunStatus;
  text: string;
  rounds: number;
  error?: string;
  usage: Usage;
}

export interface RunParams {
  prompt: string;
  newSession?: boolean;
  mode?: 'act' | 'plan';
  todoId?: string;
}

export interface StateResult {
  todos: TodoState;
  scratchpad: string;
  running: boolean;
  /** The project's instruction files the model reads (`[{ path, bytes, cut }]`; issue 31). */
  instructions?: unknown;
}

export interface EditPlanParams {
  items: Pick<TodoItem, 'id' | 'text' | 'status'>[];
  version?: number;
}

export interface ScratchpadParams {
  content: string;
}

export interface RunStartedEvent {
  type: 'runStarted';
  prompt: string;
  /** Version 2: how the run goes (`plan`: plan first, act once approved). */
  mode?: 'act' | 'plan';
  /** Version 2: the plan item a focused run works on. */
  todoId?: string;
}
export interface TextDeltaEvent {
  type: 'textDelta';
  text: string;
  /** Optional (this server's): the run's model turn the text is of, from 1. */
  turn?: number;
}
export interface ToolCallEvent {
  type: 'toolCall';
  id: string;
  name: string;
  input: Record<string, unknown>;
  /** Optional (this server's): what the call does in one line, made by its tool. */
  summary?: string;
}
export interface ToolResultEvent {
  type: 'toolResult';
  id: string;
  name: string;
  isError: boolean;
  summary: string;
}
export interface ReminderEvent {
  type: 'reminder';
  text: string;
  level: number;
  rounds?: number;
}
export interface FilesChangedEvent {
  type: 'filesChanged';
  paths: string[];
}
export interface RunFinishedEvent {
  type: 'runFinished';
  result: RunResult;
}
export interface ThinkingDeltaEvent {
  type: 'thinkingDelta';
  text: string;
}
export interface CompactedEvent {
  type: 'compacted';
  beforeTokens: number;
  afterTokens: number;
  strategy: 'clearToolResults' | 'summary';
  /** True: nothing could be made smaller; the sizes are equal and the conversation as it was. */
  unchanged?: boolean;
}
export interface Checkpoint {
  id: string;
  todoId?: string;
  label: string;
  createdAt: string;
  paths: string[];
  /** This server's addition: why it was taken. */
  kind?: 'outside' | 'runStart' | 'itemStart' | 'edit' | 'command' | 'beforeRestore' | 'restore';
}
export interface CheckpointsResult {
  checkpoints: Checkpoint[];
}
export interface RestoreParams {
  checkpoint?: string;
  todoId?: string;
  paths?: string[];
  conversation?: boolean;
  force?: boolean;
  /** This server's addition: say what would change, change nothing. */
  dryRun?: boolean;
}
export interface RestoreResult {
  /** The files written back (never the deleted ones, from version 3 on). */
  restored: string[];
  /** Version 3: the files the restore removed (a version 2 server lists them in `restored`). */
  deleted?: string[];
  skipped: { path: string; reason: string }[];
  /** Version 3, after a forced undo by step: the later steps whose changes to a file were lost too. */
  alsoUndone?: { path: string; todoIds: string[] }[];
}
/** How a file differs now from before the step: `added` (the step made it) is deleted again by
 * an undo, unless a later step changed it too. */
export type FileChange = 'added' | 'modified' | 'deleted';
/** `plansight/changes` (this server's addition): each step's files, for a Changes view. */
export interface ChangesResult {
  steps: { todoId: string; files: { path: string; change: FileChange; before?: string }[] }[];
}
/** `plansight/checkpointFile` (this server's addition): a file as a checkpoint holds it. */
export interface CheckpointFileResult {
  exists: boolean;
  text?: string;
  binary?: boolean;
}
/** How a proposed edit was decided (this server's extension): also for edits never asked about. */
export interface EditReviewedEvent {
  type: 'editReviewed';
  id: string;
  path: string;
  description: string;
  outcome: 'accepted' | 'changed' | 'rejected' | 'cancelled';
  todoId?: string;
  /** The plan `todoId` is an item of (`TodoState.planId`). */
  planId?: string;
  feedback?: string;
}
export interface CheckpointEvent {
  type: 'checkpoint';
  checkpoint: Checkpoint;
}

/** An MCP server's state (`plansight/mcp`, the `mcp` event; version 3). */
export type McpStatus = 'starting' | 'ready' | 'error' | 'disabled' | 'untrusted';
export interface McpServerStatus {
  name: string;
  /** The file that names it, or `client` (the option `mcpServers`). */
  source: string;
  status: McpStatus;
  tools: string[];
  error?: string;
}
export interface McpResult {
  servers: McpServerStatus[];
}
export interface McpEvent {
  type: 'mcp';
  servers: McpServerStatus[];
}

/** `plansight/approveTool`: one call of an MCP server's tool (its own name, not the prefixed one). */
export interface ApproveToolParams {
  server: string;
  tool: string;
  input: Record<string, unknown>;
}
export interface ApproveToolResult {
  approved: boolean;
  feedback?: string;
  /** No more asking for this tool in this workspace. */
  always?: boolean;
}
/** `plansight/approveMcpServer`: a server a workspace file names, before it is ever started. */
export interface ApproveMcpServerParams {
  name: string;
  source: string;
  command?: string;
  args?: string[];
  url?: string;
  /** The names of the variables the entry sets (protocol version 4). */
  env?: string[];
  /** The host variables it pulls in with `${env:NAME}`: approving names them (version 4). */
  fromHost?: string[];
}
export interface ApproveMcpServerResult {
  approved: boolean;
  /** The host variables it may have; absent: all of `fromHost`. A secret one left out stays
   * empty and the server does not start. */
  fromHost?: string[];
}

export type KnownEvent =
  | RunStartedEvent
  | TextDeltaEvent
  | ToolCallEvent
  | ToolResultEvent
  | ReminderEvent
  | FilesChangedEvent
  | RunFinishedEvent
  | ThinkingDeltaEvent
  | CompactedEvent
  | CheckpointEvent
  | EditReviewedEvent
  | McpEvent;

/** What arrives in `plansight/event`: a known event, or one of a type this client ignores. */
export type PlansightEvent = KnownEvent | { type: string; [key: string]: unknown };

export interface ReviewEditParams {
  id: string;
  uri: string;
  oldText: string;
  newText: string;
  description: string;
  todoId?: string;
  /** The plan `todoId` is an item of (`TodoState.planId`). */
  planId?: string;
  /** Version 4: the file is a control file (`.git`, `.vscode/`, `.envrc`, ...): the user must
   * decide this edit themselves; nothing accepts it unasked. */
  control?: boolean;
  /** Version 4: the plan item whose parallel worker made this change (it is being taken in). */
  worker?: string;
  /** Version 4: the worker's change and the workspace's touch the same lines: `newText` holds
   * both between conflict markers; the user settles it, nothing accepts it unasked. */
  conflict?: boolean;
  /** Version 4: the worker deleted the file (`newText` is empty). */
  deleted?: boolean;
}

export interface ReviewEditResult {
  accepted: boolean;
  feedback?: string;
  newText?: string;
}

export interface ApproveCommandParams {
  command: string;
  cwd: string;
  /** Version 3: what the command may do in the sandbox, or null when it runs without one. */
  sandbox?: { network: boolean; writable: string[] } | null;
}

export interface ApproveCommandResult {
  approved: boolean;
  feedback?: string;
}

export interface ReviewPlanParams {
  todos: TodoState;
  summary: string;
  scratchpad: string;
  /** This server's extension: why it asks again (the user's edited plan broke a rule). */
  problem?: string;
  /** Version 4: the proposal the user saw before this one (absent for a first proposal). */
  previous?: { items: TodoItem[] };
  /** Version 4: the comments the model says this proposal addresses, and how. */
  addressed?: AddressedComment[];
  /** Version 4: the user's comments not addressed yet. */
  openComments?: PlanComment[];
  /** Extension, computed by the server for every client: what changed since `previous`. */
  changes?: PlanChange[];
  /** Extension: the comments `addressed` names, so that a change shows beside their words. */
  addressedComments?: PlanComment[];
  /** Extension: the comments of an answer the server refused, given back so none is lost. */
  comments?: PlanComment[];
}

export interface ReviewPlanResult {
  decision: 'approve' | 'revise' | 'cancel';
  feedback?: string;
  items?: Pick<TodoItem, 'id' | 'text' | 'status'>[];
  /** Version 4: comments on items (`todoId`), on a quoted span (`quote`) or on the plan. */
  comments?: PlanComment[];
}

/** A review comment (version 4). */
export interface PlanComment {
  id: string;
  todoId?: string;
  quote?: string;
  text: string;
}

export interface AddressedComment {
  commentId: string;
  how: string;
}

/** One difference between two proposals, as the server computed it. */
export interface PlanChange {
  kind: 'added' | 'removed' | 'reworded' | 'restatused';
  todoId: string;
  text: string;
  before?: string;
  after?: string;
  commentIds: string[];
}

export interface AskUserParams {
  question: string;
  options?: string[];
  multiSelect?: boolean;
}

export interface AskUserResult {
  answer?: string;
  answers?: string[];
  dismissed?: boolean;
}

export interface HistoryParams {
  limit?: number;
  /** Version 4: the session whose runs (default: the current one). */
  sessionId?: string;
}

/** Version 4: one of the workspace's sessions (`plansight/sessions`), as the server says it. */
export interface SessionInfo {
  id: string;
  title: string;
  createdAt: string;
  updatedAt: string;
  status: 'idle' | 'running' | 'waiting';
  counts?: PlanCounts;
  current: boolean;
}

export interface SessionsResult {
  sessions: SessionInfo[];
}

/** One stored run: its events as they were sent (text deltas merged), newest run last. */
export interface HistoryRun {
  prompt: string;
  startedAt: string;
  result?: RunResult;
  events: PlansightEvent[];
  /** This server's extension: the run started a new session. */
  newSession?: boolean;
  /** This server's extension: what the user did after the run (an undo, a restore). */
  after?: HistoryAfter[];
}

/** An undo (`todoId`) or a restore (`checkpoint`) between runs, with the restore's result. */
export interface HistoryAfter {
  type: string;
  todoId?: string;
  checkpoint?: string;
  conversation?: boolean;
  restored?: string[];
  deleted?: string[];
  skipped?: { path: string; reason: string }[];
}

export interface HistoryResult {
  runs: HistoryRun[];
}

/** `plansight/models` (this server's): the Models API's list, for a model picker. */
export interface ModelsResult {
  models: { id: string; displayName: string; createdAt?: string; thinking?: boolean }[];
  current: string;
}

export interface InitializationOptions {
  model?: string;
  maxRounds?: number;
  storageDir?: string;
  autoApprove: { edits: boolean; commands: boolean; sandboxedCommands?: boolean };
  contextWindow?: number;
  compactAt?: number;
  thinking?: { budgetTokens?: number } | null;
  checkpoints?: boolean;
  /** Version 3: `enabled` "auto" (the default) | true (commands only in a sandbox) | false. */
  sandbox?: { enabled?: 'auto' | boolean };
  /** The read-only view of the stored session (a second window on the same folder). */
  readOnly?: boolean;
  /** Version 4: where each session's plan file lives (relative to the root); false: none. */
  plansDirectory?: string | false;
  /** Version 4: how many workers run plan items at once. */
  parallel?: { max?: number };
}

export const emptyTodoState: TodoState = {
  items: [],
  completed: 0,
  total: 0,
  rendered: 'No todos.',
  source: 'model',
  version: 0,
};

/** Version 4, "Running plan items in parallel". */
export type WorkerStatus = 'running' | 'completed' | 'failed' | 'cancelled';
export interface WorkerFile {
  path: string;
  added: number;
  removed: number;
}
export interface RunParallelParams {
  todoIds: string[];
  sessionId?: string;
}
export interface RunParallelResult {
  started: string[];
  waiting: { todoId: string; after: string[] }[];
  skipped: { todoId: string; reason: string }[];
}
/** One stored change set (`plansight/workers`). */
export interface WorkerRecord {
  todoId: string;
  sessionId: string;
  status: WorkerStatus;
  files: WorkerFile[];
  startedAt?: string;
  finishedAt?: string;
  summary?: string;  /** The session whose item it is (an addition of this server's; absent from older ones). */
  parentSessionId?: string;
}
export interface WorkersResult {
  workers: WorkerRecord[];
}
export interface TakeInResult {
  applied: string[];
  rejected: string[];
  conflicts: string[];
  skipped: { path: string; reason: string }[];
}
export interface WorkerStartedEvent {
  type: 'workerStarted';
  todoId: string;
  sessionId: string;
  /** The session whose item it works on (the worker's own is `sessionId`). */
  parentSessionId?: string;
}
export interface WorkerProgressEvent {
  type: 'workerProgress';
  todoId: string;
  sessionId: string;
  /** The session whose item it works on (the worker's own is `sessionId`). */
  parentSessionId?: string;
  tool: string | null;
  summary: string | null;
  rounds: number;
}
export interface WorkerFinishedEvent {
  type: 'workerFinished';
  todoId: string;
  sessionId: string;
  /** The session whose item it works on (the worker's own is `sessionId`). */
  parentSessionId?: string;
  status: WorkerStatus;
  files: WorkerFile[];
  summary: string;
}
