import { describe, expect, it } from 'vitest';
import { follow, type FollowEvent, type FollowState, initialFollow, isAtBottom, revealTop, showJump } from '../src/conversation/follow';

/** A view 400 px high over `height` px of content, scrolled to `top`. */
const at = (top: number, height = 2000) => ({ scrollTop: top, scrollHeight: height, clientHeight: 400 });

function play(events: FollowEvent[], state: FollowState = initialFollow) {
  const actions = [];
  for (const event of events) {
    const next = follow(state, event);
    state = next.state;
    actions.push(next.action);
  }
  return { state, actions };
}

describe('following the run', () => {
  it('stays at the newest when the composer grows (wrapped status text) or the view is resized', () => {
    // At the bottom; the status text wraps, the page grows by 61 px without any scroll.
    const { state, actions } = play([{ kind: 'scrolled', at: at(1600), fromTop: 1500 }, { kind: 'resized' }, { kind: 'content', userMessage: false }]);
    expect(state.following).toBe(true);
    expect(actions.slice(1)).toEqual([{ kind: 'bottom' }, { kind: 'bottom' }]);
  });

  it('does not take the browser moving the view down (content growing) for the user leaving', () => {
    const { state } = play([{ kind: 'scrolled', at: at(1650, 2300), fromTop: 1600 }]);
    expect(state.following).toBe(true);
  });

  it('stops following when the user scrolls up a little, and shows Jump to latest', () => {
    const { state, actions } = play([{ kind: 'scrolled', at: at(1500), fromTop: 1600 }, { kind: 'content', userMessage: false }, { kind: 'resized' }]);
    expect(state.following).toBe(false);
    expect(actions).toEqual([{ kind: 'none' }, { kind: 'none' }, { kind: 'none' }]);
    expect(showJump(state, at(1500, 2600))).toBe(true);
  });

  it('shows Jump to latest only once something new came below: scrolling up to read covers nothing (issue 31)', () => {
    const away = play([{ kind: 'scrolled', at: at(1000), fromTop: 1600 }]).state;
    expect(showJump(away, at(1000))).toBe(false);
    const more = follow(away, { kind: 'content', userMessage: false }).state;
    expect(showJump(more, at(1000, 2300))).toBe(true);
    // Reading further up keeps it; back at the bottom it goes, and the next time away it waits again.
    const further = follow(more, { kind: 'scrolled', at: at(500, 2300), fromTop: 1000 }).state;
    expect(showJump(further, at(500, 2300))).toBe(true);
    const back = follow(further, { kind: 'scrolled', at: at(1900, 2300), fromTop: 500 }).state;
    const again = follow(back, { kind: 'scrolled', at: at(800, 2300), fromTop: 1900 }).state;
    expect(showJump(again, at(800, 2300))).toBe(false);
  });

  it('follows again once the user is back at the bottom, and Jump to latest goes', () => {
    const away = play([{ kind: 'scrolled', at: at(1000), fromTop: 1600 }]).state;
    const back = follow(away, { kind: 'scrolled', at: at(1590), fromTop: 1000 }).state;
    expect(back.following).toBe(true);
    expect(showJump(back, at(1590))).toBe(false);
    expect(follow(back, { kind: 'content', userMessage: false }).action).toEqual({ kind: 'bottom' });
  });

  it('brings the user\'s own message into view when they send, even scrolled away', () => {
    const away = play([{ kind: 'scrolled', at: at(200), fromTop: 1600 }]).state;
    const sent = follow(away, { kind: 'content', userMessage: true });
    expect(sent).toEqual({ state: { following: true, unseen: false }, action: { kind: 'bottom' } });
  });

  it('brings a card waiting for the user into view while the user reads further up', () => {
    const away = play([{ kind: 'scrolled', at: at(200), fromTop: 1600 }]).state;
    expect(follow(away, { kind: 'content', userMessage: false, waitingCard: 'card7' }).action).toEqual({ kind: 'reveal', entry: 'card7' });
    // While following, it is at the bottom anyway.
    expect(follow(initialFollow, { kind: 'content', userMessage: false, waitingCard: 'card7' }).action).toEqual({ kind: 'bottom' });
  });

  it('opens the history at the newest run, and Jump to latest follows again', () => {
    const away = play([{ kind: 'scrolled', at: at(0), fromTop: 1600 }]).state;
    expect(follow(away, { kind: 'reset' })).toEqual({ state: { following: true, unseen: false }, action: { kind: 'bottom' } });
    expect(follow(away, { kind: 'jump' })).toEqual({ state: { following: true, unseen: false }, action: { kind: 'bottom' } });
  });

  it('ignores scrolls while the view is hidden', () => {
    expect(follow(initialFollow, { kind: 'scrolled', at: { scrollTop: 0, scrollHeight: 0, clientHeight: 0 }, fromTop: 500 }).state.following).toBe(true);
  });

  it('counts a line from the bottom as the bottom', () => {
    expect(isAtBottom(at(1580))).toBe(true);
    expect(isAtBottom(at(1560))).toBe(false);
  });

  it('reveals a card above the composer: its bottom in sight, or its top when it is taller than the room', () => {
    // The composer covers 150 px of the 400 px view; a 100 px card at 1000 px, the view at 0.
    expect(revealTop(at(0), { top: 1000, height: 100 }, 150)).toBe(1000 + 100 + 8 - 250);
    expect(revealTop(at(0), { top: 1000, height: 600 }, 150)).toBe(992);
    expect(revealTop(at(950), { top: 1000, height: 100 }, 150)).toBe(950); // already in sight
    // A card at the end: the whole way down, so that following resumes.
    expect(revealTop(at(0), { top: 1700, height: 100 }, 150)).toBe(1600);
  });
});
