import { describe, expect, it } from 'vitest';
import { welcomeCommands } from '../src/conversation/composer';
import { contentSecurityPolicy, conversationPage } from '../src/conversation/page';

const resources = {
  nonce: 'abc123',
  cspSource: 'https://file+.vscode-resource.vscode-cdn.net',
  scriptUri: 'https://file+.vscode-resource.vscode-cdn.net/ext/dist/conversation.js',
  styleUri: 'https://file+.vscode-resource.vscode-cdn.net/ext/media/conversation.css',
  codiconsUri: 'https://file+.vscode-resource.vscode-cdn.net/ext/dist/codicons/codicon.css',
};

describe('the conversation page', () => {
  it('has a strict Content-Security-Policy: nothing remote, only the nonced script', () => {
    const csp = contentSecurityPolicy('abc123', resources.cspSource);
    expect(csp).toBe(
      "default-src 'none'; style-src https://file+.vscode-resource.vscode-cdn.net; font-src https://file+.vscode-resource.vscode-cdn.net; " +
        "img-src https://file+.vscode-resource.vscode-cdn.net; script-src 'nonce-abc123'",
    );
    expect(csp).not.toMatch(/unsafe-inline|unsafe-eval|\*|https?:\/\/(?!file\+)/);
  });

  it('loads one script, by nonce, and no inline script or handler', () => {
    const html = conversationPage(resources);
    const scripts = html.match(/<script[^>]*>/g) ?? [];
    expect(scripts).toEqual([`<script nonce="abc123" src="${resources.scriptUri}">`]);
    expect(html).not.toMatch(/<script[^>]*>[^<]+<\/script>/);
    expect(html).not.toMatch(/\son[a-z]+=/i);
    expect(html).toContain('http-equiv="Content-Security-Policy"');
  });

  it('has a multi-line prompt box (it grows with its text) and New Session at hand', () => {
    const html = conversationPage(resources);
    expect(html).toMatch(/<textarea id="prompt" rows="2"/);
    expect(html).toContain('id="newSession"');
  });

  it('names each composer button that shows its icon only in a narrow view (issue 31)', () => {
    const html = conversationPage(resources);
    for (const [id, name] of [['planFirst', 'Plan first'], ['newSession', 'New Session'], ['stop', 'Stop']]) {
      const button = html.match(new RegExp(`<button[^>]*id="${id}"[^>]*>.*?</button>`))?.[0] ?? '';
      expect(button, id).toContain(`aria-label="${name}"`);
      expect(button, id).toContain(`<span class="label">${name}</span>`);
    }
  });

  it('offers Run Demo and Set API Key in its welcome, and a Jump to latest control', () => {
    const html = conversationPage(resources);
    expect(html).toContain('data-command="plansight.runDemo"');
    expect(html).toContain('data-command="plansight.setApiKey"');
    expect(html).toMatch(/<button[^>]*id="jump"[^>]*hidden/);
  });

  it('with no folder open asks for one, with an Open Folder button, and has no prompt box', () => {
    const html = conversationPage(resources, { folder: false });
    expect(html).toContain('Open a folder to use Plansight.');
    const commands = [...html.matchAll(/data-command="([^"]+)"/g)].map((m) => m[1]);
    expect(commands).toContain('workbench.action.files.openFolder');
    for (const command of commands) {
      expect(welcomeCommands).toContain(command); // the page may run it
    }
    expect(html).toMatch(/<form id="composer" autocomplete="off" hidden>/);
    expect(html).not.toContain('Ask Plansight for a change');
    const withFolder = conversationPage(resources);
    expect(withFolder).not.toContain('Open a folder');
    expect(withFolder).toMatch(/<form id="composer" autocomplete="off">/);
  });
});
