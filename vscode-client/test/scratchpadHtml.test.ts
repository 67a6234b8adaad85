import { describe, expect, it } from 'vitest';
import { emptyScratchpadText, escapeHtml, scratchpadHtml } from '../src/scratchpad/scratchpadHtml';

describe('scratchpad html', () => {
  it('escapes the notes', () => {
    expect(escapeHtml(`<b>&"'`)).toBe('&lt;b&gt;&amp;&quot;&#39;');
    const html = scratchpadHtml('- use <pre> & co', 'n0nce', 'vscode-resource:');
    expect(html).toContain('<pre id="content">- use &lt;pre&gt; &amp; co</pre>');
    expect(html).toContain("script-src 'nonce-n0nce'");
    expect(html).not.toContain('<script>');
  });
  it('says when it is empty', () => {
    expect(scratchpadHtml('', 'n', 'c')).toContain(emptyScratchpadText);
  });
});
