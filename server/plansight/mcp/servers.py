"""The connections to MCP servers, with the official SDK: started in the background, their tools
listed, their calls bounded by `toolTimeout`, restarted once after an exit.

Each `McpConnection` runs one task that holds the SDK's transport and `ClientSession` open
(anyio's context managers must be left in the task that entered them) until it is stopped;
calls come from the runs' tasks through the session it holds. Its status is one of
`starting`, `ready`, `error`, `disabled` and `untrusted`; every change is told to the
listeners of `McpServers` (the `mcp` event, `plansight/mcp`).

A server that exits is `error` ("exited: ...; restarted at its next call") as soon as that is
known: at once when the transport's read stream ends while idle (a stdio server's output ends
with its process), else when a call finds the connection closed. A streamable HTTP server has
no stream that ends with it: its exit is found by the next call.

A stdio server from a workspace file has its command line passed through `wrap` before it is
started: the seam where a sandbox wraps it (identity by default), with the home folder of its
own (`home`, under Plansight's storage, kept from one session to the next) that `HOME`,
`XDG_CACHE_HOME` and `npm_config_cache` name, so that `npx -y ...` and `uvx ...` find a
writable cache where the rest of the machine is read-only to it.

Every message a server sends is bounded (mcp/bounds.py): an over-long answer is an error of its
call, and the server stays usable.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import re
import tempfile
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import IO, Any, Literal, TextIO, cast

from plansight.mcp.config import ServerEntry

log = logging.getLogger(__name__)

Status = Literal["starting", "ready", "error", "disabled", "untrusted"]
STATUSES: tuple[Status, ...] = ("starting", "ready", "error", "disabled", "untrusted")
# The command line of a stdio server from a workspace file, as it will be run, given the home
# folder of its own (None: none).
Wrap = Callable[[list[str], Path | None], list[str]]
Listener = Callable[[], None]
# How long a stopping server's task may take to close its transport before it is abandoned.
STOP_PATIENCE = 5.0
# The most of a failed server's stderr its error quotes.
STDERR_TAIL = 400
# Beyond toolTimeout, the bound on waiting for the SDK's own timeout to answer.
TIMEOUT_GRACE = 5.0
# Why a server that ended its connection while no call was in flight is `error`.
ENDED_WHILE_IDLE = "its connection ended while idle"


def identity(command: list[str], home: Path | None = None) -> list[str]:
    return command


def server_home(homes: Path, name: str) -> Path:
    """The home folder of a workspace's server `name` under `homes`: one per server (a server
    cannot read what another one keeps there), named so that a person can tell which."""
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", name)[:40].lstrip(".") or "server"
    return homes / f"{safe}-{hashlib.sha256(name.encode()).hexdigest()[:8]}"


def home_env(home: Path) -> dict[str, str]:
    """The variables that point a server's tools (npm, uv, pip, ...) at its own home."""
    return {
        "HOME": str(home),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "npm_config_cache": str(home / ".npm"),
    }


@dataclass(frozen=True)
class ServerStatus:
    name: str
    source: str
    status: Status
    tools: tuple[str, ...]
    error: str | None = None

    def to_wire(self) -> dict[str, Any]:
        wire: dict[str, Any] = {
            "name": self.name,
            "source": self.source,
            "status": self.status,
            "tools": list(self.tools),
        }
        if self.error is not None:
            wire["error"] = self.error
        return wire


class ServerGone(Exception):
    """The server exited (or its connection closed) during a call or before it. `restarts`:
    whether its next call starts it again."""

    def __init__(self, why: str, *, restarts: bool = True) -> None:
        super().__init__(why)
        self.restarts = restarts


class CallTimedOut(Exception):
    """The call ran past the server's toolTimeout; it was cancelled."""


class McpConnection:
    def __init__(
        self, entry: ServerEntry, *, wrap: Wrap, on_change: Listener, home: Path | None = None
    ) -> None:
        """`home`: the home folder of a workspace's stdio server (None: the user's, read-only
        where it is sandboxed)."""
        self.entry = entry
        self.home = home
        self._wrap = wrap
        self._on_change = on_change
        # A trusted server starts as the session starts; a workspace's waits for the user.
        self.status: Status = (
            "disabled" if entry.disabled else "starting" if entry.trusted else "untrusted"
        )
        self.error: str | None = None
        self.tools: tuple[Any, ...] = ()  # the SDK's `Tool`s, as the server listed them
        self.tools_changed = False  # notifications/tools/list_changed: listed again next run
        self._session: Any = None
        self._task: asyncio.Task[None] | None = None
        self._stop = asyncio.Event()
        self._up = asyncio.Event()  # set once the start ended, ready or not
        self._started_at = 0.0
        self._restart_pending = False  # it exited: restarted at its next call
        # Why it may not be restarted after an exit (None: it may), asked before restarting.
        self.before_restart: Callable[[], str | None] | None = None

    # Status ------------------------------------------------------------------------------
    def snapshot(self) -> ServerStatus:
        names = tuple(tool.name for tool in self.tools) if self.status == "ready" else ()
        return ServerStatus(self.entry.name, self.entry.source, self.status, names, self.error)

    def _set(self, status: Status, error: str | None = None) -> None:
        changed = (status, error) != (self.status, self.error)
        self.status, self.error = status, error
        if changed:
            self._on_change()

    @property
    def offered(self) -> bool:
        """Whether a run offers its tools: ready, or exited with a restart due at its next call
        (its tools as last listed, so that the call can restart it)."""
        if self.status == "ready":
            return True
        return self.status == "error" and self._restart_pending and bool(self.tools)

    def mark_untrusted(self) -> None:
        self._set("untrusted", "not trusted: started only once the user allows it")

    def refuse(self, why: str) -> None:
        """Not started, for a reason the user should read (`error`)."""
        self._set("error", why)

    # Lifecycle ---------------------------------------------------------------------------
    def start(self) -> None:
        """Start in the background (a no-op while it runs)."""
        if self._task is not None and not self._task.done():
            return
        loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        self._up = asyncio.Event()
        self._started_at = loop.time()
        self._restart_pending = False
        self._set("starting")
        self._task = loop.create_task(self._serve(), name=f"mcp-{self.entry.name}")

    async def until_up(self) -> None:
        """Until the start has ended (ready or failed), at most `startupTimeout` after it began:
        a run never waits longer for a slow server (it joins at the next run)."""
        if self.status != "starting":
            return
        remaining = (
            self._started_at + self.entry.startup_timeout - asyncio.get_running_loop().time()
        )
        if remaining > 0:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._up.wait(), remaining)

    async def stop(self) -> None:
        """Close the connection: a ready server is let go in order (its transport ends the
        process), one still starting is cancelled at once (a session never waits to close)."""
        task = self._task
        self._task = None
        self._stop.set()
        if task is None or task.done():
            return
        if self._session is None and not self._up.is_set():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
            return
        try:
            await asyncio.wait_for(asyncio.shield(task), STOP_PATIENCE)
        except TimeoutError:
            log.warning("MCP server %s did not stop in time; cancelling it", self.entry.name)
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    async def _serve(self) -> None:
        with tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace") as stderr:
            try:
                ended = await self._connected(stderr)
                if ended and self.status == "ready":  # not already found gone by a call
                    self._session = None
                    tail = _tail(stderr)
                    why = f"{ENDED_WHILE_IDLE}; restarted at its next call"
                    message = f"{why}; its stderr ends: {tail}" if tail else why
                    log.warning("MCP server %s exited: %s", self.entry.name, message)
                    self._restart_pending = True
                    self._set("error", f"exited: {message}")
            except asyncio.CancelledError:
                raise
            except Exception as err:
                self._session = None
                detail = _describe(err)
                tail = _tail(stderr)
                message = f"{detail}; its stderr ends: {tail}" if tail else detail
                if self.status == "starting":
                    log.warning("MCP server %s failed to start: %s", self.entry.name, message)
                    self._set("error", f"failed to start: {message}")
                else:
                    log.warning("MCP server %s failed: %s", self.entry.name, message)
                    self._restart_pending = True
                    self._set("error", f"exited: {message}")
            finally:
                self._session = None
                self._up.set()

    async def _connected(self, stderr: IO[str]) -> bool:
        """Connect and hold the connection until stopped; whether it ended first instead (the
        server exited or closed its side while ready)."""
        from mcp import ClientSession
        from mcp_types import Implementation

        from plansight import __version__

        async with contextlib.AsyncExitStack() as stack:
            read, write = await stack.enter_async_context(self._transport(stderr))
            watched = _EndWatch(read)
            session = await stack.enter_async_context(
                ClientSession(
                    watched,
                    write,
                    message_handler=self._on_message,
                    client_info=Implementation(name="plansight", version=__version__),
                )
            )
            await session.initialize()
            self.tools = await _list_all_tools(session)
            self._session = session
            self._up.set()
            self._set("ready")
            log.info("MCP server %s ready: %d tools", self.entry.name, len(self.tools))
            await _first(self._stop.wait(), watched.ended.wait())
            self._session = None
            # A close that also ends the stream (our own stop) is no exit.
            return not self._stop.is_set()

    def _transport(self, stderr: IO[str]) -> contextlib.AbstractAsyncContextManager[Any]:
        entry = self.entry
        if entry.url is not None:
            return _http_transport(entry.url, dict(entry.headers))
        from mcp import StdioServerParameters

        from plansight.mcp.bounds import bounded_stdio_client

        assert entry.command is not None  # config: either a command or a url
        line = [entry.command, *entry.args]
        env = dict(entry.env)
        if not entry.trusted:
            if self.home is not None:
                self.home.mkdir(mode=0o700, parents=True, exist_ok=True)
                env.update(home_env(self.home))  # after the entry's: the file cannot move it
            line = self._wrap(line, self.home)
        params = StdioServerParameters(
            command=line[0], args=line[1:], env=env or None, cwd=entry.cwd
        )
        return bounded_stdio_client(params, errlog=cast(TextIO, stderr))

    async def _on_message(self, message: Any) -> None:
        from mcp_types import ToolListChangedNotification

        if isinstance(message, ToolListChangedNotification):
            self.tools_changed = True  # honoured at the next run: this run's list is fixed
        elif isinstance(message, Exception):
            log.warning("MCP server %s: %s", self.entry.name, _describe(message))

    async def refresh_tools(self) -> None:
        """List the tools again if the server said they changed (between runs)."""
        session = self._session
        if not self.tools_changed or session is None:
            return
        self.tools_changed = False
        try:
            self.tools = await asyncio.wait_for(
                _list_all_tools(session), self.entry.startup_timeout
            )
        except Exception as err:
            log.warning("MCP server %s: listing its tools again failed: %s", self.entry.name, err)
            return
        self._on_change()

    # Calls -------------------------------------------------------------------------------
    async def call(self, tool: str, arguments: dict[str, Any]) -> Any:
        """The SDK's `CallToolResult`. ServerGone when the server exited (it is restarted once,
        at the call after the one that found it gone), CallTimedOut past toolTimeout."""
        from mcp.shared.exceptions import MCPError
        from mcp_types import CONNECTION_CLOSED, REQUEST_TIMEOUT

        if self._restart_pending and self.status == "error":
            refused = self.before_restart() if self.before_restart is not None else None
            if refused is not None:
                self._restart_pending = False  # no longer offered: its tools are gone
                self._set("error", refused)
                raise ServerGone(refused, restarts=False)
            log.info("MCP server %s exited earlier: restarting it for this call", self.entry.name)
            await self.stop()
            self.start()
            await self.until_up()
        session = self._session
        if session is None or self.status != "ready":
            raise ServerGone(self.error or f"it is {self.status}")
        timeout = self.entry.tool_timeout
        try:
            return await asyncio.wait_for(
                session.call_tool(tool, arguments, read_timeout_seconds=timeout),
                timeout + TIMEOUT_GRACE,
            )
        except TimeoutError as err:
            raise CallTimedOut(f"no answer within {timeout:g} s") from err
        except MCPError as err:
            if err.code == REQUEST_TIMEOUT:
                raise CallTimedOut(f"no answer within {timeout:g} s") from err
            if err.code == CONNECTION_CLOSED:
                self._gone(_describe(err))
                raise ServerGone(f"it exited during the call ({_describe(err)})") from err
            raise
        except (OSError, EOFError) as err:
            self._gone(_describe(err))
            raise ServerGone(f"its connection failed ({_describe(err)})") from err

    def _gone(self, why: str) -> None:
        self._session = None
        self._restart_pending = True
        self._stop.set()  # its task closes the transport
        self._set("error", f"exited: {why}; restarted at its next call")


class _EndWatch:
    """A transport's read stream as the SDK's session reads it (the SDK's `ReadStream`), with
    `ended` set once it reaches its end: the server's side closed (a stdio server's output ends
    as its process exits). Our own close is no end: it closes the stream rather than ending it."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.ended = asyncio.Event()

    @property
    def last_context(self) -> Any:
        # The SDK's dispatcher reads each message's sender context here, when there is one.
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> Any:
        import anyio

        try:
            return await self._inner.receive()
        except anyio.EndOfStream:
            self.ended.set()
            raise

    def __aiter__(self) -> _EndWatch:
        return self

    async def __anext__(self) -> Any:
        import anyio

        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> _EndWatch:
        await self._inner.__aenter__()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> bool | None:
        result: bool | None = await self._inner.__aexit__(exc_type, exc_val, exc_tb)
        return result


async def _first(*waits: Any) -> None:
    """Until the first of these waits ends; the others are cancelled."""
    tasks = [asyncio.ensure_future(wait) for wait in waits]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


@contextlib.asynccontextmanager
async def _http_transport(url: str, headers: dict[str, str]) -> AsyncIterator[Any]:
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    from plansight.mcp.bounds import bounded_http_transport

    async with httpx2.AsyncClient(
        headers=headers, timeout=httpx2.Timeout(30, read=300), transport=bounded_http_transport()
    ) as http:
        async with streamable_http_client(url, http_client=http) as (read, write):
            yield read, write


async def _list_all_tools(session: Any) -> tuple[Any, ...]:
    from mcp_types import PaginatedRequestParams

    tools: list[Any] = []
    cursor: str | None = None
    while True:
        params = PaginatedRequestParams(cursor=cursor) if cursor else None
        listed = await session.list_tools(params=params)
        tools.extend(listed.tools)
        cursor = listed.next_cursor
        if not cursor:
            return tuple(tools)


def _describe(err: BaseException) -> str:
    if isinstance(err, BaseExceptionGroup):
        return "; ".join(_describe(inner) for inner in err.exceptions)
    text = str(err) or type(err).__name__
    if isinstance(err, FileNotFoundError):
        text = f"command not found ({err.filename or text})"
    return text


def _tail(stderr: IO[str]) -> str:
    try:
        stderr.flush()
        stderr.seek(0)
        text = stderr.read()
    except (OSError, ValueError):
        return ""
    return " ".join(text.split())[-STDERR_TAIL:]


class McpServers:
    """Every configured server's connection, by name; listeners hear of each status change."""

    def __init__(
        self, entries: Iterable[ServerEntry], *, wrap: Wrap = identity, homes: Path | None = None
    ) -> None:
        """`homes`: where the workspace's stdio servers have their home folders (None: they
        have none of their own)."""
        self._listeners: list[Listener] = []
        self.connections: dict[str, McpConnection] = {
            entry.name: McpConnection(
                entry,
                wrap=wrap,
                on_change=self._changed,
                home=None if homes is None or entry.trusted else server_home(homes, entry.name),
            )
            for entry in entries
        }

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    def _changed(self) -> None:
        for listener in list(self._listeners):
            try:
                listener()
            except Exception:
                log.exception("an MCP status listener failed")

    def statuses(self) -> list[ServerStatus]:
        return [connection.snapshot() for connection in self.connections.values()]

    async def until_up(self) -> None:
        """Until every starting server is up or past its startupTimeout."""
        waits = [c.until_up() for c in self.connections.values() if c.status == "starting"]
        if waits:
            await asyncio.gather(*waits)
        await asyncio.gather(*(c.refresh_tools() for c in self.connections.values()))

    def offered(self) -> list[McpConnection]:
        """The servers whose tools a run offers (`McpConnection.offered`), in config order."""
        return [c for c in self.connections.values() if c.offered]

    async def close(self) -> None:
        await asyncio.gather(*(c.stop() for c in self.connections.values()))
