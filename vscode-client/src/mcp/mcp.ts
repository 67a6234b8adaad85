/**
 * MCP in VS Code (protocol version 3): the servers' state in a status bar item (and
 * `Plansight: MCP Servers`, also in the conversation view's menu, listing each with its source,
 * tools and error), each tool call's approval as a card in the conversation with Allow / Deny /
 * Always allow (a notification too when the conversation is out of sight), and the trust
 * question for a workspace's server as a notification naming the command it would run. Thin:
 * everything shown is what the server sent.
 */
import * as vscode from 'vscode';
import type { ReviewSurface } from '../review/reviewManager';
import type { PlansightServer } from '../server/client';
import {
  type ApproveMcpServerParams,
  type ApproveMcpServerResult,
  type ApproveToolParams,
  type ApproveToolResult,
  type McpResult,
  type McpServerStatus,
  Methods,
} from '../protocol';
import type { CardEntry } from '../conversation/model';
import { truncate } from '../text';
import {
  type McpToolCardData,
  mcpStatusText,
  mcpToolCard,
  mcpToolCommands,
  mcpToolNotice,
  trustAnswer,
  trustChoices,
  trustMessage,
} from './mcpModel';

interface PendingCall {
  id: string;
  params: ApproveToolParams;
  done: Promise<void>;
  notified?: boolean;
  settle(result: ApproveToolResult, cancelled?: boolean): void;
}

export class McpUi implements vscode.Disposable {
  private servers: McpServerStatus[] = [];
  private readonly item: vscode.StatusBarItem;
  private readonly pending = new Map<string, PendingCall>();
  private counter = 0;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly output: vscode.LogOutputChannel,
    private readonly server: PlansightServer,
    private readonly surface: ReviewSurface,
  ) {
    this.item = vscode.window.createStatusBarItem('plansight.mcp', vscode.StatusBarAlignment.Left, 9);
    this.item.name = 'Plansight MCP servers';
    this.item.command = 'plansight.mcpServers';
    this.disposables.push(
      this.item,
      surface.onDidChangeVisibility((visible) => {
        if (!visible) {
          for (const call of this.pending.values()) {
            this.notify(call);
          }
        }
      }),
    );
  }

  registerCommands(context: vscode.ExtensionContext): void {
    context.subscriptions.push(
      vscode.commands.registerCommand('plansight.mcpServers', () => this.showServers()),
      vscode.commands.registerCommand(mcpToolCommands.allow, (id?: unknown) => this.target(id)?.settle({ approved: true })),
      vscode.commands.registerCommand(mcpToolCommands.deny, (id?: unknown) => this.target(id)?.settle({ approved: false })),
      vscode.commands.registerCommand(mcpToolCommands.always, (id?: unknown) =>
        this.target(id)?.settle({ approved: true, always: true }),
      ),
    );
  }

  /** The `mcp` event: the servers as they are now. */
  update(servers: McpServerStatus[]): void {
    this.servers = servers;
    const shown = mcpStatusText(servers);
    if (!shown) {
      this.item.hide();
      return;
    }
    this.item.text = shown.text;
    this.item.tooltip = shown.tooltip;
    this.item.backgroundColor = servers.some((s) => s.status === 'error')
      ? new vscode.ThemeColor('statusBarItem.warningBackground')
      : undefined;
    this.item.show();
  }

  /** Asks the server for the servers' state (after a start: the events before were missed). */
  async refresh(): Promise<void> {
    try {
      const result = await this.server.sendRequest<McpResult>(Methods.mcp, {});
      this.update(result.servers);
    } catch (err) {
      this.output.info(`plansight/mcp not answered: ${String(err)}`); // an older server
    }
  }

  private async showServers(): Promise<void> {
    await this.refresh();
    if (!this.servers.length) {
      void vscode.window.showInformationMessage(
        'No MCP servers configured. Plansight reads ~/.config/plansight/mcp.json, the workspace\'s .mcp.json and .vscode/mcp.json.',
      );
      return;
    }
    const icons: Record<string, string> = { ready: 'pass', starting: 'sync', error: 'error', disabled: 'circle-slash', untrusted: 'shield' };
    await vscode.window.showQuickPick(
      this.servers.map((s) => ({
        label: `$(${icons[s.status] ?? 'plug'}) ${s.name}`,
        description: s.status === 'ready' ? `${s.status} · ${s.tools.length} tools` : s.status,
        detail: [s.error, s.tools.length ? truncate(s.tools.join(', '), 200) : undefined, s.source]
          .filter((x): x is string => Boolean(x))
          .join(' · '),
      })),
      { title: 'Plansight: MCP servers', placeHolder: 'Status, tools and errors of each server' },
    );
  }

  /** `plansight/approveMcpServer`: never yes unless the user clicks Allow. */
  async trust(params: ApproveMcpServerParams, token: vscode.CancellationToken): Promise<ApproveMcpServerResult> {
    const cancelled = new Promise<undefined>((resolve) => token.onCancellationRequested(() => resolve(undefined)));
    const choice = await Promise.race([
      vscode.window.showWarningMessage(`Plansight: ${trustMessage(params)}`, ...trustChoices(params)),
      cancelled,
    ]);
    const answer = trustAnswer(choice);
    this.output.info(`MCP server ${params.name} (${params.source}): ${choice ?? 'no answer'}`);
    return answer;
  }

  /** `plansight/approveTool`: a card in the conversation; resolves once decided. */
  approveTool(params: ApproveToolParams, token: vscode.CancellationToken): Promise<ApproveToolResult> {
    this.counter += 1;
    const id = `mcp-${this.counter}`;
    const card = this.surface.model.addCard<McpToolCardData>(mcpToolCard, {
      approvalId: id,
      server: params.server,
      tool: params.tool,
      input: JSON.stringify(params.input ?? {}, null, 2),
      outcome: 'pending',
    });
    return new Promise<ApproveToolResult>((resolve) => {
      let settled!: () => void;
      const done = new Promise<void>((r) => (settled = r));
      const call: PendingCall = {
        id,
        params,
        done,
        settle: (result, cancelled = false) => {
          if (!this.pending.delete(id)) {
            return;
          }
          resolve(result);
          settled();
          const outcome = cancelled ? 'cancelled' : result.approved ? (result.always ? 'always' : 'allowed') : 'denied';
          this.surface.model.updateCard<McpToolCardData>(
            card.id,
            { outcome, ...(result.feedback !== undefined ? { feedback: result.feedback } : {}) },
            false,
          );
        },
      };
      this.pending.set(id, call);
      token.onCancellationRequested(() => call.settle({ approved: false, feedback: 'Cancelled.' }, true));
      if (!this.surface.visible()) {
        this.notify(call);
      }
    });
  }

  cardAction(card: CardEntry, action: string, fields: Record<string, string>): void {
    const call = this.pending.get((card.data as McpToolCardData).approvalId);
    if (!call) {
      return;
    }
    if (action === 'allow') {
      call.settle({ approved: true });
    } else if (action === 'always') {
      call.settle({ approved: true, always: true });
    } else if (action === 'deny') {
      const feedback = fields['reason']?.trim();
      call.settle(feedback ? { approved: false, feedback } : { approved: false });
    }
  }

  private notify(call: PendingCall): void {
    if (call.notified) {
      return;
    }
    call.notified = true;
    const notice = mcpToolNotice(call.params, call.id);
    void vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: notice.title, cancellable: false },
      async (progress) => {
        progress.report({ message: notice.message });
        await call.done;
      },
    );
  }

  private target(id: unknown): PendingCall | undefined {
    if (typeof id === 'string') {
      return this.pending.get(id);
    }
    return this.pending.size === 1 ? [...this.pending.values()][0] : undefined;
  }

  cancelAll(feedback: string): void {
    for (const call of [...this.pending.values()]) {
      call.settle({ approved: false, feedback }, true);
    }
  }

  dispose(): void {
    this.cancelAll('The editor closed.');
    for (const d of this.disposables) {
      d.dispose();
    }
  }
}
