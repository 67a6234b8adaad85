"""How `plansight lsp` meets its client and leaves it, through a real server process: it answers
at once while the SDK still imports, and it leaves quietly and promptly on `shutdown` + `exit`,
on `exit` alone, and on Ctrl-C (SIGINT), also in the middle of a run.

"Quietly" is checked on the server's stderr (no traceback, no error line); "promptly" is
behaviour, not a stopwatch: the process has exited when the test waits for it, the run's
commands are gone, and the server answered what the test asked in order.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO

import pytest

from plansight.fakeapi import FakeMessagesAPI, Hang
from plansight.fakeapi import text_reply as text
from plansight.fakeapi import tool_reply as tool
from plansight.lsp.stdio import ClientOutput

from conftest import PATIENCE, session_folder, wait_until
from lsp_harness import server_env

QUIET_BREAKERS = ("Traceback", "ERROR", "Error sending data", "closed file", "Fatal Python error")


class StdioServer:
    """`python -m plansight lsp` on pipes, its stderr in a file; speaks raw JSON-RPC."""

    def __init__(self, stderr_path: Path) -> None:
        self.stderr_path = stderr_path
        self.proc: asyncio.subprocess.Process | None = None
        self.messages: list[dict[str, Any]] = []
        self._changed = asyncio.Event()
        self._reader: asyncio.Task[None] | None = None
        self._next_id = 0

    async def start(
        self,
        root: Path,
        storage: Path,
        api: FakeMessagesAPI,
        *,
        extra_env: dict[str, str] | None = None,
    ) -> None:
        with self.stderr_path.open("wb") as stderr:
            self.proc = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "plansight",
                "lsp",
                cwd=str(root),
                env=server_env(api, {"PLANSIGHT_LOG_LEVEL": "WARNING", **(extra_env or {})}),
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=stderr,
            )
        self._reader = asyncio.create_task(self._read())
        init = await self.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": root.as_uri(),
                "capabilities": {"window": {"workDoneProgress": True}},
                "initializationOptions": {
                    "storageDir": str(storage),
                    "autoApprove": {"edits": True, "commands": True},
                    # The tests follow a command's shell by its host pid (`$$`), which a
                    # sandboxed command's own process namespace would hide.
                    "sandbox": {"enabled": False},
                },
            },
        )
        assert init["result"]["capabilities"]["experimental"]["plansight"]["version"] == 4
        await self.notify("initialized", {})

    async def _read(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        out = self.proc.stdout
        try:
            while True:
                length = 0
                while (line := await out.readuntil(b"\n")) != b"\r\n":
                    name, _, value = line.decode().partition(":")
                    if name.lower() == "content-length":
                        length = int(value)
                message = json.loads(await out.readexactly(length))
                self.messages.append(message)
                self._changed.set()
                if "method" in message and "id" in message:  # window/workDoneProgress/create
                    await self.send({"jsonrpc": "2.0", "id": message["id"], "result": None})
        except (asyncio.IncompleteReadError, ConnectionError):
            self._changed.set()

    async def send(self, message: dict[str, Any]) -> None:
        assert self.proc is not None and self.proc.stdin is not None
        body = json.dumps(message).encode()
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        await self.proc.stdin.drain()

    async def notify(self, method: str, params: Any = None) -> None:
        await self.send({"jsonrpc": "2.0", "method": method, "params": params})

    async def start_request(self, method: str, params: Any = None) -> int:
        self._next_id += 1
        await self.send({"jsonrpc": "2.0", "id": self._next_id, "method": method, "params": params})
        return self._next_id

    async def request(self, method: str, params: Any = None) -> dict[str, Any]:
        return await self.answer(await self.start_request(method, params))

    async def wait_for(self, predicate: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        async with asyncio.timeout(PATIENCE):
            while True:
                for message in self.messages:
                    if predicate(message):
                        return message
                assert self.proc is not None
                if self.proc.returncode is not None or (self._reader and self._reader.done()):
                    raise AssertionError(f"the server ended: {self.stderr()[-3000:]}")
                self._changed.clear()
                await self._changed.wait()

    async def answer(self, msg_id: int) -> dict[str, Any]:
        return await self.wait_for(lambda m: m.get("id") == msg_id and "method" not in m)

    def index_of(self, predicate: Callable[[dict[str, Any]], bool]) -> int:
        return next(i for i, m in enumerate(self.messages) if predicate(m))

    async def exited(self) -> int:
        assert self.proc is not None
        async with asyncio.timeout(PATIENCE):
            code = await self.proc.wait()
        if self._reader is not None:
            await self._reader
        return code

    def stderr(self) -> str:
        return self.stderr_path.read_text(errors="replace")

    def assert_quiet(self) -> None:
        log = self.stderr()
        assert not [word for word in QUIET_BREAKERS if word in log], log[-3000:]

    def kill(self) -> None:
        if self.proc is not None and self.proc.returncode is None:
            self.proc.kill()


@pytest.fixture
async def server(tmp_path: Path) -> Any:
    handle = StdioServer(tmp_path / "server.stderr")
    yield handle
    handle.kill()
    if handle.proc is not None:
        await handle.proc.wait()


def is_event(kind: str) -> Callable[[dict[str, Any]], bool]:
    return lambda m: m.get("method") == "plansight/event" and m["params"]["type"] == kind


def is_cancelled(answer: dict[str, Any]) -> bool:
    error = answer.get("error")
    return (error is not None and error["code"] == -32800) or (
        error is None and answer["result"]["status"] == "cancelled"
    )


def process_gone(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] == "Z"  # a zombie has ended too


SLEEPER = "echo $$ > sleeper.pid; sleep 600"


async def start_run_in_a_command(server: StdioServer, root: Path, api: FakeMessagesAPI) -> int:
    """A run whose `bash` command sleeps; returns the command's shell pid once it runs."""
    api.push(tool("bash", {"command": SLEEPER}), text("unreachable"))
    await server.start_request("plansight/run", {"prompt": "Sleep"})
    pid_file = root / "sleeper.pid"
    await wait_until(
        lambda: pid_file.exists() and pid_file.read_text().strip().isdigit(), "the command runs"
    )
    return int(pid_file.read_text())


# ----- leaving ----------------------------------------------------------------------------------


@pytest.mark.parametrize("wait_for_shutdown", [True, False], ids=["in-order", "back-to-back"])
async def test_shutdown_then_exit_during_a_run_ends_it_and_exits_quietly(
    server: StdioServer,
    hello_workspace: Path,
    fake_api: FakeMessagesAPI,
    tmp_path: Path,
    wait_for_shutdown: bool,
) -> None:
    await server.start(hello_workspace, tmp_path / "state", fake_api)
    fake_api.push(tool("read_file", {"path": "hello.py"}), Hang(120))
    run_id = await server.start_request("plansight/run", {"prompt": "Read it"})
    await wait_until(lambda: len(fake_api.message_requests) == 2, "the model stream hangs")

    shutdown_id = await server.start_request("shutdown")
    if wait_for_shutdown:
        # The run ends first: its answer and its runFinished reach the client before shutdown's.
        assert (await server.answer(shutdown_id))["result"] is None
        run_answer = await server.answer(run_id)
        assert is_cancelled(run_answer)
        finished = server.index_of(is_event("runFinished"))
        assert server.messages[finished]["params"]["result"]["status"] == "cancelled"
        assert finished < server.index_of(lambda m: m.get("id") == shutdown_id)
        assert server.index_of(lambda m: m.get("id") == run_id) < server.index_of(
            lambda m: m.get("id") == shutdown_id
        )
    await server.notify("exit")
    assert await server.exited() == 0
    server.assert_quiet()


async def test_exit_during_a_command_kills_it_and_exits_quietly(
    server: StdioServer, hello_workspace: Path, fake_api: FakeMessagesAPI, tmp_path: Path
) -> None:
    await server.start(hello_workspace, tmp_path / "state", fake_api)
    sleeper = await start_run_in_a_command(server, hello_workspace, fake_api)
    await server.notify("exit")  # no shutdown first: exit code 1, as LSP says
    assert await server.exited() == 1
    await wait_until(lambda: process_gone(sleeper), "the command killed")
    server.assert_quiet()


async def test_the_end_of_input_during_a_run_ends_it_and_the_server(
    server: StdioServer, hello_workspace: Path, fake_api: FakeMessagesAPI, tmp_path: Path
) -> None:
    await server.start(hello_workspace, tmp_path / "state", fake_api)
    sleeper = await start_run_in_a_command(server, hello_workspace, fake_api)
    assert server.proc is not None and server.proc.stdin is not None
    server.proc.stdin.close()  # the editor died
    assert await server.exited() == 0
    await wait_until(lambda: process_gone(sleeper), "the command killed")
    server.assert_quiet()


async def test_ctrl_c_during_a_run_cancels_it_and_exits_cleanly(
    server: StdioServer, hello_workspace: Path, fake_api: FakeMessagesAPI, tmp_path: Path
) -> None:
    await server.start(hello_workspace, tmp_path / "state", fake_api)
    sleeper = await start_run_in_a_command(server, hello_workspace, fake_api)
    assert server.proc is not None
    server.proc.send_signal(signal.SIGINT)
    # The client is still there: it hears how the run ended.
    finished = await server.wait_for(is_event("runFinished"))
    assert finished["params"]["result"]["status"] == "cancelled"
    assert await server.exited() == 130
    await wait_until(lambda: process_gone(sleeper), "the command killed")
    server.assert_quiet()
    # The conversation was saved consistent: the command's call has its (cancelled) result.
    lines = (session_folder(tmp_path / "state") / "conversation.jsonl").read_text().splitlines()
    last = json.loads(lines[-1])
    assert last["role"] == "user" and last["content"][0]["type"] == "tool_result"


async def test_ctrl_c_on_an_idle_server_exits_cleanly(
    server: StdioServer, hello_workspace: Path, fake_api: FakeMessagesAPI, tmp_path: Path
) -> None:
    await server.start(hello_workspace, tmp_path / "state", fake_api)
    assert (await server.request("plansight/state", {}))["result"]["running"] is False
    assert server.proc is not None
    server.proc.send_signal(signal.SIGINT)
    assert await server.exited() == 130
    server.assert_quiet()


# ----- starting ---------------------------------------------------------------------------------

# Holds the execution of `import anthropic` until a file exists, as a slow import would (under
# the module's own lock, not the global import lock): the SDK's import takes as long as the test
# wants, up to PATIENCE: a test that never opens the gate gets a server that fails, not one
# that hangs.
SDK_GATE = """
import importlib.abc, importlib.machinery, os, sys, time

class _GatedLoader(importlib.abc.Loader):
    def __init__(self, loader):
        self.loader = loader

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module):
        deadline = time.monotonic() + float(os.environ["PLANSIGHT_TEST_SDK_PATIENCE"])
        while not os.path.exists(os.environ["PLANSIGHT_TEST_SDK_GATE"]):
            if time.monotonic() > deadline:
                raise ImportError("the test never opened the SDK gate")
            time.sleep(0.01)
        self.loader.exec_module(module)

class _Gate(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name != "anthropic":
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is not None and spec.loader is not None:
            spec.loader = _GatedLoader(spec.loader)
        return spec

sys.meta_path.insert(0, _Gate())
"""


async def test_requests_and_a_cancel_are_answered_while_the_sdk_is_still_importing(
    server: StdioServer, hello_workspace: Path, fake_api: FakeMessagesAPI, tmp_path: Path
) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(SDK_GATE)
    gate = tmp_path / "sdk-may-import"
    env = {
        "PYTHONPATH": str(site),
        "PLANSIGHT_TEST_SDK_GATE": str(gate),
        "PLANSIGHT_TEST_SDK_PATIENCE": str(PATIENCE),
    }
    await server.start(hello_workspace, tmp_path / "state", fake_api, extra_env=env)
    fake_api.push(text("Hello."))
    run_id = await server.start_request("plansight/run", {"prompt": "Say hello"})
    await server.wait_for(is_event("runStarted"))  # at once, not after the import
    state = await server.request("plansight/state", {})
    assert state["result"]["running"] is True
    await server.notify("$/cancelRequest", {"id": run_id})
    assert is_cancelled(await server.answer(run_id))
    finished = await server.wait_for(is_event("runFinished"))
    assert finished["params"]["result"]["status"] == "cancelled"
    assert fake_api.message_requests == []  # the SDK never got to send anything
    assert not gate.exists()  # all of it happened while the import was held

    gate.touch()
    answer = await server.request("plansight/run", {"prompt": "Say hello"})
    assert answer["result"]["status"] == "done" and answer["result"]["text"] == "Hello."
    assert (await server.request("shutdown"))["result"] is None
    await server.notify("exit")
    assert await server.exited() == 0
    server.assert_quiet()


# ----- writing ----------------------------------------------------------------------------------
# ClientOutput on real pipes, as stdout is when PYTHONUNBUFFERED=1 (the VS Code client sets it):
# an unbuffered file, whose write(2) may take only part of a large message.


def frame_of(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


class PipeReader:
    """Reads the far end of a pipe in a thread until the writer closes it."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.data = bytearray()
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        while chunk := os.read(self.fd, 1 << 16):
            self.data += chunk
        os.close(self.fd)

    def all(self) -> bytes:
        self.thread.join(PATIENCE)
        assert not self.thread.is_alive(), "the writer never closed the pipe"
        return bytes(self.data)


def pipe_to_reader(*, blocking: bool) -> tuple[ClientOutput, BinaryIO, PipeReader]:
    read_fd, write_fd = os.pipe()
    os.set_blocking(write_fd, blocking)
    stream = open(write_fd, "wb", buffering=0)
    return ClientOutput(stream), stream, PipeReader(read_fd)


@pytest.mark.parametrize("buffered", [False, True], ids=["unbuffered", "buffered"])
def test_a_message_larger_than_the_pipe_reaches_the_client_whole(buffered: bool) -> None:
    # A non-blocking pipe takes what fits (64 KiB) and leaves the rest to the writer: before,
    # the rest was dropped and the client waited forever for the bytes Content-Length promised.
    read_fd, write_fd = os.pipe()
    os.set_blocking(write_fd, False)
    stream = open(write_fd, "wb", buffering=-1 if buffered else 0)
    reader = PipeReader(read_fd)
    output = ClientOutput(stream)
    messages = [frame_of(b'{"text": "%s"}' % (letter * 3_000_000)) for letter in (b"y", b"z")]
    for message in messages:
        output.write(message)
    stream.close()
    received = reader.all()
    assert len(received) == sum(map(len, messages))
    assert received == b"".join(messages)
    assert not output.closed


def test_messages_sent_from_several_threads_at_once_arrive_whole_and_apart() -> None:
    # pygls sends log records from whichever thread logged them, while the event loop sends
    # answers: a write that a full pipe splits must not let another message in between.
    output, stream, reader = pipe_to_reader(blocking=True)
    letters = b"abcdefgh"

    def send(letter: bytes) -> None:
        for _ in range(3):
            output.write(frame_of(letter * 1_000_000))

    threads = [threading.Thread(target=send, args=(bytes([c]),)) for c in letters]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(PATIENCE)
    stream.close()
    received = reader.all()
    bodies = []
    while received:
        header, _, rest = received.partition(b"\r\n\r\n")
        assert header.startswith(b"Content-Length: "), header[:80]
        length = int(header.removeprefix(b"Content-Length: "))
        bodies.append(rest[:length])
        received = rest[length:]
    assert sorted(body[:1] for body in bodies) == sorted(bytes([c]) for c in letters * 3)
    assert all(body == body[:1] * 1_000_000 for body in bodies)


def test_a_client_gone_mid_message_silences_the_output() -> None:
    read_fd, write_fd = os.pipe()
    stream = open(write_fd, "wb", buffering=0)
    os.close(read_fd)  # the client is gone
    output = ClientOutput(stream)
    output.write(frame_of(b"y" * 1_000_000))
    assert output.closed and output.lost.is_set()
    output.write(frame_of(b"{}"))  # nothing more is tried
    stream.close()
