import { describe, expect, it } from 'vitest';
import { commandNotice, NOTICE_COMMAND_MAX, sandboxSummary, sandboxUnavailable } from '../src/review/approveCommandModel';

const base = { command: 'make test', cwd: '/ws' };

describe('sandboxSummary', () => {
  it('says what a sandboxed command may do', () => {
    expect(sandboxSummary({ ...base, sandbox: { network: false, writable: ['/ws'] } })).toEqual({
      sandboxed: true,
      text: 'sandboxed: workspace only, no network',
    });
    expect(sandboxSummary({ ...base, sandbox: { network: true, writable: ['/ws', '/var/cache/x'] } })).toEqual({
      sandboxed: true,
      text: 'sandboxed: workspace and /var/cache/x, with network',
    });
  });

  it('says plainly when a command is not sandboxed', () => {
    const summary = sandboxSummary({ ...base, sandbox: null });
    expect(summary.sandboxed).toBe(false);
    expect(summary.text).toMatch(/^not sandboxed/);
  });

  it('says nothing for an older server', () => {
    expect(sandboxSummary(base)).toEqual({ sandboxed: undefined, text: '' });
  });
});

describe('sandboxUnavailable', () => {
  it("finds the server's warning among its log messages", () => {
    expect(sandboxUnavailable('plansight.workspace.sandbox: commands run without a sandbox: no bwrap. Install')).toBe(
      'Plansight: commands run without a sandbox: no bwrap. Install',
    );
    expect(sandboxUnavailable('workspace /x, storage /y')).toBeUndefined();
  });
});

describe('commandNotice', () => {
  const links = (message: string) =>
    [...message.matchAll(/\[([^\]]+)\]\(command:([\w.]+)\?([^)]*)\)/g)].map((m) => [m[1], m[2], JSON.parse(decodeURIComponent(m[3] ?? ''))]);
  it('offers Approve and Reject for this approval, then the command, its folder and its sandbox', () => {
    const notice = commandNotice({ ...base, sandbox: { network: false, writable: ['/ws'] } }, 'cmd-3');
    expect(notice.title).toBe('Plansight wants to run');
    expect(links(notice.message)).toEqual([
      ['Approve', 'plansight.approveCommand', ['cmd-3']],
      ['Reject', 'plansight.rejectCommand', ['cmd-3']],
    ]);
    expect(notice.message).toMatch(/\) \$ make test \(in \/ws; sandboxed: workspace only, no network\)$/);
  });
  it('never shows a long command cut: it says to see the card, and offers no Approve', () => {
    const long = 'python3 -m unittest discover -s tests -p "test_*.py" && touch /tmp/x';
    for (const command of [long, `echo ${'x'.repeat(500)}\necho done`, 'make test\nrm -rf ~']) {
      const notice = commandNotice({ command, cwd: '/ws' }, 'cmd-1');
      const visible = `${notice.title}: ${notice.message.replace(/\]\([^)]*\)/g, ']')}`;
      expect(visible).not.toContain('\n');
      expect(visible).not.toContain('$ ');
      expect(visible).not.toContain('…');
      expect(visible).toContain('see the card');
      expect(visible).not.toContain('unittest');
      expect([...notice.message.matchAll(/\(command:([\w.]+)/g)].map((m) => m[1])).toEqual(['plansight.showConversation', 'plansight.rejectCommand']);
    }
    expect(commandNotice({ command: long, cwd: '/ws' }, 'c').message).toContain(`(${long.length} characters)`);
    expect(commandNotice({ command: 'a\nb\nc', cwd: '/ws' }, 'c').message).toContain('(3 lines)');
  });
  it('shows a short command whole, after the choices', () => {
    const notice = commandNotice({ command: 'x'.repeat(NOTICE_COMMAND_MAX), cwd: '/ws' }, 'cmd-1');
    const visible = `${notice.title}: ${notice.message.replace(/\]\([^)]*\)/g, ']')}`;
    expect(visible.indexOf('[Reject]')).toBeLessThan(40);
    expect(visible).toContain(`$ ${'x'.repeat(NOTICE_COMMAND_MAX)} (in /ws)`);
    expect(commandNotice({ command: 'x'.repeat(NOTICE_COMMAND_MAX + 1), cwd: '/ws' }, 'c').message).toContain('see the card');
  });
});
