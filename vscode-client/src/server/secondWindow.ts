/**
 * A second window on the same folder: the server of the first keeps the workspace's session
 * (one server per session, session/lock.py), and refuses a second at `initialize` with
 * "Another Plansight server is using this workspace's session …". The second window then
 * starts its server read-only (`readOnly: true`: it claims nothing and writes nothing) to show
 * the session, and says so in plain words. Pure: no `vscode` import.
 */

/** Whether a refused start is the workspace's session kept by another server. */
export function heldElsewhere(error: unknown): boolean {
  const message = error instanceof Error ? error.message : String(error);
  return /Another Plansight server is using this workspace's session/.test(message);
}

/** The notification, once, when the window falls back to the read-only view. */
export const openElsewhereMessage =
  "Plansight is open in another window: this window shows the session read-only. Work in the other window, or close it and run Plansight: Restart Server here.";

/** The composer's status line while the window is read-only. */
export const readOnlyStatus = 'Plansight is open in another window: read-only here.';
