"""The MCP feature as a session owns it: the servers configured for the workspace, trusted
before they start, started in the background, their tools fixed at the start of each run.

`start()` (on the event loop, as the session starts) starts the servers that are trusted (the
user's file, the client's, and workspace servers the user trusted before with the entry as it
is now) and then, in the background, asks the user about each other workspace server, one at
a time, starting each the user allows. `tools_for_run()` waits for servers still starting, each
at most until its `startupTimeout` has passed since it began (and for a trust question still
open, as long), and answers the run's tools; `fix_run_tools` puts them in the registry for the
whole run.
`status()` is `plansight/mcp`'s answer; `subscribe` hears each change of it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

from plansight.engine.hooks import ApproveToolHook, ServerTrust, TrustHook
from plansight.mcp.config import McpConfig, load_config
from plansight.mcp.servers import McpConnection, McpServers, ServerStatus, Wrap, identity
from plansight.mcp.tools import McpTools
from plansight.mcp.trust import TrustMemory
from plansight.tools.registry import Tool, ToolRegistry

log = logging.getLogger(__name__)

StatusListener = Callable[[list[ServerStatus]], None]


class McpFeature:
    def __init__(
        self,
        root: Path,
        storage: Path | None,
        *,
        client_servers: Mapping[str, Any] | None,
        approve_tool: ApproveToolHook,
        trust_server: TrustHook,
        wrap: Wrap = identity,
        env: Mapping[str, str] | None = None,
    ) -> None:
        """`wrap`: how a stdio server from a workspace file is run (the sandbox's seam)."""
        self.config: McpConfig = load_config(root, client_servers, env)
        self.trust = TrustMemory(storage)
        self.servers = McpServers(self.config.servers, wrap=wrap)
        self.tools = McpTools(self.servers, self.trust, approve_tool)
        self._trust_server = trust_server
        self._asking: asyncio.Task[None] | None = None
        self._asked_timeout = 0.0

    @property
    def configured(self) -> bool:
        return bool(self.servers.connections)

    def status(self) -> list[ServerStatus]:
        return self.servers.statuses()

    def to_wire(self) -> dict[str, Any]:
        """`plansight/mcp`'s result."""
        return {"servers": [status.to_wire() for status in self.status()]}

    def subscribe(self, listener: StatusListener) -> Callable[[], None]:
        return self.servers.subscribe(lambda: listener(self.status()))

    def start(self) -> None:
        for warning in self.config.warnings:
            log.warning("MCP configuration: %s", warning)
        unknown: list[McpConnection] = []
        for connection in self.servers.connections.values():
            entry = connection.entry
            if entry.disabled:
                continue
            if entry.trusted or self.trust.trusted(entry):
                connection.start()
            else:
                connection.mark_untrusted()
                unknown.append(connection)
        if unknown:
            self._asked_timeout = max(c.entry.startup_timeout for c in unknown)
            self._asking = asyncio.get_running_loop().create_task(self._ask(unknown))

    async def _ask(self, connections: list[McpConnection]) -> None:
        for connection in connections:
            entry = connection.entry
            question = ServerTrust(
                name=entry.name,
                source=entry.source,
                command=entry.command,
                args=entry.args,
                url=entry.url,
            )
            try:
                allowed = await self._trust_server(question)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("asking to trust the MCP server %s failed: not started", entry.name)
                allowed = False
            if allowed:
                self.trust.trust(entry)
                connection.start()
            else:
                log.info("MCP server %s (%s) not trusted: not started", entry.name, entry.source)

    async def tools_for_run(self, context_window: Callable[[], Awaitable[int]]) -> list[Tool]:
        """The MCP tools of the run about to start (none without servers)."""
        if not self.configured:
            return []
        asking = self._asking
        if asking is not None and not asking.done():
            # A trust question still open counts as part of its server's start: the run waits
            # for the answer as long as it would for the server, and no longer.
            await asyncio.wait({asking}, timeout=self._asked_timeout)
        await self.servers.until_up()
        if not self.servers.offered():
            return []
        return self.tools.for_run(await context_window())

    async def fix_run_tools(
        self, registry: ToolRegistry, context_window: Callable[[], Awaitable[int]]
    ) -> None:
        """The MCP tools of the run about to start, fixed in `registry` for all of it, so that
        the cached prefix holds through the run (a server still starting is waited for)."""
        registry.set_run_tools(await self.tools_for_run(context_window))

    async def close(self) -> None:
        if self._asking is not None:
            self._asking.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._asking
        await self.servers.close()
