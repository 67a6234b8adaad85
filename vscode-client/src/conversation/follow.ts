/**
 * Whether the conversation follows the run, and where it scrolls after a change: the rules the
 * webview script applies (it only measures and scrolls). Pure: no `vscode` or DOM import.
 *
 * - Following is the user's choice, made by scrolling: it stops when they scroll up away from
 *   the bottom and resumes when they come back to it (or press "jump to latest"). A change of
 *   size (the composer growing with wrapped status text, a resize) is not a choice: while
 *   following, the view stays at the bottom whatever grew.
 * - Sending always brings the user's message into view, and following resumes.
 * - A card waiting for the user always comes into view: at the bottom while following, else
 *   scrolled to where it is.
 * - "Jump to latest" shows only when something new arrived below while the user reads further
 *   up: it floats over the bottom of the view, and shown whenever the view was not at the
 *   bottom it covered the line being read (a settled card's "Accepted with your changes" at
 *   300 px, issue 31).
 */

export interface ScrollFacts {
  scrollTop: number;
  scrollHeight: number;
  clientHeight: number;
}

/** How near the bottom counts as at the bottom (a line and a bit). */
export const bottomSlack = 24;

export function isAtBottom(at: ScrollFacts): boolean {
  return at.scrollHeight - at.scrollTop - at.clientHeight <= bottomSlack;
}

export type FollowEvent =
  /** The view scrolled (the user, or the browser): where it is now and its top before. */
  | { kind: 'scrolled'; at: ScrollFacts; fromTop: number }
  /** The whole conversation was drawn again (the view opened, the history came). */
  | { kind: 'reset' }
  /** Entries were placed: a new message of the user's, and the newest card now waiting. */
  | { kind: 'content'; userMessage: boolean; waitingCard?: string }
  /** Something changed size: the composer, the view, the text in it. */
  | { kind: 'resized' }
  /** The user pressed "jump to latest". */
  | { kind: 'jump' };

export type ScrollAction = { kind: 'none' } | { kind: 'bottom' } | { kind: 'reveal'; entry: string };

export interface FollowState {
  following: boolean;
  /** Content arrived below while the user was not following. */
  unseen: boolean;
}

export const initialFollow: FollowState = { following: true, unseen: false };
const following: FollowState = initialFollow;

export function follow(state: FollowState, event: FollowEvent): { state: FollowState; action: ScrollAction } {
  const none: ScrollAction = { kind: 'none' };
  const bottom: ScrollAction = { kind: 'bottom' };
  switch (event.kind) {
    case 'scrolled':
      if (event.at.clientHeight <= 0) {
        return { state, action: none }; // hidden: nothing the user chose
      }
      if (isAtBottom(event.at)) {
        return { state: following, action: none };
      }
      // Only a scroll up is the user leaving: content growing (or the browser keeping what is
      // on screen in place) moves the view down, never up.
      if (event.at.scrollTop < event.fromTop) {
        return { state: { following: false, unseen: state.following ? false : state.unseen }, action: none };
      }
      return { state, action: none };
    case 'reset':
    case 'jump':
      return { state: following, action: bottom };
    case 'resized':
      return { state, action: state.following ? bottom : none };
    case 'content':
      if (event.userMessage) {
        return { state: following, action: bottom };
      }
      if (state.following) {
        return { state, action: bottom };
      }
      if (event.waitingCard !== undefined) {
        return { state: { following: false, unseen: true }, action: { kind: 'reveal', entry: event.waitingCard } };
      }
      return { state: { following: false, unseen: true }, action: none };
  }
}

/** Whether "jump to latest" shows: the user scrolled away, and something new came below. */
export function showJump(state: FollowState, at: ScrollFacts): boolean {
  return !state.following && state.unseen && !isAtBottom(at);
}

/**
 * Where to scroll so that an element (its top and height, in the page) is in sight above the
 * composer (`covered` pixels at the bottom of the view): its bottom just above the composer, or
 * its top at the top when it is taller than the room there is.
 */
export function revealTop(at: ScrollFacts, element: { top: number; height: number }, covered: number): number {
  const room = at.clientHeight - covered;
  const margin = 8;
  const viewTop = at.scrollTop;
  const viewBottom = viewTop + room;
  if (element.top >= viewTop && element.top + element.height <= viewBottom) {
    return viewTop;
  }
  const bottom = Math.max(0, at.scrollHeight - at.clientHeight);
  const top = element.height + margin >= room ? Math.max(0, element.top - margin) : Math.max(0, element.top + element.height + margin - room);
  // Near the end anyway: the whole way, so that the view follows the run again.
  return bottom - top <= nearEnd ? bottom : Math.min(top, bottom);
}

/** How close to the end a revealed card may leave the view before it goes all the way. */
const nearEnd = 80;
