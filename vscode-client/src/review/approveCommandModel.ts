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

/** The setting the warning without a sandbox names, and its Open Setting button opens. */
export const sandboxSetting = 'plansight.sandbox.enabled';

/** The button on that warning (issue 31: the setting was named, but the way to it was not offered). */
export const openSettingChoice = 'Open Setting';

/** The server's warning that commands run without a sandbox (`window/logMessage`, sent once
 * per server when the sandbox option is "auto" and none can be made), or undefined. */
export function sandboxUnavailable(message: string): string | undefined {
  const at = message.indexOf('commands run without a sandbox');
  if (at < 0) {
    return undefined;
  }
  // The server names its option; in VS Code the user sets it as this extension's setting.
  const said = message
    .slice(at)
    .replace(/set the option sandbox\.enabled to "auto" or false to run commands without a sandbox\.?/, `set ${sandboxSetting} to "off" to run commands without a sandbox and without this warning.`)
    .replace(/the option sandbox\.enabled/g, `the setting ${sandboxSetting}`);
  return `Plansight: ${said}`;
}

/**
 * The notification asking for a command while the conversation is out of sight. A toast shows
 * one line, `title: message`, cut by the workbench after about 55 characters (at a 1500 px
 * window), so it never shows the command: a command is approved only where it is shown whole,
 * on its card (a cut `python3 -m unittest … &&` once hid the `touch /tmp/x` that ran). It says
 * a command waits, and offers Show Command (the conversation, with the card) and Reject, both
 * in sight before the cut; not Approve.
 */
export function commandNotice(params: ApproveCommandParams, id: string): { title: string; message: string } {
  const args = encodeURIComponent(JSON.stringify([id]));
  const sandbox = sandboxSummary(params).text;
  return {
    title: 'Plansight: a command waits',
    message:
      `[Show Command](command:plansight.showConversation) · [Reject](command:plansight.rejectCommand?${args}) ` +
      `Approve it on its card in the Plansight conversation, which shows it whole` +
      ` (in ${params.cwd}${sandbox ? `; ${sandbox}` : ''}).`,
  };
}
