/**
 * What a command to approve may do, as the approval card and notification say it: pure (no
 * `vscode` import), from `plansight/approveCommand`'s `sandbox` (protocol version 3); and the
 * notification's words.
 */
import type { ApproveCommandParams } from '../protocol';

export interface SandboxSummary {
  /** True: the command runs in the sandbox; false: it does not; undefined: an older server. */
  sandboxed: boolean | undefined;
  /** One line, e.g. "sandboxed: workspace only, no network" ('' for an older server). */
  text: string;
}

export function sandboxSummary(params: ApproveCommandParams): SandboxSummary {
  if (!('sandbox' in params) || params.sandbox === undefined) {
    return { sandboxed: undefined, text: '' };
  }
  const sandbox = params.sandbox;
  if (sandbox === null || typeof sandbox !== 'object') {
    return {
      sandboxed: false,
      text: 'not sandboxed: it can change any file you can, and use the network',
    };
  }
  const writable = Array.isArray(sandbox.writable)
    ? sandbox.writable.filter((p): p is string => typeof p === 'string')
    : [];
  const where = writable.length <= 1 ? 'workspace only' : `workspace and ${writable.slice(1).join(', ')}`;
  const network = sandbox.network === true ? 'with network' : 'no network';
  return { sandboxed: true, text: `sandboxed: ${where}, ${network}` };
}

/** The server's warning that commands run without a sandbox (`window/logMessage`, sent once
 * per server when the sandbox option is "auto" and none can be made), or undefined. */
export function sandboxUnavailable(message: string): string | undefined {
  const at = message.indexOf('commands run without a sandbox');
  return at < 0 ? undefined : `Plansight: ${message.slice(at)}`;
}

/** The longest command a notification shows (whole, on one line): a toast shows one line,
 * cut by the workbench, and a command is never shown cut. */
export const NOTICE_COMMAND_MAX = 20;

/**
 * The notification asking for a command while the conversation is out of sight. A toast shows
 * one line, `title: message`, cut with an ellipsis by the workbench, so a command is offered for
 * approval there only when it fits whole (one line of at most NOTICE_COMMAND_MAX characters):
 * Approve and Reject (command links carrying the approval's `id`) come first, then the command,
 * its folder and what the sandbox allows. A longer command is never shown cut (a cut
 * `python3 -m unittest … &&` once hid the `touch /tmp/x` that ran): the notification says how
 * long it is and to see the card, where it is shown whole, and offers Show the Command and
 * Reject, not Approve.
 */
export function commandNotice(params: ApproveCommandParams, id: string): { title: string; message: string } {
  const args = encodeURIComponent(JSON.stringify([id]));
  const reject = `[Reject](command:plansight.rejectCommand?${args})`;
  const sandbox = sandboxSummary(params).text;
  const command = params.command.trim();
  if (command.length <= NOTICE_COMMAND_MAX && !/[\r\n]/.test(command)) {
    return {
      title: 'Plansight wants to run',
      message:
        `[Approve](command:plansight.approveCommand?${args}) · ${reject} ` +
        `$ ${command} (in ${params.cwd}${sandbox ? `; ${sandbox}` : ''})`,
    };
  }
  const lines = command.split(/\r?\n/).length;
  const size = lines > 1 ? `${lines} lines` : `${command.length} characters`;
  return {
    title: 'Plansight wants to run a command',
    message:
      `[Show the Command](command:plansight.showConversation) · ${reject} ` +
      `It is long (${size}): see the card in the Plansight conversation, which shows it whole.`,
  };
}
