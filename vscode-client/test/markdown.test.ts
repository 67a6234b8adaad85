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
    expect(html).toContain('<pre><code class="language-python">');
    expect(html).toContain('&quot;&lt;hi&gt;&quot;');
    expect(html).not.toContain('<hi>');
  });

  it('gives code blocks a Copy button and highlighting', () => {
    const html = md.render('```python\ndef greet(name):  # hi\n    return "x" + 1\n```\n');
    expect(html).toMatch(/<div class="code-block"><button type="button" class="copy" data-copy[^>]*>.*Copy<\/button><pre>/);
    expect(html).toContain('<span class="hl-keyword">def</span>');
    expect(html).toContain('<span class="hl-function">greet</span>');
    expect(html).toContain('<span class="hl-comment"># hi</span>');
    expect(html).toContain('<span class="hl-string">&quot;x&quot;</span>');
    expect(html).toContain('<span class="hl-number">1</span>');
    // An unknown language is escaped, not highlighted.
    expect(md.render('```brainfuck\n<+>\n```')).toContain('<code class="language-brainfuck">&lt;+&gt;\n</code>');
  });

  it('shows task lists as read-only checkboxes', () => {
    const html = md.render('- [x] done\n- [ ] to do\n- plain');
    expect(html).toContain('<li class="task-item"><input type="checkbox" class="task" disabled checked aria-label="done"> done</li>');
    expect(html).toContain('<li class="task-item"><input type="checkbox" class="task" disabled aria-label="not done"> to do</li>');
    expect(html).toContain('<li>plain</li>');
    expect(html).not.toContain('[x]');
    // Raw HTML stays off: only the renderer's own checkbox is markup.
    expect(md.render('- [x] <input type="text">')).toContain('&lt;input type=&quot;text&quot;&gt;');
  });

  it('honours table column alignment with classes (the page allows no inline styles)', () => {
    const html = md.render('| name | count |\n|:--|--:|\n| a | 12 |');
    expect(html).toContain('<th class="align-left">name</th>');
    expect(html).toContain('<th class="align-right">count</th>');
    expect(html).toContain('<td class="align-right">12</td>');
    expect(html).not.toContain('style=');
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
