"""Reading JSON-RPC messages from the client: a malformed message costs only itself.

pygls's own stdio loop dies on an absurd Content-Length (it allocates the whole body up front:
MemoryError), stays out of step for good after a wrong one (the rest of the body swallows the
next header line), and leaves requests it cannot structure unanswered (a request without
"params", odd params): the client then waits forever. This loop reads the same framing, but

- finds a `Content-Length` header also at the end of a line that starts with leftover bytes,
  so a wrong length loses only that message (and at worst the next one);
- ignores a length above `MAX_MESSAGE_BYTES` and reads bodies in chunks;
- answers what JSON-RPC 2.0 says: a parse error (-32700, id null) for a body that is not
  JSON, an invalid request (-32600) for one that is no request, invalid params (-32602) for a
  request whose params cannot be structured;
- hands everything else to pygls's protocol as pygls's loop does (structuring only the
  top-level message, which is all pygls's object hook changes in a well-formed one).
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import threading
from concurrent.futures import Executor
from typing import Any, BinaryIO

from pygls.protocol import JsonRPCProtocol

from plansight.protocol.names import INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, PARSE_ERROR

log = logging.getLogger(__name__)

MAX_MESSAGE_BYTES = 256 * 1024 * 1024
MAX_HEADER_LINE = 64 * 1024
_BODY_CHUNK = 1 << 20

# At the end of the line: bytes left over from a message with a wrong length may precede it.
_CONTENT_LENGTH = re.compile(rb"Content-Length:[ \t]*([^\r\n]*?)[ \t]*\r?\n\Z", re.IGNORECASE)


async def read_messages(
    stdin: BinaryIO,
    protocol: JsonRPCProtocol,
    stop_event: threading.Event,
    executor: Executor | None = None,
) -> None:
    """Read framed messages from `stdin` and dispatch them until EOF or `stop_event`."""
    loop = asyncio.get_running_loop()
    length: int | None = None
    while not stop_event.is_set():
        line: bytes = await loop.run_in_executor(executor, stdin.readline, MAX_HEADER_LINE)
        if not line:
            return
        if line in (b"\r\n", b"\n"):
            if length is None:
                continue
            body = await _read_body(loop, executor, stdin, length)
            length = None
            if body is None:
                return
            dispatch(protocol, body)
            continue
        match = _CONTENT_LENGTH.search(line)
        if match is None:
            continue  # another header (Content-Type) or garbage: skipped
        value = match.group(1)
        if value.isdigit() and int(value) <= MAX_MESSAGE_BYTES:
            length = int(value)
        else:
            length = None
            log.warning("ignoring a message with Content-Length %r", value[:40])
            send_error(protocol, None, INVALID_REQUEST, "Invalid Content-Length header.")


async def _read_body(
    loop: asyncio.AbstractEventLoop, executor: Executor | None, stdin: BinaryIO, length: int
) -> bytes | None:
    """`length` bytes, read in chunks (the memory follows what arrives); None at EOF."""
    chunks: list[bytes] = []
    remaining = length
    while remaining > 0:
        chunk: bytes = await loop.run_in_executor(executor, stdin.read, min(remaining, _BODY_CHUNK))
        if not chunk:
            return None
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def dispatch(protocol: JsonRPCProtocol, body: bytes) -> None:
    try:
        data = json.loads(body)
    except ValueError as err:  # JSONDecodeError and UnicodeDecodeError alike
        log.warning("a message that is not JSON: %s", err)
        send_error(protocol, None, PARSE_ERROR, f"Parse error: {err}")
        return
    if not isinstance(data, dict) or data.get("jsonrpc") != JsonRPCProtocol.VERSION:
        msg_id = data.get("id") if isinstance(data, dict) else None
        log.warning("not a JSON-RPC 2.0 message: %.200s", body)
        send_error(
            protocol,
            msg_id if _valid_id(msg_id) else None,
            INVALID_REQUEST,
            'Invalid Request: expected a JSON object with "jsonrpc": "2.0".',
        )
        return
    method = data.get("method")
    is_request = "method" in data and "id" in data
    if "method" in data and not isinstance(method, str):
        send_error(protocol, _id_or_none(data), INVALID_REQUEST, "Invalid Request: bad method.")
        return
    if is_request and not _valid_id(data["id"]):
        send_error(protocol, None, INVALID_REQUEST, "Invalid Request: bad id.")
        return
    custom = isinstance(method, str) and protocol.get_message_type(method) is None
    if custom and "params" not in data:
        data["params"] = None  # JSON-RPC lets a request omit its params
    try:
        message = protocol.structure_message(data)
    except Exception as err:
        log.warning("could not read a %s message: %s", method or "response", err)
        if is_request:
            send_error(protocol, data["id"], INVALID_PARAMS, f"Invalid params: {err}")
        return
    try:
        protocol.handle_message(message)
    except Exception as err:
        log.exception("failed to handle a %s message", method or "response")
        if is_request:
            send_error(protocol, data["id"], INTERNAL_ERROR, f"Internal error: {err}")


def send_error(protocol: JsonRPCProtocol, msg_id: Any, code: int, message: str) -> None:
    protocol._send_data(
        {"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}}
    )


def _valid_id(value: Any) -> bool:
    return isinstance(value, str | int) and not isinstance(value, bool)


def _id_or_none(data: dict[str, Any]) -> Any:
    value = data.get("id")
    return value if _valid_id(value) else None
