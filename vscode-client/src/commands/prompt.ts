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

/** What a prompt said, as the conversation shows it: the user's words and the context chips. */
export interface ShownPrompt {
  text: string;
  path?: string;
  selection?: { startLine: number; endLine: number };
}

/**
 * The inverse of `buildPrompt`, for prompts that come back from the server (`runStarted`,
 * history): the user's words without the `<editor-context>` block, and what that block named.
 */
export function parsePrompt(prompt: string): ShownPrompt {
  const match = /\n*<editor-context>\n([\s\S]*?)(?:<\/editor-context>\s*$|$)/.exec(prompt);
  if (!match) {
    return { text: prompt.trim() };
  }
  const shown: ShownPrompt = { text: prompt.slice(0, match.index).trim() };
  const block = match[1] ?? '';
  const path = /^Active file: (.+)$/m.exec(block);
  if (path) {
    shown.path = path[1]!.trim();
  }
  const lines = /^Selected text \((?:line (\d+)|lines (\d+)-(\d+))\):$/m.exec(block);
  if (lines) {
    const start = Number(lines[1] ?? lines[2]);
    shown.selection = { startLine: start, endLine: Number(lines[1] ?? lines[3]) };
  }
  return shown;
}
