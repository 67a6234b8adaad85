"""The engine's hooks, answered by the editor: edit review, command approval, plan review,
questions, open documents, MCP tool approval and trust in a workspace's MCP servers.

A review, approval or question is a request to the client that the run awaits. When the run is
cancelled the request is withdrawn: the client gets `$/cancelRequest` with its id (so it can
close the review), and an answer that still arrives is ignored, so nothing counts as accepted.

A client without `reviewPlan` / `askUser` is asked through `window/showMessageRequest`: a plan
with `Approve` and `Cancel`, a question with its options as the actions (a multi-select
question as a single choice; one without options cannot be asked so and counts as
dismissed). No answer, an error answer or one the protocol does not know is a cancel (plan) or a
dismissal (question); an error answer to an edit review or a command approval is a rejection
the model reads (nothing is written or run). What is asked at all is the session's approval
policy (session/approvals.py: `autoApprove.*`, "always" answers, control files); this module
only asks. An edit of a control file (`proposal.control`, workspace/control.py) is asked with
`"control": true` in the review; through the fallback only an explicit `Accept` writes it. An
MCP tool call (`plansight/approveTool`) and a
workspace's MCP server (`plansight/approveMcpServer`) fall back to `Allow` / `Deny`; anything
but `Allow` is a denial.
"""

from __future__ import annotations

import asyncio
import logging
import shlex
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.uris import from_fs_path, to_fs_path

from plansight.engine.hooks import (
    CommandDecision,
    CommandRequest,
    EditDecision,
    EditProposal,
    PlanDecision,
    PlanProposal,
    Question,
    ServerTrust,
    ToolApproval,
    ToolDecision,
    TrustDecision,
    UserAnswer,
    control_unanswered,
)
from plansight.plan.text import review_changes_lines
from plansight.protocol.names import (
    APPROVE_COMMAND,
    APPROVE_MCP_SERVER,
    APPROVE_TOOL,
    ASK_USER,
    CANCEL_REQUEST,
    REVIEW_EDIT,
    REVIEW_PLAN,
    client_offers,
    field_of,
    plain_input_summary,
    to_plain,
)

if TYPE_CHECKING:
    from pygls.lsp.server import LanguageServer

log = logging.getLogger(__name__)

ACCEPT = "Accept"
REJECT = "Reject"
APPROVE = "Approve"
CANCEL = "Cancel"
ALLOW = "Allow"
DENY = "Deny"


def path_uri(path: Path) -> str:
    return from_fs_path(str(path)) or path.as_uri()


def _ignore_answer(answer: asyncio.Future[Any]) -> None:
    if not answer.cancelled():
        answer.exception()


class EditorBridge:
    def __init__(self, server: LanguageServer) -> None:
        self.server = server
        # Requests to the client not answered yet: a run waits for the user meanwhile (the
        # `waiting` status of `plansight/sessions`).
        self.pending = 0

    # Capabilities ----------------------------------------------------------------------
    def client_offers(self, name: str) -> bool:
        caps = self.server.client_capabilities
        return caps is not None and client_offers(caps.experimental, name)

    # Requests to the client ------------------------------------------------------------
    async def request(self, method: str, params: Any) -> Any:
        """A request to the client, withdrawn (`$/cancelRequest`) if the caller is cancelled."""
        msg_id = f"plansight-{uuid.uuid4().hex}"
        protocol = self.server.protocol
        answer = asyncio.wrap_future(protocol.send_request(method, params, msg_id=msg_id))
        self.pending += 1
        try:
            # Shielded: cancelling pygls's own future would make the late answer an error.
            return await asyncio.shield(answer)
        except asyncio.CancelledError:
            if not answer.done():
                # The late answer is nobody's: an error one (the client's RequestCancelled) is
                # marked retrieved, else asyncio logs "Future exception was never retrieved"
                # when the future is collected (the shield stops watching it once cancelled).
                answer.add_done_callback(_ignore_answer)
                protocol.notify(CANCEL_REQUEST, types.CancelParams(id=msg_id))
            raise
        finally:
            self.pending -= 1

    # DocumentSource ----------------------------------------------------------------------
    def open_text(self, path: Path) -> str | None:
        for uri, document in self.server.workspace.text_documents.items():
            fs_path = to_fs_path(uri)
            if fs_path is None or Path(fs_path) != path:
                continue
            # The workspace decides whether this text is unsaved or just not reloaded yet.
            text: str = document.source
            return text
        return None

    # ReviewHook ------------------------------------------------------------------------
    async def review(self, proposal: EditProposal) -> EditDecision:
        # Asked only: the session decided already that the user must answer (approvals.py).
        if self.client_offers("reviewEdit"):
            return await self._review_request(proposal)
        return await self._review_fallback(proposal)

    async def _review_request(self, proposal: EditProposal) -> EditDecision:
        params: dict[str, Any] = {
            "id": proposal.id,
            "uri": path_uri(proposal.path),
            "oldText": proposal.old_text,
            "newText": proposal.new_text,
            "description": proposal.description,
        }
        if proposal.todo_id is not None:
            params["todoId"] = proposal.todo_id
        if proposal.plan_id is not None:
            params["planId"] = proposal.plan_id  # an addition: which plan the item is of
        if proposal.control:
            params["control"] = True  # version 4: a control file, never accepted unasked
        if proposal.worker is not None:  # version 4: a parallel worker's change, taken in
            params["worker"] = proposal.worker
            if proposal.conflict:
                params["conflict"] = True
            if proposal.deleted:
                params["deleted"] = True
        try:
            result = await self.request(REVIEW_EDIT, params)
        except JsonRpcException as err:
            log.warning("the client answered %s with an error (%s): a rejection", REVIEW_EDIT, err)
            return EditDecision(accepted=False, feedback=_error_feedback("review", err))
        accepted = field_of(result, "accepted") is True
        feedback = field_of(result, "feedback")
        new_text = field_of(result, "newText")
        return EditDecision(
            accepted=accepted,
            feedback=feedback if isinstance(feedback, str) and feedback else None,
            new_text=new_text if accepted and isinstance(new_text, str) else None,
            # `always` (an extension): accept this session's next edits unasked; the policy
            # (session/approvals.py) remembers it, and still asks for control files.
            always=accepted and field_of(result, "always") is True,
        )

    async def _review_fallback(self, proposal: EditProposal) -> EditDecision:
        what = (
            f"{proposal.relative_path}, a control file (it steers your tools: git, the editor, "
            "Plansight)"
            if proposal.control
            else proposal.relative_path
        )
        title = await self._show_message_request(
            f"Plansight wants to change {what}: {proposal.description}",
            [ACCEPT, REJECT],
        )
        if title == ACCEPT:
            return EditDecision(accepted=True)
        if title is None and proposal.control:
            return control_unanswered(proposal)
        return EditDecision(
            accepted=False,
            feedback=None if title == REJECT else "The user did not answer the review.",
        )

    # ApproveHook -----------------------------------------------------------------------
    async def approve(self, request: CommandRequest) -> CommandDecision:
        if not self.client_offers("approveCommand"):
            return CommandDecision(
                approved=False,
                feedback="This editor cannot ask the user to approve commands and "
                "autoApprove.commands is off"
                + (
                    " (autoApprove.sandboxedCommands would allow sandboxed ones)"
                    if request.sandbox is not None
                    else " (and the command would run without a sandbox)"
                )
                + ", so commands are refused.",
            )
        params = {
            "command": request.command,
            "cwd": request.cwd,
            "sandbox": request.sandbox.to_wire() if request.sandbox is not None else None,
        }
        try:
            result = await self.request(APPROVE_COMMAND, params)
        except JsonRpcException as err:
            log.warning("the client answered %s with an error (%s): refused", APPROVE_COMMAND, err)
            return CommandDecision(approved=False, feedback=_error_feedback("approval", err))
        feedback = field_of(result, "feedback")
        approved = field_of(result, "approved") is True
        # `always` (an extension): don't ask again for this exact command in this folder, for
        # the session (session/approvals.py remembers it).
        always = approved and field_of(result, "always") is True
        return CommandDecision(
            approved=approved,
            feedback=feedback if isinstance(feedback, str) and feedback else None,
            always=always,
            this_command=always,
        )

    # ApproveToolHook -------------------------------------------------------------------
    async def approve_tool(self, request: ToolApproval) -> ToolDecision:
        if not self.client_offers("approveTool"):
            title = await self._show_message_request(
                f"Plansight wants to call the tool {request.tool} of the MCP server "
                f"{request.server} with {plain_input_summary(request.input) or 'no input'}",
                [ALLOW, DENY],
            )
            return ToolDecision(
                approved=title == ALLOW,
                feedback=None if title in (ALLOW, DENY) else "The user did not answer.",
            )
        params = {"server": request.server, "tool": request.tool, "input": request.input}
        try:
            result = await self.request(APPROVE_TOOL, params)
        except JsonRpcException as err:
            log.warning("the client answered %s with an error (%s): denied", APPROVE_TOOL, err)
            return ToolDecision(approved=False, feedback=_error_feedback("approval", err))
        approved = field_of(result, "approved") is True
        feedback = field_of(result, "feedback")
        return ToolDecision(
            approved=approved,
            feedback=feedback if isinstance(feedback, str) and feedback else None,
            always=approved and field_of(result, "always") is True,
        )

    # TrustHook -------------------------------------------------------------------------
    async def trust_server(self, request: ServerTrust) -> bool | TrustDecision:
        if not self.client_offers("approveMcpServer"):
            runs = (
                f"runs `{shlex.join([request.command, *request.args])}`"
                if request.command is not None
                else f"connects to {request.url}"
            )
            # What it would get from the host is part of the question: Allow names it.
            gets = ""
            if request.env:
                gets += f", sets {', '.join(request.env)}"
            if request.from_host:
                gets += f" and receives this computer's {', '.join(request.from_host)}"
            title = await self._show_message_request(
                f"{request.source} names the MCP server {request.name}, which {runs}{gets}. "
                "Start it? Only allow what you trust.",
                [ALLOW, DENY],
            )
            return title == ALLOW
        params: dict[str, Any] = {"name": request.name, "source": request.source}
        if request.command is not None:
            params["command"] = request.command
            params["args"] = list(request.args)
        if request.url is not None:
            params["url"] = request.url
        params["env"] = list(request.env)
        params["fromHost"] = list(request.from_host)
        try:
            result = await self.request(APPROVE_MCP_SERVER, params)
        except JsonRpcException as err:
            log.warning(
                "the client answered %s with an error (%s): denied", APPROVE_MCP_SERVER, err
            )
            return False
        named = field_of(result, "fromHost")
        return TrustDecision(
            approved=field_of(result, "approved") is True,
            # Absent: the answer names every variable the request listed.
            from_host=tuple(str(n) for n in named) if isinstance(named, list | tuple) else None,
        )

    # PlanReviewHook --------------------------------------------------------------------
    async def review_plan(self, proposal: PlanProposal) -> PlanDecision:
        if not self.client_offers("reviewPlan"):
            return await self._review_plan_fallback(proposal)
        params: dict[str, Any] = {
            "todos": proposal.todos.to_wire(),
            "summary": proposal.summary,
            "scratchpad": proposal.scratchpad,
        }
        if proposal.problem is not None:
            params["problem"] = proposal.problem  # an extension: why the last answer was refused
        if proposal.context is not None:  # v4: the proposal beside the one the user last saw
            params.update(proposal.context.to_wire())
        if proposal.comments:  # an extension: the refused answer's comments, given back
            params["comments"] = [c.to_wire() for c in proposal.comments]
        try:
            result = to_plain(await self.request(REVIEW_PLAN, params))
        except JsonRpcException as err:
            log.warning("the client answered %s with an error (%s): a cancel", REVIEW_PLAN, err)
            return PlanDecision("cancel")
        return plan_decision(result)

    async def _review_plan_fallback(self, proposal: PlanProposal) -> PlanDecision:
        message = f"Plansight proposes a plan: {proposal.summary}\n\n{proposal.todos.rendered}"
        if proposal.context is not None:  # what changed since the proposal the user saw
            message += "\n\n" + "\n".join(review_changes_lines(proposal.context.to_wire()))
        answer = await self._show_message_request(message, [APPROVE, CANCEL])
        return PlanDecision("approve" if answer == APPROVE else "cancel")

    # AskHook ---------------------------------------------------------------------------
    async def ask(self, question: Question) -> UserAnswer:
        if self.client_offers("askUser"):
            params: dict[str, Any] = {"question": question.question}
            if question.options:
                params["options"] = list(question.options)
            if question.multi_select:
                params["multiSelect"] = True
            try:
                result = to_plain(await self.request(ASK_USER, params))
            except JsonRpcException as err:
                log.warning("the client answered %s with an error (%s): dismissed", ASK_USER, err)
                return UserAnswer(dismissed=True)
            return user_answer(result)
        if not question.options:
            return UserAnswer(dismissed=True)  # a message request can only offer choices
        title = await self._show_message_request(question.question, list(question.options))
        return UserAnswer(answer=title) if title in question.options else UserAnswer(dismissed=True)

    async def _show_message_request(self, message: str, actions: list[str]) -> str | None:
        """The title of the action the user chose, or None (no answer, or an error)."""
        try:
            answer = await self.request(
                types.WINDOW_SHOW_MESSAGE_REQUEST,
                types.ShowMessageRequestParams(
                    type=types.MessageType.Info,
                    message=message,
                    actions=[types.MessageActionItem(title) for title in actions],
                ),
            )
        except JsonRpcException as err:
            log.warning("the client answered showMessageRequest with an error (%s)", err)
            return None
        title = field_of(answer, "title")
        return title if isinstance(title, str) else None


def _error_feedback(asked: str, err: JsonRpcException) -> str:
    return f"none: the editor answered the {asked} with an error ({err}), the user never saw it."


def plan_decision(result: Any) -> PlanDecision:
    """A `reviewPlan` result; an unknown decision is a cancel (nothing is approved unasked)."""
    decision = field_of(result, "decision")
    if decision not in ("approve", "revise", "cancel"):
        log.warning("%s answered with decision %r: taken as a cancel", REVIEW_PLAN, decision)
        return PlanDecision("cancel")
    feedback = field_of(result, "feedback")
    return PlanDecision(
        decision,
        feedback if isinstance(feedback, str) and feedback.strip() else None,
        field_of(result, "items"),
        field_of(result, "comments"),
    )


def user_answer(result: Any) -> UserAnswer:
    """An `askUser` result; anything but an answer is a dismissal."""
    answer = field_of(result, "answer")
    answers = field_of(result, "answers")
    chosen = (
        tuple(a for a in answers if isinstance(a, str) and a) if isinstance(answers, list) else ()
    )
    return UserAnswer(
        answer=answer if isinstance(answer, str) else None,
        answers=chosen,
        dismissed=field_of(result, "dismissed") is True,
    )
