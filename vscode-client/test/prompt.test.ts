import { describe, expect, it } from 'vitest';
import { buildPrompt, parsePrompt } from '../src/commands/prompt';

describe('buildPrompt', () => {
  it('sends a bare prompt without context', () => {
    expect(buildPrompt('  Add type hints  ')).toBe('Add type hints');
  });
  it('adds the active file', () => {
    expect(buildPrompt('Fix it', { path: 'src/hello.py' })).toBe(
      'Fix it\n\n<editor-context>\nActive file: src/hello.py\n</editor-context>',
    );
  });
  it('adds the selection fenced, with its lines', () => {
    const prompt = buildPrompt('Explain', {
      path: 'hello.py',
      languageId: 'python',
      selection: { text: 'def greet(name):\n    ```', startLine: 4, endLine: 5 },
    });
    expect(prompt).toBe(
      'Explain\n\n<editor-context>\nActive file: hello.py\nSelected text (lines 4-5):\n````python\ndef greet(name):\n    ```\n````\n</editor-context>',
    );
  });
  it('names a single line', () => {
    expect(buildPrompt('x', { selection: { text: 'a', startLine: 2, endLine: 2 } })).toContain('(line 2)');
  });
});

describe('parsePrompt', () => {
  it('gives back the words and the context that buildPrompt added', () => {
    const context = { path: 'hello.py', languageId: 'python', selection: { text: 'x\ny', startLine: 4, endLine: 5 } };
    expect(parsePrompt(buildPrompt('Explain this\nplease', context))).toEqual({
      text: 'Explain this\nplease',
      path: 'hello.py',
      selection: { startLine: 4, endLine: 5 },
    });
    expect(parsePrompt(buildPrompt('Fix it', { path: 'a.py', selection: { text: 'a', startLine: 2, endLine: 2 } }))).toEqual({
      text: 'Fix it',
      path: 'a.py',
      selection: { startLine: 2, endLine: 2 },
    });
  });
  it('leaves a prompt without context as it is', () => {
    expect(parsePrompt('Add type hints')).toEqual({ text: 'Add type hints' });
  });
});
