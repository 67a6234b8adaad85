"""One agent session over a workspace: the state the server owns, and the runs over it.

Embedders (the language server, tests) create a Session with their settings and hooks,
subscribe to `session.events`, and call `run`, `edit_plan`, `reset`, `files_changed`,
`checkpoints`, `restore_checkpoint`, and `close` at the end. The session's rules hold whoever
embeds it: one run at a time (a second `run`, and a `reset`, `compact` or restore during a run
raise `SessionBusy`), settings from the environment and the initialization options (options
win), and the leftovers of a killed server cleaned up. With checkpoints on (and a storage
folder), its `Checkpointer` snapshots the workspace as runs go (see checkpoints/recorder.py).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import math
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from plansight.checkpoints import Checkpoint, CheckpointError, RestoreResult, StepFile
from plansight.checkpoints.recorder import Checkpointer, Restored, SessionView
from plansight.engine.compaction.compactor import (
    DEFAULT_COMPACT_AT,
    CompactionResult,
    CompactionSettings,
    Compactor,
)
from plansight.engine.conversation import Conversation
from plansight.engine.events import (
    CheckpointTaken,
    ConversationChanged,
    EditOutcome,
    EditReviewed,
    Event,
    EventBus,
    FilesChanged,
    PlanChanged,
    RunFinished,
    RunResult,
    ScratchpadChanged,
    Usage,
)
from plansight.engine.hooks import (
    ApproveHook,
    AskHook,
    DocumentSource,
    EditDecision,
    EditProposal,
    PlanReviewHook,
    ReviewHook,
    accept_all_edits,
    approve_all_plans,
    dismiss_all_questions,
    refuse_all_commands,
)
from plansight.engine.loop import AgentLoop, Notices
from plansight.engine.model import (
    DEFAULT_THINKING_BUDGET,
    ModelClient,
    ModelSettings,
    SdkLoader,
    ThinkingOption,
)
from plansight.engine.planmode import RunMode, RunState
from plansight.engine.prompt import system_prompt
from plansight.plan.plan import Plan, TodoItem, TodoState
from plansight.plan.scratchpad import Scratchpad
from plansight.protocol.names import event_payload
from plansight.protocol.options import InitOptions
from plansight.session.storage import SessionStore, default_storage_dir
from plansight.tools import default_tools
from plansight.tools.context import NoRecorder, ToolContext
from plansight.workspace import atomic
from plansight.workspace.access import Workspace
from plansight.workspace.echoes import CommandEchoes, Echoes
from plansight.workspace.watcher import IGNORED_DIRS

log = logging.getLogger(__name__)

DEFAULT_MAX_ROUNDS = 50


class SessionBusy(Exception):
    """A run is already in progress."""


class CheckpointsOff(Exception):
    """Checkpoints are off here; the message says why."""


@dataclass(frozen=True)
class SessionSettings:
    model: ModelSettings = field(default_factory=ModelSettings)
    compaction: CompactionSettings = field(default_factory=CompactionSettings)
    max_rounds: int = DEFAULT_MAX_ROUNDS
    storage_dir: Path | None = None  # None: the workspace's folder in the user's state dir
    checkpoints: bool = True  # carried for the checkpoints feature
    planning: bool = True  # False: no plan tools, no reminders, no done gate (`plansight eval`)

    @classmethod
    def from_options(cls, options: InitOptions, env: Mapping[str, str]) -> SessionSettings:
        """Settings from the environment and the initialization options; options win."""
        thinking = options.thinking
        model = ModelSettings(
            model=options.model or env.get("PLANSIGHT_MODEL") or None,
            api_key=env.get("ANTHROPIC_API_KEY") or None,
            base_url=env.get("ANTHROPIC_BASE_URL") or None,
            thinking=(
                ThinkingOption(
                    DEFAULT_THINKING_BUDGET
                    if thinking.budget_tokens is None
                    else thinking.budget_tokens
                )
                if thinking is not None
                else None
            ),
        )
        if (timeout := _seconds(env, "PLANSIGHT_API_TIMEOUT")) is not None:
            model = dataclasses.replace(model, timeout=timeout)
        return cls(
            model=model,
            compaction=CompactionSettings(
                options.context_window,
                options.compact_at if options.compact_at is not None else DEFAULT_COMPACT_AT,
            ),
            max_rounds=options.max_rounds or DEFAULT_MAX_ROUNDS,
            storage_dir=Path(options.storage_dir) if options.storage_dir else None,
            checkpoints=options.checkpoints,
            planning=options.planning,
        )

    def store_for(self, root: Path) -> SessionStore:
        return SessionStore(self.storage_dir or default_storage_dir(root))


def _seconds(env: Mapping[str, str], name: str) -> float | None:
    raw = env.get(name)
    if not raw:
        return None
    try:
        value = float(raw)
    except ValueError:
        value = 0.0
    if math.isfinite(value) and value > 0:
        return value
    log.warning("ignoring %s=%r: not a positive number of seconds", name, raw)
    return None


class Session:
    def __init__(
        self,
        root: Path,
        settings: SessionSettings,
        *,
        review: ReviewHook = accept_all_edits,
        approve: ApproveHook = refuse_all_commands,
        review_plan: PlanReviewHook = approve_all_plans,
        ask: AskHook = dismiss_all_questions,
        documents: DocumentSource | None = None,
        store: SessionStore | None = None,
    ) -> None:
        self.root = root.resolve()
        self.settings = settings
        self.events = EventBus()
        self.plan = Plan()
        self.scratchpad = Scratchpad()
        self.conversation = Conversation()
        self.notices = Notices(changed_files=set())
        self.total_usage = Usage()
        self.workspace = Workspace(self.root, documents)
        self.tools = default_tools(planning=settings.planning)
        self.ctx = ToolContext(
            plan=self.plan,
            scratchpad=self.scratchpad,
            workspace=self.workspace,
            review=self._reviewed(review),
            approve=approve,
            events=self.events,
            review_plan=review_plan,
            ask=ask,
        )
        self.store = store
        self.compactor = Compactor(
            settings=settings.compaction,
            conversation=self.conversation,
            plan=self.plan,
            scratchpad=self.scratchpad,
            tools=self.tools,
            events=self.events,
        )
        self._last_prompt = ""
        self.model = ModelClient(settings.model, SdkLoader())
        self._running: asyncio.Task[Any] | None = None
        self._background: set[asyncio.Task[Any]] = set()
        # What the agent's restores and commands left on disk, so that the watcher's reports
        # of them are not told to the model (or the editor) as someone else's changes.
        self.echoes = Echoes(self.root, self._judge_changes)
        self.checkpointer: Checkpointer | None = None
        self.checkpoints_off = "checkpoints are off (the checkpoints option is false)"
        if settings.checkpoints:
            if store is None:
                self.checkpoints_off = "checkpoints are off: this session has no storage folder"
            else:
                self.checkpointer = self._make_checkpointer(store.directory / "checkpoints")
        self.command_echoes = CommandEchoes(self.echoes, self.checkpointer or NoRecorder())
        self.ctx.changes = self.command_echoes
        self.events.subscribe(self._on_event, last=True)

    def _reviewed(self, review: ReviewHook) -> ReviewHook:
        """The review hook, telling listeners how each edit was decided (`EditReviewed`)."""

        async def reviewed(proposal: EditProposal) -> EditDecision:
            def tell(outcome: EditOutcome, feedback: str | None = None) -> None:
                self.events.emit(
                    EditReviewed(
                        id=proposal.id,
                        path=proposal.relative_path,
                        description=proposal.description,
                        outcome=outcome,
                        todo_id=proposal.todo_id,
                        feedback=feedback,
                    )
                )

            try:
                decision = await review(proposal)
            except asyncio.CancelledError:
                tell("cancelled")
                raise
            if not decision.accepted:
                tell("rejected", decision.feedback)
            else:
                tell("accepted" if decision.new_text is None else "changed", decision.feedback)
            return decision

        return reviewed

    def _make_checkpointer(self, directory: Path) -> Checkpointer:
        conversation = self.conversation

        def in_progress() -> str | None:
            item = self.plan.state.in_progress
            return item.id if item is not None else None

        def complete_rounds() -> list[Any]:
            # A round's tool calls without their results would not be a valid conversation.
            if conversation.unanswered_tool_uses():
                return conversation.messages[:-1]
            return conversation.messages

        view = SessionView(
            in_progress=in_progress,
            plan=lambda: plan_record(self.plan.state),
            messages=complete_rounds,
            unsaved=self.workspace.has_unsaved_changes,
        )
        return Checkpointer(
            directory, self.root, view, lambda c: self.events.emit(CheckpointTaken(c))
        )

    @property
    def running(self) -> bool:
        return self._running is not None and not self._running.done()

    def start(self) -> None:
        """What a server does once it is up: import the SDK and remove the temporary files of
        writes a killed server never finished (in threads), and open the checkpoints (in the
        background: the first snapshot of a large workspace takes a second or two)."""
        self.model.sdk.start()
        threading.Thread(
            target=self.remove_leftovers, name="plansight-cleanup", daemon=True
        ).start()
        if self.checkpointer is not None:
            task = asyncio.get_running_loop().create_task(self.checkpointer.open(baseline=True))
            self._background.add(task)
            task.add_done_callback(self._background.discard)

    def remove_leftovers(self) -> None:
        try:
            removed = atomic.remove_leftovers(self.root, IGNORED_DIRS)
        except Exception:
            log.exception("could not look for temporary files left by an interrupted write")
            return
        if removed:
            log.info("removed %d temporary files left by an interrupted write", len(removed))

    def _refuse_if_running(self, doing: str) -> None:
        if self.running:
            raise SessionBusy(f"A Plansight run is already in progress; cancel it before {doing}.")

    async def run(
        self,
        prompt: str,
        new_session: bool = False,
        *,
        mode: RunMode = "act",
        todo_id: str | None = None,
    ) -> RunResult:
        """One run; cancel the calling task to stop it (the conversation stays consistent).

        `mode="plan"`: plan first, act once the user approves (`plansight.engine.planmode`).
        `todo_id`: work on that plan item only; UnknownTodo (nothing changed) when the plan,
        as the run would see it, has no such item.
        """
        self._refuse_if_running("starting another")
        # Checked before a new session clears the plan: a refused run changes nothing.
        run_state = RunState.start(
            mode, todo_id, TodoState((), 0, "user") if new_session else self.plan.state
        )
        if new_session:
            self._clear()
        self.ctx.run = run_state
        loop = AgentLoop(
            model=self.model,
            tools=self.tools,
            ctx=self.ctx,
            conversation=self.conversation,
            notices=self.notices,
            system_prompt=self.system_prompt(),
            max_rounds=self.settings.max_rounds,
            plan_features=self.settings.planning,
            events=self.events,
            compactor=self.compactor,
        )
        self._last_prompt = prompt
        task = asyncio.current_task()
        assert task is not None
        self._running = task
        if self.checkpointer is not None:
            self.checkpointer.run_started()
        try:
            return await loop.run(prompt)
        finally:
            self._running = None
            if self.checkpointer is not None:
                self.checkpointer.maintain()

    async def compact(self) -> CompactionResult:
        """Compact on request (between runs): old tool results cleared, then a summary.

        SessionBusy while a run is in progress; ModelError when the summary request fails
        (the conversation is then as it was).
        """
        self._refuse_if_running("compacting")
        task = asyncio.current_task()
        assert task is not None
        self._running = task  # a run asked for meanwhile is refused as busy
        try:
            result = await self.compactor.compact(
                self.model,
                system=self.system_prompt(),  # the runs' own: the cached prefix serves it
                current_prompt=self._last_prompt or self._stored_prompt() or "(none yet)",
                summarize=True,
            )
        finally:
            self._running = None
        self.total_usage.add(result.usage)
        return result

    def system_prompt(self) -> str:
        return system_prompt(self.root.name, planning=self.settings.planning)

    def _stored_prompt(self) -> str:
        """The last run's prompt as the history kept it (after a restart)."""
        runs = self.store.history.runs(1) if self.store is not None else []
        return str(runs[-1]["prompt"]) if runs else ""

    def cancel(self) -> bool:
        """Cancel the run in progress (its task); False when nothing runs."""
        if self._running is None or self._running.done():
            return False
        self._running.cancel()
        return True

    async def close(self) -> None:
        """Stop the run in progress (it ends cancelled) and close the model's connections."""
        task = self._running
        if task is not None and not task.done():
            task.cancel()
            await asyncio.wait({task})
        if self.store is not None:
            self.store.history.flush()
        await self.command_echoes.settled()  # a stopped command's end scan
        if self.checkpointer is not None:
            await self.checkpointer.close()
        await self.model.close()

    def edit_plan(self, items: Any, version: int | None = None) -> TodoState:
        """The user's change of the plan: same rules as the model's; PlanError on a bad plan."""
        state = self.plan.update_from_user(items, version)
        self.notices.plan_edited = True  # the model hears of it at its next turn
        self.events.emit(PlanChanged(state))
        return state

    def reset(self) -> None:
        """Forget plan, scratchpad and conversation (and their stored copies); not mid-run."""
        self._refuse_if_running("resetting")
        self._clear()

    def _clear(self) -> None:
        if self.checkpointer is not None:
            self.checkpointer.new_session()  # the checkpoints stay; a new plan's ids begin
        self.conversation.clear()
        self.notices.clear()
        self.compactor.meter.reset()
        if self.store is not None:
            self.store.clear()  # the history stays: the next run starts a new session in it
            self.store.history.mark_new_session()
        self.events.emit(PlanChanged(self.plan.clear()))
        self.scratchpad.clear()
        self.events.emit(ScratchpadChanged(""))

    def files_changed(self, paths: list[str]) -> None:
        """The watcher's report of changed files (relative): stale for edits; the model, the
        editor and the checkpoints hear of those changed by someone else than the agent."""
        self.echoes.report(paths)  # judged by `_judge_changes`, after a restore or command

    def _judge_changes(self, own: list[str], others: list[str]) -> None:
        # The agent's restores and commands: read again before an edit, but nobody else's.
        self.workspace.mark_stale(own)
        external = self.workspace.mark_stale(others)  # drops the echoes of our own writes
        if not external:
            return
        if self.checkpointer is not None:
            self.checkpointer.outside_changed(external)
        self.notices.changed_files.update(external)
        self.events.emit(FilesChanged(tuple(external)))

    def history(self, limit: int) -> list[dict[str, Any]]:
        """The last `limit` runs' events, newest last (`plansight/history`)."""
        return self.store.history.runs(limit) if self.store is not None else []

    # Checkpoints --------------------------------------------------------------------------

    async def _require_checkpoints(self) -> Checkpointer:
        checkpointer = self.checkpointer
        if checkpointer is None:
            raise CheckpointsOff(self.checkpoints_off)
        if not await checkpointer.ready():
            raise CheckpointsOff(checkpointer.off_reason or "checkpoints are off")
        return checkpointer

    async def checkpoints(self) -> list[Checkpoint]:
        """The workspace's checkpoints, oldest first; CheckpointsOff when there are none."""
        return await (await self._require_checkpoints()).checkpoints()

    async def restore_checkpoint(
        self,
        *,
        checkpoint: str | None = None,
        todo_id: str | None = None,
        paths: list[str] | None = None,
        conversation: bool = False,
        force: bool = False,
        dry_run: bool = False,
    ) -> RestoreResult:
        """Put files back to a checkpoint, or undo plan item `todo_id` (which becomes pending);
        with `conversation`, the conversation and plan go back too. Not during a run.
        `dry_run`: change nothing; what would be restored and skipped."""
        self._refuse_if_running("restoring")
        checkpointer = await self._require_checkpoints()
        self._refuse_if_running("restoring")  # a run may have begun while the store opened
        if todo_id is not None and not any(i.id == todo_id for i in self.plan.state.items):
            raise CheckpointError(f"the plan has no item #{todo_id}")
        task = asyncio.current_task()
        assert task is not None
        self._running = task  # a run asked for meanwhile is refused as busy
        self.echoes.hold()  # judged once what the restore wrote is known
        try:
            restored = await checkpointer.restore(
                checkpoint=checkpoint,
                todo_id=todo_id,
                paths=paths,
                force=force,
                conversation=conversation,
                dry_run=dry_run,
            )
            if not dry_run:
                self._take_in(restored, checkpoint, todo_id)
        finally:
            self._running = None
            self.echoes.release()
        return restored.result

    async def step_changes(self) -> dict[str, list[StepFile]]:
        """The files each item of the current plan's session changed, in plan order."""
        steps = await (await self._require_checkpoints()).steps()
        order = {item.id: n for n, item in enumerate(self.plan.state.items)}
        return dict(sorted(steps.items(), key=lambda kv: order.get(kv[0], len(order))))

    async def checkpoint_file(self, checkpoint: str, path: str) -> bytes | None:
        """A file as a checkpoint holds it, None if it held none (for a client's diff)."""
        return await (await self._require_checkpoints()).file_at(checkpoint, path)

    def _take_in(self, restored: Restored, checkpoint: str | None, todo_id: str | None) -> None:
        """The session after a restore: conversation and plan as asked, the model told."""
        result = restored.result
        if restored.messages is not None:
            self.conversation.replace(restored.messages)
            self.compactor.meter.reset()
            self.events.emit(ConversationChanged(rewritten=True))
        if restored.plan is not None:
            items = [todo_item(raw) for raw in restored.plan.get("items", [])]
            state = self.plan.restore(items, self.plan.state.version + 1)
            if self.checkpointer is not None:
                self.checkpointer.follow_plan(state.in_progress.id if state.in_progress else None)
            self.notices.plan_edited = True
            self.events.emit(PlanChanged(state))
        if result.restored:
            self.workspace.mark_stale(result.restored)  # to be read again before an edit
            self.echoes.left_as_they_are(result.restored)
        told = restore_notice(result, checkpoint, todo_id, restored.messages is not None)
        if told:
            self.notices.restores.append(told)

    def files_watched(self) -> None:
        """A watcher calls `files_changed` from now on with the changes of files: the agent's
        commands' are found from now on, to be told apart."""
        self.command_echoes.watched = True
        if self.checkpointer is not None:
            self.checkpointer.watched()

    def state(self) -> dict[str, Any]:
        return {
            "todos": self.plan.state.to_wire(),
            "scratchpad": self.scratchpad.content,
            "running": self.running,
        }

    # Storage -----------------------------------------------------------------------------

    def restore(self) -> bool:
        """Load the stored session; True when there was one."""
        if self.store is None:
            return False
        self.store.remove_leftovers()
        plan = self.store.load("plan")
        scratch = self.store.load("scratchpad")
        conversation = self.store.conversation.load()
        usage = self.store.load("usage")
        found = any(part is not None for part in (plan, scratch, conversation))
        try:
            if isinstance(plan, dict):
                items = [todo_item(i) for i in plan.get("items", [])]
                self.plan.restore(items, int(plan.get("version", 0)))
            if isinstance(scratch, dict):
                self.scratchpad.write(str(scratch.get("content", "")))
            if conversation:
                self.conversation.messages[:] = conversation
                self.conversation.repair("The previous run stopped before this tool finished.")
            if isinstance(usage, dict):
                self.total_usage = Usage(**{k: int(v) for k, v in usage.items()})
        except (KeyError, TypeError, ValueError) as err:
            log.error("stored session is malformed (%s); starting fresh", err)
            self.plan.clear()
            self.scratchpad.clear()
            self.conversation.clear()
            return False
        return found

    def _on_event(self, event: Event) -> None:
        if isinstance(event, RunFinished):
            self.total_usage.add(event.result.usage)
        if isinstance(event, PlanChanged) and self.checkpointer is not None:
            item = event.state.in_progress
            self.checkpointer.plan_changed(item.id if item is not None else None)
        if self.store is None:
            return
        if (payload := event_payload(event)) is not None:
            self.store.history.record(payload)
        if isinstance(event, PlanChanged):
            self.store.save("plan", plan_record(event.state))
        elif isinstance(event, ScratchpadChanged):
            self.store.save("scratchpad", {"content": event.content})
        elif isinstance(event, ConversationChanged):
            if event.rewritten:  # atomically: a kill leaves the old or the new one
                self.store.conversation.rewrite(self.conversation.messages)
            else:
                self.store.conversation.save(self.conversation.messages)
        elif isinstance(event, RunFinished):
            self.store.save(
                "usage",
                {
                    "input_tokens": self.total_usage.input_tokens,
                    "output_tokens": self.total_usage.output_tokens,
                    "cache_read_input_tokens": self.total_usage.cache_read_input_tokens,
                    "cache_creation_input_tokens": self.total_usage.cache_creation_input_tokens,
                },
            )


def plan_record(state: TodoState) -> dict[str, Any]:
    """The plan as it is stored (and kept with each checkpoint)."""
    return {"items": [i.to_wire() for i in state.items], "version": state.version}


def todo_item(raw: Mapping[str, Any]) -> TodoItem:
    return TodoItem(
        id=str(raw["id"]),
        text=str(raw["text"]),
        status=raw["status"],
        retries=int(raw.get("retries", 0)),
    )


def restore_notice(
    result: RestoreResult, checkpoint: str | None, todo_id: str | None, rewound: bool
) -> str:
    """What the model is told at its next turn about a restore the user made."""
    if not result.restored and not rewound:
        return ""
    if todo_id is not None:
        said = f"The user undid plan item #{todo_id}: its files are back as they were before it"
    else:
        said = f"The user restored checkpoint {checkpoint}"
    if rewound:
        said += ", and the conversation was taken back to that point"
    said += "."
    if result.restored:
        shown = ", ".join(result.restored)
        said += f" Restored: {shown}. Read them again before editing them."
    if result.skipped:
        kept = "; ".join(f"{s.path} ({s.reason})" for s in result.skipped)
        said += f" Left as they are: {kept}."
    return said
