"""A fresh server's first run, and leaving mid-run.

- First run of a fresh server: `plansight/run` right after `initialized` (the SDK's import is
  still going on in its thread), then `plansight/state` and `$/cancelRequest` for the run at
  once: how long each waits for its answer. The contract: the cancel is answered within a
  second, other requests at once.
- `runStarted` of that first run: how soon the client can show progress.
- Leaving mid-run (the model's stream hanging): `shutdown` + `exit`, and SIGINT: from the
  message (the signal) to the process's exit, and the bytes the server wrote to stderr.

A bare JSON-RPC client on the pipes (as in bench.startup), the fake Messages API in-process.
"""

from __future__ import annotations

import asyncio
import signal
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from bench.editor import server_env
from bench.startup import bytecode_env, frame, read_message
from bench.table import Row, ms, percentile
from bench.workspaces import small_project
from plansight.fakeapi import FakeMessagesAPI, Hang, text_reply

REPEATS = 5
GOAL_CANCEL = 1.0  # the contract's "within a second"
GOAL_ANSWER = 0.1  # "at once": well under what a user notices
GOAL_EXIT = 1.0


class Server:
    def __init__(self, proc: asyncio.subprocess.Process, stderr: Path) -> None:
        self.proc = proc
        self.stderr = stderr
        self.arrived: dict[Any, float] = {}  # answer id or event type → when it arrived
        self.reader = asyncio.create_task(self._read())

    @classmethod
    async def start(cls, root: Path, tmp: Path, env: dict[str, str]) -> Server:
        stderr = tmp / f"stderr-{time.monotonic_ns()}"
        with stderr.open("wb") as err:
            proc = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "plansight",
                "lsp",
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=err,
                env=env,
                cwd=str(root),
            )
        server = cls(proc, stderr)
        await server.send(
            {
                "jsonrpc": "2.0",
                "id": "init",
                "method": "initialize",
                "params": {
                    "processId": None,
                    "rootUri": root.as_uri(),
                    "capabilities": {},
                    "initializationOptions": {
                        "storageDir": str(tmp / f"state-{time.monotonic_ns()}"),
                        "autoApprove": {"edits": True, "commands": True},
                    },
                },
            }
        )
        await server.until("init")
        await server.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        return server

    async def _read(self) -> None:
        assert self.proc.stdout is not None
        try:
            while True:
                message = await read_message(self.proc.stdout)
                now = time.perf_counter()
                if message.get("method") == "plansight/event":
                    self.arrived.setdefault(message["params"]["type"], now)
                elif "id" in message and "method" not in message:
                    self.arrived[message["id"]] = now
                elif "id" in message:  # a request of the server's: answer it
                    await self.send({"jsonrpc": "2.0", "id": message["id"], "result": None})
        except (ConnectionError, asyncio.IncompleteReadError):
            pass

    async def send(self, message: dict[str, Any]) -> float:
        assert self.proc.stdin is not None
        self.proc.stdin.write(frame(message))
        await self.proc.stdin.drain()
        return time.perf_counter()

    async def until(self, key: Any, timeout: float = 60) -> float:
        async with asyncio.timeout(timeout):
            while key not in self.arrived:
                await asyncio.sleep(0.001)
        return self.arrived[key]

    async def exit_after(self, act: Callable[[], Awaitable[float]]) -> tuple[float, int]:
        """Seconds from `act` to the process's exit, and the bytes it wrote to stderr."""
        began = await act()
        await asyncio.wait_for(self.proc.wait(), 60)
        elapsed = time.perf_counter() - began
        self.reader.cancel()
        return elapsed, self.stderr.stat().st_size

    async def close(self) -> None:
        if self.proc.returncode is None:
            self.proc.kill()
            await self.proc.wait()
        self.reader.cancel()


async def first_run(root: Path, tmp: Path, env: dict[str, str]) -> tuple[float, float, float]:
    """(run → runStarted, state's wait, cancel's wait) on a fresh server."""
    server = await Server.start(root, tmp, env)
    try:
        sent = await server.send(
            {"jsonrpc": "2.0", "id": "run", "method": "plansight/run", "params": {"prompt": "Hi"}}
        )
        state_sent = await server.send(
            {"jsonrpc": "2.0", "id": "state", "method": "plansight/state", "params": {}}
        )
        cancel_sent = await server.send(
            {"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": "run"}}
        )
        started = await server.until("runStarted")
        state = await server.until("state")
        cancelled = await server.until("run")
        return started - sent, state - state_sent, cancelled - cancel_sent
    finally:
        await server.close()


async def leave_mid_run(
    root: Path, tmp: Path, api: FakeMessagesAPI, env: dict[str, str], how: str
) -> tuple[float, int]:
    server = await Server.start(root, tmp, env)
    try:
        api.push(Hang(120))
        await server.send(
            {"jsonrpc": "2.0", "id": "run", "method": "plansight/run", "params": {"prompt": "Hi"}}
        )
        requests = len(api.message_requests)
        await server.until("runStarted")
        async with asyncio.timeout(60):
            while len(api.message_requests) == requests:  # the model's stream hangs now
                await asyncio.sleep(0.005)

        async def shutdown_exit() -> float:
            began = await server.send({"jsonrpc": "2.0", "id": "down", "method": "shutdown"})
            await server.send({"jsonrpc": "2.0", "method": "exit"})
            return began

        async def interrupt() -> float:
            began = time.perf_counter()
            server.proc.send_signal(signal.SIGINT)
            return began

        return await server.exit_after(shutdown_exit if how == "shutdown" else interrupt)
    finally:
        await server.close()


async def run() -> list[Row]:
    firsts: list[tuple[float, float, float]] = []
    leaving: dict[str, list[tuple[float, int]]] = {"shutdown": [], "sigint": []}
    with tempfile.TemporaryDirectory(prefix="plansight-bench-life-") as name:
        tmp = Path(name)
        root = tmp / "ws"
        small_project(root, files=5)
        with FakeMessagesAPI() as api:
            env = bytecode_env(tmp / "pycache")
            env.update(server_env(api.base_url, {"PLANSIGHT_LOG_LEVEL": "WARNING"}))
            for _ in range(REPEATS):
                api.push(text_reply("unused"))
                firsts.append(await first_run(root, tmp, env))
                for how in leaving:
                    leaving[how].append(await leave_mid_run(root, tmp, api, env, how))

    def p50(values: list[float]) -> float:
        return percentile(values, 50)

    started = p50([f[0] for f in firsts])
    state = p50([f[1] for f in firsts])
    cancel = max(f[2] for f in firsts)
    rows = [
        Row(
            "lifecycle",
            "fresh server, first run: $/cancelRequest → answer (worst)",
            ms(cancel),
            goal=f"≤ {ms(GOAL_CANCEL)}",
            met=cancel <= GOAL_CANCEL,
            note=f"p50 {ms(p50([f[2] for f in firsts]))}; {REPEATS} fresh servers, the SDK "
            "still importing",
        ),
        Row(
            "lifecycle",
            "fresh server, first run: plansight/state → answer (p50)",
            ms(state),
            goal=f"≤ {ms(GOAL_ANSWER)}",
            met=state <= GOAL_ANSWER,
            note=f"worst {ms(max(f[1] for f in firsts))}",
        ),
        Row(
            "lifecycle",
            "fresh server, first run: plansight/run → runStarted (p50)",
            ms(started),
            note="how soon a client can show the run",
        ),
    ]
    for how, label in (("shutdown", "shutdown + exit"), ("sigint", "SIGINT")):
        worst = max(t for t, _ in leaving[how])
        noise = max(size for _, size in leaving[how])
        rows.append(
            Row(
                "lifecycle",
                f"{label} mid-run → process exit (worst)",
                ms(worst),
                goal=f"≤ {ms(GOAL_EXIT)}, stderr quiet",
                met=worst <= GOAL_EXIT and noise == 0,
                note=f"p50 {ms(p50([t for t, _ in leaving[how]]))}; stderr at most {noise} bytes",
            )
        )
    return rows
