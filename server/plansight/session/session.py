"""One agent session over a workspace: the state the server owns, and the runs over it.

Front doors (the language server, tests) create a Session with their settings and hooks,
subscribe to `session.events`, call `load_stored` and `start`, then `run`, `edit_plan`,
`reset`, `compact`, `history`, `state` and the checkpoints' requests (`session.checkpoints`,
checkpoints/facade.py), and `close` at the end. The session's rules hold whoever embeds it:
one run at a time (a second `run`, and a `reset`, `compact` or restore during a run raise
`SessionBusy`), settings from the environment and the initialization options
(settings.py), changes saved as they happen (persistence.py), the workspace watched and the
leftovers of a killed server cleaned up.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from plansight.checkpoints.facade import SessionCheckpoints
from plansight.checkpoints.restore import RestoreRequest, RestoreResult
from plansight.engine.compaction.compactor import CompactionResult, Compactor
from plansight.engine.conversation import Conversation
from plansight.engine.events import (
    EventBus,
    FilesChanged,
    McpChanged,
    PlanChanged,
    RunFinished,
    RunResult,
    RunStarted,
    ScratchpadChanged,
)
from plansight.engine.hooks import (
    ApproveHook,
    ApproveToolHook,
    AskHook,
    DocumentSource,
    PlanReviewHook,
    ReviewHook,
    TrustHook,
    accept_all_edits,
    approve_all_plans,
    dismiss_all_questions,
    distrust_all_servers,
    refuse_all_commands,
    refuse_all_tools,
    reporting_reviews,
)
from plansight.engine.loop import AgentLoop, Notices
from plansight.engine.model import ModelClient, SdkLoader
from plansight.engine.planmode import RunMode, RunState
from plansight.engine.prompt import system_prompt
from plansight.mcp.feature import McpFeature
from plansight.plan.plan import Plan, TodoState
from plansight.plan.scratchpad import Scratchpad
from plansight.session.history import RecentRuns
from plansight.session.lock import RunLock
from plansight.session.persistence import SessionPersistence
from plansight.session.settings import SessionSettings
from plansight.session.storage import SessionStore, plansight_storage
from plansight.tools import default_tools
from plansight.tools.context import ToolContext
from plansight.workspace import atomic
from plansight.workspace.access import Workspace
from plansight.workspace.echoes import CommandEchoes, Echoes
from plansight.workspace.sandbox import CommandSandbox
from plansight.workspace.secrets import ProtectedPaths
from plansight.workspace.watcher import IGNORED_DIRS, WorkspaceWatcher

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SessionState:
    todos: TodoState
    scratchpad: str
    running: bool

    def to_wire(self) -> dict[str, Any]:
        """`plansight/state`'s result."""
        return {
            "todos": self.todos.to_wire(),
            "scratchpad": self.scratchpad,
            "running": self.running,
        }


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
        approve_tool: ApproveToolHook = refuse_all_tools,
        trust_server: TrustHook = distrust_all_servers,
        mcp_servers: Mapping[str, Any] | None = None,
    ) -> None:
        """`mcp_servers`: MCP servers the front door gives (`.mcp.json`'s per-server shape),
        trusted; `approve_tool` asks before each MCP tool call, `trust_server` before a server
        named in a workspace file starts (plansight.mcp)."""
        self.root = root.resolve()
        self.settings = settings
        self.events = EventBus()
        self.plan = Plan()
        self.scratchpad = Scratchpad()
        self.conversation = Conversation()
        self.notices = Notices(changed_files=set())
        self.workspace = Workspace(
            self.root, documents, ProtectedPaths(self.root, settings.protect)
        )
        self.tools = default_tools(planning=settings.planning)
        sandbox = CommandSandbox(
            self.root,
            settings.sandbox,
            protected=self.workspace.protected,
            hidden=plansight_storage(store, self.root),
        )
        self.ctx = ToolContext(
            plan=self.plan,
            scratchpad=self.scratchpad,
            workspace=self.workspace,
            review=reporting_reviews(review, self.events),
            approve=approve,
            events=self.events,
            review_plan=review_plan,
            ask=ask,
            sandbox=sandbox,
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
        self.lock = RunLock()
        self.watcher: WorkspaceWatcher | None = None
        # What the agent's restores and commands left on disk, so that the watcher's reports
        # of them are not told to the model (or the editor) as someone else's changes.
        self.echoes = Echoes(self.root, self._judge_changes)
        self.checkpoints = SessionCheckpoints(
            store.directory if store is not None else None,
            on=settings.checkpoints,
            root=self.root,
            gate=self.lock,
            events=self.events,
            plan=self.plan,
            conversation=self.conversation,
            compactor=self.compactor,
            notices=self.notices,
            workspace=self.workspace,
            echoes=self.echoes,
        )
        self.command_echoes = CommandEchoes(self.echoes, self.checkpoints.recorder)
        self.ctx.changes = self.command_echoes
        self.mcp = McpFeature(
            self.root,
            store.directory if store is not None else None,
            client_servers=mcp_servers,
            approve_tool=approve_tool,
            trust_server=trust_server,
            # A server named in a workspace file runs confined as the agent's commands do.
            wrap=sandbox.server_argv,
        )
        self.mcp.subscribe(lambda servers: self.events.emit(McpChanged(tuple(servers))))
        self.persistence = (
            SessionPersistence.attach(
                store,
                self.events,
                plan=self.plan,
                scratchpad=self.scratchpad,
                conversation=self.conversation,
            )
            if store is not None
            else None
        )

    @property
    def running(self) -> bool:
        return self.lock.held

    def load_stored(self) -> bool:
        """Load the stored session (persistence.py); True when there was one."""
        return self.persistence is not None and self.persistence.load_stored()

    def start(self, *, watch: bool = True) -> None:
        """What a server does once it is up (on its event loop): watch the workspace for
        changes made by others (`watch=False`: nobody does; each command then scans for its
        changes), then import the SDK and remove the temporary files of writes a killed server
        never finished (in threads) and open the checkpoints (in the background)."""
        if watch:
            self.watcher = WorkspaceWatcher(self.root, self.files_changed)
            self.watcher.start()
            # The agent's commands' changes are found from now on, to be told apart.
            self.command_echoes.watched = True
            self.checkpoints.watched()
        self.mcp.start()  # servers start in the background; workspace ones once trusted
        # Once the watcher's first step has imported watchfiles: imports that run side by side
        # slow each other down, and that one is on the event loop.
        asyncio.get_running_loop().call_soon(self._start_in_background)

    def _start_in_background(self) -> None:
        self.model.sdk.start()
        assert self.ctx.sandbox is not None  # found once, so that `auto` warns at start-up
        threading.Thread(target=self.ctx.sandbox.availability, daemon=True).start()
        threading.Thread(
            target=self.remove_leftovers, name="plansight-cleanup", daemon=True
        ).start()
        self.checkpoints.start()

    def remove_leftovers(self) -> None:
        try:
            removed = atomic.remove_leftovers(self.root, IGNORED_DIRS)
        except Exception:
            log.exception("could not look for temporary files left by an interrupted write")
            return
        if removed:
            log.info("removed %d temporary files left by an interrupted write", len(removed))

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
        with self.lock.hold("starting another"):
            # Checked before a new session clears the plan: a refused run changes nothing.
            run_state = RunState.start(
                mode, todo_id, TodoState((), 0, "user") if new_session else self.plan.state
            )
            if new_session:
                self._clear()
            self.ctx.run = run_state
            await self._fix_run_tools(prompt, run_state)
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
            self.checkpoints.run_started()
            try:
                return await loop.run(prompt)
            finally:
                self.checkpoints.run_ended()

    async def _fix_run_tools(self, prompt: str, run: RunState) -> None:
        """The MCP tools of this run, fixed for all of it so that the cached prefix holds (a
        server still starting is waited for, at most its startupTimeout). A cancel meanwhile
        ends the run as the loop would: started, then finished cancelled."""

        async def window() -> int:
            return await self.compactor.window(self.model)

        try:
            self.tools.set_run_tools(await self.mcp.tools_for_run(window))
        except asyncio.CancelledError:
            self.events.emit(RunStarted(prompt, run.mode, run.focus.id if run.focus else None))
            self.events.emit(RunFinished(RunResult("cancelled", "The run was cancelled.", 0)))
            raise

    async def compact(self) -> CompactionResult:
        """Compact on request (between runs): old tool results cleared, then a summary.

        SessionBusy while a run is in progress; ModelError when the summary request fails
        (the conversation is then as it was).
        """
        with self.lock.hold("compacting"):  # a run asked for meanwhile is refused as busy
            stored = self.persistence.last_prompt() if self.persistence is not None else ""
            result = await self.compactor.compact(
                self.model,
                system=self.system_prompt(),  # the runs' own: the cached prefix serves it
                current_prompt=self._last_prompt or stored or "(none yet)",
                summarize=True,
            )
        if self.persistence is not None:
            self.persistence.spent(result.usage)
        return result

    def system_prompt(self) -> str:
        return system_prompt(self.root.name, planning=self.settings.planning)

    def cancel(self) -> bool:
        """Cancel the run in progress (its task); False when nothing runs."""
        task = self.lock.task
        if task is None or task.done():
            return False
        task.cancel()
        return True

    async def close(self) -> None:
        """Stop the run in progress (it ends cancelled), close the model's connections and
        stop watching."""
        task = self.lock.task
        if task is not None and not task.done():
            task.cancel()
            await asyncio.wait({task})
        if self.persistence is not None:
            self.persistence.flush()
        await self.command_echoes.settled()  # a stopped command's end scan
        await self.checkpoints.close()
        await self.mcp.close()
        await self.model.close()
        if self.watcher is not None:
            await self.watcher.stop()
            self.watcher = None

    def edit_plan(self, items: Any, version: int | None = None) -> TodoState:
        """The user's change of the plan: same rules as the model's; PlanError on a bad plan."""
        state = self.plan.update_from_user(items, version)
        self.notices.plan_edited = True  # the model hears of it at its next turn
        self.events.emit(PlanChanged(state))
        return state

    def reset(self) -> None:
        """Forget plan, scratchpad and conversation (and their stored copies); not mid-run."""
        self.lock.refuse_if_held("resetting")
        self._clear()

    def _clear(self) -> None:
        self.checkpoints.new_session()
        self.conversation.clear()
        self.notices.clear()
        self.compactor.meter.reset()
        if self.persistence is not None:
            self.persistence.new_session()
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
        self.checkpoints.outside_changed(external)
        self.notices.changed_files.update(external)
        self.events.emit(FilesChanged(tuple(external)))

    def restored(self, request: RestoreRequest, result: RestoreResult) -> None:
        """An undo or restore the user made (not a dry run): kept in the history after the last
        run, so that a client shows it again after a restart."""
        if self.persistence is None or request.dry_run:
            return
        record: dict[str, Any] = {"type": "restored", **result.to_wire()}
        if request.todo_id is not None:
            record["todoId"] = request.todo_id
        if request.checkpoint is not None:
            record["checkpoint"] = request.checkpoint
        if request.conversation:
            record["conversation"] = True
        self.persistence.record_after(record)

    def history(self, limit: int) -> RecentRuns:
        """The last `limit` runs' events, newest last (`plansight/history`)."""
        return RecentRuns(self.persistence.history(limit) if self.persistence is not None else [])

    def state(self) -> SessionState:
        return SessionState(self.plan.state, self.scratchpad.content, self.running)
