import { describe, expect, it } from 'vitest';
import {
  canSend,
  composerHeight,
  composerKey,
  contextLabel,
  insertMention,
  type KeyLike,
  mentionAt,
  onFirstLine,
  onLastLine,
  PromptRecall,
  rankPaths,
  sendAction,
  sendLabel,
} from '../src/conversation/composer';

const key = (over: Partial<KeyLike>): KeyLike => ({
  key: 'Enter',
  shiftKey: false,
  altKey: false,
  ctrlKey: false,
  metaKey: false,
  isComposing: false,
  ...over,
});

describe('the composer', () => {
  it('sends on Enter and makes a new line on Shift+Enter', () => {
    expect(composerKey(key({}))).toBe('send');
    expect(composerKey(key({ ctrlKey: true }))).toBe('send');
    expect(composerKey(key({ shiftKey: true }))).toBe('newline');
    expect(composerKey(key({ key: 'a' }))).toBe('none');
  });

  it('never sends while an input method composes a word', () => {
    expect(composerKey(key({ isComposing: true }))).toBe('none');
  });

  it('sends only something, and not while a run goes on', () => {
    expect(canSend('  \n ', false)).toBe(false);
    expect(canSend('Fix it', false)).toBe(true);
    expect(canSend('Fix it', true)).toBe(false);
  });

  it('names the context that goes along', () => {
    expect(contextLabel({ path: 'hello.py' })).toBe('hello.py');
    expect(contextLabel({ path: 'hello.py', selection: { startLine: 3, endLine: 5 } })).toBe('hello.py · lines 3–5');
    expect(contextLabel({ path: 'a.py', selection: { startLine: 2, endLine: 2 } })).toBe('a.py · line 2');
  });

  it('says Plan instead of Send while Plan first is on', () => {
    expect(sendLabel(true)).toBe('Plan');
    expect(sendLabel(false)).toBe('Send');
  });
});

describe('the composer, as a shell user expects it', () => {
  it('queues a follow-up typed during a run instead of dropping it', () => {
    expect(sendAction('Fix it', true)).toBe('queue');
    expect(sendAction('Fix it', false)).toBe('send');
    expect(sendAction('  ', true)).toBe('none');
  });

  it('grows with its text, from two lines to twelve', () => {
    expect(composerHeight(10, 20, 10)).toBe(50);
    expect(composerHeight(130, 20, 10)).toBe(130);
    expect(composerHeight(900, 20, 10)).toBe(250);
  });

  it('recalls earlier prompts with ArrowUp on the first line, and ArrowDown goes back to the draft', () => {
    const recall = new PromptRecall(['first']);
    recall.add('second');
    recall.add('second'); // once
    expect(recall.up('draft')).toBe('second');
    expect(recall.up('second')).toBe('first');
    expect(recall.up('first')).toBeUndefined();
    expect(recall.down()).toBe('second');
    expect(recall.down()).toBe('draft');
    expect(recall.down()).toBeUndefined();
    expect(onFirstLine('one\ntwo', 2)).toBe(true);
    expect(onFirstLine('one\ntwo', 5)).toBe(false);
    expect(onLastLine('one\ntwo', 5)).toBe(true);
    expect(onLastLine('one\ntwo', 2)).toBe(false);
  });

  it('finds an @ mention being typed and inserts the chosen path as text', () => {
    expect(mentionAt('look at @hel', 12)).toEqual({ start: 8, query: 'hel' });
    expect(mentionAt('@', 1)).toEqual({ start: 0, query: '' });
    expect(mentionAt('mail me@example', 15)).toBeUndefined();
    expect(insertMention('look at @hel please', 8, 12, 'src/hello.py')).toEqual({ value: 'look at @src/hello.py please', cursor: 22 });
    expect(insertMention('see @my', 4, 7, 'my file.txt').value).toBe('see @"my file.txt" ');
  });

  it('ranks workspace files for a mention: name first, then path, then letters in order', () => {
    const paths = ['docs/hello-guide.md', 'hello.py', 'src/othello.py', 'test_hello.py', 'h/e/l/l/o.txt', 'README.md'];
    expect(rankPaths(paths, 'hello')).toEqual(['hello.py', 'docs/hello-guide.md', 'test_hello.py', 'src/othello.py', 'h/e/l/l/o.txt']);
    expect(rankPaths(paths, '', 2)).toEqual(['hello.py', 'README.md']);
  });
});
