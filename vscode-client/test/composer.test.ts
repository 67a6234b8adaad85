import { describe, expect, it } from 'vitest';
import { canSend, composerKey, contextLabel, type KeyLike, sendLabel } from '../src/conversation/composer';

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
