/**
 * The workspace's sessions as the client shows them (protocol version 4): the list the server
 * last sent, which one this window shows, whether a notification is about that one, and the
 * sessions control's HTML for the conversation view. Titles, statuses and counts are the
 * server's; nothing here decides them. Pure: no `vscode` import.
 */
import type { SessionInfo } from '../protocol';
import { escapeHtml, oneLine, truncate } from '../text';

/** The `sessionId` a notification or event carries (version 4), if any. */
export function sessionOf(message: unknown): unknown {
  return (message as { sessionId?: unknown } | null)?.sessionId;
}

const statuses: ReadonlySet<string> = new Set(['idle', 'running', 'waiting']);

/** The sessions of a `plansight/sessions` answer, each checked (a malformed one is left out). */
export function parseSessions(result: unknown): SessionInfo[] {
  const list = (result as { sessions?: unknown } | null)?.sessions;
  if (!Array.isArray(list)) {
    return [];
  }
  return list.filter((s): s is SessionInfo => {
    const info = s as Partial<SessionInfo> | null;
    return (
      typeof info?.id === 'string' &&
      info.id !== '' &&
      typeof info.title === 'string' &&
      typeof info.updatedAt === 'string' &&
      typeof info.status === 'string' &&
      statuses.has(info.status)
    );
  });
}

/** "just now", "5 min ago", "3 h ago", "yesterday", else the date: short enough for a row. */
export function timeAgo(iso: string, now: number): string {
  const at = Date.parse(iso);
  if (Number.isNaN(at)) {
    return '';
  }
  const minutes = Math.floor((now - at) / 60_000);
  if (minutes < 1) {
    return 'just now';
  }
  if (minutes < 60) {
    return `${minutes} min ago`;
  }
  const hours = Math.floor(minutes / 60);
  if (hours < 24) {
    return `${hours} h ago`;
  }
  if (hours < 48) {
    return 'yesterday';
  }
  return new Date(at).toISOString().slice(0, 10);
}

/** The title as shown: one line, and a session not named yet says so. */
export function sessionTitle(info: Pick<SessionInfo, 'title'>): string {
  const title = oneLine(info.title).trim();
  return title ? truncate(title, 80) : 'New session';
}

const statusIcons: Readonly<Record<SessionInfo['status'], { icon: string; words: string }>> = {
  idle: { icon: 'comment-discussion', words: '' },
  running: { icon: 'loading', words: 'running' },
  waiting: { icon: 'bell-dot', words: 'waiting for you' },
};

export class SessionsModel {
  sessions: SessionInfo[] = [];
  /** The session whose conversation, plan and scratchpad this window shows; undefined before
   *  the first list (or with a server older than version 4): then every notification is shown. */
  shown: string | undefined;

  /** Takes the server's list; with no session shown yet, the current one becomes shown. */
  update(sessions: SessionInfo[]): void {
    this.sessions = sessions;
    if (this.shown === undefined || !sessions.some((s) => s.id === this.shown)) {
      this.shown = sessions.find((s) => s.current)?.id ?? this.shown;
    }
  }

  /** Whether a notification or event with this `sessionId` belongs in the shown session. One
   *  without it is from a server that names no session (versions 1–3): it is the only one. */
  isShown(sessionId: unknown): boolean {
    return typeof sessionId !== 'string' || this.shown === undefined || sessionId === this.shown;
  }

  /**
   * A run started in a session the list does not have yet while this window awaits a run it
   * asked for: that is its run, in the new session it asked for (`newSession: true`, as the
   * demo does), so that session is shown from now on. True when it became shown.
   */
  adopt(sessionId: unknown, asking: boolean): boolean {
    if (!asking || typeof sessionId !== 'string' || this.isShown(sessionId) || this.find(sessionId)) {
      return false;
    }
    this.shown = sessionId;
    return true;
  }

  /** A session other than the shown one whose run goes on (one run per working tree). */
  runningElsewhere(): SessionInfo | undefined {
    return this.sessions.find((s) => s.id !== this.shown && s.status !== 'idle');
  }

  get current(): SessionInfo | undefined {
    return this.sessions.find((s) => s.id === this.shown);
  }

  find(id: string): SessionInfo | undefined {
    return this.sessions.find((s) => s.id === id);
  }
}

const icon = (id: string, extra = ''): string => `<i class="codicon codicon-${escapeHtml(id)}${extra}" aria-hidden="true"></i>`;

/**
 * The sessions control: a header row (the shown session's title, its status, New) that opens a
 * list of every session (title, time, status; Rename and Delete per row; the running one cannot
 * be deleted). Nothing is focused by it; the page's script turns clicks on `data-session`
 * buttons into messages. Empty (no control) before the server listed any session.
 */
export function renderSessions(model: SessionsModel, now: number, open = false): string {
  if (model.sessions.length === 0) {
    return '';
  }
  const shown = model.current;
  const label = shown ? sessionTitle(shown) : 'Sessions';
  const status = shown ? statusIcons[shown.status] : statusIcons.idle;
  const rows = model.sessions.map((s) => {
    const mark = statusIcons[s.status];
    const title = sessionTitle(s);
    const when = timeAgo(s.updatedAt, now);
    const counts = s.counts && s.counts.total > 0 ? `${s.counts.done}/${s.counts.total}` : '';
    const meta = [mark.words, when, counts].filter(Boolean).join(' · ');
    const id = escapeHtml(s.id);
    const attrs = `data-session-id="${id}"${s.id === model.shown ? ' aria-current="true"' : ''}`;
    return (
      `<li class="session ${escapeHtml(s.status)}${s.id === model.shown ? ' shown' : ''}" ${attrs}>` +
      `<button type="button" class="open" data-session="open" data-session-id="${id}" title="${escapeHtml(`Switch to “${title}”`)}">` +
      `${icon(mark.icon, s.status === 'running' ? ' codicon-modifier-spin' : '')}` +
      `<span class="title">${escapeHtml(title)}</span><span class="meta">${escapeHtml(meta)}</span></button>` +
      `<button type="button" class="icon" data-session="rename" data-session-id="${id}" title="Rename" aria-label="${escapeHtml(`Rename “${title}”`)}">${icon('edit')}</button>` +
      (s.status === 'running'
        ? `<button type="button" class="icon" disabled title="A running session cannot be deleted" aria-label="Delete (not while it runs)">${icon('trash')}</button>`
        : `<button type="button" class="icon" data-session="delete" data-session-id="${id}" title="Delete" aria-label="${escapeHtml(`Delete “${title}”`)}">${icon('trash')}</button>`) +
      `</li>`
    );
  });
  const others = model.sessions.filter((s) => s.id !== model.shown && s.status !== 'idle');
  const elsewhere = others.length
    ? `<span class="elsewhere" title="${escapeHtml(others.map((s) => `${sessionTitle(s)}: ${statusIcons[s.status].words}`).join('\n'))}">${icon('loading', ' codicon-modifier-spin')}</span>`
    : '';
  return (
    `<details class="sessions"${open ? ' open' : ''}>` +
    `<summary title="${escapeHtml(`Session: ${label}${status.words ? ` (${status.words})` : ''} — click for all sessions`)}">` +
    `${icon(status.icon, shown?.status === 'running' ? ' codicon-modifier-spin' : '')}<span class="title">${escapeHtml(label)}</span>` +
    `<span class="count">${model.sessions.length}</span>${elsewhere}${icon('chevron-down', ' chevron')}</summary>` +
    `<div class="list"><button type="button" class="secondary new" data-session="new">${icon('add')}New Session</button>` +
    `<ul>${rows.join('')}</ul></div></details>`
  );
}
