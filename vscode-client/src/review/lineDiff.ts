/**
 * A line diff for an edit's review card: the lines that really changed (Myers' shortest edit
 * script, so a two-line change reads +2 −2 however far apart the lines are), in hunks with a
 * little context, the unchanged stretch between two hunks said in one line, cut to a few lines
 * in all (the full diff opens in the editor on request). Pure: no `vscode` import.
 *
 * Where the two texts differ in more than `MAX_EDITS` lines the shortest script is not looked
 * for (its cost grows with the square of that): the stretch between the common beginning and
 * end is then shown as removed and added, as a plain block diff would.
 */
import type { DiffLine } from '../conversation/diff';

export type { DiffLine };

/** One line of the edit script: kept, removed from the old text, or added in the new one. */
export interface DiffOp {
  kind: 'context' | 'removed' | 'added';
  text: string;
  /** 1-based line in the new text (context, added) or the old one (removed). */
  line: number;
}

const MAX_EDITS = 1000;

function lines(text: string): string[] {
  if (text === '') {
    return [];
  }
  const all = text.split('\n');
  return all[all.length - 1] === '' ? all.slice(0, -1) : all;
}

/** The edit script from `a` to `b` (Myers 1986, the greedy forward search with its trace);
 * undefined when more than `maxEdits` lines differ. */
function myers(a: readonly string[], b: readonly string[], maxEdits: number): DiffOp[] | undefined {
  const n = a.length;
  const m = b.length;
  const max = Math.min(n + m, maxEdits);
  const offset = max + 1;
  const v = new Int32Array(2 * max + 3);
  const trace: Int32Array[] = [];
  let found = -1;
  for (let d = 0; d <= max && found < 0; d += 1) {
    trace.push(v.slice());
    for (let k = -d; k <= d; k += 2) {
      let x = k === -d || (k !== d && v[offset + k - 1]! < v[offset + k + 1]!) ? v[offset + k + 1]! : v[offset + k - 1]! + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) {
        x += 1;
        y += 1;
      }
      v[offset + k] = x;
      if (x >= n && y >= m) {
        found = d;
        break;
      }
    }
  }
  if (found < 0) {
    return undefined;
  }
  // Walk the trace back from the end: each step is one removal or addition after a snake.
  const ops: DiffOp[] = [];
  let x = n;
  let y = m;
  for (let d = found; d > 0; d -= 1) {
    const prev = trace[d]!;
    const k = x - y;
    const down = k === -d || (k !== d && prev[offset + k - 1]! < prev[offset + k + 1]!);
    const prevK = down ? k + 1 : k - 1;
    const prevX = prev[offset + prevK]!;
    const prevY = prevX - prevK;
    while (x > prevX && y > prevY) {
      x -= 1;
      y -= 1;
      ops.push({ kind: 'context', text: b[y]!, line: y + 1 });
    }
    if (down) {
      y -= 1;
      ops.push({ kind: 'added', text: b[y]!, line: y + 1 });
    } else {
      x -= 1;
      ops.push({ kind: 'removed', text: a[x]!, line: x + 1 });
    }
  }
  while (x > 0 && y > 0) {
    x -= 1;
    y -= 1;
    ops.push({ kind: 'context', text: b[y]!, line: y + 1 });
  }
  ops.reverse();
  // Within each changed stretch, the removed lines first, then the added ones (as `git diff`).
  const ordered: DiffOp[] = [];
  for (let i = 0; i < ops.length; ) {
    if (ops[i]!.kind === 'context') {
      ordered.push(ops[i]!);
      i += 1;
      continue;
    }
    let j = i;
    while (j < ops.length && ops[j]!.kind !== 'context') j += 1;
    const run = ops.slice(i, j);
    ordered.push(...run.filter((o) => o.kind === 'removed'), ...run.filter((o) => o.kind === 'added'));
    i = j;
  }
  return ordered;
}

/** The whole edit script from `oldText` to `newText`, line by line. */
export function lineDiff(oldText: string, newText: string, maxEdits = MAX_EDITS): DiffOp[] {
  const a = lines(oldText);
  const b = lines(newText);
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start += 1;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA -= 1;
    endB -= 1;
  }
  const head = b.slice(0, start).map((text, i): DiffOp => ({ kind: 'context', text, line: i + 1 }));
  const tail = b.slice(endB).map((text, i): DiffOp => ({ kind: 'context', text, line: endB + i + 1 }));
  const middleA = a.slice(start, endA);
  const middleB = b.slice(start, endB);
  const middle = myers(middleA, middleB, maxEdits) ?? [
    ...middleA.map((text, i): DiffOp => ({ kind: 'removed', text, line: i + 1 })),
    ...middleB.map((text, i): DiffOp => ({ kind: 'added', text, line: i + 1 })),
  ];
  // The middle's lines counted from its own start: move them to the texts' numbering.
  const placed = middle.map((op) => ({ ...op, line: op.line + start }));
  return [...head, ...placed, ...tail];
}

/** "+2 −2": the lines added and removed. */
export function lineDiffStat(oldText: string, newText: string): { added: number; removed: number } {
  const ops = lineDiff(oldText, newText);
  return {
    added: ops.filter((o) => o.kind === 'added').length,
    removed: ops.filter((o) => o.kind === 'removed').length,
  };
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/**
 * The card's diff: each hunk (its changed lines with `context` lines around), an unchanged
 * stretch between two hunks as one `skipped` line ("12 unchanged lines"), at most `maxLines`
 * lines of text; what does not fit is said in a last line ("9 more changed lines"), never
 * "0 more".
 */
export function cardDiff(oldText: string, newText: string, maxLines = 14, context = 2): DiffLine[] {
  const ops = lineDiff(oldText, newText);
  const changed = ops.map((o, i) => (o.kind === 'context' ? -1 : i)).filter((i) => i >= 0);
  if (!changed.length) {
    return [];
  }
  // Which ops are shown: the changed ones and `context` kept lines either side of each.
  const shown = new Array<boolean>(ops.length).fill(false);
  for (const i of changed) {
    for (let j = Math.max(0, i - context); j <= Math.min(ops.length - 1, i + context); j += 1) shown[j] = true;
  }
  const out: DiffLine[] = [];
  for (let i = 0; i < ops.length; ) {
    if (shown[i]) {
      const op = ops[i]!;
      out.push({ kind: op.kind, text: op.text, line: op.line });
      i += 1;
      continue;
    }
    let j = i;
    while (j < ops.length && !shown[j]) j += 1;
    if (j - i === 1 && i > 0 && j < ops.length) {
      shown[i] = true; // one line is shorter shown than said
      continue;
    }
    if (i > 0 && j < ops.length) {
      out.push({ kind: 'skipped', text: plural(j - i, 'unchanged line') });
    }
    i = j;
  }
  const total = out.filter((l) => l.kind === 'added' || l.kind === 'removed').length;
  if (out.length <= maxLines) {
    return out;
  }
  // Cut: the first lines that fit, and one line saying how many changed lines are left out.
  const kept = out.slice(0, Math.max(1, maxLines - 1));
  while (kept.length && kept[kept.length - 1]!.kind !== 'added' && kept[kept.length - 1]!.kind !== 'removed') {
    kept.pop(); // end on a change, not on context before what is left out
  }
  const left = total - kept.filter((l) => l.kind === 'added' || l.kind === 'removed').length;
  return left > 0 ? [...kept, { kind: 'skipped', text: `${plural(left, 'more changed line')}` }] : kept;
}

/** A settled review card's diff and counts for the text that was written (issue 31: a card
 * accepted with the user's changes showed the proposal, not what went to disk). */
export function writtenPatch(oldText: string, written: string): { diff: DiffLine[]; added: number; removed: number } {
  return { diff: cardDiff(oldText, written), ...lineDiffStat(oldText, written) };
}
