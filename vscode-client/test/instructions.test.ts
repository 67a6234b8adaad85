import { describe, expect, it } from 'vitest';
import { fileText, instructionFiles, instructionsHtml } from '../src/conversation/instructions';

describe("the header's project instructions (issue 31)", () => {
  it('names each file the server says the model reads, with its size as the terminal says it', () => {
    const files = instructionFiles([{ path: 'AGENTS.md', bytes: 2150, cut: 0 }]);
    expect(files).toEqual([{ path: 'AGENTS.md', bytes: 2150 }]);
    expect(fileText(files[0]!)).toBe('AGENTS.md (2.1 kB)');
    const html = instructionsHtml(files);
    expect(html).toContain('Reads <strong>AGENTS.md</strong>');
    expect(html).toContain('title="Project instructions the model reads: AGENTS.md (2.1 kB)"');
  });

  it('says what was cut at the limit', () => {
    const [file] = instructionFiles([{ path: 'CLAUDE.md', bytes: 40_000, cut: 7232 }]);
    expect(fileText(file!)).toBe('CLAUDE.md (39.1 kB, 7.1 kB of it left out (limit 32 kB))');
    expect(instructionsHtml([file!])).toContain('<strong>CLAUDE.md</strong> (cut)');
  });

  it('shows nothing when there is none, or from an older server, and escapes what the server sent', () => {
    expect(instructionsHtml(instructionFiles(undefined))).toBe('');
    expect(instructionsHtml(instructionFiles([]))).toBe('');
    expect(instructionFiles([{ bytes: 3 }, null, 'x'])).toEqual([]);
    const html = instructionsHtml(instructionFiles([{ path: '<img src=x>.md', bytes: 10 }]));
    expect(html).not.toContain('<img');
    expect(html).toContain('&lt;img src=x&gt;.md');
  });
});
