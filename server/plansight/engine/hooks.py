"""What the engine asks of whoever embeds it: edit review, command approval, plan review,
questions to the user, open documents, and (MCP) approval of a server's tool call and trust in a
server that a workspace file names.

The language server implements these with editor requests; tests and the terminal
client implement them directly. The engine never knows which. Each request names the tool call
that made it (`call_id`, the model's tool_use id), so a front door shows the question on that
call. The approval policy (auto-approval, "always" answers, control files) is the session's
(session/approvals.py): a front door's hooks only ask the user and report the answer.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from plansight.engine.events import EditOutcome, EditReviewed, EventBus
from plansight.plan.plan import TodoState
from plansight.plan.review import PlanComment, ReviewContext

# Types of the workspace's that the hooks speak of (re-exported: front doors import them here).
from plansight.workspace.access import DocumentSource as DocumentSource
from plansight.workspace.sandbox import SandboxDescription as SandboxDescription


@dataclass(frozen=True)
class EditProposal:
    """A change the model wants to make to one file, shown to the user before it is written."""

    id: str
    path: Path  # absolute, already resolved inside the workspace
    relative_path: str
    old_text: str  # the whole document before ("" for a new file)
    new_text: str  # the whole document after
    description: str
    todo_id: str | None  # the plan item in progress when the edit was proposed
    plan_id: str | None = None  # the plan that item belongs to (TodoState.plan_id)
    # A control file (workspace/control.py): every front door asks the user, auto-approval
    # notwithstanding, and refuses it when nobody can answer.
    control: bool = False
    call_id: str | None = None  # the tool call (tool_use id) that proposed it
    # Version 4: a parallel worker's change being taken in (its item id); `conflict`: the
    # workspace changed the same lines meanwhile, and the text holds both sides between conflict
    # markers (never accepted unasked); `deleted`: the worker deleted the file.
    worker: str | None = None
    conflict: bool = False
    deleted: bool = False


@dataclass(frozen=True)
class EditDecision:
    accepted: bool
    feedback: str | None = None
    # The whole document as the user settled it, when it differs from the proposal.
    new_text: str | None = None
    always: bool = False  # the answer holds for every edit from now on (session/approvals.py)


@dataclass(frozen=True)
class CommandRequest:
    command: str
    cwd: str
    sandbox: SandboxDescription | None = None  # None: the command runs without a sandbox
    call_id: str | None = None  # the tool call (tool_use id) that asks to run it


@dataclass(frozen=True)
class CommandDecision:
    approved: bool
    feedback: str | None = None
    always: bool = False  # the answer holds for every command from now on
    # With `always`: it holds for this exact command in this folder only (the terminal's
    # "don't ask again for this command"), not for every command.
    this_command: bool = False


@dataclass(frozen=True)
class PlanProposal:
    """The plan the model submitted (`submit_plan`), for the user to approve."""

    todos: TodoState
    summary: str
    scratchpad: str
    # Why the user's last answer was refused (their edited plan broke a rule), when it was.
    problem: str | None = None
    # The proposal the user saw before this one, what changed and which comments the model
    # addressed (None: the first proposal of this review).
    context: ReviewContext | None = None
    # The comments of the user's refused answer, given back so that none is lost.
    comments: tuple[PlanComment, ...] = ()
    call_id: str | None = None  # the `submit_plan` call (tool_use id)


PlanVerdict = Literal["approve", "revise", "cancel"]


@dataclass(frozen=True)
class PlanDecision:
    decision: PlanVerdict
    feedback: str | None = None
    # The plan as the user edited it (raw items, validated by the todo rules), or None.
    items: Any = None
    # The user's comments (raw, checked by plan.review.parse_comments), or None.
    comments: Any = None


@dataclass(frozen=True)
class Question:
    """A question only the user can answer (`ask_user`)."""

    question: str
    options: tuple[str, ...] = ()
    multi_select: bool = False
    call_id: str | None = None  # the `ask_user` call (tool_use id)


@dataclass(frozen=True)
class UserAnswer:
    answer: str | None = None  # a single choice or free text
    answers: tuple[str, ...] = ()  # the choices of a multi-select question
    dismissed: bool = False

    @property
    def given(self) -> bool:
        return not self.dismissed and (
            bool(self.answers) or bool(self.answer and self.answer.strip())
        )


@dataclass(frozen=True)
class ToolApproval:
    """A call of an MCP server's tool, for the user to allow (`plansight/approveTool`)."""

    server: str
    tool: str  # the server's own name of the tool (not the prefixed `mcp__server__tool`)
    input: dict[str, Any]
    call_id: str | None = None  # the model's tool call (tool_use id) that asks for it


@dataclass(frozen=True)
class ToolDecision:
    approved: bool
    feedback: str | None = None
    # The answer holds for this tool from now on: allowed, in this workspace (mcp/trust.py);
    # denied, in this session (session/approvals.py).
    always: bool = False


@dataclass(frozen=True)
class ServerTrust:
    """An MCP server named in a file inside the workspace: started only once the user trusts it
    (`plansight/approveMcpServer`), so that opening a cloned repository runs nothing."""

    name: str
    source: str  # the file that names it
    command: str | None = None
    args: tuple[str, ...] = ()
    url: str | None = None
    env: tuple[str, ...] = ()  # the names of the variables the entry sets
    # The host variables it pulls in with `${env:NAME}`: approving the question names them.
    from_host: tuple[str, ...] = ()


@dataclass(frozen=True)
class TrustDecision:
    """The user's answer about a workspace's MCP server. `from_host`: the host variables it
    may have (None: all those the question listed); a secret one left out stays empty and the
    server is not started."""

    approved: bool
    from_host: tuple[str, ...] | None = None


ReviewHook = Callable[[EditProposal], Awaitable[EditDecision]]
ApproveHook = Callable[[CommandRequest], Awaitable[CommandDecision]]
PlanReviewHook = Callable[[PlanProposal], Awaitable[PlanDecision]]
AskHook = Callable[[Question], Awaitable[UserAnswer]]
ApproveToolHook = Callable[[ToolApproval], Awaitable[ToolDecision]]
# A plain bool answers as `TrustDecision(approved)` does.
TrustHook = Callable[[ServerTrust], Awaitable[bool | TrustDecision]]


CONTROL_UNANSWERED = (
    "{path} is a control file (it steers the user's tools: git, the editor, Plansight); a "
    "change to it needs the user's own answer, and nobody could be asked here, so it was not "
    "written. Tell the user what you wanted to change in it and why."
)


def control_unanswered(proposal: EditProposal) -> EditDecision:
    """The refusal of a control edit that no user could be asked about."""
    return EditDecision(
        accepted=False, feedback=CONTROL_UNANSWERED.format(path=proposal.relative_path)
    )


async def accept_all_edits(proposal: EditProposal) -> EditDecision:
    """Every edit accepted, unasked (no user is there): but a control file's change is the
    user's decision, so it is refused."""
    if proposal.control:
        return control_unanswered(proposal)
    return EditDecision(accepted=True)


async def approve_all_commands(request: CommandRequest) -> CommandDecision:
    return CommandDecision(approved=True)


async def refuse_all_commands(request: CommandRequest) -> CommandDecision:
    return CommandDecision(
        approved=False, feedback="Commands are not allowed without approval in this client."
    )


async def refuse_all_tools(request: ToolApproval) -> ToolDecision:
    return ToolDecision(
        approved=False, feedback="MCP tools are not allowed without approval in this client."
    )


async def distrust_all_servers(request: ServerTrust) -> bool:
    return False


async def approve_all_plans(proposal: PlanProposal) -> PlanDecision:
    return PlanDecision("approve")


async def dismiss_all_questions(question: Question) -> UserAnswer:
    return UserAnswer(dismissed=True)


def reporting_reviews(review: ReviewHook, events: EventBus) -> ReviewHook:
    """`review`, telling listeners how each edit was decided (`EditReviewed`): accepted,
    changed (the user edited the proposal), rejected, or cancelled with the run."""

    async def reviewed(proposal: EditProposal) -> EditDecision:
        def tell(outcome: EditOutcome, feedback: str | None = None) -> None:
            events.emit(
                EditReviewed(
                    id=proposal.id,
                    path=proposal.relative_path,
                    description=proposal.description,
                    outcome=outcome,
                    todo_id=proposal.todo_id,
                    plan_id=proposal.plan_id,
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
