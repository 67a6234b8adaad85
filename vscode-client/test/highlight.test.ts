import { describe, expect, it } from 'vitest';
import { highlight, knowsLanguage } from '../src/conversation/highlight';

describe('the code highlighter', () => {
  it('marks keywords, strings, numbers, comments and calls, and escapes the rest', () => {
    expect(highlight('const x = "a<b>"; // note\nf(2)', 'ts')).toBe(
      '<span class="hl-keyword">const</span> x = <span class="hl-string">&quot;a&lt;b&gt;&quot;</span>; <span class="hl-comment">// note</span>\n<span class="hl-function">f</span>(<span class="hl-number">2</span>)',
    );
    expect(highlight('"""doc"""\nx1 = 0x1F', 'python')).toBe('<span class="hl-string">&quot;&quot;&quot;doc&quot;&quot;&quot;</span>\nx1 = <span class="hl-number">0x1F</span>');
    expect(highlight('echo "$HOME" # home', 'bash')).toBe('<span class="hl-keyword">echo</span> <span class="hl-string">&quot;$HOME&quot;</span> <span class="hl-comment"># home</span>');
  });

  it('leaves a language it does not know plain (escaped)', () => {
    expect(knowsLanguage('constructor')).toBe(false);
    expect(highlight('<if>', 'nope')).toBe('&lt;if&gt;');
    expect(highlight('<if>', '')).toBe('&lt;if&gt;');
  });
});

describe("code blocks coloured as the editor's (issue 31)", () => {
  it("colours keywords, comments and functions with the editor's token colours for each theme kind", async () => {
    const { readFileSync } = await import('node:fs');
    const { join } = await import('node:path');
    const css = readFileSync(join(__dirname, '..', 'media', 'conversation.css'), 'utf8');
    // Not the symbol icons' colours (plain foreground in most themes): keywords looked like text.
    expect(css).not.toMatch(/\.hl-keyword \{[^}]*symbolIcon/);
    for (const kind of ['body', 'body.vscode-light', 'body.vscode-high-contrast', 'body.vscode-high-contrast-light']) {
      const rule = new RegExp(`^${kind.replace('.', '\\.')} \\{ --hl-keyword: #[0-9a-f]{6}; --hl-comment: #[0-9a-f]{6}; --hl-function: #[0-9a-f]{6};`, 'm');
      expect(css, kind).toMatch(rule);
    }
    expect(css).toContain('body.vscode-light { --hl-keyword: #0000ff;'); // Light+'s keyword blue
  });
});

describe("the scratchpad's code blocks (issue 31)", () => {
  it("are coloured by the conversation's rules, not the symbol icons' colours", async () => {
    const { readFileSync } = await import('node:fs');
    const { join } = await import('node:path');
    const { scratchpadHtml } = await import('../src/scratchpad/scratchpadHtml');
    const rules = (css: string) => (css.match(/^\s*(body[.\w-]* \{ --hl-[^}]*\}|\.hl-\w+ \{[^}]*\})/gm) ?? []).map((r) => r.trim());
    const conversation = rules(readFileSync(join(__dirname, '..', 'media', 'conversation.css'), 'utf8'));
    const scratchpad = rules(scratchpadHtml('`x`', 'n', 'c'));
    expect(conversation).toHaveLength(9);
    expect(scratchpad).toEqual(conversation);
  });
});
