"""The workspaces open on one ACP connection: one engine and one `Sessions` each, shared by
every ACP session on that folder (protocol version 4: many sessions in a workspace).

The engine is built once per workspace (its tools, sandbox, watcher, checkpoints, MCP servers
and model client are the workspace's, and one server holds its storage: session/lock.py), so
its hooks, its documents and its events cannot belong to one ACP session. They go to the ACP
session the engine serves now (`attending`): the one whose prompt or command runs. One run at a
time in a working tree (`busy`), so that is never ambiguous; a prompt to another session while
one runs is refused naming the running one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from plansight.acp.errors import request_failed
from plansight.engine.events import Event

if TYPE_CHECKING:
    from acp import RequestError

    from plansight.acp.agent import AcpSession
    from plansight.acp.files import ClientFiles
    from plansight.acp.permissions import ClientHooks
    from plansight.parallel.workers import Workers
    from plansight.session.session import Session
    from plansight.session.sessions import Sessions


class Attending:
    """The engine's front-door hooks, answered by the ACP session it serves now."""

    def __init__(self) -> None:
        self.session: AcpSession | None = None
        self.files: ClientFiles | None = None  # the workspace's; its session id follows

    def attend(self, session: AcpSession) -> None:
        self.session = session
        if self.files is not None:
            # The editor's buffers are the connection's; requests name the session served.
            self.files.session_id = session.id

    def _hooks(self) -> ClientHooks:
        if self.session is None:
            # Hooks are called during a run only, and a run always has its session.
            raise RuntimeError("no ACP session is attended")
        return self.session.hooks

    async def review(self, proposal: Any) -> Any:
        return await self._hooks().review(proposal)

    async def approve(self, request: Any) -> Any:
        return await self._hooks().approve(request)

    async def approve_tool(self, request: Any) -> Any:
        return await self._hooks().approve_tool(request)

    async def unasked(self, request: Any, allowed: bool) -> None:
        await self._hooks().unasked(request, allowed)

    async def review_plan(self, proposal: Any) -> Any:
        return await self._hooks().review_plan(proposal)

    async def ask(self, question: Any) -> Any:
        return await self._hooks().ask(question)

    def on_event(self, event: Event) -> None:
        if self.session is not None:
            self.session.on_event(event)


@dataclass
class Workspace:
    """One folder open on the connection."""

    root: Path
    engine: Session
    sessions: Sessions
    attending: Attending
    busy: AcpSession | None = None  # whose prompt or command holds the engine
    workers: Workers | None = None  # version 4: plan items run in parallel (made at /parallel)
    unsubscribe: list[Callable[[], Any]] = field(default_factory=list)

    def hold(self, session: AcpSession) -> None:
        """The engine is `session`'s until `release`; refused (naming the holder) while
        another session's prompt or command holds it."""
        if self.busy is not None and self.busy is not session:
            raise self.busy_error(session)
        self.busy = session
        self.attending.attend(session)

    def release(self, session: AcpSession) -> None:
        if self.busy is session:
            self.busy = None

    def busy_error(self, wanted: AcpSession) -> RequestError:
        holder = self.busy
        assert holder is not None
        return request_failed(
            f"A Plansight run is in progress in session {self.name(holder.sid)} of {self.root} "
            f"(this prompt was for session {self.name(wanted.sid)}): one run at a time in a "
            "working tree. Wait for it to end or cancel it (session/cancel), then send this "
            "prompt again."
        )

    def name(self, session_id: str) -> str:
        from plansight.session.registry import UnknownSession

        try:
            title = self.sessions.registry.meta(session_id).title
        except UnknownSession:
            title = ""
        return f'"{title}" ({session_id})' if title else session_id
