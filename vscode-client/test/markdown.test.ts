import { describe, expect, it } from 'vitest';
import { createMarkdown, markdownOptions } from '../src/conversation/markdown';

const md = createMarkdown();

describe('Markdown rendering', () => {
  it('renders with raw HTML off', () => {
    expect(markdownOptions.html).toBe(false);
  });

  it('renders headings, lists and code blocks', () => {
    const html = md.render('## What changed\n\n- one\n- two\n\n```python\nprint("<hi>")\n```\n');
    expect(html).toContain('<h2>What changed</h2>');
    expect(html).toContain('<li>one</li>');
    expect(html).toContain('<pre><code class="language-python">print(&quot;&lt;hi&gt;&quot;)\n</code></pre>');
  });

  it('escapes HTML in the text instead of parsing it', () => {
    const html = md.render('Hi <script>alert(1)</script> <img src=x onerror=alert(1)> <b>bold</b>');
    expect(html).not.toMatch(/<script|<img|<b>/);
    expect(html).toContain('&lt;script&gt;');
  });

  it('refuses script links', () => {
    for (const link of ['[x](javascript:alert(1))', '[x](vbscript:msgbox)', '[x](data:text/html,<script>)', '[x](file:///etc/passwd)']) {
      expect(md.render(link)).not.toContain('href');
    }
    expect(md.render('[docs](https://example.com/a?b=1&c=2)')).toContain('href="https://example.com/a?b=1&amp;c=2"');
  });

  it('shows images as links: the webview loads nothing remote', () => {
    const html = md.render('![a chart](https://example.com/chart.png)');
    expect(html).not.toContain('<img');
    expect(html).toContain('<a href="https://example.com/chart.png" class="image-link" title="Image (not loaded)">a chart</a>');
  });
});
