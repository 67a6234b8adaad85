import { describe, expect, it } from 'vitest';
import { commandNotice, sandboxSetting, sandboxSummary, sandboxUnavailable } from '../src/review/approveCommandModel';

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

  it('names the VS Code setting that exists, not the server option (issue 31)', async () => {
    const { readFileSync } = await import('node:fs');
    const { join } = await import('node:path');
    const settings = JSON.parse(readFileSync(join(__dirname, '..', 'package.json'), 'utf8')).contributes.configuration.properties;
    const server =
      'plansight.workspace.sandbox: commands run without a sandbox: bwrap is not installed. Install bubblewrap (Debian/Ubuntu: ' +
      '`sudo apt-get install bubblewrap`), make sure unprivileged user namespaces are allowed, and restart Plansight; or set ' +
      'the option sandbox.enabled to "auto" or false to run commands without a sandbox.';
    const said = sandboxUnavailable(server)!;
    expect(said).toContain('set plansight.sandbox.enabled to "off"');
    expect(said).not.toContain('the option sandbox.enabled');
    for (const named of said.match(/plansight\.[\w.]+/g) ?? []) {
      expect(settings[named], named).toBeDefined();
    }
    expect(settings['plansight.sandbox.enabled'].enum).toContain('off');
    // The Open Setting button opens the setting the words name.
    expect(settings[sandboxSetting]).toBeDefined();
    expect(said).toContain(sandboxSetting);
  });
});

describe('commandNotice', () => {
  const visibleLine = (notice: { title: string; message: string }) =>
    `${notice.title}: ${notice.message.replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')}`;
  const commands = (message: string) => [...message.matchAll(/\(command:([\w.]+)(?:\?([^)]*))?\)/g)].map((m) => [m[1], m[2] ? JSON.parse(decodeURIComponent(m[2])) : undefined]);

  it('never shows the command, so never a cut one: Show Command and Reject, no Approve', () => {
    const long = 'python3 -m unittest discover -s tests -p "test_*.py" && touch /tmp/x';
    for (const command of [long, 'make test', `echo ${'x'.repeat(500)}\necho done`, 'make test\nrm -rf ~']) {
      const notice = commandNotice({ command, cwd: '/ws', sandbox: { network: false, writable: ['/ws'] } }, 'cmd-3');
      const line = visibleLine(notice);
      expect(line).not.toContain(command.split('\n')[0]!.slice(0, 9));
      expect(line).not.toContain('Approve ·');
      expect(line).not.toContain('\n');
      expect(line).not.toContain('…');
      expect(commands(notice.message)).toEqual([
        ['plansight.showConversation', undefined],
        ['plansight.rejectCommand', ['cmd-3']],
      ]);
      // Both choices within the ~55 characters a toast shows at a 1500 px window.
      expect(line.indexOf(' Reject ') + ' Reject'.length).toBeLessThanOrEqual(50);
      expect(line).toContain('on its card');
      expect(line).toContain('(in /ws; sandboxed: workspace only, no network)');
    }
  });
});
