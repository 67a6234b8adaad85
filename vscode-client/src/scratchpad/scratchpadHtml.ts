/**
 * The scratchpad webview's HTML: the agent's notes rendered from Markdown with the
 * conversation's renderer (markdown.ts: raw HTML off, code blocks highlighted with a Copy
 * button, task lists, table alignment). The page's script only places the HTML the extension
 * renders. Pure: no `vscode` import.
 */

export { escapeHtml } from '../text';
import { createMarkdown } from '../conversation/markdown';
import { escapeHtml } from '../text';

export const emptyScratchpadText = 'The scratchpad is empty. The agent writes its notes here.';

/** The notes as the view shows them: rendered Markdown, or a line saying there are none. */
export function scratchpadBody(content: string, md = createMarkdown()): { html: string; empty: boolean } {
  return content.trim()
    ? { html: md.render(content), empty: false }
    : { html: `<p>${escapeHtml(emptyScratchpadText)}</p>`, empty: true };
}

export function scratchpadHtml(content: string, nonce: string, cspSource: string): string {
  const body = scratchpadBody(content);
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src ${cspSource} 'nonce-${nonce}'; script-src 'nonce-${nonce}';">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<style nonce="${nonce}">
  body { padding: 4px 12px; color: var(--vscode-foreground); font-family: var(--vscode-font-family); font-size: var(--vscode-font-size); line-height: 1.45; }
  #content { word-break: break-word; }
  #content.empty { color: var(--vscode-descriptionForeground); }
  #content > :first-child { margin-top: 0; }
  h1, h2, h3, h4 { margin: 10px 0 4px; line-height: 1.25; }
  h1 { font-size: 1.3em; } h2 { font-size: 1.2em; } h3 { font-size: 1.1em; }
  p, ul, ol, pre, blockquote, table { margin: 6px 0; }
  ul, ol { padding-left: 20px; }
  code { font-family: var(--vscode-editor-font-family); font-size: var(--vscode-editor-font-size);
         background: var(--vscode-textCodeBlock-background, rgba(128, 128, 128, 0.15)); border-radius: 3px; padding: 0 3px; }
  pre { background: var(--vscode-textCodeBlock-background, rgba(128, 128, 128, 0.15)); border-radius: 4px; padding: 6px 8px; overflow-x: auto; }
  pre code { padding: 0; background: none; }
  blockquote { border-left: 3px solid var(--vscode-panel-border, rgba(128, 128, 128, 0.35)); margin-left: 0; padding-left: 8px; color: var(--vscode-descriptionForeground); }
  table { border-collapse: collapse; }
  th, td { border: 1px solid var(--vscode-panel-border, rgba(128, 128, 128, 0.35)); padding: 2px 6px; }
  .align-left { text-align: left; } .align-right { text-align: right; } .align-center { text-align: center; }
  li.task-item { list-style: none; } li.task-item input.task { margin: 0 4px 0 -18px; vertical-align: middle; }
  a { color: var(--vscode-textLink-foreground); }
  .code-block { position: relative; }
  .code-block .copy { position: absolute; top: 3px; right: 3px; font: inherit; font-size: 0.85em; padding: 1px 6px; cursor: pointer; border: none; border-radius: 2px;
         color: var(--vscode-button-secondaryForeground); background: var(--vscode-button-secondaryBackground); opacity: 0.75; }
  .code-block .copy .codicon { display: none; }
  /* Code as the editor colours it, the same rules as the conversation's (media/conversation.css
     says why): the symbol icons' colours made keywords read as plain text in most themes. */
  body { --hl-keyword: #569cd6; --hl-comment: #6a9955; --hl-function: #dcdcaa; --hl-string: #ce9178; --hl-number: #b5cea8; }
  body.vscode-light { --hl-keyword: #0000ff; --hl-comment: #008000; --hl-function: #795e26; --hl-string: #a31515; --hl-number: #098658; }
  body.vscode-high-contrast { --hl-keyword: #569cd6; --hl-comment: #7ca668; --hl-function: #dcdcaa; --hl-string: #ce9178; --hl-number: #b5cea8; }
  body.vscode-high-contrast-light { --hl-keyword: #0f4a85; --hl-comment: #515151; --hl-function: #5e2cbc; --hl-string: #0f4a85; --hl-number: #096d48; }
  .hl-keyword { color: var(--hl-keyword); }
  .hl-string { color: var(--vscode-debugTokenExpression-string, var(--hl-string)); }
  .hl-number { color: var(--vscode-debugTokenExpression-number, var(--hl-number)); }
  .hl-comment { color: var(--hl-comment); font-style: italic; }
  .hl-function { color: var(--hl-function); }
</style>
</head>
<body>
<div id="content" class="${body.empty ? 'empty' : 'md'}">${body.html}</div>
<script nonce="${nonce}">
  const vscode = acquireVsCodeApi();
  const content = document.getElementById('content');
  window.addEventListener('message', (event) => {
    const message = event.data;
    if (message && message.type === 'scratchpad' && typeof message.html === 'string') {
      content.innerHTML = message.html;
      content.className = message.empty ? 'empty' : 'md';
    }
  });
  content.addEventListener('click', (event) => {
    const copy = event.target.closest('button[data-copy]');
    if (copy) {
      const code = copy.parentElement.querySelector('pre code');
      vscode.postMessage({ type: 'copy', text: code ? code.textContent : '' });
      return;
    }
    const link = event.target.closest('a[href]');
    if (link) {
      event.preventDefault();
    }
  });
  // Ask for the current notes: a message sent before this script ran would be lost.
  vscode.postMessage({ type: 'ready' });
</script>
</body>
</html>`;
}
