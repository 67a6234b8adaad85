"""The engine's hooks answered by the ACP client: `session/request_permission` for edits,
commands, MCP tools and the plan, `elicitation/create` for questions.

Each request names the tool call it is about (the hook request's `call_id`). What is asked at
all is the session's approval policy (session/approvals.py: `autoApprove.*`, "always" answers,
control files), the same as the language server's; these hooks only ask, and show what the
policy decided unasked (`unasked`: an edit's diff, the call `in_progress`). The options are
`allow_once`, `allow_always`, `reject_once` and `reject_always`; an "always" answer is reported
to the policy, which holds it for that kind of request (edits, commands, one MCP server's tool)
for the rest of the session. A rejection reaches the model as the tool's own words, which say
it was `rejected by the user` ("This edit was rejected by the user; ... was not changed"), with
no feedback: ACP's answer has none. An edit of a control file (workspace/control.py) is asked
with `Allow` and `Reject` only. A plan in plan mode asks with `Approve` (allow_once) and `Keep
planning` (reject_once), the request's tool call holding the proposed plan as Markdown (for
clients that render no `plan` update): approving switches the session to act mode
(`current_mode_update` and the mode config option) and the run goes on; keeping on planning
ends the run, and the user's next prompt is their feedback.

Cancelling the run (`session/cancel`) cancels the awaited request: it counts as cancelled at
once, and the answer the client sends later is ignored (the connection drops it). A client that
answers the request itself with the `cancelled` outcome (CodeCompanion.nvim's Cancel) cancels
the run too: it is no rejection, after which the model would go on. A client that answers
with an error, or with an option it was not offered, is taken as a rejection.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from acp import Client, RequestError, text_block, tool_content, update_agent_message_text
from acp.schema import (
    AllowedOutcome,
    DeniedOutcome,
    ElicitationFormSessionMode,
    PermissionOption,
    ToolCallUpdate,
)

from plansight.acp.modes import Mode, mode_changed
from plansight.acp.updates import (
    Content,
    Update,
    edit_diff,
    proposed_plan,
    tool_running,
)
from plansight.engine.hooks import (
    CommandDecision,
    CommandRequest,
    EditDecision,
    EditProposal,
    PlanDecision,
    PlanProposal,
    Question,
    ToolApproval,
    ToolDecision,
    UserAnswer,
)
from plansight.tools.registry import ToolKind

log = logging.getLogger(__name__)

# A rejection's feedback: none. The tools say it in their own words, which hold the contract's
# `rejected by the user` ("This edit was rejected by the user; ..."); ACP's answer carries no
# text of the user's (their next prompt may).
REJECTED = None
ALLOW_ONCE, ALLOW_ALWAYS, REJECT_ONCE, REJECT_ALWAYS = (
    "allow_once",
    "allow_always",
    "reject_once",
    "reject_always",
)
APPROVE_PLAN, KEEP_PLANNING = "approve", "keep_planning"

Verdict = Literal["allow", "reject"]
SendUpdate = Callable[[Update], Awaitable[None]]


def permission_options() -> list[PermissionOption]:
    return [
        PermissionOption(option_id=ALLOW_ONCE, name="Allow", kind="allow_once"),
        PermissionOption(option_id=ALLOW_ALWAYS, name="Always allow", kind="allow_always"),
        PermissionOption(option_id=REJECT_ONCE, name="Reject", kind="reject_once"),
        PermissionOption(option_id=REJECT_ALWAYS, name="Always reject", kind="reject_always"),
    ]


def once_options() -> list[PermissionOption]:
    """For what no "always" may cover (a control file's edit)."""
    return [
        PermissionOption(option_id=ALLOW_ONCE, name="Allow", kind="allow_once"),
        PermissionOption(option_id=REJECT_ONCE, name="Reject", kind="reject_once"),
    ]


def plan_options() -> list[PermissionOption]:
    return [
        PermissionOption(option_id=APPROVE_PLAN, name="Approve", kind="allow_once"),
        PermissionOption(option_id=KEEP_PLANNING, name="Keep planning", kind="reject_once"),
    ]


@dataclass(frozen=True)
class ShownCall:
    """A tool call the client was shown (its `tool_call`), by its id: what a permission
    request about it repeats (some clients label the request by its own kind and title)."""

    kind: ToolKind
    title: str


@dataclass
class TurnEnd:
    """What the next prompt is, when this turn ended waiting for the user: their feedback on
    the plan (`plan`), or the answer to a question asked in the chat (`question`)."""

    plan_feedback: bool = False
    question: str | None = None

    def take(self) -> tuple[bool, str | None]:
        taken = (self.plan_feedback, self.question)
        self.plan_feedback, self.question = False, None
        return taken


@dataclass
class ClientHooks:
    """The hooks of one ACP session: they ask the user; the session's approval policy
    (session/approvals.py) decided already that the user must answer."""

    conn: Client
    session_id: str
    send: SendUpdate
    end_run: Callable[[str], None]  # ends the run once the tool returns, with this text
    elicitation: bool = False  # the client offers `elicitation/create` (forms)
    # The calls shown and not yet ended, by id (the agent's record of what it sent).
    calls: dict[str, ShownCall] = field(default_factory=dict)
    turn_end: TurnEnd = field(default_factory=TurnEnd)
    on_mode: Callable[[Mode], None] = lambda mode: None
    cancel_run: Callable[[], bool] = lambda: False  # cancels the run in progress; False: none
    # What each edit's tool call showed before its end: its diff, which its end keeps.
    shown: dict[str, list[Content]] = field(default_factory=dict)

    # Asking ------------------------------------------------------------------------------------

    async def _ask(
        self, call_id: str | None, content: list[Content] | None = None
    ) -> tuple[Verdict, bool]:
        """Allowed or rejected by the user, and whether for always; `content` what the request
        shows of the call (an edit's diff)."""
        chosen = await self._request(call_id, permission_options(), content)
        verdict: Verdict = "allow" if chosen in (ALLOW_ONCE, ALLOW_ALWAYS) else "reject"
        if verdict == "allow":
            await self._running(call_id)
        return verdict, chosen in (ALLOW_ALWAYS, REJECT_ALWAYS)

    async def _running(self, call_id: str | None) -> None:
        if call_id is not None:
            await self.send(tool_running(call_id))

    async def _ask_control(
        self, proposal: EditProposal, content: list[Content] | None = None
    ) -> Verdict:
        """A control file's edit: Allow or Reject, no "always" (approvals.py)."""
        title = (
            f"Edit {proposal.relative_path}, a control file (it steers your tools: git, the "
            "editor, Plansight)"
        )
        chosen = await self._request(proposal.call_id, once_options(), content, title)
        verdict: Verdict = "allow" if chosen == ALLOW_ONCE else "reject"
        if verdict == "allow":
            await self._running(proposal.call_id)
        return verdict

    async def _request(
        self,
        call_id: str | None,
        options: list[PermissionOption],
        content: list[Content] | None = None,
        title: str | None = None,
    ) -> str | None:
        """The option the user chose; None for an error answer. A request the client answers
        `cancelled` cancels the run (CancelledError). `title`: the tool call's title as the
        request shows it (default: the call's own)."""
        call = self.calls.get(call_id) if call_id is not None else None
        tool_call = ToolCallUpdate(
            tool_call_id=call_id or "plansight-unknown-call",
            title=title or (call.title if call is not None else None) or None,
            # Some clients (CodeCompanion.nvim) label the request by its own kind and title.
            kind=call.kind if call is not None else None,
            content=content,
        )
        try:
            response = await self.conn.request_permission(
                session_id=self.session_id, tool_call=tool_call, options=options
            )
        except RequestError as err:
            log.warning("the client answered session/request_permission with an error: %s", err)
            return None
        outcome = response.outcome
        if isinstance(outcome, DeniedOutcome) and self.cancel_run():
            log.info("the client cancelled the permission request: the run is cancelled")
            raise asyncio.CancelledError  # the run's task, cancelled just now, ends here
        if isinstance(outcome, AllowedOutcome):
            offered = {option.option_id for option in options}
            if outcome.option_id in offered:
                return outcome.option_id
            log.warning("the client chose %r, an option it was not offered", outcome.option_id)
        return None

    async def _show_edit(self, proposal: EditProposal) -> list[Content] | None:
        """The edit's diff on its tool call (kept when the call ends)."""
        if proposal.call_id is None:
            return None
        diff = edit_diff(proposal.call_id, proposal)
        shown = self.shown[proposal.call_id] = list(diff.content or [])
        await self.send(diff)
        return shown

    # What the session's policy decided unasked (approvals.py) ----------------------------------

    async def unasked(
        self, request: EditProposal | CommandRequest | ToolApproval, ok: bool
    ) -> None:
        """Shown as if asked: an edit's diff, and the call `in_progress` once allowed."""
        if isinstance(request, EditProposal):
            await self._show_edit(request)
        if ok:
            await self._running(request.call_id)

    # ReviewHook --------------------------------------------------------------------------------

    async def review(self, proposal: EditProposal) -> EditDecision:
        # The request holds the diff too: some clients (CodeCompanion.nvim) show the request's
        # own tool call, not the updates before it.
        shown = await self._show_edit(proposal)
        if proposal.control:
            return EditDecision(accepted=await self._ask_control(proposal, shown) == "allow")
        verdict, always = await self._ask(proposal.call_id, shown)
        return EditDecision(accepted=verdict == "allow", feedback=REJECTED, always=always)

    # ApproveHook -------------------------------------------------------------------------------

    async def approve(self, request: CommandRequest) -> CommandDecision:
        verdict, always = await self._ask(request.call_id)
        return CommandDecision(approved=verdict == "allow", feedback=REJECTED, always=always)

    # ApproveToolHook (MCP) ---------------------------------------------------------------------

    async def approve_tool(self, request: ToolApproval) -> ToolDecision:
        verdict, always = await self._ask(request.call_id)
        return ToolDecision(approved=verdict == "allow", feedback=REJECTED, always=always)

    # PlanReviewHook ----------------------------------------------------------------------------

    async def review_plan(self, proposal: PlanProposal) -> PlanDecision:
        shown: list[Content] = [
            tool_content(
                text_block(proposed_plan(proposal.todos, proposal.summary, proposal.context))
            )
        ]
        if proposal.call_id is not None:
            self.shown[proposal.call_id] = shown  # the plan stays in the call once it ends
        chosen = await self._request(proposal.call_id, plan_options(), shown)
        if chosen == APPROVE_PLAN:
            await self._running(proposal.call_id)
            for update in mode_changed("act"):
                await self.send(update)
            self.on_mode("act")
            return PlanDecision("approve")
        # The run ends with the plan kept; the next prompt is the user's feedback on it.
        self.turn_end.plan_feedback = True
        return PlanDecision("cancel")

    # AskHook -----------------------------------------------------------------------------------

    async def ask(self, question: Question) -> UserAnswer:
        if self.elicitation:
            return await self._elicit(question)
        # Asked in the chat: the turn ends with the question, the next prompt is the answer.
        text = question.question
        if question.options:
            text += "\n" + "\n".join(f"- {option}" for option in question.options)
        await self.send(update_agent_message_text(f"\n\n{text}\n"))
        self.turn_end.question = question.question
        self.end_run(f"Asked the user: {question.question}")
        return UserAnswer(answer="(asked in the chat; their reply is the next prompt)")

    async def _elicit(self, question: Question) -> UserAnswer:
        answer: dict[str, Any] = {"type": "string", "title": "Answer"}
        if question.options and question.multi_select:
            answer = {
                "type": "array",
                "title": "Answer",
                "items": {"type": "string", "enum": list(question.options)},
            }
        elif question.options:
            answer["enum"] = list(question.options)
        mode = ElicitationFormSessionMode.model_validate(
            {
                "sessionId": self.session_id,
                "toolCallId": question.call_id,
                "requestedSchema": {
                    "type": "object",
                    "properties": {"answer": answer},
                    "required": ["answer"],
                },
            }
        )
        try:
            response = await self.conn.create_elicitation(message=question.question, mode=mode)
        except RequestError as err:
            log.warning("the client answered elicitation/create with an error: %s", err)
            return UserAnswer(dismissed=True)
        if response.action != "accept":
            return UserAnswer(dismissed=True)
        value = (getattr(response, "content", None) or {}).get("answer")
        if isinstance(value, list):
            return UserAnswer(answers=tuple(v for v in value if isinstance(v, str) and v))
        return UserAnswer(answer=value) if isinstance(value, str) else UserAnswer(dismissed=True)
