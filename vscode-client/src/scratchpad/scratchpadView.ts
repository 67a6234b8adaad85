/** The scratchpad view (`plansight.scratchpad`): a webview showing the agent's notes. */
import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';
import type { SessionStore } from '../session';
import { createMarkdown } from '../conversation/markdown';
import { scratchpadBody, scratchpadHtml } from './scratchpadHtml';

export class ScratchpadViewProvider implements vscode.WebviewViewProvider {
  private view: vscode.WebviewView | undefined;
  private readonly md = createMarkdown();

  constructor(private readonly store: SessionStore) {}

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    view.webview.options = { enableScripts: true, localResourceRoots: [] };
    this.render();
    view.webview.onDidReceiveMessage((message: { type?: unknown; text?: unknown }) => {
      if (message?.type === 'ready') {
        this.update();
      } else if (message?.type === 'copy' && typeof message.text === 'string') {
        void vscode.env.clipboard.writeText(message.text);
      }
    });
    view.onDidDispose(() => {
      if (this.view === view) {
        this.view = undefined;
      }
    });
  }

  /** Replaces the whole page (used when the view is created). */
  private render(): void {
    if (this.view) {
      const nonce = randomBytes(16).toString('base64');
      this.view.webview.html = scratchpadHtml(this.store.scratchpad, nonce, this.view.webview.cspSource);
    }
  }

  update(): void {
    if (this.view) {
      void this.view.webview.postMessage({ type: 'scratchpad', ...scratchpadBody(this.store.scratchpad, this.md) });
    }
  }
}

export function registerScratchpadView(context: vscode.ExtensionContext, store: SessionStore): void {
  const provider = new ScratchpadViewProvider(store);
  context.subscriptions.push(
    vscode.window.registerWebviewViewProvider('plansight.scratchpad', provider),
    store.onDidChange((change) => {
      if (change === 'scratchpad') {
        provider.update();
      }
    }),
    vscode.commands.registerCommand('plansight.scratchpad.open', async () => {
      const document = await vscode.workspace.openTextDocument({
        content: store.scratchpad,
        language: 'markdown',
      });
      await vscode.window.showTextDocument(document, { preview: true });
    }),
  );
}
