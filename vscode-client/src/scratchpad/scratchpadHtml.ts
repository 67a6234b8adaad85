/** The scratchpad webview's HTML. Pure: no `vscode` import. */

export { escapeHtml } from '../text';
import { escapeHtml } from '../text';

export const emptyScratchpadText = 'The scratchpad is empty. The agent writes its notes here.';

export function scratchpadHtml(content: string, nonce: string, cspSource: string): string {
  const body = content
    ? `<pre id="content">${escapeHtml(content)}</pre>`
    : `<pre id="content" class="empty">${escapeHtml(emptyScratchpadText)}</pre>`;
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src ${cspSource} 'nonce-${nonce}'; script-src 'nonce-${nonce}';">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<style nonce="${nonce}">
  body { padding: 4px 12px; color: var(--vscode-foreground); }
  pre { white-space: pre-wrap; word-break: break-word; margin: 0;
        font-family: var(--vscode-editor-font-family); font-size: var(--vscode-editor-font-size); }
  pre.empty { color: var(--vscode-descriptionForeground); font-family: var(--vscode-font-family); }
</style>
</head>
<body>
${body}
<script nonce="${nonce}">
  const vscode = acquireVsCodeApi();
  const pre = document.getElementById('content');
  const empty = ${JSON.stringify(emptyScratchpadText)};
  window.addEventListener('message', (event) => {
    const message = event.data;
    if (message && message.type === 'scratchpad' && typeof message.content === 'string') {
      pre.textContent = message.content || empty;
      pre.className = message.content ? '' : 'empty';
    }
  });
  // Ask for the current notes: a message sent before this script ran would be lost.
  vscode.postMessage({ type: 'ready' });
</script>
</body>
</html>`;
}
