"""Malformed JSON-RPC written to `plansight lsp` as raw bytes: the server answers or drops each
abuse as JSON-RPC says, never dies, keeps answering `plansight/state`, and writes nothing but
framed JSON-RPC on stdout.

No LSP client library here: a client library would refuse to send most of these bytes.

The tests share one server per kind of stdout (a pipe, a non-blocking pipe), started on first
use: every test's abuse reaches the same process in turn, which is at least as telling as a
fresh one each ("the server never dies on bad input"). Before each test the server answers in
step (`begin`: nothing runs, `plansight/reset`, its messages cleared, so a test sees only what
arrived after it began) and after each test it is alive and wrote nothing but JSON-RPC; at the
end of the module it exits with 0 on `shutdown` + `exit`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from plansight.fakeapi import FakeMessagesAPI, text_reply, tool_reply
from plansight.protocol.names import RESET, SCRATCHPAD, TODOS

from conftest import FIXTURES, PATIENCE, wait_until
from lsp_harness import server_env

HEADER = re.compile(rb"(Content-Length|Content-Type): ([^\r\n]+)\r\n")
STATE_KEYS = {"todos", "scratchpad", "running"}

pytestmark = pytest.mark.asyncio(loop_scope="module")


def frame(body: bytes | dict[str, Any] | list[Any]) -> bytes:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    return b"Content-Length: %d\r\n\r\n" % len(data) + data


class RawServer:
    """`python -m plansight lsp` on pipes; every byte it writes to stdout is checked."""

    def __init__(self) -> None:
        self.root: Path | None = None
        self.proc: asyncio.subprocess.Process | None = None
        self.stdout: asyncio.StreamReader | None = None
        self._stdout_transport: asyncio.ReadTransport | None = None
        self.messages: list[dict[str, Any]] = []
        self.violations: list[str] = []  # stdout bytes that are not framed JSON-RPC
        self.stderr = bytearray()
        self._next_id = 1000
        self._tasks: list[asyncio.Task[None]] = []
        self._changed = asyncio.Event()

    async def start(
        self, root: Path, storage: Path, api: FakeMessagesAPI | None, *, stdout: str = "pipe"
    ) -> None:
        """`stdout`: "pipe", or "non-blocking pipe": one whose write(2) takes only what fits
        (a large message always comes back short), with PYTHONUNBUFFERED=1 as the VS Code
        client starts the server."""
        self.root = root
        env = {"PLANSIGHT_LOG_LEVEL": "WARNING"}
        write_fd: int | None = None
        if stdout == "non-blocking pipe":
            read_fd, write_fd = os.pipe()
            os.set_blocking(write_fd, False)
            env["PYTHONUNBUFFERED"] = "1"
        self.proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "plansight",
            "lsp",
            cwd=str(root),
            env=server_env(api, env),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE if write_fd is None else write_fd,
            stderr=asyncio.subprocess.PIPE,
            limit=1 << 16,
        )
        if write_fd is None:
            self.stdout = self.proc.stdout
        else:
            os.close(write_fd)
            self.stdout = asyncio.StreamReader(limit=1 << 16)
            reader = asyncio.StreamReaderProtocol(self.stdout)
            self._stdout_transport, _ = await asyncio.get_running_loop().connect_read_pipe(
                lambda: reader, open(read_fd, "rb", buffering=0)
            )
        self._tasks = [
            asyncio.create_task(self._read_stdout()),
            asyncio.create_task(self._read_stderr()),
        ]
        init = await self.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": root.as_uri(),
                "capabilities": {},
                "initializationOptions": {
                    "storageDir": str(storage),
                    # No review or approval requests: a raw client would have to answer them.
                    "autoApprove": {"edits": True, "commands": True},
                },
            },
            id_=1,
        )
        assert init["result"]["capabilities"]["experimental"] == {"plansight": {"version": 4}}
        await self.send(frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}))

    # ----- reading ----------------------------------------------------------------------------

    async def _read_stdout(self) -> None:
        assert self.stdout is not None
        out = self.stdout
        try:
            while True:
                length: int | None = None
                while True:
                    line = await out.readuntil(b"\n")
                    if line == b"\r\n":
                        break
                    match = HEADER.fullmatch(line)
                    if match is None:
                        self.violations.append(f"not a header line: {line[:200]!r}")
                        continue
                    if match.group(1) == b"Content-Length":
                        length = int(match.group(2))
                if length is None:
                    self.violations.append("a message without Content-Length")
                    continue
                body = await out.readexactly(length)
                try:
                    message = json.loads(body.decode("utf-8"))
                except ValueError as err:
                    self.violations.append(f"a body that is not JSON ({err}): {body[:200]!r}")
                    continue
                if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
                    self.violations.append(f"not a JSON-RPC 2.0 message: {body[:200]!r}")
                    continue
                self.messages.append(message)
                self._changed.set()
                if "method" in message and "id" in message:
                    # A server-to-client request: answer it so nothing waits on us.
                    await self.send(frame({"jsonrpc": "2.0", "id": message["id"], "result": None}))
        except asyncio.IncompleteReadError as err:
            if err.partial:
                self.violations.append(f"stdout ended inside a message: {err.partial[:200]!r}")
        except asyncio.LimitOverrunError:
            self.violations.append("a header line longer than 64 KiB")

    async def _read_stderr(self) -> None:
        assert self.proc is not None and self.proc.stderr is not None
        while chunk := await self.proc.stderr.read(1 << 16):
            self.stderr += chunk
            del self.stderr[: max(0, len(self.stderr) - 200_000)]

    async def wait_for(
        self,
        predicate: Callable[[dict[str, Any]], bool],
        timeout: float = PATIENCE,
        *,
        since: int = 0,
    ) -> dict[str, Any]:
        """The first message (from index `since` on) that satisfies `predicate`."""
        seen = since
        async with asyncio.timeout(timeout):
            while True:
                for message in self.messages[seen:]:
                    if predicate(message):
                        return message
                seen = len(self.messages)
                self._changed.clear()
                if self.exited:
                    raise AssertionError(f"the server died: {self.stderr[-3000:].decode()}")
                await self._changed.wait()

    # ----- writing ----------------------------------------------------------------------------

    async def send(self, data: bytes) -> None:
        assert self.proc is not None and self.proc.stdin is not None
        self.proc.stdin.write(data)
        await self.proc.stdin.drain()

    def new_id(self) -> int:
        self._next_id += 1
        return self._next_id

    async def request(
        self, method: str, params: Any = None, *, id_: int | None = None, timeout: float = PATIENCE
    ) -> dict[str, Any]:
        """Send a well-formed request and return its whole response message."""
        msg_id = self.new_id() if id_ is None else id_
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id, "method": method}
        if params is not None:
            message["params"] = params
        await self.send(frame(message))
        return await self.response(msg_id, timeout)

    async def response(self, msg_id: Any, timeout: float = PATIENCE) -> dict[str, Any]:
        return await self.wait_for(
            lambda m: (
                "method" not in m and m.get("id") == msg_id and ("result" in m or "error" in m)
            ),
            timeout,
        )

    async def assert_serving(self) -> None:
        """The user's view: the sidebar still gets the state."""
        answer = await self.request("plansight/state", {})
        assert set(answer["result"]) == STATE_KEYS, answer

    async def begin(self) -> None:
        """Before a test on a shared server: it answers in step, nothing runs, plan, scratchpad
        and conversation are cleared, and `messages` holds only what arrives from now on."""
        self.assert_sound()

        async def idle() -> bool:  # a cancelled run's end included
            state = await self.request("plansight/state", {})
            return state["result"]["running"] is False

        await wait_until(idle, "no run in progress")
        mark = len(self.messages)
        reset = await self.request(RESET, {})
        assert "result" in reset and reset["result"] is None, reset
        # The reset's own notifications (an empty plan, an empty scratchpad): the last thing
        # of the previous test.
        for method in (TODOS, SCRATCHPAD):
            await self.wait_for(lambda m, method=method: m.get("method") == method, since=mark)
        self.messages.clear()

    def assert_sound(self) -> None:
        """Alive, and every byte on stdout so far was framed JSON-RPC."""
        assert not self.exited, f"the server died: {self.stderr[-3000:].decode()}"
        assert self.violations == [], self.violations

    @property
    def exited(self) -> bool:
        return self.proc is not None and self.proc.returncode is not None

    async def stop(self) -> None:
        if self.proc is None:
            return
        if not self.exited:
            try:
                await self.request("shutdown")
                await self.send(frame({"jsonrpc": "2.0", "method": "exit"}))
                await asyncio.wait_for(self.proc.wait(), PATIENCE)
            except (TimeoutError, AssertionError, ConnectionError):
                self.proc.kill()
                await self.proc.wait()
        for task in self._tasks:
            await asyncio.wait_for(task, PATIENCE)
        if self._stdout_transport is not None:
            self._stdout_transport.close()


class SharedServers:
    """One RawServer per kind of stdout, each started on first use on its own workspace copy,
    all on one fake API; `close` checks each exits cleanly."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.api = FakeMessagesAPI().start()
        self.servers: dict[str, RawServer] = {}

    async def get(self, stdout: str) -> RawServer:
        if stdout not in self.servers:
            folder = self.folder / stdout.replace(" ", "-")
            root = folder / "hello"
            shutil.copytree(FIXTURES / "hello", root)
            raw = RawServer()
            self.servers[stdout] = raw
            await raw.start(root, folder / "state", self.api, stdout=stdout)
        return self.servers[stdout]

    async def close(self) -> None:
        async with contextlib.AsyncExitStack() as stopping:  # every server stopped, whatever
            stopping.callback(self.api.stop)
            for raw in self.servers.values():
                stopping.push_async_callback(raw.stop)
            for raw in self.servers.values():
                raw.assert_sound()
        for raw in self.servers.values():
            assert raw.proc is not None and raw.proc.returncode == 0
            assert raw.violations == []


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def shared(tmp_path_factory: pytest.TempPathFactory) -> Any:
    servers = SharedServers(tmp_path_factory.mktemp("raw"))
    yield servers
    await servers.close()


@pytest.fixture
def fake_api(shared: SharedServers) -> FakeMessagesAPI:
    """The shared servers' fake API, blank."""
    shared.api.reset()
    return shared.api


@pytest_asyncio.fixture(loop_scope="module")
async def server(request: pytest.FixtureRequest, shared: SharedServers) -> Any:
    raw = await shared.get(getattr(request, "param", "pipe"))
    await raw.begin()
    shared.api.reset()
    yield raw
    raw.assert_sound()


def is_error(message: dict[str, Any], code: int) -> bool:
    return "error" in message and message["error"].get("code") == code


# ----- unparseable and invalid messages -----------------------------------------------------------

UNPARSEABLE: dict[str, bytes] = {
    "garbage": b"{not json",
    "truncated": b'{"jsonrpc": "2.0", "id": 7, "method": "plansight/state", "params": {',
    "empty": b"",
    "invalid-utf8": b'{"jsonrpc": "2.0", "id": 7, "params": {"\xff\xfe": 1}}',
    "binary": b"\x00\x01\x02 binary",
    "two-objects": b'{"jsonrpc": "2.0"}{"jsonrpc": "2.0"}',
}


async def test_unparseable_bodies_get_a_parse_error_and_the_server_goes_on(
    server: RawServer,
) -> None:
    for name, body in UNPARSEABLE.items():
        mark = len(server.messages)
        await server.send(frame(body))
        # JSON-RPC 2.0: "Parse error", with id null since the id could not be read.
        error = await server.wait_for(lambda m: is_error(m, -32700), since=mark)
        assert error["id"] is None, name
        await server.assert_serving()


INVALID: dict[str, Any] = {
    "array": [1, 2, 3],
    "number": 42,
    "string": "plansight/state",
    "null": None,
    "no-jsonrpc": {"id": 7, "method": "plansight/state", "params": {}},
    "jsonrpc-1.0": {"jsonrpc": "1.0", "id": 7, "method": "plansight/state", "params": {}},
    "object-id": {"jsonrpc": "2.0", "id": {"nested": 1}, "method": "plansight/state"},
    "array-id": {"jsonrpc": "2.0", "id": [7], "method": "plansight/state", "params": {}},
    "bool-id": {"jsonrpc": "2.0", "id": True, "method": "plansight/state", "params": {}},
    "numeric-method": {"jsonrpc": "2.0", "id": 7, "method": 12, "params": {}},
    "batch": [{"jsonrpc": "2.0", "id": 7, "method": "plansight/state", "params": {}}],
}


async def test_invalid_requests_get_invalid_request_and_the_server_goes_on(
    server: RawServer,
) -> None:
    for name, message in INVALID.items():
        mark = len(server.messages)
        await server.send(frame(json.dumps(message).encode()))
        error = await server.wait_for(lambda m: is_error(m, -32600), since=mark)
        assert error["id"] in (None, 7), (name, error)
        await server.assert_serving()
    # None of them was taken for a real request.
    assert not any(m.get("id") == 7 and "result" in m for m in server.messages)


async def test_unknown_methods_are_answered_method_not_found(server: RawServer) -> None:
    for method in ("plansight/nope", "textDocument/doesNotExist", "", "$/unknownRequest"):
        answer = await server.request(method, {})
        assert is_error(answer, -32601), (method, answer)
    # Unknown notifications are ignored (no answer is possible), a stray response too.
    await server.send(frame({"jsonrpc": "2.0", "method": "plansight/nope", "params": {}}))
    await server.send(frame({"jsonrpc": "2.0", "method": "$/unknownNotification"}))
    await server.send(frame({"jsonrpc": "2.0", "id": 424242, "result": {"x": 1}}))
    await server.send(frame({"jsonrpc": "2.0", "id": 424243, "error": {"code": 1, "message": "x"}}))
    await server.assert_serving()


async def test_requests_without_params_are_answered(server: RawServer) -> None:
    # JSON-RPC 2.0 lets a client omit "params"; such a request still gets its answer.
    state = await server.request("plansight/state", None)
    assert set(state["result"]) == STATE_KEYS, state
    run = await server.request("plansight/run", None)
    assert is_error(run, -32602), run
    edit = await server.request("plansight/editPlan", None)
    assert is_error(edit, -32602), edit
    await server.assert_serving()


# ----- wrong parameter types ----------------------------------------------------------------------

BAD_RUN_PARAMS: list[Any] = [
    {"prompt": 42},
    {"prompt": None},
    {"prompt": ["a", "list"]},
    {"prompt": {"text": "an object"}},
    {"prompt": ""},
    {"prompt": "   \n\t "},
    {"prompt": True},
    {},
    {"promptt": "typo"},
    ["a positional", "array"],
    "just a string",
    17,
    {"prompt": "x", "type_name": "not an identifier!"},
    {"prompt": "x", "type_name": 5},
]

BAD_EDIT_PARAMS: list[Any] = [
    {"items": "nope"},
    {"items": None},
    {"items": {"id": "1", "text": "a", "status": "pending"}},
    {"items": [1, 2]},
    {"items": [None]},
    {"items": [["1", "a", "pending"]]},
    {"items": [{"id": True, "text": "a", "status": "pending"}]},
    {"items": [{"id": None, "text": "a", "status": "pending"}]},
    {"items": [{"id": ["1"], "text": "a", "status": "pending"}]},
    {"items": [{"id": "1", "text": 5, "status": "pending"}]},
    {"items": [{"id": "1", "text": "a", "status": "PENDING"}]},
    {"items": [{"id": "1", "text": "a", "status": None}]},
    {"items": [{"id": "1", "text": "a"}]},
    {"items": [{"id": "1", "text": "a", "status": "pending"}], "version": "1"},
    {"items": [{"id": "1", "text": "a", "status": "pending"}], "version": 1.5},
    {"items": [{"id": "1", "text": "a", "status": "pending"}], "version": [1]},
    {"items": [{"id": str(i), "text": "t", "status": "pending"} for i in range(500)]},
    {},
    ["positional"],
    "string",
    {"items": [], "type_name": "class"},
]


async def test_wrong_param_types_for_run_get_invalid_params(server: RawServer) -> None:
    for params in BAD_RUN_PARAMS:
        answer = await server.request("plansight/run", params)
        assert is_error(answer, -32602), (params, answer)
        await server.assert_serving()
    # None of them started a run or reached the model.
    state = await server.request("plansight/state", {})
    assert state["result"]["running"] is False
    assert not any(m.get("params", {}).get("type") == "runStarted" for m in server.messages)


async def test_wrong_param_types_for_edit_plan_get_invalid_params_and_change_nothing(
    server: RawServer,
) -> None:
    good = {"items": [{"id": "1", "text": "Keep me", "status": "in_progress"}]}
    accepted = await server.request("plansight/editPlan", good)
    before = accepted["result"]
    assert before["rendered"] == "[>] #1: Keep me\n(0/1 completed)"
    for params in BAD_EDIT_PARAMS:
        answer = await server.request("plansight/editPlan", params)
        assert is_error(answer, -32602), (str(params)[:200], answer)
        state = await server.request("plansight/state", {})
        assert state["result"]["todos"] == before, str(params)[:200]


async def test_a_run_with_tools_and_noisy_commands_keeps_stdout_clean(
    server: RawServer, fake_api: FakeMessagesAPI
) -> None:
    """Whatever the tools and their commands print goes to the model, never to our stdout.

    The one test here that changes a file: the shared server's workspace is this module's own
    copy, and no other test reads it."""
    assert server.root is not None
    hello_workspace = server.root
    noisy = "echo to-stdout; echo to-stderr >&2; seq 1 200000; printf '\\0\\r\\n'; python3 -c 1"
    fake_api.push(
        tool_reply("bash", {"command": noisy}),
        tool_reply("read_file", {"path": "hello.py"}),
        tool_reply(
            "edit_file", {"path": "hello.py", "old_text": "import sys", "new_text": "import os"}
        ),
        tool_reply("grep", {"pattern": "def"}),
        tool_reply("write_scratchpad", {"content": "Content-Length: 5\r\n\r\n{}"}),
        text_reply("All done."),
    )
    answer = await server.request("plansight/run", {"prompt": "Be noisy"})
    assert answer["result"]["status"] == "done", answer
    assert (hello_workspace / "hello.py").read_text().startswith("import os\n")
    first = fake_api.bodies[1]["messages"][-1]["content"][0]["content"]
    assert first.startswith("to-stdout\nto-stderr\n1\n2\n")
    await server.assert_serving()


# ----- huge payloads ------------------------------------------------------------------------------


async def test_a_20_mb_prompt_is_answered_and_the_server_goes_on(
    server: RawServer, fake_api: FakeMessagesAPI
) -> None:
    fake_api.push(text_reply("That was long."))
    prompt = "Please read this. " + "x" * 20_000_000
    answer = await server.request("plansight/run", {"prompt": prompt})
    result = answer.get("result")
    assert result is not None, answer
    assert result["status"] in ("done", "error"), result
    if result["status"] == "error":
        assert result["error"], result
    await server.assert_serving()


# A write(2) to a pipe may take only part of a large message (seen under load; a non-blocking
# pipe does it every time): the server dropped the rest, and the client waited for it forever.
@pytest.mark.parametrize("server", ["pipe", "non-blocking pipe"], indirect=True)
async def test_an_edit_plan_with_huge_text_is_answered_and_the_server_goes_on(
    server: RawServer,
) -> None:
    huge = "y" * 8_000_000
    answer = await server.request(
        "plansight/editPlan",
        {"items": [{"id": "1", "text": huge, "status": "pending"}]},
    )
    assert "result" in answer or is_error(answer, -32602), str(answer)[:300]
    await server.assert_serving()
    if "result" in answer:  # the sidebar gets the plan as it was sent
        state = await server.request("plansight/state", {})
        assert [item["text"] for item in state["result"]["todos"]["items"]] == [huge]


# ----- bad framing --------------------------------------------------------------------------------

STATE = {"jsonrpc": "2.0", "id": 77, "method": "plansight/state", "params": {}}


async def test_unknown_and_garbage_header_lines_are_skipped(server: RawServer) -> None:
    body = json.dumps(STATE).encode()
    await server.send(
        b"X-Garbage: yes\r\n"
        b"no colon at all\r\n"
        b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n"
        b"Content-Length: %d\r\n\r\n" % len(body) + body
    )
    answer = await server.response(77)
    assert set(answer["result"]) == STATE_KEYS
    await server.assert_serving()


async def test_a_too_short_content_length_loses_only_that_message(server: RawServer) -> None:
    body = json.dumps(STATE).encode()
    # E.g. a client counting characters instead of UTF-8 bytes.
    await server.send(b"Content-Length: %d\r\n\r\n" % (len(body) - 10) + body)
    await server.wait_for(lambda m: is_error(m, -32700))
    await server.assert_serving()


async def test_a_too_long_content_length_costs_at_most_the_next_message(
    server: RawServer,
) -> None:
    body = json.dumps(STATE).encode()
    await server.send(b"Content-Length: %d\r\n\r\n" % (len(body) + 25) + body)
    # The server waits for 25 more bytes and takes them from the next message (lost, like the
    # bad one); the message after that is understood again.
    probes = [server.new_id() for _ in range(3)]
    for probe in probes:
        await server.send(frame({"jsonrpc": "2.0", "id": probe, "method": "plansight/state"}))
    await server.response(probes[1])
    await server.response(probes[2])
    await server.assert_serving()


IMPOSSIBLE_LENGTHS = [
    b"99999999999999",  # 100 TB: pygls allocated it up front and died of MemoryError
    b"99999999999999999999999999999999",
    b"abc",
    b"-5",
    b"",
]


async def test_an_impossible_content_length_does_not_kill_the_server(server: RawServer) -> None:
    for value in IMPOSSIBLE_LENGTHS:
        mark = len(server.messages)
        await server.send(
            b"Content-Length: " + value + b"\r\n\r\n"
            b'{"jsonrpc": "2.0", "id": 5, "method": "plansight/state"}\r\n'
        )
        error = await server.wait_for(lambda m: is_error(m, -32600), since=mark)
        assert error["id"] is None and "Content-Length" in error["error"]["message"]
        await server.assert_serving()
    assert not any(m.get("id") == 5 for m in server.messages)


async def test_a_huge_header_line_without_newline_does_not_kill_the_server(
    server: RawServer,
) -> None:
    await server.send(b"X-Junk: " + b"z" * 5_000_000 + b"\r\n")
    await server.assert_serving()


async def test_messages_split_into_single_bytes_are_understood(server: RawServer) -> None:
    data = frame({"jsonrpc": "2.0", "id": 88, "method": "plansight/state", "params": {}})
    for i in range(len(data)):
        await server.send(data[i : i + 1])
    answer = await server.response(88)
    assert set(answer["result"]) == STATE_KEYS


async def test_many_messages_in_one_write_are_all_answered(server: RawServer) -> None:
    ids = list(range(2000, 2050))
    batch = b"".join(
        frame({"jsonrpc": "2.0", "id": i, "method": "plansight/state", "params": {}}) for i in ids
    )
    await server.send(batch)
    for i in ids:
        answer = await server.response(i)
        assert set(answer["result"]) == STATE_KEYS
