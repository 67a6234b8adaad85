"""What a tool handler may touch: the session's plan, notes, workspace and the user's hooks."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from plansight.engine.events import EventBus, Location
from plansight.engine.hooks import (
    ApproveHook,
    AskHook,
    PlanReviewHook,
    ReviewHook,
    approve_all_plans,
    dismiss_all_questions,
)
from plansight.engine.planmode import RunState
from plansight.engine.prompt import folder_note
from plansight.plan.plan import Plan
from plansight.plan.review import ReviewMemory
from plansight.plan.scratchpad import Scratchpad
from plansight.tools.errors import ToolError
from plansight.workspace.access import Workspace, WorkspaceError

# What the checkpoints listen with (re-exported: the tools and the checkpoints import it here).
from plansight.workspace.echoes import ChangeRecorder as ChangeRecorder
from plansight.workspace.echoes import NoRecorder as NoRecorder
from plansight.workspace.instructions import FolderInstructions
from plansight.workspace.sandbox import CommandSandbox
from plansight.workspace.secretvalues import SecretValues


@dataclass
class ToolContext:
    plan: Plan
    scratchpad: Scratchpad
    workspace: Workspace
    review: ReviewHook
    approve: ApproveHook
    events: EventBus
    review_plan: PlanReviewHook = approve_all_plans
    ask: AskHook = dismiss_all_questions
    # The run in progress (the last one between runs): its mode and focus.
    run: RunState = field(default_factory=RunState)
    # The tool call being run (the model's tool_use id): each request to the user names it.
    call_id: str | None = None
    # The plan review's memory between two proposals (the proposal the user last saw, their
    # open comments, what the model addressed): this session's, as the context is.
    plan_review: ReviewMemory = field(default_factory=ReviewMemory)
    # The document and lines the agent last read or edited: where a reminder is shown.
    last_location: Location | None = None
    changes: ChangeRecorder = field(default_factory=NoRecorder)
    # Where `bash` runs its commands (None: the default sandbox, made at the first command).
    sandbox: CommandSandbox | None = None
    # The known secret values, withheld from every tool result (None: nothing is withheld,
    # a context made for a test of one tool).
    secrets: SecretValues | None = None

    # The subfolders' AGENTS.md / CLAUDE.md, added to a result once (None: not read at all).
    folder_instructions: FolderInstructions | None = None

    def instructions_note(self, relative_path: str) -> str:
        """The instructions of the folders above a file the model reads or changes that it
        was not given yet, as a note for the tool's result ("" when there are none)."""
        if self.folder_instructions is None:
            return ""
        return "".join(folder_note(i) for i in self.folder_instructions.for_file(relative_path))

    def touch(self, relative_path: str, start_line: int, end_line: int) -> None:
        """Record a read or edit; lines are 0-based and inclusive."""
        self.last_location = Location(relative_path, max(start_line, 0), max(end_line, 0))


@contextmanager
def workspace_errors() -> Iterator[None]:
    """Workspace errors are written for the model: pass them on as tool errors."""
    try:
        yield
    except WorkspaceError as err:
        raise ToolError(str(err)) from err
