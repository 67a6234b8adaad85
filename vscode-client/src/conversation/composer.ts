/**
 * The composer's rules, shared by the webview script and the tests. Pure: no `vscode` or DOM
 * import.
 */

export interface KeyLike {
  key: string;
  shiftKey: boolean;
  altKey: boolean;
  ctrlKey: boolean;
  metaKey: boolean;
  /** An input method is composing (e.g. Japanese): its Enter confirms the word, never sends. */
  isComposing: boolean;
}

/** What a key press in the prompt does: Enter sends, Shift+Enter is a new line. */
export function composerKey(event: KeyLike): 'send' | 'newline' | 'none' {
  if (event.key !== 'Enter' || event.isComposing) {
    return 'none';
  }
  if (event.shiftKey || event.altKey) {
    return 'newline';
  }
  return 'send';
}

/** Whether a prompt is worth sending (not only whitespace). */
export function canSend(text: string, running: boolean): boolean {
  return !running && text.trim().length > 0;
}

/** Messages from the webview to the extension. */
export type FromWebview =
  | { type: 'ready' }
  | { type: 'send'; text: string; includeContext: boolean; mode?: 'act' | 'plan' }
  | { type: 'cancel' }
  | { type: 'newSession' }
  | { type: 'action'; entry: string; action: string; fields: Record<string, string> }
  | { type: 'openLink'; href: string };

/** What the composer shows as the context that goes with the prompt. */
export interface ComposerContext {
  path?: string;
  selection?: { startLine: number; endLine: number };
}

/** Messages from the extension to the webview. */
export type ToWebview =
  | { type: 'reset'; html: string }
  | { type: 'run'; id: string; html: string }
  | { type: 'entry'; runId: string; id: string; html: string }
  | { type: 'removeRun'; id: string }
  | { type: 'state'; running: boolean; status: string; context: ComposerContext | null }
  | { type: 'focus' }
  | { type: 'setPrompt'; text: string };

/** The label of the context chip, e.g. "hello.py · lines 3–5". */
export function contextLabel(context: ComposerContext): string {
  const { path, selection } = context;
  const lines = selection
    ? selection.startLine === selection.endLine
      ? `line ${selection.startLine}`
      : `lines ${selection.startLine}–${selection.endLine}`
    : '';
  return [path, lines].filter(Boolean).join(' · ');
}

/** The Send button's label: "Plan" while "Plan first" is on (the run plans, then waits). */
export function sendLabel(planFirst: boolean): string {
  return planFirst ? 'Plan' : 'Send';
}
