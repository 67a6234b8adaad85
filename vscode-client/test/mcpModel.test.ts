import { describe, expect, it } from 'vitest';
import {
  mcpStatusText,
  mcpToolCommands,
  mcpToolNotice,
  mcpToolParts,
  toolDisplayName,
  trustAnswer,
  trustChoices,
  trustMessage,
} from '../src/mcp/mcpModel';

describe('MCP tool names', () => {
  it('splits the prefixed name into server and tool', () => {
    expect(mcpToolParts('mcp__time__get_current_time')).toEqual({ server: 'time', tool: 'get_current_time' });
    expect(mcpToolParts('mcp__everything__get-sum')).toEqual({ server: 'everything', tool: 'get-sum' });
    expect(mcpToolParts('read_file')).toBeUndefined();
    expect(mcpToolParts('mcp_call')).toBeUndefined();
  });
  it('shows an MCP call with its server named', () => {
    expect(toolDisplayName('mcp__time__get_current_time')).toBe('get_current_time (MCP time)');
    expect(toolDisplayName('bash')).toBe('bash');
  });
});

describe('mcpStatusText', () => {
  it('is hidden without servers', () => {
    expect(mcpStatusText([])).toBeUndefined();
  });
  it('counts the ready servers and says what is wrong', () => {
    const shown = mcpStatusText([
      { name: 'time', source: 'client', status: 'ready', tools: ['a', 'b'] },
      { name: 'evil', source: '/w/.mcp.json', status: 'untrusted', tools: [], error: 'not trusted' },
      { name: 'gone', source: 'client', status: 'error', tools: [], error: 'failed to start: command not found' },
    ]);
    expect(shown?.text).toBe('$(warning) MCP 1/3');
    expect(shown?.tooltip).toContain('time: ready, 2 tools');
    expect(shown?.tooltip).toContain('gone: error (failed to start: command not found)');
  });
});

describe('trustMessage', () => {
  it('names the file, the server and the exact command', () => {
    const text = trustMessage({ name: 'evil', source: '/w/.mcp.json', command: 'sh', args: ['-c', 'touch /tmp/x'] });
    expect(text).toContain('/w/.mcp.json');
    expect(text).toContain('"evil"');
    expect(text).toContain("runs: sh -c 'touch /tmp/x'");
  });
  it('names the variables it sets and those it takes from this computer', () => {
    const params = {
      name: 'k',
      source: '/w/.mcp.json',
      command: 'node',
      args: ['s.js'],
      env: ['K'],
      fromHost: ['ANTHROPIC_API_KEY'],
    };
    expect(trustMessage(params)).toContain("sets K and receives this computer's ANTHROPIC_API_KEY");
    expect(trustChoices(params)).toEqual(['Allow', 'Allow without secrets', 'Deny']);
    expect(trustAnswer('Allow without secrets')).toEqual({ approved: true, fromHost: [] });
    expect(trustAnswer('Allow')).toEqual({ approved: true });
    expect(trustAnswer(undefined)).toEqual({ approved: false });
    expect(trustChoices({ name: 'h', source: '/w/.mcp.json', url: 'https://x' })).toEqual(['Allow', 'Deny']);
  });
  it('names the address of an HTTP server', () => {
    expect(trustMessage({ name: 'h', source: '/w/.vscode/mcp.json', url: 'https://example.com/mcp' })).toContain(
      'connects to https://example.com/mcp',
    );
  });
});

describe('mcpToolNotice', () => {
  it('names the tool and its server, shows the input, and offers the card\'s three choices for this call', () => {
    const notice = mcpToolNotice({ server: 'faults', tool: 'sleep', input: { seconds: 0 } }, 'mcp-7');
    expect(notice.title).toBe('Plansight');
    expect(notice.message).toMatch(/the call of sleep \(MCP faults\): \{"seconds":0\}$/);
    const links = [...notice.message.matchAll(/\[([^\]]+)\]\(command:([\w.]+)\?([^)]*)\)/g)].map((m) => [
      m[1],
      m[2],
      JSON.parse(decodeURIComponent(m[3] ?? '')),
    ]);
    expect(links).toEqual([
      ['Allow', mcpToolCommands.allow, ['mcp-7']],
      ['Deny', mcpToolCommands.deny, ['mcp-7']],
      ['Always Allow', mcpToolCommands.always, ['mcp-7']],
    ]);
  });
  it('puts the choices first, before a long name or input can push them out of the line', () => {
    const notice = mcpToolNotice({ server: 'a'.repeat(60), tool: 'b'.repeat(60), input: { text: 'c'.repeat(300) } }, 'mcp-2');
    const visible = `${notice.title}: ${notice.message.replace(/\]\([^)]*\)/g, ']')}`;
    expect(visible.indexOf('[Always Allow]')).toBeLessThan(40);
  });
  it('keeps a long input to one short line', () => {
    const notice = mcpToolNotice({ server: 's', tool: 't', input: { text: 'x\n'.repeat(500) } }, 'mcp-1');
    expect(notice.message.split('\n')).toHaveLength(1);
    expect(notice.message.replace(/\]\([^)]*\)/g, ']').length).toBeLessThan(300);
  });
});
