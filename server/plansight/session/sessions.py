"""Many sessions in one workspace (protocol version 4): the one API every front door drives.

A workspace has one engine (`Session`, session.py: the workspace's tools, sandbox, watcher,
checkpoints, MCP servers and model client, which are expensive and shared) and any number of
stored sessions (registry.py), each with its own conversation, plan, scratchpad, usage and run
history. Runs share the working tree, so one runs at a time; the engine therefore holds one
session's state at a time (`loaded`), and switching puts another's in its place: the
conversation, plan, scratchpad and usage are read from that session's folder and the store
saves to it from then on. That costs a read of its files (bench/sessions.py), and nothing
expensive is built again.

`current` is the session a client sees and runs unless it names another (version 1–3 clients
never do). Opening a session makes it current; while another session's run goes on, it is only
read from its files (the engine is busy with the running one), and what needs the engine for
it (a run, a plan edit, a compaction, a restore) is refused with SessionBusy naming the
running session. `new` (and `plansight/reset`, `newSession: true`) starts another session and
keeps the old one listed.

Front doors: construct `Sessions(engine)` once, call `load_stored()` where they called the
engine's, then `list`, `new`, `open`, `rename`, `delete`, `get`, and `run`, `edit_plan`,
`compact`, `history`, `restore`, `state` with an optional `session_id` (None: current).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from plansight.checkpoints.restore import RestoreRequest, RestoreResult
from plansight.engine.compaction.compactor import CompactionResult
from plansight.engine.events import RunResult, Usage
from plansight.engine.planmode import RunMode, RunState
from plansight.plan.plan import TodoState
from plansight.session.history import RecentRuns, RunHistory
from plansight.session.lock import SessionBusy
from plansight.session.planfiles import PlanFiles
from plansight.session.registry import LEGACY, SessionMeta, SessionRegistry, UnknownSession
from plansight.session.session import Session, SessionState

__all__ = ["SessionInfo", "Sessions", "UnknownSession"]

Status = Literal["idle", "running", "waiting"]


@dataclass(frozen=True)
class SessionInfo:
    """One entry of `plansight/sessions`."""

    meta: SessionMeta
    status: Status
    counts: dict[str, int]
    current: bool

    @property
    def id(self) -> str:
        return self.meta.id

    @property
    def title(self) -> str:
        return self.meta.title

    def to_wire(self) -> dict[str, Any]:
        return {
            "id": self.meta.id,
            "title": self.meta.title,
            "createdAt": self.meta.created_at,
            "updatedAt": self.meta.updated_at,
            "status": self.status,
            "counts": self.counts,
            "current": self.current,
        }


class Sessions:
    def __init__(self, engine: Session, *, waiting: Callable[[], bool] | None = None) -> None:
        """`engine`: the workspace's, with a store; `waiting`: whether the run in progress
        waits for the user (a review, an approval, a question), for the `waiting` status."""
        if engine.store is None:
            raise ValueError("many sessions need a storage folder")
        self.engine = engine
        self.registry = SessionRegistry(engine.store)
        self.waiting = waiting or (lambda: False)
        self.loaded: str | None = None  # whose state the engine holds
        self.current: str | None = None
        # Told of each switch (the front door re-sends the plan, the scratchpad, the history).
        self.on_switch: list[Callable[[str], None]] = []
        # The loaded session's plan as a file in the workspace (version 4).
        self.plan_files = PlanFiles(self, engine.plans_folder)

    # Start-up -------------------------------------------------------------------------------

    def load_stored(self) -> bool:
        """Claim the store, move a version 3 session into the first session, and load the
        current one (a new session when there is none); True when it had anything stored.
        StorageUnavailable as the engine's `load_stored`."""
        self.engine.persistence.claim()
        self.registry.migrate()
        current = self.registry.current()
        if current is None:
            if self.registry.read_only:
                return self.engine.load_stored()  # nothing stored, nothing to create
            current = self.registry.create()
            self.registry.set_current(current)
        self.current = current
        return self._load(current, started=False)

    # The list -------------------------------------------------------------------------------

    def list(self) -> list[SessionInfo]:
        """Every stored session, the one used last first."""
        infos = [self.get(session_id) for session_id in self.registry.ids()]
        return sorted(infos, key=lambda i: (i.meta.updated_at, i.meta.created_at), reverse=True)

    def get(self, session_id: str) -> SessionInfo:
        """UnknownSession when there is none."""
        meta = self.registry.meta(session_id)
        return SessionInfo(
            meta,
            self.status(session_id),
            self._plan_state(session_id).counts,
            session_id == self.current,
        )

    def status(self, session_id: str) -> Status:
        if session_id != self.running:
            return "idle"
        return "waiting" if self.waiting() else "running"

    @property
    def running(self) -> str | None:
        """The session whose run is in progress, if any."""
        return self.loaded if self.engine.running else None

    def new(self, title: str | None = None) -> str:
        """A new, empty session, made current (and loaded, unless another one runs)."""
        self.engine.lock.refuse_if_read_only()
        session_id = self.registry.create(title)
        self._make_current(session_id)
        return session_id

    def open(self, session_id: str) -> SessionState:
        """Make `session_id` current; its state (read from its files while another runs)."""
        self.registry.folder_of(session_id)  # UnknownSession
        self._make_current(session_id)
        return self.state(session_id)

    def rename(self, session_id: str, title: str) -> SessionInfo:
        self.engine.lock.refuse_if_read_only()
        self.registry.rename(session_id, title)
        if session_id == self.loaded:
            self.plan_files.schedule()  # the title line (the file keeps its name)
        return self.get(session_id)

    def delete(self, session_id: str) -> None:
        """Forget a session and all it kept (its checkpoints stay: they are the workspace's).
        Not the running one (SessionBusy). Deleting the current one makes the one used last
        current (a new, empty one if none is left)."""
        self.engine.lock.refuse_if_read_only()
        self.registry.folder_of(session_id)  # UnknownSession
        if session_id == self.running:
            raise SessionBusy(
                f"Session {self._name(session_id)} is running; cancel its run before deleting it."
            )
        loaded = session_id == self.loaded
        if loaded:
            self.engine.persistence.flush()  # nothing of it is written once it is gone
        self.registry.delete(session_id)
        if session_id == self.current:
            self.current = self.registry.current() or self.registry.create()
            self.registry.set_current(self.current)
        if loaded:  # the engine holds a live session again, and saves go to it
            self.loaded = None
            current = self.current
            assert current is not None  # a writing server always has one
            self._load(current)

    # Per session -----------------------------------------------------------------------------

    async def run(
        self,
        prompt: str,
        *,
        session_id: str | None = None,
        new_session: bool = False,
        mode: RunMode = "act",
        todo_id: str | None = None,
    ) -> RunResult:
        """A run in `session_id` (None: the current one); `new_session`: in a new session
        instead, which becomes current (the old one stays listed). SessionBusy, naming the
        running session, while any run is in progress."""
        self._refuse_if_running(session_id or self.current)
        if new_session:
            # Refused as the engine would refuse it, before a session is made for nothing.
            RunState.start(mode, todo_id, TodoState((), 0, "user"))
            target = self._started_afresh()
        else:
            target = self._engine_for(session_id)
        self.registry.touch(target, prompt)
        try:
            return await self.engine.run(prompt, mode=mode, todo_id=todo_id)
        finally:
            self.registry.touch(target)

    def edit_plan(
        self, items: Any, version: int | None, session_id: str | None = None
    ) -> TodoState:
        self._engine_for(session_id)
        return self.engine.edit_plan(items, version)

    async def compact(self, session_id: str | None = None) -> CompactionResult:
        self._engine_for(session_id)
        return await self.engine.compact()

    async def restore(
        self, request: RestoreRequest, session_id: str | None = None
    ) -> RestoreResult:
        self._engine_for(session_id)
        return await self.engine.restore(request)

    def history(self, limit: int, session_id: str | None = None) -> RecentRuns:
        if session_id is None and self.current is None:
            return RecentRuns([])  # a read-only view of a workspace with no session yet
        target = self._known(session_id)
        if target == self.loaded:
            runs = self.engine.history(limit).runs
        else:  # read where it lies, writing nothing: it is not the loaded session's
            runs = RunHistory(self.registry.folder_of(target), read_only=True).runs(limit)
        # Its events as they were sent: each named its session.
        return RecentRuns(
            [{**run, "events": [{**e, "sessionId": target} for e in run["events"]]} for run in runs]
        )

    def state(self, session_id: str | None = None) -> SessionState:
        if session_id is None and self.current is None:
            return self.engine.state()  # a read-only view of a workspace with no session yet
        target = self._known(session_id)
        if target == self.loaded:
            return self.engine.state()
        return SessionState(self._plan_state(target), self.registry.scratchpad(target), False)

    def reset(self) -> str:
        """`plansight/reset`: a new session (the old one kept, listed). Not during a run."""
        self.engine.lock.refuse_if_held("resetting")
        return self._started_afresh()

    def _started_afresh(self) -> str:
        """A new session as version 1–3 asked for one (`newSession`, `reset`): its history
        marks its first run `newSession`, as theirs did."""
        session_id = self.new()
        if session_id == self.loaded:
            self.engine.persistence.new_session()
        return session_id

    # Inside ---------------------------------------------------------------------------------

    def _known(self, session_id: str | None) -> str:
        target = session_id or self.current
        if target is None:
            raise UnknownSession("This workspace has no session yet.")
        self.registry.folder_of(target)  # UnknownSession
        return target

    def _name(self, session_id: str) -> str:
        try:
            title = self.registry.meta(session_id).title
        except UnknownSession:
            title = ""
        return f'"{title}" ({session_id})' if title else session_id

    def _refuse_if_running(self, wanted: str | None) -> None:
        running = self.running
        if running is not None:
            ask = "" if wanted in (None, running) else f" (asked for session {self._name(wanted)})"
            raise SessionBusy(
                f"A Plansight run is already in progress in session {self._name(running)}{ask}; "
                "wait for it to end or cancel it first: one run at a time in a working tree."
            )

    def _engine_for(self, session_id: str | None) -> str:
        """The engine holding session `session_id`'s state (switched to it when idle)."""
        target = self._known(session_id)
        if target != self.loaded:
            self.engine.lock.refuse_if_read_only()
            self._refuse_if_running(target)
            self._load(target)
        return target

    def _make_current(self, session_id: str) -> None:
        self.current = session_id
        self.registry.set_current(session_id)
        if self.running is None and session_id != self.loaded:
            self._load(session_id)

    def _load(self, session_id: str, *, started: bool = True) -> bool:
        """Put session `session_id`'s stored state in the engine; the store saves to it from
        now on. Not announced as changes (the front door tells its client what it opened)."""
        engine = self.engine
        assert engine.store is not None
        engine.persistence.flush()
        engine.store.use(None if session_id == LEGACY else session_id)
        engine.conversation.clear()
        engine.notices.clear()
        engine.compactor.meter.reset()
        engine.plan.clear()
        engine.scratchpad.clear()
        persistence = engine.persistence
        if hasattr(persistence, "usage"):
            persistence.usage = Usage()
        found = engine.load_stored()
        engine.checkpoints.session_id = session_id
        engine.approvals.session_id = session_id  # its own "always" answers apply
        if started:  # the checkpoints' item ids are this session's plan's from now on
            engine.checkpoints.session_switched()
        self.loaded = session_id
        for listener in list(self.on_switch):
            listener(session_id)
        return found

    def _plan_state(self, session_id: str) -> TodoState:
        if session_id == self.loaded:
            return self.engine.plan.state
        record = self.registry.plan_record(session_id)
        if not isinstance(record, dict):
            return TodoState((), 0, "restore")
        try:
            return TodoState(
                tuple(TodoState.items_of_record(record)),
                int(record.get("version", 0)),
                "restore",
                TodoState.plan_id_of_record(record),
            )
        except (KeyError, TypeError, ValueError):
            return TodoState((), 0, "restore")
