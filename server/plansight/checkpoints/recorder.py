"""When a session takes its checkpoints: in the background, in order, each with its plan item.

The session owns one `Checkpointer`. It takes a checkpoint when a run starts, when a plan
item becomes in progress, after every written edit (looking at that file alone) and after
every command that changed files (scanning the workspace), and, just before a command, one of
whatever someone else changed since the last scan, so that the command's checkpoint holds the
command's changes alone: with a watcher reporting others' changes (`watched`), only when it
reported some (a change made within the watcher's latency before the command then counts as
the command's); without one, a scan before every command.

Snapshots run in a worker thread, one after the other, so that the model's next request does
not wait for them. A tool about to change files waits for those still to read what it changes
(an edit: the snapshots of that file and any scan; a command, a restore: all), so that each
checkpoint holds exactly the state it names.

Each checkpoint also keeps what a rewind needs: the plan, and the conversation as of the last
complete round (a round's tool calls without their results are left out: a rewound
conversation must be one the API accepts), in the conversation archive.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from plansight.checkpoints.archive import ConversationArchive, Message
from plansight.checkpoints.manifest import Checkpoint, Kind
from plansight.checkpoints.restore import RestoreRequest, RestoreResult
from plansight.checkpoints.store import (
    CheckpointError,
    CheckpointStore,
    CheckpointsUnavailable,
    StepFile,
)
from plansight.workspace.secrets import ProtectedPaths

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SessionView:
    """How the checkpointer sees the session it serves (read on the event loop)."""

    in_progress: Callable[[], str | None]  # the plan item in progress, if any
    plan: Callable[[], dict[str, Any]]  # {"items": [wire items], "version": n}
    messages: Callable[[], Sequence[Message]]  # complete rounds only
    unsaved: Callable[[str], bool]  # whether the editor holds unsaved changes of a path
    # Which of the workspace's sessions is taking it (None: not said, as before version 4).
    session_id: Callable[[], str | None] = lambda: None


@dataclass(frozen=True)
class Restored:
    result: RestoreResult
    # What the session goes back to besides the files (None: it stays as it is): the plan
    # ({"items", "version"} as SessionView.plan gives it) and the conversation.
    plan: dict[str, Any] | None
    messages: list[Message] | None


def with_pending(plan: dict[str, Any], todo_id: str) -> dict[str, Any]:
    """The plan with item `todo_id` back to pending (undoing a step does that)."""
    items = [
        {**item, "status": "pending"} if str(item.get("id")) == todo_id else item
        for item in plan.get("items", [])
    ]
    return {**plan, "items": items}


class Checkpointer:
    def __init__(
        self,
        directory: Path,
        root: Path,
        view: SessionView,
        announce: Callable[[Checkpoint], None],
        protected: ProtectedPaths | None = None,
        skipped: Sequence[str] = (),
    ) -> None:
        self.store = CheckpointStore(directory, root, protected=protected, skipped=skipped)
        self.archive = ConversationArchive(directory / "conversations.jsonl")
        self.view = view
        self.announce = announce
        self.off_reason: str | None = "checkpoints are not open yet"
        self._state = "closed"  # → "opening" → "on", or "off" (off_reason says why)
        self._tail: asyncio.Task[Checkpoint | None] | None = None
        self._opened: asyncio.Task[Checkpoint | None] | None = None
        # Snapshots asked for and not taken yet, with the paths each reads (None: all).
        self._pending: dict[asyncio.Task[Checkpoint | None], frozenset[str] | None] = {}
        self._watched = False
        self._outside_dirty = True
        self._scan_asked_at = 0.0  # time.time() when the latest scan was asked for
        self._in_progress: str | None = None

    @property
    def on(self) -> bool:
        return self._state == "on"

    async def ready(self) -> bool:
        """Whether checkpoints work, once the store has opened (if it is opening)."""
        if self._opened is not None:
            await asyncio.shield(self._opened)
        return self.on

    async def open_read_only(self) -> None:
        """Open the store to read it only (CheckpointStore.open_read_only): no snapshot."""
        self._state = "opening"
        task = self._opened = self._queue(self.store.open_read_only, opening=True)
        await asyncio.shield(task)

    async def open(self, *, baseline: bool = False) -> None:
        """Open the store; snapshots asked for meanwhile wait for it. `baseline`: then take a
        checkpoint of the workspace as found, if it changed since the last one (the first
        one of a large workspace takes a second or two: run this in the background)."""

        def work() -> Checkpoint | None:
            self.store.open()
            self.archive.load_index()
            return None

        self._in_progress = self.view.in_progress()
        self._state = "opening"
        task = self._opened = self._queue(work, opening=True)
        if baseline:
            self._snapshot("outside", "Workspace as found at start-up", None, only_if_changed=True)
        await asyncio.shield(task)

    async def close(self) -> None:
        await self.settled()
        self.store.close()
        self._state = "off"
        self.off_reason = "checkpoints are closed"

    # ----- when checkpoints are taken --------------------------------------------------------

    def run_started(self) -> None:
        self._snapshot("runStart", "Run started", self.view.in_progress())

    def plan_changed(self, in_progress: str | None) -> None:
        """After every plan change: a checkpoint when an item becomes in progress."""
        if in_progress is not None and in_progress != self._in_progress:
            self._snapshot("itemStart", f"#{in_progress} started", in_progress)
        self._in_progress = in_progress

    def follow_plan(self, in_progress: str | None) -> None:
        """The plan was set by a restore: no item started, but this one is in progress now."""
        self._in_progress = in_progress

    async def before_edit(self, path: str) -> None:
        """Wait for the snapshots still to read `path` (a scan reads every path)."""
        waiting = [t for t, reads in self._pending.items() if reads is None or path in reads]
        if waiting:
            await asyncio.shield(asyncio.wait(waiting))

    def edited(self, path: str) -> None:
        # The agent knows what it wrote: look at that file alone (milliseconds, where a scan of
        # a large workspace takes tens); others' changes show in the next scan, as theirs.
        self._snapshot(
            "edit",
            f"Edited {path}",
            self.view.in_progress(),
            agent=[path],
            only_if_changed=True,
            only=[path],
        )

    def watched(self) -> None:
        """A watcher reports others' changes from now on (`outside_changed`): a command need
        not wait for a scan of the workspace unless one was reported."""
        self._watched = True

    def outside_changed(self, paths: Sequence[str]) -> None:
        """The watcher saw these files change (not by the agent's edits or restores). What
        changed before the latest scan was asked for, that scan finds (a command's own
        changes, reported after its checkpoint was asked for, among them)."""
        for path in paths:
            try:
                changed_at = os.lstat(self.store.root / path).st_mtime
            except OSError:
                changed_at = time.time()  # deleted: when, we cannot tell
            if changed_at >= self._scan_asked_at:
                self._outside_dirty = True
                return

    async def before_command(self) -> None:
        if not self._watched or self._outside_dirty:
            self._snapshot(
                "outside",
                "Changed outside Plansight",
                self.view.in_progress(),
                only_if_changed=True,
            )
        await self.settled()

    def made_and_removed(self, paths: list[str]) -> None:
        return None  # gone again before the command's checkpoint: nothing to record

    def command_ran(self, command: str) -> None:
        shown = command if len(command) <= 60 else command[:57] + "..."
        self._snapshot(
            "command", f"Ran {shown}", self.view.in_progress(), agent_all=True, only_if_changed=True
        )

    def new_session(self) -> None:
        """newSession / reset: checkpoints stay; item ids from now on are a new plan's."""
        self._in_progress = None
        if self.on:
            self._queue(lambda: (self.store.new_session(), None)[1])

    def resume_session(self, session_id: str, plan_id: str, in_progress: str | None) -> None:
        """Another of the workspace's sessions is loaded: its plan's item numbering again
        (CheckpointStore.resume_session); `in_progress`: its plan's item in progress, which
        did not start now."""
        self._in_progress = in_progress
        if self.on:
            self._queue(lambda: (self.store.resume_session(session_id, plan_id), None)[1])

    def maintain(self) -> None:
        """Prune and pack, once a run has ended (never while one waits for it)."""
        if self.on:
            self._queue(self._maintain)

    def _maintain(self) -> None:
        if self.store.maintain():
            self.archive.prune(
                str(c.extra["conversation"])
                for c in self.store.checkpoints()
                if "conversation" in c.extra
            )

    async def settled(self) -> None:
        """Wait until every checkpoint asked for so far is taken."""
        if self._tail is not None:
            await asyncio.shield(self._tail)

    def _snapshot(
        self,
        kind: Kind,
        label: str,
        todo_id: str | None,
        *,
        agent: Sequence[str] = (),
        agent_all: bool = False,
        only_if_changed: bool = False,
        only: Sequence[str] | None = None,
    ) -> None:
        if self._state not in ("opening", "on"):
            return
        if only is None:
            self._outside_dirty = False  # a scan finds all that changed before it
            self._scan_asked_at = time.time()
        captured = self.archive.capture(self.view.messages())
        extra = {"plan": self.view.plan(), "conversation": captured.digest}
        if (session_id := self.view.session_id()) is not None:
            extra["sessionId"] = session_id

        def work() -> Checkpoint | None:
            if not self.on:
                return None
            self.archive.write(captured)
            return self.store.snapshot(
                kind,
                label,
                todo_id=todo_id,
                agent=agent,
                agent_all=agent_all,
                only_if_changed=only_if_changed,
                extra=extra,
                only=only,
            )

        self._queue(work, reads=None if only is None else frozenset(only))

    def _queue(
        self,
        work: Callable[[], Checkpoint | None],
        *,
        opening: bool = False,
        reads: frozenset[str] | None = None,
    ) -> asyncio.Task[Checkpoint | None]:
        previous = self._tail

        async def job() -> Checkpoint | None:
            if previous is not None:
                await asyncio.wait([previous])
            try:
                checkpoint = await asyncio.to_thread(work)
            except CheckpointsUnavailable as err:
                self._state, self.off_reason = "off", str(err)
                log.warning("%s", err)
                return None
            except Exception:
                # A snapshot that fails must not stop the run; it is a bug or a broken disk.
                log.exception("a checkpoint could not be taken")
                return None
            if opening:
                self._state, self.off_reason = "on", None
            if checkpoint is not None:
                self.announce(checkpoint)
            return checkpoint

        task = asyncio.ensure_future(job())
        self._tail = task
        self._pending[task] = reads
        task.add_done_callback(lambda done: self._pending.pop(done, None))
        return task

    async def current_tree(self, label: str) -> str | None:
        """The workspace as it is now, as a tree of the checkpoint repository (a checkpoint is
        taken first if anything changed since the last one): what a parallel worker's copy is
        made of. None when checkpoints are off."""
        if not await self.ready():
            return None
        self._snapshot("outside", label, self.view.in_progress(), only_if_changed=True)
        await self.settled()
        latest = self.store.latest()
        return latest.tree if latest is not None else None

    # ----- reading and restoring -------------------------------------------------------------

    async def checkpoints(self) -> list[Checkpoint]:
        await self.settled()
        return self.store.checkpoints()

    async def restore(self, request: RestoreRequest) -> Restored:
        """Restore files (CheckpointError on a bad request); with `request.conversation`, also
        say what the plan and conversation go back to (the caller applies it). `dry_run`:
        change nothing, say what would be restored (a conversation not held is refused all the
        same)."""
        checkpoint, todo_id, dry_run = request.checkpoint, request.todo_id, request.dry_run
        await self.settled()
        latest = self.store.latest()
        loop = asyncio.get_running_loop()
        in_progress = self.view.in_progress()
        now = self.archive.capture(self.view.messages())
        now_plan = self.view.plan()
        now_extra: dict[str, Any] = {"plan": now_plan, "conversation": now.digest}

        def unsaved(path: str) -> bool:
            # Asked from the worker thread; the editor's documents live on the event loop.
            async def ask() -> bool:
                return self.view.unsaved(path)

            return asyncio.run_coroutine_threadsafe(ask(), loop).result()

        def work() -> Restored:
            plan: dict[str, Any] | None = None
            messages: list[Message] | None = None
            if request.conversation:
                target = self.store.restore_target(checkpoint=checkpoint, todo_id=todo_id)
                plan, messages = self._rewind_of(target)
            if todo_id is not None:
                plan = with_pending(plan or now_plan, todo_id)
            after_extra: dict[str, Any] | None = None
            if not dry_run:
                after_extra = dict(now_extra)
                if plan is not None:
                    after_extra["plan"] = plan
                if messages is not None:
                    rewound = self.archive.capture(messages)
                    self.archive.write(rewound)
                    after_extra["conversation"] = rewound.digest
            self.archive.write(now)
            result = self.store.restore(
                request,
                unsaved=unsaved,
                current_todo=in_progress,
                before_extra=now_extra,
                after_extra=after_extra,
            )
            if dry_run:
                return Restored(result, None, None)
            return Restored(result, plan, messages)

        restored = await asyncio.to_thread(work)
        for taken in (restored.result.before, restored.result.after):
            if taken is not None and (latest is None or taken.seq > latest.seq):
                self.announce(taken)
        return restored

    async def steps(self) -> dict[str, list[StepFile]]:
        """The files each plan item of this session changed (CheckpointStore.steps)."""
        await self.settled()
        return await asyncio.to_thread(self.store.steps)

    async def file_at(self, checkpoint: str, path: str) -> bytes | None:
        """A file as a checkpoint holds it (CheckpointNotFound for an unknown id)."""
        return await asyncio.to_thread(self.store.file_at, checkpoint, path)

    def _rewind_of(self, target: Checkpoint | None) -> tuple[dict[str, Any], list[Message]]:
        if target is None:
            raise CheckpointError("there is no checkpoint to take the conversation back to")
        plan = target.extra.get("plan")
        digest = target.extra.get("conversation")
        messages = self.archive.load(str(digest)) if digest is not None else None
        if messages is None or not isinstance(plan, dict):
            raise CheckpointError(
                f"checkpoint {target.id} does not hold the conversation (pruned, or taken "
                "without it); restore without the conversation"
            )
        return plan, messages
