/**
 * The composer's unsent prompt kept over a window reload, and when a kept one is stale. No
 * `vscode` import (conversationView.ts wires it up), so that it is unit-tested as is.
 */
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

/** The box's text, and when the extension heard it (ms since the epoch). */
export interface SavedDraft {
  text: string;
  savedAt: number;
}

/** A prompt the conversation shows as sent, and when its run started (ISO, from the history). */
export interface SentPrompt {
  text: string;
  startedAt: string;
}

/**
 * The draft to put back in the box: none when a prompt sent after the draft was saved is that
 * draft or starts with it. The draft is cleared as its prompt is sent, but a clear (or the last
 * keystrokes before it) can be lost at a reload, which left the start of a prompt long sent in
 * the box (issue 31). A draft saved after the send (the user typing anew) is theirs, whatever
 * it starts with. The server gives a run's start to the second only: a draft saved in the
 * second a run started counts as saved before it.
 */
export function draftToRestore(saved: SavedDraft | undefined, sent: readonly SentPrompt[]): string {
  const text = saved?.text ?? '';
  const typed = text.trim();
  if (!saved || !typed) return '';
  const savedSecond = Math.floor(saved.savedAt / 1000) * 1000;
  const stale = sent.some((prompt) => {
    const started = Date.parse(prompt.startedAt);
    return !Number.isNaN(started) && started >= savedSecond && prompt.text.trim().startsWith(typed);
  });
  return stale ? '' : text;
}

/** Where a draft is kept: read once, written at each change. */
export interface DraftStore {
  get(): SavedDraft | undefined;
  set(draft: SavedDraft | undefined): void;
}

/** A draft as stored: an object with a string text and a numeric time, or nothing. */
export function parseDraft(value: unknown): SavedDraft | undefined {
  if (typeof value === 'string') {
    return value ? { text: value, savedAt: 0 } : undefined; // kept by an earlier version, no time
  }
  if (value && typeof value === 'object') {
    const { text, savedAt } = value as Record<string, unknown>;
    if (typeof text === 'string' && text && typeof savedAt === 'number') return { text, savedAt };
  }
  return undefined;
}

/**
 * A draft in a file of the extension's own (its workspace storage folder), written at once by
 * the extension host: the workspace state goes through the workbench, which writes it to disk
 * (in the browser, IndexedDB) a while later, and a reload in that while lost the clear of a
 * prompt just sent (issue 31). A write that fails is logged by `onError`, not thrown: the
 * prompt goes out all the same.
 */
export function fileDraftStore(path: string, onError: (error: unknown) => void): DraftStore {
  let cached: SavedDraft | undefined;
  let read = false;
  return {
    get() {
      if (!read) {
        read = true;
        try {
          cached = parseDraft(JSON.parse(readFileSync(path, 'utf8')));
        } catch {
          cached = undefined; // none kept yet (or unreadable: nothing to put back)
        }
      }
      return cached;
    },
    set(draft) {
      cached = draft;
      read = true;
      try {
        if (draft) {
          mkdirSync(dirname(path), { recursive: true });
          // Whole or not at all: a reload mid-write must not leave half a file.
          writeFileSync(`${path}.tmp`, JSON.stringify(draft));
          renameSync(`${path}.tmp`, path);
        } else {
          rmSync(path, { force: true });
        }
      } catch (error) {
        onError(error);
      }
    },
  };
}
