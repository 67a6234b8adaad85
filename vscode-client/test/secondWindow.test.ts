import { describe, expect, it } from 'vitest';
import { heldElsewhere, openElsewhereMessage, readOnlyStatus } from '../src/server/secondWindow';

describe('a second window on the same folder (issue 31)', () => {
  it("knows the server's refusal when another server keeps the session, and nothing else", () => {
    const refusal = new Error(
      "Another Plansight server is using this workspace's session (server pid 4242; for vscode, pid 17; since 10:02), kept in /s. One server at a time keeps a workspace's conversation: let that one finish, or stop it, then try again.",
    );
    expect(heldElsewhere(refusal)).toBe(true);
    expect(heldElsewhere("Plansight cannot save this workspace's session in /s (Permission denied)")).toBe(false);
    expect(heldElsewhere(new Error('spawn python3 ENOENT'))).toBe(false);
  });

  it('says so in plain words, naming the way back', () => {
    expect(openElsewhereMessage).toMatch(/^Plansight is open in another window: this window shows the session read-only\./);
    expect(openElsewhereMessage).toContain('Restart Server');
    expect(readOnlyStatus).toBe('Plansight is open in another window: read-only here.');
  });
});
