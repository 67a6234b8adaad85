"""The agent's stdio transport: newline-delimited JSON-RPC on stdin/stdout, nothing else on
stdout (logs go to stderr).

Unlike the SDK's own, it answers what it cannot read instead of skipping it silently: a line
that is not JSON gets a Parse error (-32700), and JSON that is no JSON-RPC message (an array, a
number, an object without `method` or `id`) an Invalid Request (-32600), both with `id: null`;
then it reads on, so one bad line never ends the session. Every error object it writes goes
through errors.py's `wire_error` (no null members: the SDK writes `data: null`).
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

from plansight.acp.errors import wire_error

log = logging.getLogger(__name__)

PARSE_ERROR = -32700
INVALID_REQUEST = -32600


def error_reply(code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": message}}


def checked(line: bytes) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """(the message, None) for a JSON-RPC message; (None, the error to answer) otherwise."""
    try:
        message = json.loads(line)
    except ValueError as err:
        return None, error_reply(PARSE_ERROR, f"Parse error: the line is not JSON ({err}).")
    if not isinstance(message, dict) or not ("method" in message or "id" in message):
        return None, error_reply(
            INVALID_REQUEST, "Invalid Request: a JSON-RPC message is an object with a method or id."
        )
    if "method" in message and not isinstance(message["method"], str):
        return None, error_reply(INVALID_REQUEST, "Invalid Request: method must be a string.")
    return message, None


class StdioTransport:
    """`acp`'s Transport over an asyncio reader and writer."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader = reader
        self._writer = writer
        self._closed = False

    def write(self, message: dict[str, Any]) -> None:
        """Write `message` now (buffered; `send` waits for the buffer to drain)."""
        if self._closed:
            raise ConnectionError("the client's connection is closed")
        if isinstance(message.get("error"), dict):
            # Every error, the SDK's and ours, goes out here: none with a null member.
            message = {**message, "error": wire_error(message["error"])}
        self._writer.write((json.dumps(message, separators=(",", ":")) + "\n").encode("utf-8"))

    async def send(self, message: dict[str, Any]) -> None:
        # Written at once (before any await), so that what is sent first arrives first.
        self.write(message)
        await self._writer.drain()

    async def receive(self) -> dict[str, Any] | None:
        while True:
            try:
                line = await self._reader.readuntil(b"\n")
            except asyncio.IncompleteReadError as err:
                line = err.partial
                if not line.strip():
                    return None  # the client closed its end
            except asyncio.LimitOverrunError:
                log.error("a message longer than the read limit: ended the connection")
                return None
            if not line.strip():
                continue
            message, error = checked(line)
            if message is not None:
                return message
            assert error is not None
            log.warning("%s", error["error"]["message"])
            await self.send(error)

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._writer.close()
