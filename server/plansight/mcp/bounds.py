"""Every message an MCP server sends, bounded: the stdio transport, and the HTTP transport's
plain JSON answers.

The SDK's own stdio transport (`mcp.client.stdio.stdio_client`) gathers a line of the server's
output by concatenating strings without a limit: a 64 MB result takes it minutes of copying
(quadratic), during which no other answer of that server is read, so every later call times out
too. `bounded_stdio_client` is the same (the SDK's process handling and its shutdown, reused),
but reads bytes and keeps at most `max_message` bytes of a line: the rest of an over-long line
is read and dropped as it comes, keeping only its first and last bytes, where the JSON-RPC `id`
of the answer is (at the start as Python's SDK writes it, at the end as TypeScript's does).
The call it answers then gets a JSON-RPC error saying how long the message was; the server
stays usable. An over-long message without a findable id (a notification) is dropped, with a
warning in the log.

Over streamable HTTP, the SDK bounds each event of an event stream (1 MB) but reads a plain
JSON answer whole: `bounded_http_transport` stops reading one at `max_message` bytes, which
the SDK answers to its call as an error.
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
from collections.abc import AsyncIterator
from typing import Any, TextIO

import anyio

log = logging.getLogger(__name__)

# The longest message read from a server. A tool result reaches the model cut at 100 kB of text,
# but may carry an image of up to 5 MB (about 6.7 MB as base64).
MAX_MESSAGE_BYTES = 10_000_000
# How much of the start and of the end of an over-long line is kept to find its id.
EDGE_BYTES = 4096
# The JSON-RPC error code of an over-long answer: one of the implementation-defined server
# errors (-32000 to -32099) that the SDK does not use (-32000 is its closed connection, -32001
# its request timeout, which would be taken for a timeout).
MESSAGE_TOO_LONG = -32090

_ID = rb'"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")'
_ID_AT_START = re.compile(rb'^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?' + _ID)
_ID_AT_END = re.compile(_ID + rb'\s*(?:,\s*"jsonrpc"\s*:\s*"2\.0"\s*)?\}\s*$')


class LineBounder:
    """Splits a server's output into lines, keeping at most `limit` bytes of each."""

    def __init__(self, limit: int, encoding: str = "utf-8", errors: str = "strict") -> None:
        self.limit = limit
        self.encoding = encoding
        self.errors = errors
        self._line = bytearray()
        self._size = 0
        self._cutting = False
        self._head = b""
        self._tail = b""

    def feed(self, chunk: bytes) -> list[Any]:
        """The messages (SDK `SessionMessage`s, or the Exception a line could not be parsed
        into) that `chunk` completes."""
        done: list[Any] = []
        view = memoryview(chunk)
        start = 0
        while start < len(chunk):
            newline = chunk.find(b"\n", start)
            end = len(chunk) if newline < 0 else newline
            self._add(view[start:end])
            if newline < 0:
                break
            message = self._finish()
            if message is not None:
                done.append(message)
            start = newline + 1
        return done

    def _add(self, piece: memoryview) -> None:
        self._size += len(piece)
        if not self._cutting:
            self._line += piece
            if len(self._line) > self.limit:
                self._cutting = True
                self._head = bytes(self._line[:EDGE_BYTES])
                self._tail = bytes(self._line[-EDGE_BYTES:])
                self._line = bytearray()
        elif len(piece):
            self._tail = (self._tail + bytes(piece))[-EDGE_BYTES:]

    def _finish(self) -> Any:
        size, cutting = self._size, self._cutting
        line = bytes(self._line)
        head, tail = self._head, self._tail
        self._line, self._size, self._cutting = bytearray(), 0, False
        self._head = self._tail = b""
        if cutting:
            return _too_long(size, self.limit, head, tail)
        if not line.strip():
            return None
        return _parse(line.decode(self.encoding, self.errors))


def _parse(text: str) -> Any:
    import mcp_types
    from mcp.shared.message import SessionMessage

    try:
        return SessionMessage(mcp_types.jsonrpc_message_adapter.validate_json(text, by_name=False))
    except ValueError as err:
        log.warning("an MCP server wrote a line that is no JSON-RPC message: %s", err)
        return err


def _too_long(size: int, limit: int, head: bytes, tail: bytes) -> Any:
    import mcp_types
    from mcp.shared.message import SessionMessage

    found = _ID_AT_START.search(head) or _ID_AT_END.search(tail)
    why = (
        f"the server's message was {size / 1_000_000:.1f} MB, more than the "
        f"{limit / 1_000_000:g} MB Plansight reads; it was left out"
    )
    if found is None:
        log.warning("an MCP server's message without an id was dropped: %s", why)
        return ValueError(why)
    message_id: int | str = json.loads(found.group(1))
    log.warning("an MCP server's answer to request %s was dropped: %s", message_id, why)
    error = mcp_types.JSONRPCError(
        jsonrpc="2.0",
        id=message_id,
        error=mcp_types.ErrorData(code=MESSAGE_TOO_LONG, message=why),
    )
    return SessionMessage(error)


@contextlib.asynccontextmanager
async def bounded_stdio_client(
    server: Any, errlog: TextIO, max_message: int = MAX_MESSAGE_BYTES
) -> AsyncIterator[Any]:
    """`mcp.client.stdio.stdio_client` for `server` (its `StdioServerParameters`), but with each
    message read bounded to `max_message` bytes (see the module's docstring)."""
    import mcp.client.stdio as sdk
    from mcp.shared.message import SessionMessage

    # The SDK's spawn (its own process group, the default environment) and shutdown (close
    # stdin, wait, kill the tree), so that only the reading differs.
    process = await sdk._create_platform_compatible_process(
        command=server.command,
        args=server.args,
        env=sdk.get_default_environment() | (server.env or {}),
        errlog=errlog,
        cwd=server.cwd,
    )
    read_writer, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, write_reader = anyio.create_memory_object_stream[SessionMessage](0)
    writer_done = anyio.Event()
    bounder = LineBounder(max_message, server.encoding, server.encoding_error_handler)

    async def stdout_reader() -> None:
        assert process.stdout is not None
        try:
            async with read_writer:
                async for chunk in process.stdout:
                    for message in bounder.feed(chunk):
                        await read_writer.send(message)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, ConnectionError):
            pass  # our own shutdown, or the session gone: the session sees the stream end
        finally:
            with anyio.CancelScope(shield=True), contextlib.suppress(Exception):
                await sdk._drain_stdout(process)

    async def stdin_writer() -> None:
        assert process.stdin is not None
        try:
            async with write_reader:
                async for session_message in write_reader:
                    text = session_message.message.model_dump_json(
                        by_alias=True, exclude_unset=True
                    )
                    await process.stdin.send(
                        (text + "\n").encode(server.encoding, server.encoding_error_handler)
                    )
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            # The server may still live: end the read side so that no request hangs.
            await read_writer.aclose()
        finally:
            writer_done.set()

    async with anyio.create_task_group() as group:
        group.start_soon(stdout_reader)
        group.start_soon(stdin_writer)
        try:
            yield read_stream, write_stream
        finally:
            with anyio.CancelScope(shield=True):
                read_stream.close()
                write_stream.close()
                with anyio.move_on_after(sdk._WRITER_FLUSH_TIMEOUT):
                    await writer_done.wait()
                await sdk._stop_server_process(process)
                await sdk._aclose_all(read_stream, write_stream, read_writer, write_reader)
            group.cancel_scope.cancel()


def bounded_http_transport(max_message: int = MAX_MESSAGE_BYTES) -> Any:
    """An httpx2 transport whose JSON answers (a streamable HTTP server's plain answer to a
    call) are bounded to `max_message` bytes: the body is read until then, and the read fails
    with a stream error that the SDK turns into an error answer of that call (its event
    streams are bounded by the SDK itself, per event)."""
    import httpx2

    class TooLong(httpx2.StreamError):
        pass

    class Bounded(httpx2.AsyncByteStream):
        def __init__(self, inner: Any) -> None:
            self._inner = inner

        async def __aiter__(self) -> AsyncIterator[bytes]:
            size = 0
            async for chunk in self._inner:
                size += len(chunk)
                if size > max_message:
                    raise TooLong(
                        f"the server's answer was more than the {max_message / 1_000_000:g} MB "
                        "Plansight reads; it was left out"
                    )
                yield chunk

        async def aclose(self) -> None:
            await self._inner.aclose()

    class Transport(httpx2.AsyncBaseTransport):
        def __init__(self) -> None:
            self._inner = httpx2.AsyncHTTPTransport()

        async def handle_async_request(self, request: Any) -> Any:
            response = await self._inner.handle_async_request(request)
            if not response.headers.get("content-type", "").startswith("application/json"):
                return response
            return httpx2.Response(
                response.status_code,
                headers=response.headers,
                stream=Bounded(response.stream),
                request=request,
                extensions=response.extensions,
            )

        async def aclose(self) -> None:
            await self._inner.aclose()

    return Transport()
