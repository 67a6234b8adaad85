"""One agent session over a workspace: the state the server owns, and the runs over it.

Front doors (the language server, tests) create a Session with their settings and hooks,
subscribe to `session.events`, call `load_stored` and `start`, then `run`, `edit_plan`,
`reset`, `compact`, `restore`, `history`, `state` and the checkpoints' read-only requests
(`session.checkpoints`, checkpoints/facade.py), and `close` at the end. The requests that change
state are the session's methods, so each writes what it keeps (a restore's history record)
whichever front door asked; what needs the user's approval goes through the session's one
approval policy (approvals.py). The session's rules hold whoever embeds it:
one run at a time (a second `run`, and a `reset`, `compact` or restore during a run raise
`SessionBusy`) and one live server per stored session (lock.py), settings from the
environment and the initialization options (settings.py), changes saved as they happen
(persistence.py), the workspace watched and the agent's own changes told from others'
(changes.py), the leftovers of a killed server cleaned up (workspace/atomic.py), the tools
built with the front door's hooks (session/toolbox.py), each run's MCP tools fixed as it starts
(mcp/feature.py), and secret values withheld from all that joins the conversation
(workspace/secretvalues.py).
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, Unpack

from plansight.checkpoints.facade import SessionCheckpoints
from plansight.checkpoints.restore import RestoreRequest, RestoreResult
from plansight.engine.compaction.compactor import CompactionResult, Compactor
from plansight.engine.conversation import Conversation
from plansight.engine.events import EventBus, PlanChanged, RunResult, ScratchpadChanged
from plansight.engine.loop import AgentLoop, Notices
from plansight.engine.model import ModelClient, SdkLoader
from plansight.engine.planmode import RunMode, RunState
from plansight.engine.prompt import system_prompt
from plansight.plan.plan import Plan, TodoState
from plansight.plan.scratchpad import Scratchpad
from plansight.session.changes import WorkspaceChanges
from plansight.session.history import RecentRuns
from plansight.session.lock import RunLock
from plansight.session.persistence import persistence_for
from plansight.session.planfiles import plans_folder
from plansight.session.settings import SessionSettings
from plansight.session.storage import SessionStore, plansight_storage
from plansight.session.toolbox import FrontDoor, build_tools
from plansight.workspace import atomic
from plansight.workspace.instructions import (
    FolderInstructions,
    Instructions,
    root_instructions,
)
from plansight.workspace.watcher import IGNORED_DIRS

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SessionState:
    todos: TodoState
    scratchpad: str
    running: bool
    instructions: tuple[Instructions, ...] = ()  # the project's, in the system prompt

    def to_wire(self) -> dict[str, Any]:
        """`plansight/state`'s result; `instructions` (an optional field of ours) only where
        the project has instructions, so that the version 1 answer is unchanged otherwise."""
        wire: dict[str, Any] = {
            "todos": self.todos.to_wire(),
            "scratchpad": self.scratchpad,
            "running": self.running,
        }
        if self.instructions:
            wire["instructions"] = [i.to_wire() for i in self.instructions]
        return wire


class Session:
    def __init__(
        self,
        root: Path,
        settings: SessionSettings,
        *,
        store: SessionStore | None = None,
        hidden: Sequence[Path] = (),
        scratchpad: Scratchpad | None = None,
        **front_door: Unpack[FrontDoor],
    ) -> None:
        """`front_door`: its hooks, documents and MCP servers, for the tools (session/toolbox.py);
        each left out gets the answer of a session nobody attends (engine/hooks.py). `hidden`:
        more folders its commands may not see; `scratchpad`: one shared with other sessions
        (a parallel worker's, plansight/parallel)."""
        self.root = root.resolve()
        self.settings = settings
        self.events = EventBus()
        self.plan = Plan()
        self.scratchpad = scratchpad if scratchpad is not None else Scratchpad()
        self.conversation = Conversation()
        self.notices = Notices(changed_files=set())
        toolbox = build_tools(
            self.root,
            settings,
            self.events,
            plan=self.plan,
            scratchpad=self.scratchpad,
            storage=store.directory if store is not None else None,
            hidden=[*plansight_storage(store, self.root), *hidden],
            **front_door,
        )
        self.workspace, self.tools, self.ctx = toolbox.workspace, toolbox.tools, toolbox.ctx
        # The plan files' folder (session/planfiles.py): Plansight's state, so neither watched
        # as someone else's change, nor checkpointed, listed or searched, and never written by
        # the model's file tools (the todo tool changes the plan).
        self.plans_folder, refused = plans_folder(self.root, settings.plans_directory)
        if refused is not None:
            log.warning("%s", refused)
        if self.plans_folder is not None:
            relative = self.plans_folder.relative_to(self.workspace.root).as_posix()
            self.workspace.state_folders = (*self.workspace.state_folders, relative)
            self.workspace.plans_folder = relative
        # Read once per session (its system prompt is every request's cached prefix): a change
        # of AGENTS.md takes effect with the next session (`plansight/reset`, a new server).
        self.instructions = root_instructions(self.workspace)
        self.ctx.folder_instructions = FolderInstructions(self.workspace, self._instructions_used())
        self.mcp = toolbox.mcp
        self.approvals = toolbox.approvals  # what goes ahead unasked (approvals.py)
        self.secrets = toolbox.secrets
        # Whatever else joins the conversation (the prompt, notices) is withheld there too.
        self.conversation.withhold = self.secrets.withhold_blocks
        self.store = store
        self.compactor = Compactor(
            settings=settings.compaction,
            conversation=self.conversation,
            plan=self.plan,
            scratchpad=self.scratchpad,
            tools=self.tools,
            events=self.events,
        )
        self.model = ModelClient(settings.model, SdkLoader())
        # A read-only view (the readOnly option) refuses whatever would change the session.
        self.lock = RunLock(store.claim if store is not None and store.read_only else None)
        self.changes = WorkspaceChanges(
            self.root, workspace=self.workspace, notices=self.notices, events=self.events
        )
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
            echoes=self.changes.echoes,
            read_only=self.lock.read_only is not None,
        )
        self.changes.connect(self.checkpoints)
        self.ctx.changes = self.changes.command_echoes
        self.persistence = persistence_for(
            store,
            self.events,
            plan=self.plan,
            scratchpad=self.scratchpad,
            conversation=self.conversation,
        )
        self.loop = AgentLoop(
            model=self.model,
            tools=self.tools,
            ctx=self.ctx,
            conversation=self.conversation,
            notices=self.notices,
            system_prompt=self.system_prompt(),
            max_rounds=settings.max_rounds,
            plan_features=settings.planning,
            nudges=settings.nudges,
            events=self.events,
            compactor=self.compactor,
            prepare=self._prepare_run,
        )

    async def _prepare_run(self) -> None:
        """As each run starts: the secret values read again (the user may have changed a
        protected file since; a walk, in a thread), and the run's MCP tools fixed (a server
        still starting is waited for, at most its startupTimeout)."""
        self.secrets.mark_stale()
        await asyncio.to_thread(self.secrets.refresh)
        await self.mcp.fix_run_tools(self.tools, partial(self.compactor.window, self.model))

    @property
    def running(self) -> bool:
        return self.lock.held

    def load_stored(self) -> bool:
        """Claim and load the stored session (persistence.py); True when there was one.
        StorageUnavailable when another live server keeps it or it cannot be saved."""
        return self.persistence.load_stored()

    def start(self, *, watch: bool = True) -> None:
        """What a server does once it is up (on its event loop): watch the workspace for
        changes made by others (`watch=False`: nobody does; each command then scans for its
        changes), then import the SDK and remove the temporary files of writes a killed server
        never finished (in threads) and open the checkpoints (in the background). The store is
        claimed first, if `load_stored` did not (StorageUnavailable: nothing started)."""
        self.persistence.claim()
        if self.persistence.read_only:  # it only looks: nothing watched, started, cleaned up
            self.checkpoints.start()
            return
        if watch:
            self.changes.watch()
        self.mcp.start()  # servers start in the background; workspace ones once trusted
        # Once the watcher's first step has imported watchfiles: imports that run side by side
        # slow each other down, and that one is on the event loop.
        asyncio.get_running_loop().call_soon(self._start_in_background)

    def _start_in_background(self) -> None:
        self.model.sdk.start()
        assert self.ctx.sandbox is not None  # found once, so that `auto` warns at start-up
        threading.Thread(target=self.ctx.sandbox.availability, daemon=True).start()
        cleanup = partial(atomic.clean_up, self.root, IGNORED_DIRS)
        threading.Thread(target=cleanup, name="plansight-cleanup", daemon=True).start()
        self.checkpoints.start()

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
            self.checkpoints.run_started()
            try:
                return await self.loop.run(prompt)
            finally:
                self.checkpoints.run_ended()

    async def compact(self) -> CompactionResult:
        """Compact on request (between runs): old tool results cleared, then a summary.

        SessionBusy while a run is in progress; ModelError when the summary request fails
        (the conversation is then as it was).
        """
        with self.lock.hold("compacting"):  # a run asked for meanwhile is refused as busy
            stored = self.persistence.last_prompt()
            result = await self.compactor.compact(
                self.model,
                system=self.system_prompt(),  # the runs' own: the cached prefix serves it
                current_prompt=self.loop.prompt or stored or "(none yet)",
                summarize=True,
            )
        self.persistence.spent(result.usage)
        return result

    def _instructions_used(self) -> int:
        return len(self.instructions.text.encode()) if self.instructions is not None else 0

    def system_prompt(self) -> str:
        return system_prompt(
            self.root.name, planning=self.settings.planning, project=self.instructions
        )

    def cancel(self) -> bool:
        """Cancel the run in progress (its task); False when nothing runs."""
        task = self.lock.task
        if task is None or task.done():
            return False
        task.cancel()
        return True

    async def close(self) -> None:
        """Stop the run in progress (it ends cancelled), close the model's connections, stop
        watching, and give up the store (another server may keep the workspace from now on)."""
        task = self.lock.task
        if task is not None and not task.done():
            task.cancel()
            await asyncio.wait({task})
        try:
            self.persistence.flush()
            await self.changes.settled()  # a stopped command's end scan
            await self.checkpoints.close()
            await self.mcp.close()
            await self.model.close()
            await self.changes.stop_watching()
        finally:  # last, and whatever failed: the workspace is not kept from the next server
            self.persistence.release()

    def edit_plan(self, items: Any, version: int | None = None) -> TodoState:
        """The user's change of the plan: same rules as the model's; PlanError on a bad plan."""
        self.lock.refuse_if_read_only()
        state = self.plan.update_from_user(items, version)
        self.notices.plan_edited = True  # the model hears of it at its next turn
        self.events.emit(PlanChanged(state))
        return state

    async def restore(self, request: RestoreRequest) -> RestoreResult:
        """Undo a plan step or go back to a checkpoint (`plansight/restore`, ACP `/undo`), and
        keep it in the history after the last run (not a dry run), so that every client shows
        it again after a restart: one record, whichever front door asked. The refusals are
        the checkpoints' (SessionBusy during a run, CheckpointError, CheckpointsOff)."""
        result = await self.checkpoints.restore(request)
        self.persistence.restored(request, result)
        return result

    def edit_from_file(
        self, items: Any, scratchpad: str | None, conflicts: list[str]
    ) -> TodoState | None:
        """The user's save of the plan file (session/planfiles.py): the plan edited as by
        `edit_plan` when `items` is not None (`conflicts`: items the model changed too, the
        user's kept), the scratchpad replaced when `scratchpad` is not None. PlanError (and
        nothing changed) on a bad plan. The new plan state, if the plan changed."""
        self.lock.refuse_if_read_only()
        state = None
        if items is not None:
            state = self.plan.update_from_file(items)
            self.notices.plan_edited = True
            self.notices.plan_conflicts.extend(conflicts)
            self.events.emit(PlanChanged(state))
        if scratchpad is not None:
            self.scratchpad.write(scratchpad)
            self.notices.scratchpad_edited = True
            self.events.emit(ScratchpadChanged(scratchpad))
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
        self.persistence.new_session()
        self.events.emit(PlanChanged(self.plan.clear()))
        self.scratchpad.clear()
        self.events.emit(ScratchpadChanged(""))
        self.ctx.plan_review.forget()
        # A new session reads the project's instructions again (a new cached prefix anyway).
        self.instructions = root_instructions(self.workspace)
        self.ctx.folder_instructions = FolderInstructions(self.workspace, self._instructions_used())
        self.loop.system_prompt = self.system_prompt()

    def history(self, limit: int) -> RecentRuns:
        """The last `limit` runs' events, newest last (`plansight/history`)."""
        return RecentRuns(self.persistence.history(limit))

    def state(self) -> SessionState:
        return SessionState(
            self.plan.state,
            self.scratchpad.content,
            self.running,
            (self.instructions,) if self.instructions is not None else (),
        )
