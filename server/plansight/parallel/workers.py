"""Plan items run in parallel (protocol version 4): one worker per item, each a session of its
own on a copy of the workspace, confined by the sandbox to that copy; its change set stored,
then taken in file by file through the usual edit review, merged three ways onto the workspace
as it is then.

`Workers` is what a front door drives: `run_parallel`, `listed`, `cancel`, `take_in`, `drop`,
`close`, and `run_then_take_in` (the whole of a `/parallel`: start, wait for every worker, then
put each change set to the user); it tells of each worker through `on_event` (`WorkerStarted`,
`WorkerProgress`, `WorkerFinished`, sent by the front door as `plansight/event`s).

A worker is its parent session's: two sessions of one workspace may each have an item "1",
and each one's workers, change sets and copies are apart (records.py `worker_key`). An item id
alone names the worker of the session that asks (the current one unless another is named).

Why it is safe to let a worker edit and run commands unasked: it works in a folder under
Plansight's storage (copies.py), its commands run in the sandbox with only that folder writable
(the real workspace read-only, the rest of the storage hidden), and nothing of what it did
reaches the workspace but through the user's review. Without a sandbox nothing confines its
commands, so `run_parallel` is refused, saying why.

Why the change set is stored before `workerFinished` is sent: a client (or the server) may die
at any moment after it; the record and the refs in the checkpoint repository (records.py,
copies.py) are what `plansight/workers` lists after a restart.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import logging
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from plansight.checkpoints.files import RestoreRefused
from plansight.checkpoints.files import delete as delete_file
from plansight.checkpoints.files import write as write_file
from plansight.checkpoints.git import GitError, GitUnavailable, find_git
from plansight.checkpoints.store import CheckpointStore, checkpoints_folder
from plansight.engine import hooks
from plansight.engine.events import Event, RunResult, ToolCall
from plansight.engine.hooks import EditDecision, EditProposal
from plansight.parallel.copies import FileChange, WorkerCopy
from plansight.parallel.records import WorkerRecord, WorkerRecords, WorkerStatus, worker_key
from plansight.parallel.scratchpad import SharedScratchpad
from plansight.plan.plan import PlanError, TodoItem
from plansight.session.session import Session
from plansight.session.sessions import Sessions
from plansight.session.toolbox import FrontDoor
from plansight.workspace.control import is_git_internal
from plansight.workspace.sandbox import SandboxOptions

log = logging.getLogger(__name__)

DEFAULT_MAX = 3
WORKER_PROMPT = (
    "You are one of several workers doing the items of this plan at the same time, each in a "
    "copy of the workspace of its own. Your item is #{id}: {text}\n"
    "Do that item only; the other items are your siblings' or the user's. The scratchpad is "
    "shared with your siblings (each line begins with its item's id): read it first, and write "
    "there what they should know (an interface you changed, a decision). Your edits and "
    "commands are not asked: they change your copy only, and the user reviews every file "
    "before it reaches the workspace. When you are done, mark #{id} completed with the todo "
    "tool and end with a short summary of what you changed and why."
)


class ParallelRefused(Exception):
    """runParallel cannot run here (no sandbox, no checkpoints); the message says why."""


class UnknownWorker(Exception):
    """No running worker or stored change set for that item."""


# `session_id` is the worker's own session; `parent_session_id` (an addition of ours,
# `parentSessionId` on the wire) the session whose item it works on.


@dataclass(frozen=True)
class WorkerStarted:
    todo_id: str
    session_id: str
    parent_session_id: str | None = None
    type: str = "workerStarted"


@dataclass(frozen=True)
class WorkerProgress:
    """The worker's current tool (None between tools) and how many rounds it made."""

    todo_id: str
    session_id: str
    tool: str | None
    summary: str | None
    rounds: int
    parent_session_id: str | None = None
    type: str = "workerProgress"


@dataclass(frozen=True)
class WorkerFinished:
    todo_id: str
    session_id: str
    status: WorkerStatus
    files: tuple[dict[str, Any], ...]
    summary: str
    parent_session_id: str | None = None
    type: str = "workerFinished"


WorkerEvent = WorkerStarted | WorkerProgress | WorkerFinished


@dataclass(frozen=True)
class ParallelRun:
    """What `run_then_take_in` did: `runParallel`'s answer, how each worker it waited for
    ended (by item id, in the order asked), and each change set's take-in."""

    answer: dict[str, Any]
    finished: dict[str, WorkerFinished]
    taken_in: dict[str, dict[str, Any]]

    def to_wire(self) -> dict[str, Any]:
        """`runParallel`'s answer with `takeIn`: the additions `finished` (each worker waited
        for: `{ todoId, status, files, summary }`) and `takenIn` (each change set put to the
        user: `{ todoId, applied, rejected, conflicts, skipped }`), in the order asked."""
        return {
            **self.answer,
            "finished": [
                {"todoId": i, "status": f.status, "files": list(f.files), "summary": f.summary}
                for i, f in self.finished.items()
            ],
            "takenIn": [{"todoId": i, **taken} for i, taken in self.taken_in.items()],
        }


@dataclass(eq=False)  # each job is itself (two sessions' jobs may share an item id)
class _Job:
    todo_id: str
    parent: str | None
    item: TodoItem
    base: str
    # How it ended (set once, whether it ran or left the queue): what `run_then_take_in` waits on.
    ended: asyncio.Future[WorkerFinished]
    task: asyncio.Task[None] | None = None
    session: Session | None = None
    rounds: int = 0

    @property
    def key(self) -> str:
        return worker_key(self.parent, self.todo_id)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


class Workers:
    def __init__(
        self,
        sessions: Sessions,
        *,
        max_workers: int = DEFAULT_MAX,
        front_door: FrontDoor | None = None,
    ) -> None:
        """`sessions`: the workspace's (its engine's store keeps the change sets);
        `front_door`: the hooks a worker asks the user through (MCP tool approval, questions;
        its edits and commands are not asked)."""
        engine = sessions.engine
        assert engine.store is not None  # Sessions needs one
        self.sessions = sessions
        self.engine = engine
        self.max_workers = max(1, max_workers)
        self.front_door: FrontDoor = front_door or {}
        self.records = WorkerRecords(engine.store.directory / "workers")
        self.on_event: list[Callable[[WorkerEvent], None]] = []
        self._jobs: dict[tuple[str | None, str], _Job] = {}  # running, by (parent, item)
        self._queue: list[_Job] = []  # waiting for a free place or their dependencies
        self._scratchpads: dict[str | None, SharedScratchpad] = {}
        self._taking_in = asyncio.Lock()
        self._recovered = False

    # The list --------------------------------------------------------------------------------

    def listed(self) -> list[dict[str, Any]]:
        """`plansight/workers`: running workers and stored change sets, oldest first."""
        self._recover()
        return [record.to_wire() for record in self.records.all()]

    # Starting -------------------------------------------------------------------------------

    async def run_parallel(self, todo_ids: list[str], session_id: str | None) -> dict[str, Any]:
        """Start a worker for each item whose dependencies are done (at most `max_workers` at
        once; the others wait for a place or for their dependencies). ParallelRefused without a
        sandbox or checkpoints; PlanError for an item the plan does not have."""
        answer, _ = await self._start(todo_ids, session_id or self.sessions.current)
        return answer

    async def _start(
        self, todo_ids: list[str], parent: str | None
    ) -> tuple[dict[str, Any], list[_Job]]:
        """`run_parallel`: its answer, and the jobs it queued (started or waiting)."""
        self._recover()
        self.engine.lock.refuse_if_read_only()
        await self._refuse_unless_possible()
        plan = self.sessions.state(parent).todos
        items = {item.id: item for item in plan.items}
        unknown = [i for i in todo_ids if i not in items]
        if unknown or not todo_ids:
            ids = ", ".join(f"#{i}" for i in items) or "none"
            raise PlanError(
                f"The plan has no item {', '.join('#' + i for i in unknown)} (its items: {ids})."
                if unknown
                else "runParallel needs at least one item id."
            )
        checkpointer = self.engine.checkpoints.checkpointer
        assert checkpointer is not None  # _refuse_unless_possible
        base = await checkpointer.current_tree("Before running items in parallel")
        if base is None:
            raise ParallelRefused(checkpointer.off_reason or "checkpoints are off")
        skipped: list[dict[str, str]] = []
        queued: list[_Job] = []
        loop = asyncio.get_running_loop()
        for todo_id in dict.fromkeys(todo_ids):
            reason = self._not_startable(parent, items[todo_id])
            if reason is not None:
                skipped.append({"todoId": todo_id, "reason": reason})
                continue
            job = _Job(todo_id, parent, items[todo_id], base, loop.create_future())
            self._queue.append(job)
            queued.append(job)
        self._scratchpads.setdefault(
            parent, SharedScratchpad(self.sessions.state(parent).scratchpad)
        )
        started = self._schedule()
        answer = {
            "started": [job.todo_id for job in queued if job in started],
            "waiting": [
                {"todoId": job.todo_id, "after": list(job.item.after)}
                for job in queued
                if job in self._queue
            ],
            "skipped": skipped,
        }
        return answer, queued

    async def run_then_take_in(
        self,
        todo_ids: list[str],
        session_id: str | None,
        *,
        on_answer: Callable[[dict[str, Any]], None] | None = None,
        on_taken_in: Callable[[str, dict[str, Any]], None] | None = None,
    ) -> ParallelRun:
        """The whole of a `/parallel`: start the items' workers (`run_parallel`; its answer
        told to `on_answer`), wait for every one of them to end, then put each change set to
        the user in the order asked (`take_in`, the usual reviews; each told to
        `on_taken_in`). Cancelled while they run, the ones still running or waiting are
        cancelled too, and it ends once they have stopped (what they did is stored:
        `listed`); cancelled during a take-in, the rest stays stored for a later one."""
        parent = session_id or self.sessions.current
        answer, jobs = await self._start(todo_ids, parent)
        if on_answer is not None:
            on_answer(answer)
        pending = {job.ended for job in jobs if not job.ended.done()}
        try:
            if pending:
                await asyncio.wait(pending)  # not the futures themselves: a cancel leaves them
        except asyncio.CancelledError:
            stopping = {job.ended for job in jobs if not job.ended.done()}
            for job in jobs:
                if not job.ended.done():
                    with contextlib.suppress(UnknownWorker):
                        self.cancel(job.todo_id, parent)
            # Ended only once they have stopped (their `workerFinished` told first): a client
            # shown the cancel's answer has none of them running any more.
            if stopping:
                await asyncio.wait(stopping)
            raise
        finished = {job.todo_id: job.ended.result() for job in jobs}
        taken_in: dict[str, dict[str, Any]] = {}
        for todo_id, ended in finished.items():
            if not ended.files or self.records.load(parent, todo_id) is None:
                continue  # nothing to take in, or taken in or dropped meanwhile
            taken_in[todo_id] = await self.take_in(todo_id, parent)
            if on_taken_in is not None:
                on_taken_in(todo_id, taken_in[todo_id])
        return ParallelRun(answer, finished, taken_in)

    async def _refuse_unless_possible(self) -> None:
        sandbox = self.engine.ctx.sandbox
        assert sandbox is not None
        if sandbox.options.enabled is False:
            raise ParallelRefused(
                "Plan items run in parallel only in a sandbox (each worker's commands may write "
                "its own copy of the workspace and nothing else), and the option "
                "sandbox.enabled is false."
            )
        found = await asyncio.to_thread(sandbox.availability)
        if not found.available:
            raise ParallelRefused(
                "Plan items run in parallel only in a sandbox (each worker's commands may write "
                f"its own copy of the workspace and nothing else), and none can be made here: "
                f"{found.reason}."
            )
        checkpointer = self.engine.checkpoints.checkpointer
        if checkpointer is None or not await checkpointer.ready():
            why = (
                checkpointer.off_reason if checkpointer is not None else None
            ) or self.engine.checkpoints.off_reason
            raise ParallelRefused(f"Workers' copies are made from checkpoints, and {why}.")

    def _not_startable(self, parent: str | None, item: TodoItem) -> str | None:
        if (parent, item.id) in self._jobs or any(
            (j.parent, j.todo_id) == (parent, item.id) for j in self._queue
        ):
            return "a worker is already on it"
        if self.records.load(parent, item.id) is not None:
            return "its last worker's changes are stored: take them in or drop them first"
        if item.status in ("completed", "cancelled"):
            return f"it is {item.status}"
        return None

    def _dependencies(self, job: _Job) -> tuple[bool, str | None]:
        """Whether its dependencies are done, and the reason it can never start (one failed)."""
        plan = self.sessions.state(job.parent).todos
        statuses = {item.id: item.status for item in plan.items}
        for dependency in job.item.after:
            status = statuses.get(dependency)
            if status == "failed":
                return False, f"#{dependency} failed"
            if status not in ("completed", "cancelled", None):
                return False, None
        return True, None

    def _schedule(self) -> set[_Job]:
        """Start what may start now; drop what never can (a dependency failed)."""
        started: set[_Job] = set()
        for job in list(self._queue):
            ready, never = self._dependencies(job)
            if never is not None:
                self._queue.remove(job)
                self._ended(
                    job, WorkerFinished(job.todo_id, "", "cancelled", (), f"Not started: {never}.")
                )
                continue
            if not ready or len(self._jobs) >= self.max_workers:
                continue
            self._queue.remove(job)
            # A dependency's change set not taken in yet is where its dependent starts from
            # (one dependency); its own change set is then the dependent's changes alone.
            for dependency in job.item.after[:1] if len(job.item.after) == 1 else ():
                record = self.records.load(job.parent, dependency)
                if record is not None and record.result:
                    job.base = record.result
            self._jobs[(job.parent, job.todo_id)] = job
            job.task = asyncio.get_running_loop().create_task(
                self._work(job), name=f"plansight-worker-{job.todo_id}"
            )
            job.task.add_done_callback(functools.partial(self._never_ran, job))
            started.add(job)
        return started

    # One worker -----------------------------------------------------------------------------

    def _repository(self) -> CheckpointStore:
        checkpointer = self.engine.checkpoints.checkpointer
        assert checkpointer is not None
        return checkpointer.store

    def _copy(self, key: str) -> WorkerCopy:
        """git on the checkpoint repository, with the worker's own index and folder (`key`:
        records.py `worker_key`)."""
        directory = checkpoints_folder(self.records.folder.parent)
        folder = self.records.folder_of(key)
        return WorkerCopy(
            find_git()[0], directory / "git", folder / "tree", folder / "index", directory / "home"
        )

    async def _work(self, job: _Job) -> None:
        session_id = uuid.uuid4().hex[:12]
        record = WorkerRecord(
            job.todo_id,
            session_id,
            job.parent,
            "running",
            _now(),
            base=job.base,
            stored_key=job.key,
        )
        self.records.save(record)  # a restart finds it (and what its copy holds)
        self._emit(WorkerStarted(job.todo_id, session_id, job.parent))
        copy = self._copy(job.key)
        result: RunResult | None = None
        status: WorkerStatus = "failed"
        summary = ""
        worker: Session | None = None
        try:
            await asyncio.to_thread(copy.check_out, job.base)
            worker = job.session = self._session(copy.folder, job, session_id)
            prompt = WORKER_PROMPT.format(id=job.todo_id, text=job.item.text)
            result = await worker.run(prompt, todo_id=job.todo_id)
            item = next((i for i in worker.plan.state.items if i.id == job.todo_id), None)
            if result.status == "done" and (item is None or item.status != "failed"):
                status = "completed"
            elif result.status == "cancelled":
                status = "cancelled"
            summary = result.error or result.text
        except asyncio.CancelledError:
            status, summary = "cancelled", "Cancelled by the user."
        except Exception as err:  # a worker's failure is its item's, never the others'
            log.exception("worker #%s failed", job.todo_id)
            summary = f"The worker failed: {err}"
        finally:
            if worker is not None:
                with_cancel_shield = asyncio.ensure_future(worker.close())
                await asyncio.wait({with_cancel_shield})
        await self._finish(job, record, copy, status, summary)

    def _session(self, folder: Path, job: _Job, session_id: str) -> Session:
        engine = self.engine
        settings = dataclasses.replace(
            engine.settings,
            checkpoints=False,  # its change set is the copy against its base
            storage_dir=None,
            read_only=False,
            # Only its copy is writable: the user's other writable paths are not for workers.
            sandbox=SandboxOptions(True, engine.settings.sandbox.network, ()),
        )
        shared = self._scratchpads.setdefault(job.parent, SharedScratchpad())
        assert engine.store is not None
        front_door: FrontDoor = {
            "review": _accept_in_copy,
            "approve": hooks.approve_all_commands,  # sandboxed to the copy (enabled: true)
            **{
                k: v
                for k, v in self.front_door.items()
                if k in ("approve_tool", "ask", "mcp_servers")
            },  # type: ignore[typeddict-item]
        }
        worker = Session(
            folder,
            settings,
            store=None,
            hidden=[engine.store.directory],  # the parent's sessions, the other copies
            scratchpad=shared.view(job.todo_id),
            **front_door,
        )
        # The parent's sandbox was found to work: the worker's need not probe again.
        parent_sandbox = engine.ctx.sandbox
        if worker.ctx.sandbox is not None and parent_sandbox is not None:
            worker.ctx.sandbox._found = parent_sandbox.availability()
        plan = self.sessions.state(job.parent).todos
        worker.plan.reinstate(list(plan.items), plan.version, plan.plan_id)
        worker.events.subscribe(lambda event: self._progress(job, session_id, event))
        worker.mcp.start()
        return worker

    def _progress(self, job: _Job, session_id: str, event: Event) -> None:
        if isinstance(event, ToolCall):
            job.rounds += 1
            self._emit(
                WorkerProgress(
                    job.todo_id, session_id, event.name, event.summary, job.rounds, job.parent
                )
            )

    async def _finish(
        self,
        job: _Job,
        record: WorkerRecord,
        copy: WorkerCopy,
        status: WorkerStatus,
        summary: str,
    ) -> None:
        files: tuple[FileChange, ...] = ()
        result_tree = ""
        try:
            result_tree, files = await asyncio.to_thread(self._change_set, copy, record)
        except (GitError, OSError) as err:
            log.error("worker #%s: its changes could not be stored: %s", job.todo_id, err)
            status, summary = "failed", f"Its changes could not be stored: {err}"
        record = dataclasses.replace(
            record,
            status=status,
            finished_at=_now(),
            summary=summary.strip()[:2000],
            result=result_tree,
            files=files,
        )
        self.records.save(record)  # first: a crash after this loses nothing
        # Hashed (its index agrees with it): kept for the next worker's copy; else removed.
        await asyncio.to_thread(copy.park if result_tree else copy.remove_folder)
        self._jobs.pop((job.parent, job.todo_id), None)
        # The plan first, so that a client told the worker finished sees its item as it is.
        self._set_item(
            job.parent,
            job.todo_id,
            "completed" if status == "completed" else "failed" if status == "failed" else None,
        )
        self._ended(
            job,
            WorkerFinished(
                job.todo_id,
                record.session_id,
                status,
                tuple(f.to_wire() for f in files),
                record.summary,
            ),
        )
        if not files and status != "running":
            # Nothing to take in: no record is left to list.
            self._forget(record)
        self._schedule()

    def _change_set(
        self, copy: WorkerCopy, record: WorkerRecord
    ) -> tuple[str, tuple[FileChange, ...]]:
        """Hash the copy, keep its trees, and list its files (blocking)."""
        if not copy.folder.is_dir():
            return "", ()
        with self._repository().lock:  # no prune between hashing and the refs
            result = copy.result_tree()
            copy.keep(record.key, record.base, result)
        protected = self.engine.workspace.protected
        files = tuple(
            f
            for f in copy.changes(record.base, result)
            if not is_git_internal(f.path) and not protected.matches(f.path, False)
        )
        return result, files

    def _set_item(
        self, parent: str | None, todo_id: str, status: str | None, *, unless: str | None = None
    ) -> None:
        """Session `parent`'s item `todo_id`: completed or failed as its worker ended (a
        cancelled worker leaves it as it was); with `unless`, only while its status is that
        one (a status the user set since is theirs)."""
        if status is None:
            return
        try:
            plan = self.sessions.state(parent).todos
            item = next((i for i in plan.items if i.id == todo_id), None)
            if item is None or (unless is not None and item.status != unless):
                return
            items = [
                {**i.to_wire(), "status": status if i.id == todo_id else i.status}
                for i in plan.items
            ]
            self.sessions.edit_plan(items, None, parent)
        except Exception as err:  # another session's run holds the engine: said, not fatal
            log.warning("worker #%s: its item's status could not be set: %s", todo_id, err)

    def _reopen_unless_taken(self, record: WorkerRecord) -> None:
        """A worker's item it marked completed goes back to pending when none of its work
        reached the workspace (dropped, or every file rejected): the plan must not say done
        what the workspace does not hold. A failed item stays failed (it says what happened
        and can run again); one whose status the user changed since is left as they set it."""
        if record.status != "completed":
            return
        if any(decision != "rejected" for decision in record.decided.values()):
            return  # some of it was applied (or left to copy by hand): the user's call
        self._set_item(record.parent_session, record.todo_id, "pending", unless="completed")

    def _never_ran(self, job: _Job, task: asyncio.Task[None]) -> None:
        """A worker cancelled before its first step (or in its last ones) never told how it
        ended: it is told here, so that no one waits for it. A record it left `running` is
        listed failed after a restart (`_recover`), with what its copy held."""
        if job.ended.done():
            return
        if self._jobs.get((job.parent, job.todo_id)) is job:
            del self._jobs[(job.parent, job.todo_id)]
        self._ended(job, WorkerFinished(job.todo_id, "", "cancelled", (), "Cancelled."))

    def _ended(self, job: _Job, finished: WorkerFinished) -> None:
        """Tell how `job` ended: its future, then the listeners."""
        finished = dataclasses.replace(finished, parent_session_id=job.parent)
        if not job.ended.done():
            job.ended.set_result(finished)
        self._emit(finished)

    def _emit(self, event: WorkerEvent) -> None:
        for listener in list(self.on_event):
            try:
                listener(event)
            except Exception:
                log.exception("a worker event listener failed")

    # Cancel, drop ---------------------------------------------------------------------------

    def cancel(self, todo_id: str, session_id: str | None = None) -> None:
        """Stop session `session_id`'s (None: the current one's) worker on `todo_id` (its
        changes so far are stored, its item left as it was); one that waits is taken off the
        queue. UnknownWorker when none is on that item."""
        parent = self._owner(todo_id, session_id)
        for job in list(self._queue):
            if (job.parent, job.todo_id) == (parent, todo_id):
                self._queue.remove(job)
                self._ended(
                    job,
                    WorkerFinished(todo_id, "", "cancelled", (), "Cancelled before it started."),
                )
                return
        running = self._jobs.get((parent, todo_id))
        if running is None or running.task is None:
            raise UnknownWorker(
                f"No worker is running item #{todo_id}{self._elsewhere(todo_id, parent)}."
            )
        running.task.cancel()

    def drop(self, todo_id: str, session_id: str | None = None) -> None:
        """Discard a stored change set (nothing of it reaches the workspace)."""
        self._recover()
        parent = self._owner(todo_id, session_id)
        if (parent, todo_id) in self._jobs:
            raise ParallelRefused(f"The worker on #{todo_id} is still running: cancel it first.")
        record = self.records.load(parent, todo_id)
        if record is None:
            raise self._not_stored(todo_id, parent)
        self._forget(record)
        self._reopen_unless_taken(record)

    def _not_stored(self, todo_id: str, parent: str | None) -> UnknownWorker:
        where = self._elsewhere(todo_id, parent)
        return UnknownWorker(f"No changes of a worker on #{todo_id} are stored{where}.")

    def _holders(self, todo_id: str) -> set[str | None]:
        """The sessions with a worker (running or waiting) or a change set on `todo_id`."""
        return (
            {record.parent_session for record in self.records.all() if record.todo_id == todo_id}
            | {parent for (parent, item) in self._jobs if item == todo_id}
            | {job.parent for job in self._queue if job.todo_id == todo_id}
        )

    def _owner(self, todo_id: str, session_id: str | None) -> str | None:
        """The session whose worker on `todo_id` a request means: the one it names; else the
        current one when it has a worker or change set on that item, else the only other
        session that has one (a client that names no session, e.g. an older VS Code, shows another
        session's change set as an item no longer in the plan, and takes it in by its id);
        else the current one (refused, naming the sessions that have one)."""
        if session_id is not None:
            return session_id
        current = self.sessions.current
        holders = self._holders(todo_id)
        others = holders - {current}
        return others.pop() if current not in holders and len(others) == 1 else current

    def _elsewhere(self, todo_id: str, parent: str | None) -> str:
        """The end of an UnknownWorker's message: which other sessions have one on that item."""
        others = sorted(p for p in self._holders(todo_id) - {parent} if p)
        if not others:
            return ""
        have = "has" if len(others) == 1 else "have"
        return (
            f" in this session (session {', '.join(others)} {have} one on that item: name it "
            "with sessionId)"
        )

    def _forget(self, record: WorkerRecord) -> None:
        try:
            copy = self._copy(record.key)
            copy.forget(record.key)
            copy.remove_folder()
        except (GitError, GitUnavailable, OSError) as err:
            log.warning("worker #%s: %s", record.todo_id, err)
        self.records.remove(record.key)

    async def close(self) -> None:
        """Stop every worker; each stores what it did (listed after a restart)."""
        for job in self._queue:
            self._ended(
                job, WorkerFinished(job.todo_id, "", "cancelled", (), "Not started: stopped.")
            )
        self._queue.clear()
        tasks = [job.task for job in self._jobs.values() if job.task is not None]
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks)

    # After a restart -------------------------------------------------------------------------

    def _recover(self) -> None:
        """Records of workers a killed server left running: failed, their copy's changes
        stored as they are (once per server)."""
        if self._recovered or self.sessions.registry.read_only:  # a read-only view writes none
            return
        self._recovered = True
        for record in self.records.all():
            if record.status != "running" or (record.parent_session, record.todo_id) in self._jobs:
                continue
            copy = self._copy(record.key)
            try:
                result, files = self._change_set(copy, record) if record.base else ("", ())
            except (GitError, OSError, AssertionError) as err:
                result, files = "", ()
                log.warning("worker #%s: its copy could not be read: %s", record.todo_id, err)
            record = dataclasses.replace(
                record,
                status="failed",
                finished_at=_now(),
                summary="Interrupted: the server stopped while this worker ran.",
                result=result,
                files=files,
            )
            self.records.save(record)
            copy.remove_folder()

    # Taking in ------------------------------------------------------------------------------

    async def take_in(self, todo_id: str, session_id: str | None = None) -> dict[str, Any]:
        """Put session `session_id`'s (None: the current one's) stored change set of
        `todo_id` to the user, one file at a time, each merged three ways onto the workspace
        as it is now (a conflict shown as such, never merged silently). Files accepted are
        written; once every file is decided the change set is gone."""
        self._recover()
        parent = self._owner(todo_id, session_id)
        if (parent, todo_id) in self._jobs:
            raise ParallelRefused(f"The worker on #{todo_id} is still running.")
        record = self.records.load(parent, todo_id)
        if record is None:
            raise self._not_stored(todo_id, parent)
        async with self._taking_in:
            return await self._take_in(record)

    async def _take_in(self, record: WorkerRecord) -> dict[str, Any]:
        copy = self._copy(record.key)
        answer: dict[str, list[Any]] = {
            "applied": [],
            "rejected": [],
            "conflicts": [],
            "skipped": [],
        }
        scratch = self.records.folder_of(record.key)
        for change in record.files:
            if change.path in record.decided:
                continue
            decision, conflict, reason = await self._take_in_file(record, copy, change, scratch)
            if conflict:
                answer["conflicts"].append(change.path)
            if decision == "skipped":
                answer["skipped"].append({"path": change.path, "reason": reason})
            else:
                answer[decision].append(change.path)
            record = record.deciding(change.path, decision)
            self.records.save(record)  # a take-in cut short goes on where it stopped
        self._forget(record)
        self._reopen_unless_taken(record)
        return answer

    async def _take_in_file(
        self, record: WorkerRecord, copy: WorkerCopy, change: FileChange, scratch: Path
    ) -> tuple[str, bool, str]:
        """(applied | rejected | skipped, whether it conflicted, why it was skipped)."""
        workspace = self.engine.workspace
        rel = change.path
        if workspace.protected.matches(rel, False) or is_git_internal(rel):
            return "skipped", False, "protected"
        if change.binary or (change.new_mode and change.new_mode & 0o170000 != 0o100000):
            return "skipped", False, "not a text file: copy it from the worker by hand"
        target = workspace.root / rel
        try:
            blobs = await asyncio.to_thread(copy.blobs, [change.old_sha, change.new_sha])
        except GitError as err:
            return "skipped", False, f"its stored content is missing ({err})"
        base = blobs.get(change.old_sha, b"")
        theirs = blobs.get(change.new_sha) if change.status != "D" else None
        try:
            ours: bytes | None = await asyncio.to_thread(target.read_bytes)
        except FileNotFoundError:
            ours = None
        except OSError as err:
            return "skipped", False, f"unreadable in the workspace ({err.strerror or err})"
        if workspace.has_unsaved_changes(rel):
            return "skipped", False, "it has unsaved changes in the editor"
        if ours == theirs:
            return "applied", False, ""  # the workspace has it already
        conflict = False
        if ours is None and change.status in ("M", "D"):
            if theirs is None:
                return "applied", False, ""
            conflict, proposed = True, theirs  # deleted in the workspace, changed by the worker
        elif ours is not None and ours != base:
            if theirs is None:  # changed in the workspace, deleted by the worker
                conflict, proposed = True, ours
            else:
                merged, conflict = await asyncio.to_thread(
                    copy.merge, ours, base, theirs, scratch, f"worker #{record.todo_id}"
                )
                proposed = merged
        else:
            proposed = theirs if theirs is not None else b""
        try:
            old_text = (ours or b"").decode("utf-8")
            new_text = proposed.decode("utf-8")
        except UnicodeDecodeError:
            return "skipped", conflict, "not UTF-8 text: copy it from the worker by hand"
        deleted = theirs is None and not conflict
        what = "deletes" if deleted else "adds" if change.status == "A" else "changes"
        description = f"Worker #{record.todo_id} {what} {rel}" + (
            ": the workspace changed the same lines meanwhile; both sides are shown between "
            "conflict markers, settle them before accepting"
            if conflict
            else ""
        )
        proposal = EditProposal(
            id=uuid.uuid4().hex,
            path=target,
            relative_path=rel,
            old_text=old_text,
            new_text=new_text,
            description=description,
            todo_id=record.todo_id,
            control=workspace.control.is_control(rel),
            worker=record.todo_id,
            conflict=conflict,
            deleted=deleted,
        )
        decision: EditDecision = await self.engine.ctx.review(proposal)
        if not decision.accepted:
            return "rejected", conflict, ""
        written = decision.new_text if decision.new_text is not None else new_text
        try:
            now = await asyncio.to_thread(target.read_bytes)
        except FileNotFoundError:
            now = None
        if now != ours:
            return "skipped", conflict, "it changed in the workspace while the review was open"
        mode = change.new_mode if change.new_mode else (change.old_mode or 0o100644)
        try:
            if deleted and decision.new_text is None:
                await asyncio.to_thread(delete_file, workspace.root, rel)
            else:
                await asyncio.to_thread(
                    write_file, workspace.root, rel, written.encode("utf-8"), mode, durable=False
                )
        except (RestoreRefused, OSError) as err:
            return "skipped", conflict, f"it could not be written ({err})"
        if deleted and decision.new_text is None:
            workspace.forget(rel)
        else:
            # Our own write (the watcher's report of it is no one else's change); the model
            # reads it again before editing it.
            await asyncio.to_thread(workspace.wrote_for_the_user, rel)
        self.engine.ctx.changes.edited(rel)  # checkpointed as Plansight's change, not "outside"
        return "applied", conflict, ""


async def _accept_in_copy(proposal: EditProposal) -> EditDecision:
    """A worker's edits change its copy only (the user reviews them when taking them in)."""
    return EditDecision(accepted=True)
