import { describe, expect, it } from 'vitest';
import { mcpStatusText, mcpToolParts, toolDisplayName, trustMessage } from '../src/mcp/mcpModel';

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
  it('names the address of an HTTP server', () => {
    expect(trustMessage({ name: 'h', source: '/w/.vscode/mcp.json', url: 'https://example.com/mcp' })).toContain(
      'connects to https://example.com/mcp',
    );
  });
});
