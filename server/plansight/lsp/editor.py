"""The engine's hooks, answered by the editor: edit review, command approval, open documents.

A review or approval is a request to the client that the run awaits. When the run is cancelled
the request is withdrawn: the client gets `$/cancelRequest` with its id (so it can close the
review), and an answer that still arrives is ignored, so nothing counts as accepted.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.uris import from_fs_path, to_fs_path

from plansight.hooks import CommandDecision, CommandRequest, EditDecision, EditProposal
from plansight.protocol import (
    APPROVE_COMMAND,
    CANCEL_REQUEST,
    REVIEW_EDIT,
    InitOptions,
    client_offers,
    field_of,
)

if TYPE_CHECKING:
    from pygls.lsp.server import LanguageServer

log = logging.getLogger(__name__)

ACCEPT = "Accept"
REJECT = "Reject"


def path_uri(path: Path) -> str:
    return from_fs_path(str(path)) or path.as_uri()


class EditorBridge:
    def __init__(self, server: LanguageServer, options: InitOptions) -> None:
        self.server = server
        self.options = options

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
        try:
            # Shielded: cancelling pygls's own future would make the late answer an error. (The
            # shield also marks a late error answer as retrieved, so it is never reported.)
            return await asyncio.shield(answer)
        except asyncio.CancelledError:
            if not answer.done():
                protocol.notify(CANCEL_REQUEST, types.CancelParams(id=msg_id))
            raise

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
        if self.options.auto_approve_edits:
            return EditDecision(accepted=True)
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
        result = await self.request(REVIEW_EDIT, params)
        accepted = field_of(result, "accepted") is True
        feedback = field_of(result, "feedback")
        new_text = field_of(result, "newText")
        return EditDecision(
            accepted=accepted,
            feedback=feedback if isinstance(feedback, str) and feedback else None,
            new_text=new_text if accepted and isinstance(new_text, str) else None,
        )

    async def _review_fallback(self, proposal: EditProposal) -> EditDecision:
        answer = await self.request(
            types.WINDOW_SHOW_MESSAGE_REQUEST,
            types.ShowMessageRequestParams(
                type=types.MessageType.Info,
                message=f"Plansight wants to change {proposal.relative_path}: "
                f"{proposal.description}",
                actions=[types.MessageActionItem(ACCEPT), types.MessageActionItem(REJECT)],
            ),
        )
        title = field_of(answer, "title")
        if title == ACCEPT:
            return EditDecision(accepted=True)
        return EditDecision(
            accepted=False,
            feedback=None if title == REJECT else "The user did not answer the review.",
        )

    # ApproveHook -----------------------------------------------------------------------
    async def approve(self, request: CommandRequest) -> CommandDecision:
        if self.options.auto_approve_commands:
            return CommandDecision(approved=True)
        if not self.client_offers("approveCommand"):
            return CommandDecision(
                approved=False,
                feedback="This editor cannot ask the user to approve commands and "
                "autoApprove.commands is off, so commands are refused.",
            )
        result = await self.request(
            APPROVE_COMMAND, {"command": request.command, "cwd": request.cwd}
        )
        feedback = field_of(result, "feedback")
        return CommandDecision(
            approved=field_of(result, "approved") is True,
            feedback=feedback if isinstance(feedback, str) and feedback else None,
        )
