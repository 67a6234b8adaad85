/**
 * `plansight/history` → the conversation and the plan tree after a reload: past runs replayed
 * into the model, and the edits they reviewed (their `editReviewed` events) back under their
 * plan items. Pure: no `vscode` import.
 */
import type { EditOutcome, EditRecord } from '../plan/planModel';
import type { HistoryAfter, HistoryRun, PlansightEvent } from '../protocol';
import type { ConversationModel } from './model';

const outcomes: ReadonlySet<string> = new Set<EditOutcome>(['accepted', 'changed', 'rejected', 'cancelled']);

function str(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/** The edit an `editReviewed` event tells of, or undefined if it is not one. */
export function editFromEvent(event: PlansightEvent): EditRecord | undefined {
  if (event.type !== 'editReviewed') {
    return undefined;
  }
  const id = str(event['id']);
  const path = str(event['path']);
  const outcome = str(event['outcome']);
  if (!id || !path || !outcome || !outcomes.has(outcome)) {
    return undefined;
  }
  const todoId = str(event['todoId']);
  const planId = str(event['planId']);
  const feedback = str(event['feedback']);
  return {
    id,
    uri: '', // not on the wire: the path (relative to the workspace) is what the tree shows
    path,
    description: str(event['description']) ?? '',
    outcome: outcome as EditOutcome,
    ...(todoId !== undefined ? { todoId } : {}),
    ...(planId !== undefined ? { planId } : {}),
    ...(feedback !== undefined ? { feedback } : {}),
  };
}

/** The edits reviewed in these runs, oldest first. */
export function editsFromHistory(runs: readonly HistoryRun[]): EditRecord[] {
  return runs.flatMap((run) => run.events.map(editFromEvent).filter((e): e is EditRecord => e !== undefined));
}

/** What an undo or restore between runs did, in words, e.g. "Undid step #1: hello.py put back." */
export function afterWords(after: HistoryAfter): string | undefined {
  if (after.type !== 'restored') {
    return undefined;
  }
  const what =
    after.todoId !== undefined
      ? `Undid step #${after.todoId}`
      : `Restored checkpoint ${after.checkpoint ?? ''}${after.conversation ? ' with the conversation' : ''}`;
  const parts = [
    ...(after.restored ?? []).map((p) => `${p} put back`),
    ...(after.deleted ?? []).map((p) => `${p} deleted`),
    ...(after.skipped ?? []).map((s) => `${s.path} skipped (${s.reason})`),
  ];
  return `${what}: ${parts.length ? parts.join(', ') : 'nothing to change'}.`;
}

/** Replays the runs into the model (a line where a new session began, and the undos after each). */
export function loadHistory(model: ConversationModel, runs: readonly HistoryRun[]): void {
  for (const run of runs) {
    if (run.newSession === true && model.runs.length > 0) {
      model.addSessionBreak();
    }
    const past = model.addPastRun(run.prompt, run.events, run.startedAt || undefined, run.result);
    for (const after of Array.isArray(run.after) ? run.after : []) {
      const text = afterWords(after);
      if (text) {
        model.addNotice({ icon: 'history', text }, past);
      }
    }
  }
}
