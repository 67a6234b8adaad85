"""A small HTTP/1.1 server on asyncio, for the loopback servers of tests and tools.

`HttpServer` accepts connections (one task each, TCP_NODELAY) and reads their requests one
after another (keep-alive): the request line, the headers, and a body sent with
Content-Length or chunked (trailers read and dropped); it answers ``Expect: 100-continue``.
Each `Request` goes to the handler with a `Responder`, which answers either in one write
(`Responder.send`, with Content-Length) or as a chunked stream (`start_stream`, `send_chunk`,
`end_stream`); both write the ``connection`` header the request's keep-alive calls for. The
handler returns whether the connection may serve another request, or raises `CloseConnection`
to close it without (the rest of) an answer. What is not HTTP/1.1 (a malformed request line,
Content-Length or chunk size) is answered 400 and closes the connection; a body over
``max_body`` closes it unanswered; a client that goes away ends its connection quietly.
Not here: TLS, HTTP/2, upgrades, compression.

`LoopThread` runs a server's start and stop coroutines on an event loop of its own in a daemon
thread, for callers that have no loop of their own (synchronous tests).
"""

from __future__ import annotations

import asyncio
import contextlib
import http
import logging
import socket
import threading
import time
import urllib.parse
from collections.abc import Awaitable, Callable, Coroutine, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "CloseConnection",
    "Handler",
    "HttpServer",
    "LoopThread",
    "Request",
    "Responder",
    "reason_phrase",
]

log = logging.getLogger(__name__)

MAX_BODY = 64 * 1024 * 1024
# The longest request line or header line read: a Messages API request's headers are short,
# its body is not read by lines.
LINE_LIMIT = 1024 * 1024


class CloseConnection(Exception):
    """Raised by a handler: close the connection now, without (the rest of) an answer."""


class _BadRequest(Exception):
    """The bytes on the connection are not an HTTP/1.1 request: answer 400 and close."""


def reason_phrase(status: int) -> str:
    """The status line's reason: the standard phrase, 'Overloaded' for 529."""
    if status == 529:
        return "Overloaded"
    try:
        return http.HTTPStatus(status).phrase
    except ValueError:
        return "Error"


@dataclass(frozen=True)
class Request:
    """One request as read off a connection. Times are ``time.perf_counter()`` values."""

    method: str
    target: str
    """The request target as sent: the path with its query."""
    version: str
    raw_headers: tuple[tuple[str, str], ...]
    """The header lines in order, names spelled as sent."""
    headers: Mapping[str, str]
    """The headers by lower-case name; a repeated header's values joined with ', '."""
    body: bytes = field(repr=False)
    connection: int
    """Which connection carried it: 1-based, in accept order since the count last restarted."""
    arrived_at: float
    """The request line arrived."""
    received_at: float
    """The whole request (headers and body) was read."""

    @property
    def path(self) -> str:
        return urllib.parse.urlsplit(self.target).path

    @property
    def keep_alive(self) -> bool:
        """Whether the client lets the connection serve another request after this one."""
        tokens = self.headers.get("connection", "").lower()
        if self.version == "HTTP/1.1":
            return "close" not in tokens
        return "keep-alive" in tokens


Handler = Callable[[Request, "Responder"], Awaitable[bool]]


class Responder:
    """Writes the answer to one request: one `send`, or `start_stream`, chunks, `end_stream`."""

    def __init__(self, writer: asyncio.StreamWriter, *, keep_alive: bool) -> None:
        self._writer = writer
        self.keep_alive = keep_alive

    def _head(
        self, status: int, headers: Iterable[tuple[str, str]], framing: str, reason: str | None
    ) -> bytes:
        lines = [f"HTTP/1.1 {status} {reason or reason_phrase(status)}"]
        lines.extend(f"{name}: {value}" for name, value in headers)
        lines.append(framing)
        lines.append(f"connection: {'keep-alive' if self.keep_alive else 'close'}")
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1", "replace")

    async def send(
        self,
        status: int,
        headers: Iterable[tuple[str, str]] = (),
        body: bytes = b"",
        *,
        reason: str | None = None,
    ) -> None:
        """The whole answer, head and body, in one write."""
        # One write: with TCP_NODELAY, two would go out as two segments.
        head = self._head(status, headers, f"content-length: {len(body)}", reason)
        self._writer.write(head + body)
        await self._writer.drain()

    async def start_stream(
        self, status: int, headers: Iterable[tuple[str, str]] = (), *, reason: str | None = None
    ) -> None:
        """The head of a chunked answer, flushed."""
        self._writer.write(self._head(status, headers, "transfer-encoding: chunked", reason))
        await self._writer.drain()

    async def send_chunk(self, data: bytes, *, last: bool = False) -> None:
        """One chunk, flushed; with ``last`` the terminating chunk goes in the same write."""
        # An empty chunk would end the body: nothing to send is no chunk.
        out = b"%x\r\n%b\r\n" % (len(data), data) if data else b""
        if last:
            out += b"0\r\n\r\n"
        if out:
            self._writer.write(out)
            await self._writer.drain()

    async def end_stream(self) -> None:
        """The terminating chunk: the chunked answer is complete."""
        await self.send_chunk(b"", last=True)


class HttpServer:
    """Serves HTTP/1.1 on ``host``:``port`` (0: a free port) with ``handler``."""

    def __init__(
        self,
        handler: Handler,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        max_body: int = MAX_BODY,
    ) -> None:
        self.handler = handler
        self.host = host
        self.max_body = max_body
        self._requested_port = port
        self._port: int | None = None
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._accepted = 0

    @property
    def port(self) -> int:
        if self._port is None:
            raise RuntimeError("the HTTP server is not started")
        return self._port

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def running(self) -> bool:
        return self._server is not None

    @property
    def connections(self) -> int:
        """How many connections were accepted since the count last restarted."""
        return self._accepted

    def restart_connection_count(self) -> None:
        """Number the next connection 1 again (open connections keep their numbers)."""
        self._accepted = 0

    async def start(self) -> None:
        """Listen, on the running event loop."""
        if self._server is not None:
            raise RuntimeError("the HTTP server is already started")
        self._server = await asyncio.start_server(
            self._on_connection, self.host, self._requested_port, limit=LINE_LIMIT
        )
        self._port = int(self._server.sockets[0].getsockname()[1])

    async def stop(self) -> None:
        """Stop listening and close the open connections (a request being answered too)."""
        server, self._server = self._server, None
        if server is None:
            return
        server.close()
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        # wait_closed() can wait on a connection the loop has not yet let go of: bounded.
        with contextlib.suppress(Exception):
            await asyncio.wait_for(server.wait_closed(), 2.0)

    async def _on_connection(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._tasks.add(task)
        self._accepted += 1
        connection = self._accepted
        sock = writer.get_extra_info("socket")
        if sock is not None:
            with contextlib.suppress(OSError):
                # Each streamed event is its own small write: send it now, not after an ack.
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            while await self._serve_one(reader, writer, connection):
                pass
        except (CloseConnection, ConnectionError, asyncio.IncompleteReadError):
            pass  # the handler closed it, or the client went away
        except asyncio.CancelledError:
            # stop() cancels open connections. End the task normally: on Python 3.11
            # asyncio's stream callback calls task.exception() on a cancelled handler task
            # and logs the CancelledError as an error.
            pass
        except Exception:
            log.exception("HTTP server on %s: connection %d failed", self.host, connection)
        finally:
            if task is not None:
                self._tasks.discard(task)
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def _serve_one(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, connection: int
    ) -> bool:
        """Read one request and have it answered; False when the connection should close."""
        try:
            request = await self._read_request(reader, writer, connection)
        except _BadRequest as bad:
            responder = Responder(writer, keep_alive=False)
            await responder.send(400, [("content-type", "text/plain")], str(bad).encode())
            return False
        if request is None:
            return False
        responder = Responder(writer, keep_alive=request.keep_alive)
        keep = await self.handler(request, responder)
        return keep and request.keep_alive

    async def _read_request(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, connection: int
    ) -> Request | None:
        """The next request; None when the client closed the connection between requests."""
        line = await _read_line(reader)
        while line in (b"\r\n", b"\n"):  # RFC 9112: ignore empty lines before a request
            line = await _read_line(reader)
        if not line:
            return None
        arrived = time.perf_counter()
        parts = line.decode("latin-1").rstrip("\r\n").split(" ")
        if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
            raise _BadRequest("bad request line")
        method, target, version = parts
        raw_headers: list[tuple[str, str]] = []
        headers: dict[str, str] = {}
        while True:
            raw = await _read_line(reader)
            if raw in (b"\r\n", b"\n", b""):
                break
            name, _, value = raw.decode("latin-1").partition(":")
            name, value = name.strip(), value.strip()
            raw_headers.append((name, value))
            key = name.lower()
            headers[key] = f"{headers[key]}, {value}" if key in headers else value
        if headers.get("expect", "").lower() == "100-continue":
            writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
        body = await self._read_body(reader, headers)
        return Request(
            method=method,
            target=target,
            version=version,
            raw_headers=tuple(raw_headers),
            headers=headers,
            body=body,
            connection=connection,
            arrived_at=arrived,
            received_at=time.perf_counter(),
        )

    async def _read_body(self, reader: asyncio.StreamReader, headers: Mapping[str, str]) -> bytes:
        if "chunked" in headers.get("transfer-encoding", "").lower():
            chunks: list[bytes] = []
            total = 0
            while True:
                size_line = await _read_line(reader)
                if not size_line:
                    raise asyncio.IncompleteReadError(b"", None)
                try:
                    size = int(size_line.split(b";")[0].strip() or b"0", 16)
                except ValueError:
                    raise _BadRequest("bad chunk size") from None
                if size == 0:
                    while (await _read_line(reader)) not in (b"\r\n", b"\n", b""):
                        pass  # trailers
                    return b"".join(chunks)
                total += size
                if total > self.max_body:
                    raise CloseConnection
                chunks.append(await reader.readexactly(size))
                await reader.readexactly(2)
        try:
            length = int(headers.get("content-length", "0") or "0")
        except ValueError:
            raise _BadRequest("bad content-length") from None
        if length < 0:
            raise _BadRequest("bad content-length")
        if length > self.max_body:
            raise CloseConnection
        return await reader.readexactly(length) if length else b""


async def _read_line(reader: asyncio.StreamReader) -> bytes:
    try:
        return await reader.readline()
    except ValueError:  # longer than LINE_LIMIT: asyncio's LimitOverrunError, wrapped
        raise _BadRequest("line too long") from None


class LoopThread:
    """Runs ``start`` on a new event loop in a daemon thread, the loop until `stop()`, then
    ``stop`` on the same loop."""

    def __init__(
        self,
        start: Callable[[], Coroutine[Any, Any, None]],
        stop: Callable[[], Coroutine[Any, Any, None]],
        *,
        name: str,
    ) -> None:
        self._start = start
        self._stop = stop
        self._name = name
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    @property
    def alive(self) -> bool:
        return self._thread is not None

    def start(self) -> None:
        """Start the thread and return once ``start`` has run there (raising what it raised)."""
        if self._thread is not None:
            raise RuntimeError(f"{self._name} already started")
        ready = threading.Event()
        failure: list[BaseException] = []
        loop = asyncio.new_event_loop()

        def run() -> None:
            asyncio.set_event_loop(loop)
            try:
                loop.run_until_complete(self._start())
            except BaseException as exc:
                failure.append(exc)
                ready.set()
                loop.close()
                return
            ready.set()
            try:
                loop.run_forever()
            finally:
                loop.run_until_complete(self._stop())
                loop.close()

        self._loop = loop
        self._thread = threading.Thread(target=run, name=self._name, daemon=True)
        self._thread.start()
        ready.wait()
        if failure:
            self._thread.join()
            self._thread = None
            raise failure[0]

    def stop(self, timeout: float = 5.0) -> None:
        """Run ``stop`` on the thread's loop, end the loop and the thread (no-op if not started)."""
        thread, self._thread = self._thread, None
        loop = self._loop
        if thread is None or loop is None:
            return
        try:
            asyncio.run_coroutine_threadsafe(self._stop(), loop).result(timeout=timeout)
        except Exception:
            log.exception("%s: stopping failed", self._name)
        finally:
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(loop.stop)
            thread.join(timeout=timeout)
