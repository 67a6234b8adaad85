"""A session's checkpoints as its front doors use them, and the session's side of taking them.

`SessionCheckpoints` owns the session's `Checkpointer` (recorder.py) when checkpoints are on
(the option, and a storage folder): it opens it at start-up, hears of plan changes from the
session's events itself (a checkpoint when an item becomes in progress), is told by the
session of runs, new sessions and outside changes, and closes it at the end. Its requests
(`taken`, `restore`, `step_changes`, `file_at`) raise `CheckpointsOff` (the message says why)
when checkpoints are off, and `CheckpointError` on a bad request.

A restore holds the session's one-run-at-a-time rule (`RunGate`): it is refused during a run,
and a run asked for during it is refused. Its outcome is taken into the session: the files
read again before an edit, the conversation and plan put back when asked, the model told at
its next turn.

A `read_only` session's checkpoints (the read-only view, session/lock.py) are opened to be read
only, beside the server that keeps them: no snapshot at start-up, none on plan changes, and
every request that would write one (a restore) is refused by the session's gate.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from plansight.checkpoints.manifest import Checkpoint
from plansight.checkpoints.recorder import Checkpointer, Restored, SessionView
from plansight.checkpoints.restore import RestoreRequest, RestoreResult
from plansight.checkpoints.store import CheckpointError, StepFile, checkpoints_folder
from plansight.engine.compaction.compactor import Compactor
from plansight.engine.conversation import Conversation
from plansight.engine.events import (
    CheckpointTaken,
    ConversationChanged,
    Event,
    EventBus,
    PlanChanged,
)
from plansight.engine.loop import Notices
from plansight.plan.plan import Plan, TodoState
from plansight.tools.context import ChangeRecorder, NoRecorder
from plansight.workspace.access import Workspace
from plansight.workspace.echoes import Echoes


class CheckpointsOff(Exception):
    """Checkpoints are off here; the message says why."""


class RunGate(Protocol):
    """The session's rule of one run at a time (SessionBusy, naming what was refused)."""

    def refuse_if_held(self, doing: str) -> None:
        """Raise SessionBusy when a run (or a compaction, a restore) is in progress."""

    def hold(self, doing: str) -> AbstractContextManager[None]:
        """Refuse as `refuse_if_held` does, else hold the rule until the block ends."""


@dataclass(frozen=True)
class StepChanges:
    """The files each item of the current plan's session changed, in plan order."""

    steps: Mapping[str, list[StepFile]]

    def to_wire(self) -> dict[str, Any]:
        """`plansight/changes`'s result."""
        return {
            "steps": [
                {
                    "todoId": todo_id,
                    "files": [
                        {"path": f.path, "change": f.change}
                        | ({"before": f.before.id} if f.before is not None else {})
                        for f in files
                    ],
                }
                for todo_id, files in self.steps.items()
            ]
        }


@dataclass(frozen=True)
class CheckpointFile:
    """A file as a checkpoint holds it (`data` None: it held none), for a client's diff."""

    data: bytes | None

    def to_wire(self) -> dict[str, Any]:
        """`plansight/checkpointFile`'s result: the text, or that it is binary."""
        if self.data is None:
            return {"exists": False}
        try:
            return {"exists": True, "text": self.data.decode("utf-8")}
        except UnicodeDecodeError:
            return {"exists": True, "binary": True}


class SessionCheckpoints:
    def __init__(
        self,
        storage: Path | None,
        *,
        on: bool,
        root: Path,
        gate: RunGate,
        events: EventBus,
        plan: Plan,
        conversation: Conversation,
        compactor: Compactor,
        notices: Notices,
        workspace: Workspace,
        echoes: Echoes,
        read_only: bool = False,
    ) -> None:
        """`storage`: the session's storage folder, which keeps the checkpoints (None: there
        are none); `on`: the checkpoints option; `read_only`: read them, never write them."""
        self.read_only = read_only
        self.off_reason = "checkpoints are off (the checkpoints option is false)"
        if on and storage is None:
            self.off_reason = "checkpoints are off: this session has no storage folder"
        self.gate = gate
        self.events = events
        self.plan = plan
        self.conversation = conversation
        self.compactor = compactor
        self.notices = notices
        self.workspace = workspace
        self.echoes = echoes
        self.checkpointer: Checkpointer | None = None
        if on and storage is not None:
            self.checkpointer = Checkpointer(
                checkpoints_folder(storage),
                root,
                self._view(),
                lambda c: events.emit(CheckpointTaken(c)),
                workspace.protected,
                skipped=workspace.state_folders,
            )
            if not read_only:
                events.subscribe(self._on_event, last=True)
        self._opening: asyncio.Task[None] | None = None
        self._plan_id = ""  # the plan the checkpoints' items are of (TodoState.plan_id)
        # The session (of the workspace's many, session/sessions.py) each checkpoint names.
        self.session_id: str | None = None

    def _view(self) -> SessionView:
        conversation = self.conversation

        def in_progress() -> str | None:
            item = self.plan.state.in_progress
            return item.id if item is not None else None

        def complete_rounds() -> list[Any]:
            # A round's tool calls without their results would not be a valid conversation.
            if conversation.unanswered_tool_uses():
                return conversation.messages[:-1]
            return conversation.messages

        return SessionView(
            in_progress=in_progress,
            plan=lambda: self.plan.state.to_record(),
            messages=complete_rounds,
            unsaved=self.workspace.has_unsaved_changes,
            session_id=lambda: self.session_id,
        )

    @property
    def recorder(self) -> ChangeRecorder:
        """What the agent's edits and commands tell of the files they change."""
        return self.checkpointer if self.checkpointer is not None else NoRecorder()

    # ----- the session's side ----------------------------------------------------------------

    def start(self) -> None:
        """Open the checkpoints in the background (the first snapshot of a large workspace
        takes a second or two)."""
        self._plan_id = self.plan.state.plan_id  # the stored plan, loaded by now
        if self.checkpointer is not None:
            opening = (
                self.checkpointer.open_read_only()
                if self.read_only
                else self.checkpointer.open(baseline=True)
            )
            self._opening = asyncio.get_running_loop().create_task(opening)

    def _on_event(self, event: Event) -> None:
        if isinstance(event, PlanChanged) and self.checkpointer is not None:
            state = event.state
            if state.source != "restore" and state.plan_id not in ("", self._plan_id):
                # A new plan's ids are its own: item #1 of this plan is not the #1 of the one
                # before, so its changes (and an undo of it) are counted from here.
                self.checkpointer.new_session()
            if state.plan_id:
                self._plan_id = state.plan_id
            self.checkpointer.plan_changed(_in_progress(state))

    def run_started(self) -> None:
        if self.checkpointer is not None:
            self.checkpointer.run_started()

    def run_ended(self) -> None:
        if self.checkpointer is not None:
            self.checkpointer.maintain()

    def new_session(self) -> None:
        if self.checkpointer is not None:
            self.checkpointer.new_session()  # the checkpoints stay; a new plan's ids begin

    def session_switched(self) -> None:
        """Another of the workspace's sessions is loaded: its plan's item ids are its own, so
        per-item changes and undo are those of its checkpoints with that plan (the
        checkpoints themselves stay the workspace's)."""
        state = self.plan.state
        self._plan_id = state.plan_id
        if self.checkpointer is None:
            return
        if self.session_id is None:
            self.checkpointer.new_session()
        else:
            self.checkpointer.resume_session(self.session_id, state.plan_id, _in_progress(state))

    def watched(self) -> None:
        if self.checkpointer is not None:
            self.checkpointer.watched()

    def outside_changed(self, paths: list[str]) -> None:
        if self.checkpointer is not None:
            self.checkpointer.outside_changed(paths)

    async def close(self) -> None:
        if self.checkpointer is not None:
            await self.checkpointer.close()

    # ----- requests --------------------------------------------------------------------------

    async def _require(self) -> Checkpointer:
        checkpointer = self.checkpointer
        if checkpointer is None:
            raise CheckpointsOff(self.off_reason)
        if not await checkpointer.ready():
            raise CheckpointsOff(checkpointer.off_reason or "checkpoints are off")
        return checkpointer

    async def taken(self) -> list[Checkpoint]:
        """The workspace's checkpoints, oldest first."""
        return await (await self._require()).checkpoints()

    async def restore(self, request: RestoreRequest) -> RestoreResult:
        """Put files back to a checkpoint, or undo a plan item (which becomes pending); with
        `request.conversation`, the conversation and plan go back too. Not during a run."""
        self.gate.refuse_if_held("restoring")
        checkpointer = await self._require()
        todo_id = request.todo_id
        # Held from here (checked again: a run may have begun while the store opened).
        with self.gate.hold("restoring"):
            if todo_id is not None and not any(i.id == todo_id for i in self.plan.state.items):
                raise CheckpointError(f"the plan has no item #{todo_id}")
            self.echoes.hold()  # judged once what the restore wrote is known
            try:
                restored = await checkpointer.restore(request)
                if not request.dry_run:
                    self._take_in(restored, request)
            finally:
                self.echoes.release()
        return restored.result

    async def step_changes(self) -> StepChanges:
        """The files each item of the current plan's session changed, in plan order."""
        steps = await (await self._require()).steps()
        order = {item.id: n for n, item in enumerate(self.plan.state.items)}
        return StepChanges(dict(sorted(steps.items(), key=lambda kv: order.get(kv[0], len(order)))))

    async def file_at(self, checkpoint: str, path: str) -> CheckpointFile:
        """A file as a checkpoint holds it (for a client's diff)."""
        return CheckpointFile(await (await self._require()).file_at(checkpoint, path))

    def _take_in(self, restored: Restored, request: RestoreRequest) -> None:
        """The session after a restore: conversation and plan as asked, the model told."""
        result = restored.result
        if restored.messages is not None:
            self.conversation.replace(restored.messages)
            self.compactor.meter.reset()
            self.events.emit(ConversationChanged(rewritten=True))
        if restored.plan is not None:
            items = TodoState.items_of_record(restored.plan)
            state = self.plan.reinstate(
                items, self.plan.state.version + 1, TodoState.plan_id_of_record(restored.plan)
            )
            if self.checkpointer is not None:  # no item started: it was put back
                self.checkpointer.follow_plan(_in_progress(state))
            self.notices.plan_edited = True
            self.events.emit(PlanChanged(state))
        if result.changed:
            self.workspace.mark_stale(result.changed)  # to be read again before an edit
            self.echoes.left_as_they_are(result.changed)
        told = restore_notice(result, request, rewound=restored.messages is not None)
        if told:
            self.notices.restores.append(told)


def _in_progress(state: TodoState) -> str | None:
    item = state.in_progress
    return item.id if item is not None else None


def restore_notice(result: RestoreResult, request: RestoreRequest, *, rewound: bool) -> str:
    """What the model is told at its next turn about a restore the user made."""
    if not result.changed and not rewound:
        return ""
    if request.todo_id is not None:
        said = (
            f"The user undid plan item #{request.todo_id}: what its edits and commands changed "
            "was taken back, and what later items changed in the same files was kept"
        )
        if result.also_undone:
            said += " except where the two overlapped"
    else:
        said = f"The user restored checkpoint {request.checkpoint}"
    if rewound:
        said += ", and the conversation was taken back to that point"
    said += "."
    if result.restored:
        said += f" Written back: {', '.join(result.restored)}."
    if result.deleted:
        said += f" Deleted: {', '.join(result.deleted)}."
    if result.also_undone:
        lost = "; ".join(
            f"{a.path} (the changes of {', '.join('#' + t for t in a.todo_ids)})"
            for a in result.also_undone
        )
        said += (
            f" Put back as they were before #{request.todo_id}, so later items' work in them "
            f"was undone too: {lost}."
        )
    if result.restored:
        said += " Read the written-back files again before editing them."
    if result.skipped:
        kept = "; ".join(f"{s.path} ({s.reason})" for s in result.skipped)
        said += f" Left as they are: {kept}."
    return said
