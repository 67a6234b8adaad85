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

A workspace server's trust covers its entry, the workspace files its command line names, and
the host variables the approval named (mcp/trust.py); one whose entry pulls in a secret host
variable that the approval did not name is not started: its status is `error`, saying which.
Its home folder is under the storage, `mcp-home/` (servers.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

from plansight.engine.hooks import ApproveToolHook, ServerTrust, TrustDecision, TrustHook
from plansight.mcp.config import McpConfig, ServerEntry, load_config, with_host_values
from plansight.mcp.servers import McpConnection, McpServers, ServerStatus, Wrap, identity
from plansight.mcp.tools import McpTools
from plansight.mcp.trust import TrustMemory, named_files
from plansight.tools.registry import Tool, ToolRegistry

log = logging.getLogger(__name__)

HOMES = "mcp-home"  # under the storage: the workspace servers' home folders

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
        self.root = root
        self.env = env
        self.config: McpConfig = load_config(root, client_servers, env)
        self.trust = TrustMemory(storage)
        homes = storage / HOMES if storage is not None else None
        self.servers = McpServers(self.config.servers, wrap=wrap, homes=homes)
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
            if entry.trusted:
                connection.start()
                continue
            files = named_files(entry, self.root)
            held = self.trust.trusted(entry, files)
            if held is not None:
                self._start_named(connection, held.from_host, files)
            else:
                connection.mark_untrusted()
                unknown.append(connection)
        if unknown:
            self._asked_timeout = max(c.entry.startup_timeout for c in unknown)
            self._asking = asyncio.get_running_loop().create_task(self._ask(unknown))

    async def _ask(self, connections: list[McpConnection]) -> None:
        for connection in connections:
            entry = connection.entry
            # The files as they are when the user is asked: a change after it asks again.
            files = named_files(entry, self.root)
            question = ServerTrust(
                name=entry.name,
                source=entry.source,
                command=entry.command,
                args=entry.args,
                url=entry.url,
                env=entry.env_names,
                from_host=entry.from_host,
            )
            try:
                answer = await self._trust_server(question)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("asking to trust the MCP server %s failed: not started", entry.name)
                answer = False
            decision = answer if isinstance(answer, TrustDecision) else TrustDecision(answer)
            if not decision.approved:
                log.info("MCP server %s (%s) not trusted: not started", entry.name, entry.source)
                continue
            # Only what the question listed can be named by its answer.
            listed = entry.from_host if decision.from_host is None else decision.from_host
            named = tuple(name for name in entry.from_host if name in listed)
            if self._start_named(connection, named, files):
                self.trust.trust(entry, files, named)  # a partial yes is asked again next time

    def _start_named(
        self, connection: McpConnection, named: tuple[str, ...], files: Mapping[str, str]
    ) -> bool:
        """Start a workspace server with the secret host variables the user's approval
        `named`; whether it started (one that needs another is `error`, not started). Its
        restart after an exit is refused when the `files` trusted have changed since."""
        entry: ServerEntry = with_host_values(connection.entry, named, self.env)
        if entry.withheld:
            names = ", ".join(f"${{env:{name}}}" for name in entry.withheld)
            connection.refuse(
                f"not started: {entry.source} gives it the host's secret {names}, which the "
                "approval did not name; allow it again naming it, or remove it from the entry"
            )
            log.warning("MCP server %s: %s", entry.name, connection.error)
            return False
        connection.entry = entry
        connection.before_restart = lambda: self._changed(entry, files)
        connection.start()
        return True

    def _changed(self, entry: ServerEntry, files: Mapping[str, str]) -> str | None:
        """Why a workspace server may not be restarted: a file its command line names changed
        since the user trusted it (the agent's commands can write the workspace)."""
        now = named_files(entry, self.root)
        changed = sorted(
            path for path in files.keys() | now.keys() if files.get(path) != now.get(path)
        )
        if not changed:
            return None
        return (
            f"not restarted: {', '.join(changed)} changed since it was trusted; it is asked "
            "about again at the next session"
        )

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
