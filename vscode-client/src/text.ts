/** Small string helpers shared by the pure modules (no `vscode` import). */

/** Collapses whitespace runs (newlines included) to single spaces. */
export function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/** Shortens `text` to at most `max` characters, ending with an ellipsis when cut. */
export function truncate(text: string, max: number): string {
  if (text.length <= max) {
    return text;
  }
  return text.slice(0, Math.max(0, max - 1)).trimEnd() + '…';
}

/** Makes user or model text safe inside a status bar / tree label that renders `$(icon)`. */
export function escapeIcons(text: string): string {
  return text.replace(/\$\(/g, '$\u200b(');
}

export function formatCount(n: number): string {
  return n.toLocaleString('en-US');
}

/** Text made safe inside HTML (element content and quoted attribute values). */
export function escapeHtml(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}
