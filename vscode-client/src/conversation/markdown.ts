/**
 * The model's Markdown → HTML for the conversation webview, with markdown-it (the renderer VS
 * Code itself uses). Raw HTML is off (`html: false`: tags in the text are escaped, never
 * parsed), links go through markdown-it's link validation (no `javascript:`, `vbscript:`,
 * `file:` or `data:` links), and images become links: the webview loads nothing remote (its
 * Content-Security-Policy forbids it too). Pure: no `vscode` import.
 *
 * On top of CommonMark and GFM tables: code blocks are highlighted (highlight.ts) and carry a
 * Copy button (`data-copy`, handled by the page's script); task list items (`- [x] done`) show
 * read-only checkboxes; a table column's alignment is a class (`align-right`), since the
 * page's Content-Security-Policy drops inline `style` attributes.
 */
import MarkdownIt from 'markdown-it';
import { highlight } from './highlight';

export const markdownOptions = { html: false, linkify: true, typographer: false, breaks: false } as const;

type Token = ReturnType<InstanceType<typeof MarkdownIt>['parse']>[number];
type TokenClass = new (type: string, tag: string, nesting: -1 | 0 | 1) => Token;

const taskMark = /^\[([ xX])\][ \t]+/;

/** `- [ ] a` / `- [x] b`: the item's paragraph starts with a checkbox, read-only. */
function taskLists(tokens: Token[], TokenClass: TokenClass): void {
  for (let i = 2; i < tokens.length; i += 1) {
    const inline = tokens[i]!;
    if (inline.type !== 'inline' || tokens[i - 1]!.type !== 'paragraph_open' || tokens[i - 2]!.type !== 'list_item_open') {
      continue;
    }
    const match = taskMark.exec(inline.content);
    const first = inline.children?.[0];
    if (!match || !first || first.type !== 'text' || !taskMark.test(first.content)) {
      continue;
    }
    const checked = match[1] !== ' ';
    first.content = first.content.replace(taskMark, '');
    const box = new TokenClass('html_inline', '', 0);
    box.content = `<input type="checkbox" class="task" disabled${checked ? ' checked' : ''} aria-label="${checked ? 'done' : 'not done'}"> `;
    inline.children!.unshift(box);
    const item = tokens[i - 2]!;
    item.attrJoin('class', 'task-item');
  }
}

/** `style="text-align:right"` → `class="align-right"` (inline styles are not allowed). */
function alignmentClasses(tokens: Token[]): void {
  for (const token of tokens) {
    if (token.type !== 'th_open' && token.type !== 'td_open') {
      continue;
    }
    const style = token.attrGet('style');
    const align = style !== null ? /text-align:\s*(left|right|center)/.exec(String(style))?.[1] : undefined;
    if (style !== null) {
      token.attrs = (token.attrs ?? []).filter((attr) => attr[0] !== 'style');
    }
    if (align) {
      token.attrJoin('class', `align-${align}`);
    }
  }
}

export function createMarkdown() {
  const md = new MarkdownIt(markdownOptions);
  md.renderer.rules.image = (tokens, idx, options, env, self) => {
    const token = tokens[idx]!;
    const src = String(token.attrGet('src') ?? '');
    const alt = String(self.renderInlineAsText(token.children ?? [], options, env) || src);
    return `<a href="${md.utils.escapeHtml(src)}" class="image-link" title="Image (not loaded)">${md.utils.escapeHtml(alt)}</a>`;
  };
  md.renderer.rules.fence = (tokens, idx) => {
    const token = tokens[idx]!;
    const lang = token.info.trim().split(/\s+/)[0] ?? '';
    const cls = lang ? ` class="language-${md.utils.escapeHtml(lang)}"` : '';
    return (
      `<div class="code-block"><button type="button" class="copy" data-copy title="Copy the code">` +
      `<i class="codicon codicon-copy" aria-hidden="true"></i>Copy</button>` +
      `<pre><code${cls}>${highlight(token.content, lang)}</code></pre></div>\n`
    );
  };
  md.core.ruler.push('plansight_tasks_and_alignment', (state) => {
    taskLists(state.tokens, state.Token as unknown as TokenClass);
    alignmentClasses(state.tokens);
  });
  return md;
}
