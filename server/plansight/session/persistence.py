"""Keeping a session across restarts: every change saved as it happens, loaded at start-up.

`SessionPersistence` listens to the session's events (after every other listener: the editor
hears of a change first) and saves what changed in the session's `SessionStore` (storage.py:
each part replaced atomically, the conversation appended, so a kill at any moment leaves the
old or the new state): the plan, the scratchpad, the conversation, and the usage total, which
it keeps (added up at the end of each run). It records each wire event in the run history.

`load_stored` claims the store for this process first (`claim`: one live server keeps a
workspace's session, and its folder must be writable; StorageUnavailable otherwise, lock.py),
then puts a stored session back (the plan, the scratchpad, the conversation made consistent,
the usage total) without announcing it as a change. A stored session that cannot be read as
one is logged as an error and the session starts fresh. `release` gives the claim up.

On a `read_only` store (the read-only view, lock.py) it loads the same way but claims nothing,
removes no leftovers and saves nothing: it does not even listen to the session's events.

`persistence_for` is what a session attaches: a `SessionPersistence` on its store, or, for a
session without one (tests, `plansight eval`), `Unsaved`, which keeps nothing.
"""

from __future__ import annotations

import logging
from typing import Any

from plansight.checkpoints.restore import RestoreRequest, RestoreResult
from plansight.engine.conversation import Conversation
from plansight.engine.events import (
    ConversationChanged,
    Event,
    EventBus,
    PlanChanged,
    RunFinished,
    ScratchpadChanged,
    Usage,
)
from plansight.plan.plan import Plan, TodoState
from plansight.plan.scratchpad import Scratchpad
from plansight.protocol.names import event_payload
from plansight.session.storage import SessionStore

log = logging.getLogger(__name__)


class SessionPersistence:
    def __init__(
        self,
        store: SessionStore,
        *,
        plan: Plan,
        scratchpad: Scratchpad,
        conversation: Conversation,
    ) -> None:
        self.store = store
        self.plan = plan
        self.scratchpad = scratchpad
        self.conversation = conversation
        self.usage = Usage()  # of every run and compaction of this session, so far

    @classmethod
    def attach(
        cls,
        store: SessionStore,
        events: EventBus,
        *,
        plan: Plan,
        scratchpad: Scratchpad,
        conversation: Conversation,
    ) -> SessionPersistence:
        """A persistence that saves what `events` say changed, from now on."""
        persistence = cls(store, plan=plan, scratchpad=scratchpad, conversation=conversation)
        if not store.read_only:
            events.subscribe(persistence, last=True)
        return persistence

    def __call__(self, event: Event) -> None:
        if (payload := event_payload(event)) is not None:
            self.store.history.record(payload)
        if isinstance(event, PlanChanged):
            self.store.save("plan", event.state.to_record())
        elif isinstance(event, ScratchpadChanged):
            self.store.save("scratchpad", {"content": event.content})
        elif isinstance(event, ConversationChanged):
            if event.rewritten:  # atomically: a kill leaves the old or the new one
                self.store.conversation.rewrite(self.conversation.messages)
            else:
                self.store.conversation.save(self.conversation.messages)
        elif isinstance(event, RunFinished):
            self.spent(event.result.usage)

    @property
    def read_only(self) -> bool:
        return self.store.read_only

    def spent(self, usage: Usage) -> None:
        """Usage to add to the total (a run's, a compaction's on request), saved at once."""
        self.usage.add(usage)
        self.store.save(
            "usage",
            {
                "input_tokens": self.usage.input_tokens,
                "output_tokens": self.usage.output_tokens,
                "cache_read_input_tokens": self.usage.cache_read_input_tokens,
                "cache_creation_input_tokens": self.usage.cache_creation_input_tokens,
            },
        )

    def load_stored(self) -> bool:
        """Load the stored session; True when there was one (False, logged, when it was
        malformed: the session then starts fresh). StorageUnavailable (nothing loaded) when
        another live server keeps this session, or its folder cannot be written."""
        store = self.store
        self.claim()
        store.remove_leftovers()  # none on a read-only store
        plan = store.load("plan")
        scratch = store.load("scratchpad")
        conversation = store.conversation.load()
        usage = store.load("usage")
        found = any(part is not None for part in (plan, scratch, conversation))
        try:
            if isinstance(plan, dict):
                items = TodoState.items_of_record(plan)
                self.plan.reinstate(
                    items, int(plan.get("version", 0)), TodoState.plan_id_of_record(plan)
                )
            if isinstance(scratch, dict):
                self.scratchpad.write(str(scratch.get("content", "")))
            if conversation:
                self.conversation.messages[:] = conversation
                self.conversation.repair("The previous run stopped before this tool finished.")
            if isinstance(usage, dict):
                self.usage = Usage(**{k: int(v) for k, v in usage.items()})
        except (KeyError, TypeError, ValueError) as err:
            log.error(
                "stored session in %s is malformed (%s); starting fresh", store.directory, err
            )
            self.plan.clear()
            self.scratchpad.clear()
            self.conversation.clear()
            return False
        return found

    def claim(self) -> None:
        """Claim the store for this process, if not yet (StorageUnavailable: it cannot); a
        read-only view claims nothing."""
        if not self.store.read_only:
            self.store.claim.take()

    def release(self) -> None:
        self.store.claim.release()

    def new_session(self) -> None:
        """Forget the stored session; the history stays (the next run starts a new session in
        it)."""
        self.store.clear()
        self.store.history.mark_new_session()

    def last_prompt(self) -> str:
        """The last run's prompt as the history kept it (after a restart)."""
        runs = self.store.history.runs(1)
        return str(runs[-1]["prompt"]) if runs else ""

    def restored(self, request: RestoreRequest, result: RestoreResult) -> None:
        """An undo or restore the user made (not a dry run): kept in the history after the last
        run, so that a client shows it again after a restart."""
        if request.dry_run:
            return
        record: dict[str, Any] = {"type": "restored", **result.to_wire()}
        if request.todo_id is not None:
            record["todoId"] = request.todo_id
        if request.checkpoint is not None:
            record["checkpoint"] = request.checkpoint
        if request.conversation:
            record["conversation"] = True
        self.store.history.record_after(record)

    def history(self, limit: int) -> list[dict[str, Any]]:
        """The last `limit` runs' events, newest last."""
        return self.store.history.runs(limit)

    def flush(self) -> None:
        self.store.history.flush()


class Unsaved:
    """A session without storage: nothing is saved, nothing was stored, no history."""

    read_only = False

    def load_stored(self) -> bool:
        return False

    def claim(self) -> None:
        return None

    def release(self) -> None:
        return None

    def spent(self, usage: Usage) -> None:
        return None

    def new_session(self) -> None:
        return None

    def last_prompt(self) -> str:
        return ""

    def restored(self, request: RestoreRequest, result: RestoreResult) -> None:
        return None

    def history(self, limit: int) -> list[dict[str, Any]]:
        return []

    def flush(self) -> None:
        return None


def persistence_for(
    store: SessionStore | None,
    events: EventBus,
    *,
    plan: Plan,
    scratchpad: Scratchpad,
    conversation: Conversation,
) -> SessionPersistence | Unsaved:
    """What saves the session's changes to `store` from now on (nothing without a store)."""
    if store is None:
        return Unsaved()
    return SessionPersistence.attach(
        store, events, plan=plan, scratchpad=scratchpad, conversation=conversation
    )
