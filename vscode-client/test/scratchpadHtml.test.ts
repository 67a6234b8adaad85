import { describe, expect, it } from 'vitest';
import { emptyScratchpadText, escapeHtml, scratchpadBody, scratchpadHtml } from '../src/scratchpad/scratchpadHtml';

describe('scratchpad html', () => {
  it('escapes the notes', () => {
    expect(escapeHtml(`<b>&"'`)).toBe('&lt;b&gt;&amp;&quot;&#39;');
    const html = scratchpadHtml('- use <pre> & co', 'n0nce', 'vscode-resource:');
    expect(html).toContain('<li>use &lt;pre&gt; &amp; co</li>');
    expect(html).toContain("script-src 'nonce-n0nce'");
    expect(html).not.toContain('<script>');
  });
  it('renders the notes as Markdown, with the conversation\'s renderer', () => {
    const { html, empty } = scratchpadBody('## Notes\n\n- [x] read hello.py\n\n| a | b |\n|--|--:|\n| 1 | 2 |');
    expect(empty).toBe(false);
    expect(html).toContain('<h2>Notes</h2>');
    expect(html).toContain('<input type="checkbox" class="task" disabled checked');
    expect(html).toContain('<td class="align-right">2</td>');
    expect(html).not.toContain('##');
  });
  it('says when it is empty', () => {
    expect(scratchpadHtml('', 'n', 'c')).toContain(emptyScratchpadText);
  });
});
