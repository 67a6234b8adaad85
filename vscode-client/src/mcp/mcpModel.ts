/**
 * MCP as the client shows it (pure, no `vscode` import): an MCP tool's prefixed name split into
 * its server and tool, the status bar text of the servers' state, the trust question's words,
 * and the tool-approval card (Allow / Deny / Always allow) with the notification that stands in
 * for it while the conversation is out of sight (the same three choices).
 */
import type { CardEntry } from '../conversation/model';
import type { RenderHelpers } from '../conversation/render';
import type { ApproveMcpServerParams, ApproveToolParams, McpServerStatus } from '../protocol';
import { oneLine, truncate } from '../text';

export const mcpToolCard = 'mcpTool';
const prefix = 'mcp__';

/** `mcp__time__get_current_time` → `{ server: 'time', tool: 'get_current_time' }`; else undefined. */
export function mcpToolParts(name: string): { server: string; tool: string } | undefined {
  if (!name.startsWith(prefix)) {
    return undefined;
  }
  const rest = name.slice(prefix.length);
  const split = rest.indexOf('__');
  if (split <= 0 || split + 2 >= rest.length) {
    return undefined;
  }
  return { server: rest.slice(0, split), tool: rest.slice(split + 2) };
}

/** How the conversation names a tool call: an MCP tool by its own name and its server. */
export function toolDisplayName(name: string): string {
  const parts = mcpToolParts(name);
  return parts ? `${parts.tool} (MCP ${parts.server})` : name;
}

/** The status bar item of the MCP servers: hidden (undefined) without any. */
export function mcpStatusText(servers: readonly McpServerStatus[]): { text: string; tooltip: string } | undefined {
  if (!servers.length) {
    return undefined;
  }
  const ready = servers.filter((s) => s.status === 'ready').length;
  const failed = servers.some((s) => s.status === 'error');
  const starting = servers.some((s) => s.status === 'starting');
  const icon = failed ? '$(warning)' : starting ? '$(sync~spin)' : '$(plug)';
  const lines = servers.map((s) => {
    const tools = s.status === 'ready' ? `, ${s.tools.length} tools` : '';
    return `${s.name}: ${s.status}${tools}${s.error ? ` (${truncate(oneLine(s.error), 120)})` : ''}`;
  });
  return {
    text: `${icon} MCP ${ready}/${servers.length}`,
    tooltip: `Plansight's MCP servers\n${lines.join('\n')}\nClick for the list`,
  };
}

/** The trust question: the file, the server, and exactly what would run. */
export function trustMessage(params: ApproveMcpServerParams): string {
  const quote = (word: string): string => (/^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`);
  const what =
    params.command !== undefined
      ? `runs: ${[params.command, ...(params.args ?? [])].map(quote).join(' ')}`
      : `connects to ${params.url ?? '?'}`;
  // What it would take from this computer is part of what Allow allows.
  const sets = params.env?.length ? `, sets ${params.env.join(', ')}` : '';
  const pulls = params.fromHost?.length ? ` and receives this computer's ${params.fromHost.join(', ')}` : '';
  return `${params.source} names the MCP server "${params.name}", which ${what}${sets}${pulls}. Start it? Only allow what you trust.`;
}

/** The choices of the trust question: one that keeps the host's variables from it when it
 * asks for some. */
export const ALLOW_WITHOUT_HOST = 'Allow without secrets';
export function trustChoices(params: ApproveMcpServerParams): string[] {
  return params.fromHost?.length ? ['Allow', ALLOW_WITHOUT_HOST, 'Deny'] : ['Allow', 'Deny'];
}

/** The answer to the trust question for the choice clicked (none: not allowed). */
export function trustAnswer(choice: string | undefined): { approved: boolean; fromHost?: string[] } {
  if (choice === 'Allow') return { approved: true };
  if (choice === ALLOW_WITHOUT_HOST) return { approved: true, fromHost: [] };
  return { approved: false };
}

/** The commands a tool-approval notification's links run, each with the call's id. */
export const mcpToolCommands = {
  allow: 'plansight.allowMcpTool',
  deny: 'plansight.denyMcpTool',
  always: 'plansight.alwaysAllowMcpTool',
} as const;

/**
 * The notification asking for a tool call while the conversation is out of sight: the card's
 * three choices as command links carrying the call's `id` (Always Allow too, so that a user who
 * answers from the notification is not asked at every later call). A toast shows one line,
 * `title: message`, cut with an ellipsis: the choices come first, after a short fixed title, so
 * that no tool name or input can push them out of sight; the call and its input follow.
 */
export function mcpToolNotice(params: ApproveToolParams, id: string): { title: string; message: string } {
  const args = encodeURIComponent(JSON.stringify([id]));
  const input = truncate(oneLine(JSON.stringify(params.input ?? {})), 200);
  const link = (label: string, command: string): string => `[${label}](command:${command}?${args})`;
  return {
    title: 'Plansight',
    message:
      `${link('Allow', mcpToolCommands.allow)} · ${link('Deny', mcpToolCommands.deny)} · ` +
      `${link('Always Allow', mcpToolCommands.always)} the call of ${params.tool} (MCP ${params.server}): ${input}`,
  };
}

export interface McpToolCardData {
  approvalId: string;
  server: string;
  tool: string;
  input: string;
  outcome: 'pending' | 'allowed' | 'always' | 'denied' | 'cancelled';
  feedback?: string;
}

const outcomes: Readonly<Record<McpToolCardData['outcome'], [string, string]>> = {
  pending: ['plug', 'Waiting for your approval'],
  allowed: ['check', 'Allowed'],
  always: ['check-all', 'Allowed (always, for this tool in this workspace)'],
  denied: ['close', 'Denied'],
  cancelled: ['circle-slash', 'Cancelled: the run ended before a decision, nothing ran'],
};

export function renderMcpToolCard(card: CardEntry, h: RenderHelpers): string {
  const data = card.data as McpToolCardData;
  const head =
    `<div class="card-head">${h.icon('plug')}<span>Call <strong>${h.escape(data.tool)}</strong> of the MCP server <strong>${h.escape(data.server)}</strong></span></div>` +
    `<pre class="command">${h.escape(data.input)}</pre>`;
  if (card.open) {
    return (
      head +
      h.field('reason', 'Why deny? The agent reads your reason (optional)') +
      `<div class="buttons">${h.button('allow', 'Allow', { primary: true, icon: 'check' })}` +
      `${h.button('deny', 'Deny', { icon: 'close' })}` +
      `${h.button('always', 'Always Allow', { icon: 'check-all', title: 'Allow this tool from now on in this workspace' })}</div>`
    );
  }
  const [icon, label] = outcomes[data.outcome];
  const reason = data.outcome === 'denied' && data.feedback ? `: ${data.feedback}` : '';
  return head + `<div class="outcome ${data.outcome}">${h.icon(icon)}<span>${h.escape(label + reason)}</span></div>`;
}
