/**
 * The prompt sent with `plansight/run`: the user's words plus where they are in the editor.
 * Pure: no `vscode` import.
 */

export interface EditorContext {
  /** The active file, relative to the workspace folder (or its file name outside it). */
  path?: string;
  /** The selected text, if any, with its 1-based line range. */
  selection?: { text: string; startLine: number; endLine: number };
  /** The language of the active document, to fence the selection. */
  languageId?: string;
}

/** Longest run of backticks in `text`, so the fence around it can be longer. */
function fenceFor(text: string): string {
  const runs = text.match(/`+/g) ?? [];
  const longest = runs.reduce((max, run) => Math.max(max, run.length), 0);
  return '`'.repeat(Math.max(3, longest + 1));
}

export function buildPrompt(prompt: string, context: EditorContext = {}): string {
  const lines: string[] = [prompt.trim()];
  if (!context.path && !context.selection) {
    return lines[0]!;
  }
  lines.push('', '<editor-context>');
  if (context.path) {
    lines.push(`Active file: ${context.path}`);
  }
  const sel = context.selection;
  if (sel && sel.text.length > 0) {
    const range =
      sel.startLine === sel.endLine ? `line ${sel.startLine}` : `lines ${sel.startLine}-${sel.endLine}`;
    const fence = fenceFor(sel.text);
    lines.push(`Selected text (${range}):`, `${fence}${context.languageId ?? ''}`, sel.text, fence);
  }
  lines.push('</editor-context>');
  return lines.join('\n');
}
