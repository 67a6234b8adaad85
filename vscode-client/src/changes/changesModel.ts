/**
 * The Changes view's model: what each plan step changed (`plansight/changes`) → tree rows,
 * and the words of the confirmations before an undo or a restore (from a `dryRun` of it).
 * Pure: no `vscode` import, so vitest can test it.
 */
import type { RowSpec } from '../plan/planModel';
import { statusIcons } from '../plan/planModel';
import type { ChangesResult, Checkpoint, FileChange, RestoreResult, TodoItem } from '../protocol';
import { oneLine, truncate } from '../text';

export interface StepNode {
  kind: 'step';
  todoId: string;
}
export interface FileNode {
  kind: 'file';
  todoId: string;
  path: string;
  change: FileChange;
  /** The checkpoint holding the file as it was before the step (absent when pruned). */
  before?: string;
}
export type ChangeNode = StepNode | FileNode;

export const changeWords: Readonly<Record<FileChange, string>> = {
  added: 'created by the step',
  modified: 'changed',
  deleted: 'deleted by the step',
};
export const changeIcons: Readonly<Record<FileChange, string>> = {
  added: 'diff-added',
  modified: 'diff-modified',
  deleted: 'diff-removed',
};
const changeColors: Readonly<Record<FileChange, string>> = {
  added: 'gitDecoration.addedResourceForeground',
  modified: 'gitDecoration.modifiedResourceForeground',
  deleted: 'gitDecoration.deletedResourceForeground',
};

/** The steps that changed files, in plan order, each with its files. */
export function stepNodes(changes: ChangesResult): StepNode[] {
  return changes.steps.filter((s) => s.files.length > 0).map((s) => ({ kind: 'step', todoId: s.todoId }));
}

export function fileNodes(changes: ChangesResult, todoId: string): FileNode[] {
  const step = changes.steps.find((s) => s.todoId === todoId);
  return (step?.files ?? []).map((f) => ({ kind: 'file', todoId, ...f }));
}

/** "#2 Add docstrings" (just "#2" for an item no longer in the plan). */
export function stepTitle(todoId: string, items: readonly TodoItem[]): string {
  const item = items.find((i) => i.id === todoId);
  return item ? `#${todoId} ${truncate(oneLine(item.text), 80)}` : `#${todoId}`;
}

export function stepRow(changes: ChangesResult, todoId: string, items: readonly TodoItem[]): RowSpec {
  const files = fileNodes(changes, todoId);
  const item = items.find((i) => i.id === todoId);
  const count = `${files.length} file${files.length === 1 ? '' : 's'}`;
  return {
    id: `step:${todoId}`,
    label: stepTitle(todoId, items),
    iconId: item ? statusIcons[item.status] : 'history',
    description: count,
    tooltip: `${stepTitle(todoId, items)}: ${count} changed by its edits and commands. Open Changes shows them; Undo Step puts them back.`,
    contextValue: 'changes.step',
    hasChildren: files.length > 0,
  };
}

export function fileRow(node: FileNode): RowSpec {
  return {
    id: `file:${node.todoId}:${node.path}`,
    label: node.path,
    iconId: changeIcons[node.change],
    iconColor: changeColors[node.change],
    description: changeWords[node.change],
    tooltip:
      `${node.path}: ${changeWords[node.change]} (step #${node.todoId}). ` +
      (node.before ? 'Click for the diff from before the step to now.' : 'The checkpoint from before the step was pruned.'),
    contextValue: node.before ? 'changes.file' : 'changes.file.pruned',
    hasChildren: false,
  };
}

/** What a confirmation says; `message` is the question, `detail` the lines below it;
 * `force`, when offered, the second button: the forced restore, whose cost `detail` names. */
export interface Confirmation {
  message: string;
  detail: string;
  action: string;
  force?: string;
}

export const forceAction = 'Undo Anyway';

/** The files a restore deletes: `deleted` (version 3), or, from a version 2 server that lists
 * them in `restored`, those the step made. */
function deletedBy(result: RestoreResult, changes: ReadonlyMap<string, FileChange>): string[] {
  return result.deleted ?? result.restored.filter((p) => changes.get(p) === 'added');
}

function steps(todoIds: readonly string[]): string {
  return todoIds.map((t) => `#${t}`).join(', ');
}

/** The restored paths grouped by what happens to each (from what the step did to it). */
function describe(preview: RestoreResult, changes: ReadonlyMap<string, FileChange>): string[] {
  const lines: string[] = [];
  const removed = deletedBy(preview, changes);
  const written = preview.restored.filter((p) => !removed.includes(p));
  const back = written.filter((p) => changes.get(p) !== 'deleted');
  const returned = written.filter((p) => changes.get(p) === 'deleted');
  if (back.length) lines.push(`Puts back ${list(back)}.`);
  if (removed.length) lines.push(`Deletes ${list(removed)} (made since).`);
  if (returned.length) lines.push(`Brings back ${list(returned)} (deleted since).`);
  if (!written.length && !removed.length) lines.push('No file needs restoring.');
  for (const lost of preview.alsoUndone ?? []) {
    lines.push(`Also undoes what step ${steps(lost.todoIds)} changed in ${lost.path} (the changes overlap).`);
  }
  for (const skipped of preview.skipped) {
    lines.push(`Leaves ${skipped.path} as it is: ${skipped.reason}.`);
  }
  return lines;
}

function list(paths: readonly string[]): string {
  if (paths.length <= 6) return paths.join(', ');
  return `${paths.slice(0, 6).join(', ')} and ${paths.length - 6} more`;
}

const undoNote = 'A checkpoint is taken first: Restore to Checkpoint can undo this.';

/** Whether a forced undo would do more than the plain one (a file the plain one leaves). */
export function forceHelps(preview: RestoreResult, forced: RestoreResult | undefined): forced is RestoreResult {
  return !!forced && forced.skipped.length < preview.skipped.length;
}

/** What "Undo Anyway" (the undo with `force`) does beyond the plain undo, from its dry run:
 * the files it puts back that the plain one leaves, and the later steps' work lost with them. */
function forceLines(preview: RestoreResult, forced: RestoreResult, changes: ReadonlyMap<string, FileChange>): string[] {
  const left = new Set(preview.skipped.map((s) => s.path));
  const removed = new Set(deletedBy(forced, changes));
  const more = [...forced.restored, ...(forced.deleted ?? [])].filter((p) => left.has(p));
  const lines = [`${forceAction} also ${more.map((p) => `${removed.has(p) ? 'deletes' : 'puts back'} ${p}`).join(', ')}.`];
  for (const lost of forced.alsoUndone ?? []) {
    lines.push(`${forceAction} also undoes what step ${steps(lost.todoIds)} changed in ${lost.path} (the changes overlap): that work is lost.`);
  }
  const still = forced.skipped.map((s) => `${s.path} (${s.reason})`);
  if (still.length) lines.push(`Even ${forceAction} leaves ${still.join('; ')}.`);
  return lines;
}

/** The server's "undo with force" said as this dialog's button. */
function withButton(result: RestoreResult): RestoreResult {
  return {
    ...result,
    skipped: result.skipped.map((s) => ({ ...s, reason: s.reason.replace(/\bundo with force to\b/, `${forceAction} would`) })),
  };
}

function confirmation(
  message: string,
  action: string,
  lines: (preview: RestoreResult) => string[],
  after: string[],
  preview: RestoreResult,
  forced: RestoreResult | undefined,
  changes: ReadonlyMap<string, FileChange>,
): Confirmation {
  if (!forceHelps(preview, forced)) {
    return { message, detail: [...lines(preview), ...after].join('\n'), action };
  }
  return {
    message,
    detail: [...lines(withButton(preview)), ...forceLines(preview, forced, changes), ...after].join('\n'),
    action,
    force: forceAction,
  };
}

/**
 * Before Undo Step: what the undo does (from its dry run), and, where it would leave files that
 * a forced undo puts back (`forced`: the dry run with `force`), what "Undo Anyway" does too and
 * whose later work goes with it. The same facts the terminal's `undo --step` prints.
 */
export function undoStepConfirmation(
  todoId: string,
  items: readonly TodoItem[],
  files: readonly FileNode[],
  preview: RestoreResult,
  forced?: RestoreResult,
): Confirmation {
  const changes = new Map(files.map((f) => [f.path, f.change]));
  return confirmation(
    `Undo step ${stepTitle(todoId, items)}?`,
    'Undo Step',
    (p) => describe(p, changes),
    ['The step becomes pending in the plan.', undoNote],
    preview,
    forced,
    changes,
  );
}

export function undoFileConfirmation(
  file: FileNode,
  items: readonly TodoItem[],
  preview: RestoreResult,
  forced?: RestoreResult,
): Confirmation {
  const changes = new Map([[file.path, file.change]]);
  return confirmation(
    `Undo what step ${stepTitle(file.todoId, items)} did to ${file.path}?`,
    'Undo File',
    (p) => describe(p, changes),
    [undoNote],
    preview,
    forced,
    changes,
  );
}

export function restoreConfirmation(checkpoint: Checkpoint, preview: RestoreResult, conversation: boolean): Confirmation {
  const lines = describe(preview, new Map());
  if (conversation) {
    lines.push('The conversation and the plan go back to that point as well.');
  }
  lines.push(undoNote);
  return {
    message: `Restore checkpoint ${checkpoint.id} “${checkpoint.label}”?`,
    detail: lines.join('\n'),
    action: conversation ? 'Restore Files and Conversation' : 'Restore Files',
  };
}

/** What an Undo File did, as the notice's subject: it begins with a word, never the path (the
 * conversation's notice capitalises its first letter: "Cli.py" is not the file's name). */
export function undoFileWhat(file: Pick<FileNode, 'todoId' | 'path'>): string {
  return `step #${file.todoId} undone in ${file.path}`;
}

/** After a restore: what it did, in one line (the notification). */
export function resultMessage(what: string, result: RestoreResult, undoId: string | undefined): string {
  const removed = deletedBy(result, new Map());
  const written = result.restored.filter((p) => !removed.includes(p));
  const count = written.length;
  const done: string[] = [];
  if (count) done.push(`restored ${count} file${count === 1 ? '' : 's'}`);
  if (removed.length) done.push(`deleted ${list(removed)}`);
  const said = done.length ? done.join(', ') : 'no file needed restoring';
  const lost = (result.alsoUndone ?? []).map((a) => `${a.path} (the changes of ${steps(a.todoIds)})`);
  const also = lost.length ? `; also undid ${lost.join('; ')}` : '';
  const left = result.skipped.length ? `; left ${withButton(result).skipped.map((s) => `${s.path} (${s.reason})`).join('; ')}` : '';
  const undo = done.length && undoId ? ` Restore checkpoint ${undoId} to undo it.` : '';
  return `Plansight: ${what}: ${said}${also}${left}.${undo}`;
}

/** The checkpoint that undoes the restore just made: the newest taken before one. */
export function undoCheckpoint(checkpoints: readonly Checkpoint[]): string | undefined {
  return [...checkpoints].reverse().find((c) => c.kind === 'beforeRestore')?.id;
}

export interface CheckpointPick {
  label: string;
  description: string;
  detail: string;
  checkpoint: Checkpoint;
}

/** Checkpoints for a QuickPick, newest first: what it is as the label, which one, its step
 * and when as the description, the files it changed as the detail (each its own part of the
 * row, so that rows do not run together). */
export function checkpointPicks(checkpoints: readonly Checkpoint[], now: Date = new Date()): CheckpointPick[] {
  return [...checkpoints].reverse().map((checkpoint) => ({
    label: truncate(oneLine(checkpoint.label), 70),
    description: [
      `checkpoint ${checkpoint.id}`,
      checkpoint.todoId ? `step #${checkpoint.todoId}` : '',
      when(checkpoint.createdAt, now),
    ]
      .filter(Boolean)
      .join(' · '),
    detail: checkpoint.paths.length ? `Changed: ${list(checkpoint.paths)}` : 'No file changed since the one before',
    checkpoint,
  }));
}

/** "14:02:31" today, else "Dec 1, 14:02" (local time). */
export function when(iso: string, now: Date = new Date()): string {
  const at = new Date(iso);
  if (Number.isNaN(at.getTime())) return iso;
  const time = at.toLocaleTimeString('en-GB', { hour: '2-digit', minute: '2-digit', second: '2-digit' });
  if (at.toDateString() === now.toDateString()) return time;
  return `${at.toLocaleDateString('en-US', { month: 'short', day: 'numeric' })}, ${time.slice(0, 5)}`;
}
