/**
 * The model's Markdown → HTML for the conversation webview, with markdown-it (the renderer VS
 * Code itself uses). Raw HTML is off (`html: false`: tags in the text are escaped, never
 * parsed), links go through markdown-it's link validation (no `javascript:`, `vbscript:`,
 * `file:` or `data:` links), and images become links: the webview loads nothing remote (its
 * Content-Security-Policy forbids it too). Pure: no `vscode` import.
 */
import MarkdownIt from 'markdown-it';

export const markdownOptions = { html: false, linkify: true, typographer: false, breaks: false } as const;

export function createMarkdown() {
  const md = new MarkdownIt(markdownOptions);
  md.renderer.rules.image = (tokens, idx, options, env, self) => {
    const token = tokens[idx]!;
    const src = String(token.attrGet('src') ?? '');
    const alt = String(self.renderInlineAsText(token.children ?? [], options, env) || src);
    return `<a href="${md.utils.escapeHtml(src)}" class="image-link" title="Image (not loaded)">${md.utils.escapeHtml(alt)}</a>`;
  };
  return md;
}
