"""Reading JSON-RPC from the client (lsp/framing.py): real bytes through a pipe into pygls.

A pygls server with two handlers of its own (a request that echoes its params, a notification
that is recorded) reads from a real OS pipe that a thread writes to in the chunks a test
chooses; what the client would see is the framed output of the server's protocol, parsed back.
Each case is what a client notices: its requests answered (in order, intact), the JSON-RPC
error it gets for what it sent wrong, and the server reading on after it.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import threading
from collections.abc import Iterable
from typing import Any

from pygls.lsp.server import LanguageServer

from plansight.lsp.framing import MAX_MESSAGE_BYTES, read_messages

from conftest import PATIENCE, wait_until

HEADER = re.compile(rb"Content-Length: (\d+)\r\n(?:[^\r\n]+\r\n)*\r\n")


class Output:
    """What the server writes, as the client would parse it."""

    def __init__(self) -> None:
        self.data = bytearray()

    def write(self, data: bytes) -> None:
        self.data += data

    def close(self) -> None:
        pass

    def messages(self) -> list[dict[str, Any]]:
        found, at = [], 0
        while match := HEADER.match(self.data, at):
            start = match.end()
            end = start + int(match.group(1))
            found.append(json.loads(self.data[start:end]))
            at = end
        assert at == len(self.data), "the server wrote something that is not framed JSON-RPC"
        return found


def plain(value: Any) -> Any:
    """pygls hands custom params over as namedtuples: back to JSON values for the echo."""
    if hasattr(value, "_asdict"):
        return {key: plain(item) for key, item in value._asdict().items()}
    if isinstance(value, list | tuple):
        return [plain(item) for item in value]
    return value


def frame(body: bytes | dict[str, Any]) -> bytes:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    return b"Content-Length: %d\r\n\r\n" % len(data) + data


def request(msg_id: int, method: str = "test/echo", params: Any = None) -> bytes:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id, "method": method}
    if params is not None:
        message["params"] = params
    return frame(message)


def note(value: Any) -> bytes:
    return frame({"jsonrpc": "2.0", "method": "test/note", "params": {"value": value}})


async def serve(chunks: Iterable[bytes]) -> tuple[list[dict[str, Any]], list[Any]]:
    """Feed `chunks` through a pipe, then close it; return (messages written, notes heard)."""
    server = LanguageServer("framing-test", "1")
    heard: list[Any] = []
    echoed: list[Any] = []  # the requests handed to the echo handler, each owed one answer

    @server.feature("test/echo")
    def echo(ls: LanguageServer, params: Any) -> Any:
        echoed.append(params)
        return {"echo": plain(params)}

    @server.feature("test/note")
    def on_note(ls: LanguageServer, params: Any) -> None:
        heard.append(params.value)

    out = Output()
    server.protocol.set_writer(out, include_headers=True)
    read_fd, write_fd = os.pipe()

    def feed() -> None:
        with os.fdopen(write_fd, "wb", buffering=0) as pipe:
            for chunk in chunks:
                pipe.write(chunk)

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    with os.fdopen(read_fd, "rb") as stdin:
        await asyncio.wait_for(read_messages(stdin, server.protocol, threading.Event()), PATIENCE)
    writer.join(PATIENCE)
    # Only the echo handler answers with a result (the reader's own answers are errors): once
    # each request it was handed has its result written, the server has said all it will.
    await wait_until(
        lambda: sum("result" in m for m in out.messages()) >= len(echoed),
        "every echoed request answered",
    )
    return out.messages(), heard


def answers(messages: list[dict[str, Any]]) -> dict[Any, dict[str, Any]]:
    return {m["id"]: m for m in messages if "result" in m or "error" in m}


async def test_messages_split_into_single_bytes_are_all_answered_in_order() -> None:
    data = request(1, params={"text": "héllo"}) + note("n") + request(2, params=[1, 2])
    messages, heard = await serve(data[i : i + 1] for i in range(len(data)))
    assert [m["id"] for m in messages] == [1, 2]
    assert messages[0]["result"] == {"echo": {"text": "héllo"}}
    assert messages[1]["result"] == {"echo": [1, 2]}
    assert heard == ["n"]


async def test_many_messages_in_one_write_are_all_answered() -> None:
    data = b"".join(request(i, params={"n": i}) for i in range(50))
    messages, _ = await serve([data])
    assert [m["result"]["echo"]["n"] for m in messages] == list(range(50))


async def test_a_large_message_arrives_intact() -> None:
    text = "x" * (3 << 20) + "end"  # more than one read of the body
    messages, _ = await serve([request(1, params={"text": text})])
    assert messages[0]["result"]["echo"]["text"] == text


async def test_other_header_lines_are_skipped() -> None:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "test/echo", "params": 1}).encode()
    data = (
        b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n"
        b"X-Garbage: \xff\xfe\r\n"
        b"content-length:   %d  \r\n\r\n" % len(body) + body
    )
    messages, _ = await serve([data, request(2, params=2)])
    assert [m["result"]["echo"] for m in messages] == [1, 2]


async def test_a_too_short_content_length_loses_only_that_message() -> None:
    good = request(2, params="after")
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "test/echo", "params": "cut"})
    bad = b"Content-Length: %d\r\n\r\n" % (len(body) - 5) + body.encode()
    messages, _ = await serve([bad, good])
    # The cut body is no JSON (a parse error, its id unknown); the leftover bytes run into the
    # next header line, whose Content-Length is still found at its end.
    assert [(m["id"], m.get("error", {}).get("code")) for m in messages] == [
        (None, -32700),
        (2, None),
    ]
    assert messages[1]["result"] == {"echo": "after"}


async def test_a_too_long_content_length_costs_at_most_the_next_message() -> None:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "test/echo", "params": "long"})
    bad = b"Content-Length: %d\r\n\r\n" % (len(body) + 40) + body.encode()
    following = [request(i, params=i) for i in (2, 3, 4)]
    messages, _ = await serve([bad, *following])
    # The body swallowed the start of request 2: one parse error, then 3 and 4 in step again.
    assert [(m["id"], m.get("error", {}).get("code")) for m in messages] == [
        (None, -32700),
        (3, None),
        (4, None),
    ]


async def test_an_impossible_content_length_is_refused_and_reading_goes_on() -> None:
    huge = b"Content-Length: %d\r\n\r\n" % (MAX_MESSAGE_BYTES + 1)
    nonsense = b"Content-Length: 12abc\r\n\r\n"
    messages, _ = await serve([huge, nonsense, request(1, params="still here")])
    errors = [m for m in messages if "error" in m]
    assert [e["error"]["code"] for e in errors] == [-32600, -32600]
    assert all(e["id"] is None for e in errors)
    assert answers(messages)[1]["result"] == {"echo": "still here"}


async def test_a_body_that_is_not_json_gets_a_parse_error_with_a_null_id() -> None:
    messages, _ = await serve([frame(b"{not json"), frame(b"\xff\xfe"), request(1, params=1)])
    errors = [m for m in messages if "error" in m]
    assert [(e["id"], e["error"]["code"]) for e in errors] == [(None, -32700), (None, -32700)]
    assert answers(messages)[1]["result"] == {"echo": 1}


async def test_what_is_not_a_json_rpc_request_gets_invalid_request() -> None:
    messages, _ = await serve(
        [
            frame(b"[1, 2]"),
            frame({"id": 7, "method": "test/echo"}),  # no "jsonrpc": "2.0"
            frame({"jsonrpc": "2.0", "id": 8, "method": 5}),
            frame({"jsonrpc": "2.0", "id": [1], "method": "test/echo"}),
            request(9, params=9),
        ]
    )
    errors = [(m["id"], m["error"]["code"]) for m in messages if "error" in m]
    assert errors == [(None, -32600), (7, -32600), (8, -32600), (None, -32600)]
    assert answers(messages)[9]["result"] == {"echo": 9}


async def test_a_request_without_params_is_answered() -> None:
    messages, _ = await serve([request(1)])
    assert messages == [{"jsonrpc": "2.0", "id": 1, "result": {"echo": None}}]


async def test_params_that_cannot_be_structured_get_invalid_params() -> None:
    hover = {"jsonrpc": "2.0", "id": 1, "method": "textDocument/hover", "params": "nope"}
    messages, _ = await serve([frame(hover), request(2, params=2)])
    assert answers(messages)[1]["error"]["code"] == -32602
    assert answers(messages)[2]["result"] == {"echo": 2}


async def test_a_client_gone_mid_message_ends_reading_quietly() -> None:
    cut = request(2, params="x" * 100)[:-30]
    messages, _ = await serve([request(1, params=1), cut])
    assert [m["id"] for m in messages] == [1]
