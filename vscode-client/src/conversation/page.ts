/**
 * The conversation webview's page: a strict Content-Security-Policy (nothing remote; styles and
 * fonts from the extension's own files; the one script, by nonce), the log, and the composer.
 * Pure: no `vscode` import.
 */
import { escapeHtml } from '../text';

export interface PageResources {
  nonce: string;
  cspSource: string;
  scriptUri: string;
  styleUri: string;
  codiconsUri: string;
}

export function contentSecurityPolicy(nonce: string, cspSource: string): string {
  return [
    "default-src 'none'",
    `style-src ${cspSource}`,
    `font-src ${cspSource}`,
    `img-src ${cspSource}`,
    `script-src 'nonce-${nonce}'`,
  ].join('; ');
}

/** The welcome text of a window with no folder open: Plansight works on a folder, and runs
 * nothing (no server, no listing, no checkpoint) in whatever folder VS Code happens to be in. */
export const noFolderWelcome = `<div id="welcome" class="no-folder">
  <p><strong>Open a folder to use Plansight.</strong> It works on the files of the folder you open,
  and nothing outside it.</p>
  <p class="buttons"><button type="button" class="primary" data-command="workbench.action.files.openFolder"><i class="codicon codicon-folder-opened" aria-hidden="true"></i>Open Folder</button>
  <button type="button" class="secondary" data-command="plansight.runDemo"><i class="codicon codicon-play" aria-hidden="true"></i>Run Demo</button></p>
  <p class="hint">The demo opens a folder of its own.</p>
</div>`;

/** The page; with `folder: false` (no folder open) it asks for one and has no prompt box. */
export function conversationPage(r: PageResources, options: { folder: boolean } = { folder: true }): string {
  const attr = escapeHtml;
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${attr(contentSecurityPolicy(r.nonce, r.cspSource))}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${attr(r.codiconsUri)}">
<link rel="stylesheet" href="${attr(r.styleUri)}">
<title>Plansight</title>
</head>
<body>
<header id="header"><nav id="sessions" aria-label="Sessions"></nav><div id="instructions" hidden></div></header>
<main id="log" aria-live="polite"></main>
${options.folder ? `<div id="welcome">
  <p><strong>Ask Plansight for a change.</strong> It plans in the open: the plan shows below, each
  edit waits for your review, and you can follow up here.</p>
  <p>The active file and selection go with your request (shown above the box; drop them with ×).
  Type <code>@</code> to mention a file; ↑ recalls your last request.</p>
  <p class="buttons"><button type="button" class="secondary" data-command="plansight.runDemo"><i class="codicon codicon-play" aria-hidden="true"></i>Run Demo</button>
  <button type="button" class="secondary" data-command="plansight.setApiKey"><i class="codicon codicon-key" aria-hidden="true"></i>Set API Key</button></p>
  <p class="hint">The demo replays a recorded session and needs no API key. Real runs need an Anthropic API key.</p>
</div>` : noFolderWelcome}
<form id="composer" autocomplete="off"${options.folder ? '' : ' hidden'}>
  <button type="button" id="jump" class="secondary" hidden title="Scroll to the newest message; the conversation follows the run again"><i class="codicon codicon-arrow-down" aria-hidden="true"></i>Jump to latest</button>
  <div id="mentions" role="listbox" aria-label="Workspace files" hidden></div>
  <div id="context" class="chips"></div>
  <textarea id="prompt" rows="2" aria-label="Ask Plansight" placeholder="Ask Plansight to change something… (Enter sends, Shift+Enter for a new line, @ for a file)"></textarea>
  <div class="bar">
    <span id="status" aria-live="polite"></span>
    <button type="button" id="planFirst" class="secondary toggle" aria-pressed="false" aria-label="Plan first" title="Plan first: the agent researches and proposes a plan, and changes nothing until you approve it"><i class="codicon codicon-checklist" aria-hidden="true"></i><span class="label">Plan first</span></button>
    <button type="button" id="newSession" class="secondary" aria-label="New Session" title="Start over: a new conversation, plan and scratchpad"><i class="codicon codicon-clear-all" aria-hidden="true"></i><span class="label">New Session</span></button>
    <button type="button" id="stop" class="secondary" hidden aria-label="Stop" title="Stop the run (Escape)"><i class="codicon codicon-debug-stop" aria-hidden="true"></i><span class="label">Stop</span></button>
    <button type="submit" id="send" class="primary"><i class="codicon codicon-send" aria-hidden="true"></i><span id="sendLabel" class="label">Send</span></button>
  </div>
</form>
<script nonce="${attr(r.nonce)}" src="${attr(r.scriptUri)}"></script>
</body>
</html>`;
}
