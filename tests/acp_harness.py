"""Drives `plansight acp` with the Python ACP SDK's own client side (`acp.spawn_agent_process`,
a `ClientSideConnection` nobody here wrote), as an editor would: it records every update,
answers permission requests as the test scripts them, and serves `fs/*` from its buffers (an
editor's unsaved text) or the disk.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acp import (
    PROTOCOL_VERSION,
    ReadTextFileResponse,
    RequestPermissionResponse,
    WriteTextFileResponse,
    spawn_agent_process,
)
from acp.schema import (
    AcceptElicitationResponse,
    AllowedOutcome,
    ClientCapabilities,
    DeclineElicitationResponse,
    DeniedOutcome,
    ElicitationCapabilities,
    ElicitationFormCapabilities,
    FileSystemCapabilities,
    PermissionOption,
    ToolCallUpdate,
)

from plansight.fakeapi import FakeMessagesAPI

from conftest import PATIENCE, wait_until
from lsp_harness import server_env


@dataclass
class EditorClient:
    """The client side: what the agent sent, and how the "user" answers."""

    root: Path
    buffers: dict[str, str] = field(default_factory=dict)  # absolute path → unsaved text
    answers: list[str | None] = field(default_factory=list)  # option ids, in order; None: hold
    updates: list[dict[str, Any]] = field(default_factory=list)
    permissions: list[dict[str, Any]] = field(default_factory=list)
    reads: list[str] = field(default_factory=list)
    writes: list[str] = field(default_factory=list)
    held: list[asyncio.Future[Any]] = field(default_factory=list)
    elicited: list[dict[str, Any]] = field(default_factory=list)
    form_answers: list[Any] = field(default_factory=list)  # `answer` values; None: decline

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append(update.model_dump(mode="json", by_alias=True, exclude_none=True))

    async def request_permission(
        self, options: list[PermissionOption], session_id: str, tool_call: ToolCallUpdate, **kw: Any
    ) -> RequestPermissionResponse:
        self.permissions.append(
            {
                "toolCall": tool_call.model_dump(mode="json", by_alias=True, exclude_none=True),
                "options": [(o.option_id, o.name, o.kind) for o in options],
            }
        )
        answer = self.answers.pop(0) if self.answers else None
        if answer is None:
            # Held until the test cancels the turn: the agent must not wait for this.
            waiting: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
            self.held.append(waiting)
            with contextlib.suppress(asyncio.CancelledError):
                await waiting
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=answer)
        )

    async def read_text_file(
        self,
        path: str,
        session_id: str,
        limit: int | None = None,
        line: int | None = None,
        **kw: Any,
    ) -> ReadTextFileResponse:
        self.reads.append(path)
        text = self.buffers.get(path)
        if text is None:
            text = Path(path).read_text(encoding="utf-8")
        return ReadTextFileResponse(content=text)

    async def write_text_file(
        self, content: str, path: str, session_id: str, **kw: Any
    ) -> WriteTextFileResponse:
        self.writes.append(path)
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text(content, encoding="utf-8")
        self.buffers.pop(path, None)
        return WriteTextFileResponse()

    async def create_elicitation(self, message: str, mode: Any, **kw: Any) -> Any:
        self.elicited.append(
            {
                "message": message,
                "mode": mode.model_dump(mode="json", by_alias=True, exclude_none=True),
            }
        )
        answer = self.form_answers.pop(0) if self.form_answers else None
        if answer is None:
            return DeclineElicitationResponse(action="decline")
        return AcceptElicitationResponse(action="accept", content={"answer": answer})

    def on_connect(self, conn: Any) -> None:
        pass

    # What a test asks ------------------------------------------------------------------------

    def kinds(self) -> list[str]:
        return [u["sessionUpdate"] for u in self.updates]

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [u for u in self.updates if u["sessionUpdate"] == kind]

    def text(self) -> str:
        return "".join(u["content"]["text"] for u in self.of("agent_message_chunk"))


@contextlib.asynccontextmanager
async def acp_agent(
    api: FakeMessagesAPI,
    root: Path,
    home: Path,
    *,
    fs: bool = True,
    elicitation: bool = False,
    env: dict[str, str] | None = None,
    client: EditorClient | None = None,
) -> AsyncIterator[tuple[Any, EditorClient]]:
    """`plansight acp` started and initialized, with its client."""
    editor = client or EditorClient(root)
    extra = {
        "XDG_CONFIG_HOME": str(home / "config"),
        "XDG_STATE_HOME": str(home / "state"),
        "PLANSIGHT_MODEL": "claude-sonnet-5-5",
        **(env or {}),
    }
    async with spawn_agent_process(
        editor,
        sys.executable,
        "-m",
        "plansight",
        "acp",
        env=server_env(api, extra),
        use_unstable_protocol=elicitation,  # elicitation/create is an unstable method
    ) as (conn, _process):
        caps = ClientCapabilities(
            fs=FileSystemCapabilities(read_text_file=fs, write_text_file=fs),
            terminal=False,
            elicitation=(
                ElicitationCapabilities(form=ElicitationFormCapabilities()) if elicitation else None
            ),
        )
        await asyncio.wait_for(
            conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=caps), PATIENCE
        )
        yield conn, editor


async def until(predicate: Callable[[], bool], what: str) -> None:
    await wait_until(predicate, what)
