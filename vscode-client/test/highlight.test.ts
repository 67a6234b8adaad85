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
