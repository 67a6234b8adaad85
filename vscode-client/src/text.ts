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

/**
 * Markdown reduced to plain text, for the places that cannot render it (a tree view's message,
 * a notification, a label): marks taken off, links to their text, a table's rows as
 * "cell, cell" with its separator row dropped, each block (paragraph, item, row, heading) one
 * segment; the segments joined with "; " (a sentence's own end kept as it is).
 */
export function plainMarkdown(markdown: string): string {
  const segments: string[] = [];
  let paragraph: string[] = [];
  const flush = (): void => {
    if (paragraph.length) segments.push(paragraph.join(' '));
    paragraph = [];
  };
  const marks = (text: string): string =>
    text
      .replace(/!\[([^\]]*)\]\([^)]*\)/g, '$1')
      .replace(/\[([^\]]+)\]\([^)]*\)/g, '$1')
      .replace(/<\/?[a-zA-Z][^>]*>/g, '')
      .replace(/(\*\*|__)(?=\S)([\s\S]*?\S)\1/g, '$2')
      .replace(/(^|[\s(])[*_](?=\S)([^*_]*?\S)[*_](?=$|[\s).,;:!?])/g, '$1$2')
      .replace(/~~([^~]+)~~/g, '$1');
  // Code spans are kept as written (`__main__` is not emphasis); marks go elsewhere.
  const inline = (text: string): string =>
    text
      .split(/(`+[^`]*`+)/)
      .map((part, n) => (n % 2 ? part.replace(/^`+|`+$/g, '') : marks(part)))
      .join('')
      .trim();
  let fenced = false;
  for (const raw of markdown.split(/\r?\n/)) {
    const line = raw.trim();
    if (/^(```|~~~)/.test(line)) {
      flush();
      fenced = !fenced;
      continue;
    }
    if (fenced) {
      if (line) segments.push(line);
      continue;
    }
    if (!line || /^([-*_]\s*){3,}$/.test(line)) {
      flush();
      continue;
    }
    if (line.startsWith('|') || /\|.*\|/.test(line)) {
      flush();
      const cells = line.replace(/^\|/, '').replace(/\|$/, '').split('|').map((c) => c.trim());
      if (cells.every((c) => /^:?-{2,}:?$/.test(c) || c === '')) continue; // the separator row
      segments.push(cells.map(inline).filter(Boolean).join(', '));
      continue;
    }
    const block = /^(#{1,6}\s+|>\s?|[-*+]\s+(\[[ xX]\]\s+)?|\d+[.)]\s+)/.exec(line);
    if (block) {
      flush();
      const text = inline(line.slice(block[0].length));
      if (text) segments.push(text);
      continue;
    }
    paragraph.push(inline(line));
  }
  flush();
  return segments
    .filter(Boolean)
    .map((s, n, all) => (n < all.length - 1 && !/[.:;!?]$/.test(s) ? `${s};` : s))
    .join(' ');
}
