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

/** The server's "undo with force" said as this dialog's button. */
function withButton(result: RestoreResult): RestoreResult {
  return {
    ...result,
    skipped: result.skipped.map((s) => ({ ...s, reason: s.reason.replace(/\bundo with force to\b/, `${forceAction} would`) })),
  };
}

/** "a, b and c". */
function and(parts: readonly string[]): string {
  return parts.length <= 1 ? (parts[0] ?? '') : `${parts.slice(0, -1).join(', ')} and ${parts[parts.length - 1]}`;
}

/** A skip's reason without the server's "(undo with force to …)": the Undo Anyway sentence
 * says what forcing does. */
function reasonWithoutForce(reason: string): string {
  return reason.replace(/\s*\(undo with force to [^)]*\)/, '');
}

/**
 * The steps undone and not worked on since, from the checkpoints (oldest first): an undo's
 * checkpoint is labelled "Undid step #2 (3 files)" by the server; an edit or command of the
 * step after it means it has work again.
 */
export function undoneSteps(checkpoints: readonly Checkpoint[]): Set<string> {
  const undone = new Set<string>();
  for (const checkpoint of checkpoints) {
    const undid = checkpoint.kind === 'restore' ? /^Undid step #(\S+?)(?:\s|$)/.exec(checkpoint.label) : null;
    if (undid) {
      undone.add(undid[1]!);
    } else if ((checkpoint.kind === 'edit' || checkpoint.kind === 'command') && checkpoint.todoId !== undefined) {
      undone.delete(checkpoint.todoId);
    }
  }
  return undone;
}

/**
 * The steps already undone lose nothing more: an overlap with one of them is no work lost, and
 * is not said (issue 31: the dialog warned of losing the changes of a step undone before).
 */
export function forgetUndone(result: RestoreResult, undone: ReadonlySet<string>): RestoreResult {
  if (!undone.size) return result;
  const alsoUndone = (result.alsoUndone ?? [])
    .map((a) => ({ ...a, todoIds: a.todoIds.filter((t) => !undone.has(t)) }))
    .filter((a) => a.todoIds.length);
  const skipped = result.skipped.map((s) => ({
    ...s,
    reason: s.reason.replace(/the changes of ((?:#[^\s,()]+(?:, )?)+)/, (whole, named: string) => {
      const kept = named.split(', ').filter((n) => !undone.has(n.replace(/^#/, '')));
      return kept.length ? `the changes of ${kept.join(', ')}` : 'later changes to it';
    }),
  }));
  const { alsoUndone: _dropped, ...rest } = result;
  return { ...rest, skipped, ...(alsoUndone.length ? { alsoUndone } : {}) };
}

/** What the plain undo does, in one sentence: "Undo Step puts back a.py, deletes b.py (made
 * since) and makes step #1 pending in the plan." */
function undoSentence(action: string, preview: RestoreResult, changes: ReadonlyMap<string, FileChange>, pending?: string): string {
  const removed = deletedBy(preview, changes);
  const written = preview.restored.filter((p) => !removed.includes(p));
  const back = written.filter((p) => changes.get(p) !== 'deleted');
  const returned = written.filter((p) => changes.get(p) === 'deleted');
  const clauses: string[] = [];
  if (back.length) clauses.push(`puts back ${list(back)}`);
  if (removed.length) clauses.push(`deletes ${list(removed)} (made since)`);
  if (returned.length) clauses.push(`brings back ${list(returned)} (deleted since)`);
  for (const lost of preview.alsoUndone ?? []) {
    clauses.push(`also undoes what step ${steps(lost.todoIds)} changed in ${lost.path} (the changes overlap)`);
  }
  for (const skipped of preview.skipped) {
    clauses.push(`leaves ${skipped.path} as it is (${reasonWithoutForce(skipped.reason)})`);
  }
  if (!clauses.length) clauses.push('changes no file');
  if (pending) clauses.push(`makes step #${pending} pending in the plan`);
  return `${action} ${and(clauses)}.`;
}

/** What Undo Anyway does beyond the plain undo, in one sentence, and whose work it loses. */
function forceSentence(preview: RestoreResult, forced: RestoreResult, changes: ReadonlyMap<string, FileChange>): string {
  const left = new Set(preview.skipped.map((s) => s.path));
  const removed = new Set(deletedBy(forced, changes));
  const more = [...forced.restored, ...(forced.deleted ?? [])].filter((p) => left.has(p));
  const clauses = more.map((p) => `${removed.has(p) ? 'deletes' : 'puts back'} ${p}`);
  const lost = (forced.alsoUndone ?? []).map((a) => `what step ${steps(a.todoIds)} changed in ${a.path}`);
  const still = forced.skipped.map((s) => `${s.path} (${reasonWithoutForce(s.reason)})`);
  return (
    `${forceAction} does the same and also ${and(clauses)}` +
    (lost.length ? `, losing ${and(lost)}` : '') +
    (still.length ? `; it still leaves ${still.join('; ')}` : '') +
    '.'
  );
}

function undoConfirmation(
  message: string,
  action: string,
  preview: RestoreResult,
  forced: RestoreResult | undefined,
  changes: ReadonlyMap<string, FileChange>,
  pending?: string,
): Confirmation {
  const plain = undoSentence(action, preview, changes, pending);
  if (!forceHelps(preview, forced)) {
    return { message, detail: [plain, undoNote].join('\n'), action };
  }
  return { message, detail: [plain, forceSentence(preview, forced, changes), undoNote].join('\n'), action, force: forceAction };
}

/**
 * Before Undo Step: what the undo does (from its dry run) in one sentence, and, where it would
 * leave files that a forced undo puts back (`forced`: the dry run with `force`), what "Undo
 * Anyway" does too and whose later work goes with it, in another. Overlaps with steps already
 * undone are not said. The same facts the terminal's `undo --step` prints.
 */
export function undoStepConfirmation(
  todoId: string,
  items: readonly TodoItem[],
  files: readonly FileNode[],
  preview: RestoreResult,
  forced?: RestoreResult,
  undone: ReadonlySet<string> = new Set(),
): Confirmation {
  const changes = new Map(files.map((f) => [f.path, f.change]));
  return undoConfirmation(
    `Undo step ${stepTitle(todoId, items)}?`,
    'Undo Step',
    forgetUndone(preview, undone),
    forced && forgetUndone(forced, undone),
    changes,
    todoId,
  );
}

export function undoFileConfirmation(
  file: FileNode,
  items: readonly TodoItem[],
  preview: RestoreResult,
  forced?: RestoreResult,
  undone: ReadonlySet<string> = new Set(),
): Confirmation {
  const changes = new Map([[file.path, file.change]]);
  return undoConfirmation(
    `Undo what step ${stepTitle(file.todoId, items)} did to ${file.path}?`,
    'Undo File',
    forgetUndone(preview, undone),
    forced && forgetUndone(forced, undone),
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
