/**
 * A compact line diff for a review card: the changed stretch between the common beginning and
 * end of the two texts, with a little context, cut to a few lines (the full diff opens in the
 * editor on request). Linear in the texts' size. Pure: no `vscode` import.
 */

export interface DiffLine {
  kind: 'context' | 'removed' | 'added' | 'skipped';
  /** The line's text; for `skipped`, what was left out. */
  text: string;
  /** 1-based line in the new text (context, added) or the old one (removed). */
  line?: number;
}

function lines(text: string): string[] {
  if (text === '') {
    return [];
  }
  const all = text.split('\n');
  return all[all.length - 1] === '' ? all.slice(0, -1) : all;
}

export function compactDiff(oldText: string, newText: string, maxLines = 14, context = 2): DiffLine[] {
  const before = lines(oldText);
  const after = lines(newText);
  let start = 0;
  while (start < before.length && start < after.length && before[start] === after[start]) {
    start += 1;
  }
  let endBefore = before.length;
  let endAfter = after.length;
  while (endBefore > start && endAfter > start && before[endBefore - 1] === after[endAfter - 1]) {
    endBefore -= 1;
    endAfter -= 1;
  }
  const out: DiffLine[] = [];
  for (let i = Math.max(0, start - context); i < start; i += 1) {
    out.push({ kind: 'context', text: after[i]!, line: i + 1 });
  }
  const removed = before.slice(start, endBefore).map((text, i): DiffLine => ({ kind: 'removed', text, line: start + i + 1 }));
  const added = after.slice(start, endAfter).map((text, i): DiffLine => ({ kind: 'added', text, line: start + i + 1 }));
  const changed = [...removed, ...added];
  if (changed.length > maxLines - out.length - context) {
    // Cut: as many changed lines as fit, and a line saying what is left out.
    const room = Math.max(1, maxLines - out.length - 1);
    out.push(...changed.slice(0, room));
    out.push({ kind: 'skipped', text: `${changed.length - room} more changed lines` });
  } else {
    out.push(...changed);
    for (let i = endAfter; i < Math.min(after.length, endAfter + context); i += 1) {
      out.push({ kind: 'context', text: after[i]!, line: i + 1 });
    }
  }
  return out;
}

/** "+9 −3" */
export function diffStat(oldText: string, newText: string): { added: number; removed: number } {
  const diff = compactDiff(oldText, newText, Number.MAX_SAFE_INTEGER, 0);
  return {
    added: diff.filter((l) => l.kind === 'added').length,
    removed: diff.filter((l) => l.kind === 'removed').length,
  };
}
