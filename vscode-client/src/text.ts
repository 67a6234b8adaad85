/** Small string helpers shared by the pure modules (no `vscode` import). */

/** Collapses whitespace runs (newlines included) to single spaces. */
export function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/**
 * The words of a Markdown text on one line, its marks left out (headings, list and quote
 * markers, emphasis, code ticks, link targets): for a one-line summary of a plan's Markdown.
 */
export function plainOneLine(markdown: string): string {
  const lines = markdown.split('\n').map((line) => line.replace(/^\s*(?:#{1,6}\s+|[-*+]\s+(?:\[[ xX]\]\s+)?|>\s*|\d+[.)]\s+)/, ''));
  return oneLine(
    lines
      .join('\n')
      .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
      .replace(/(\*\*|__|\*|_|~~|`+)(\S(?:[\s\S]*?\S)?)\1/g, '$2'),
  );
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
