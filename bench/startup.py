"""Server cold start and idle memory.

Spawn ``python -m plansight lsp`` → its InitializeResult read by the bench (a bare JSON-RPC
client on the pipes, so that no client library is timed), then ``initialized``, a second of
idle, and VmRSS from /proc. The same for the smallest pygls server there is (one
``LanguageServer`` and ``start_io()``), run alternately, as the floor that Python, pygls and
lsprotocol set on this machine.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.editor import proc_cpu_seconds, proc_rss_mib, server_env
from bench.table import Row, ms, percentile
from bench.workspaces import small_project

REPEATS = 7
GOAL_START = 0.3
GOAL_RSS = 80.0
IDLE = 1.0
PLANSIGHT = (sys.executable, "-m", "plansight", "lsp")
FLOOR = (
    sys.executable,
    "-c",
    "from pygls.lsp.server import LanguageServer; LanguageServer('floor', '1').start_io()",
)


def bytecode_env(cache: Path) -> dict[str, str]:
    """The server's environment, with compiled bytecode as an installed product has it.

    This machine sets PYTHONDONTWRITEBYTECODE, and an editable install has no .pyc of its
    own: every start would compile Plansight's modules again. The bytecode goes to a
    temporary PYTHONPYCACHEPREFIX instead of the source tree.
    """
    env = server_env(None, {"PYTHONPYCACHEPREFIX": str(cache)})
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def frame(message: dict[str, Any]) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n%b" % (len(body), body)


async def read_message(reader: asyncio.StreamReader) -> dict[str, Any]:
    length = 0
    while True:
        line = await reader.readline()
        if not line:
            raise ConnectionError("the server closed its stdout")
        if line in (b"\r\n", b"\n"):
            break
        name, _, value = line.decode("ascii").partition(":")
        if name.strip().lower() == "content-length":
            length = int(value)
    message: dict[str, Any] = json.loads(await reader.readexactly(length))
    return message


async def read_response(reader: asyncio.StreamReader, request_id: int) -> dict[str, Any]:
    while True:
        message = await read_message(reader)
        if message.get("id") == request_id and "method" not in message:
            return message


async def start_once(
    command: tuple[str, ...], root: Path, storage: Path, env: dict[str, str]
) -> tuple[float, float, float]:
    """(seconds to InitializeResult, CPU seconds by then, VmRSS MiB after idle)."""
    params = {
        "processId": None,
        "rootUri": root.as_uri(),
        "capabilities": {"window": {"workDoneProgress": True}},
        "workspaceFolders": [{"uri": root.as_uri(), "name": "ws"}],
        "initializationOptions": {"storageDir": str(storage)},
    }
    started = time.perf_counter()
    proc = await asyncio.create_subprocess_exec(
        *command,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        env=env,
        cwd=str(root),
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write(
            frame({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params})
        )
        await proc.stdin.drain()
        answer = await asyncio.wait_for(read_response(proc.stdout, 1), 30)
        elapsed = time.perf_counter() - started
        if "result" not in answer:
            raise RuntimeError(f"initialize failed: {answer}")
        cpu = proc_cpu_seconds(proc.pid)
        proc.stdin.write(frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
        await proc.stdin.drain()
        drain = asyncio.create_task(_drain(proc.stdout))
        await asyncio.sleep(IDLE)
        rss = proc_rss_mib(proc.pid)
        proc.stdin.write(frame({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}))
        proc.stdin.write(frame({"jsonrpc": "2.0", "method": "exit"}))
        with contextlib.suppress(ConnectionError):
            await proc.stdin.drain()
        try:
            await asyncio.wait_for(proc.wait(), 10)
        finally:
            drain.cancel()
        return elapsed, cpu, rss
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


async def _drain(reader: asyncio.StreamReader) -> None:
    while await reader.read(1 << 16):
        pass


async def run() -> list[Row]:
    results: dict[str, list[tuple[float, float, float]]] = {"plansight": [], "floor": []}
    with tempfile.TemporaryDirectory(prefix="plansight-bench-start-") as tmp:
        root = Path(tmp) / "ws"
        small_project(root, files=5)
        env = bytecode_env(Path(tmp) / "pycache")
        # Warm-up: fills the bytecode cache and the page cache.
        await start_once(PLANSIGHT, root, Path(tmp) / "warm", env)
        await start_once(FLOOR, root, Path(tmp) / "warm", env)
        for i in range(REPEATS):
            results["plansight"].append(await start_once(PLANSIGHT, root, Path(tmp) / f"s{i}", env))
            results["floor"].append(await start_once(FLOOR, root, Path(tmp) / f"f{i}", env))

    def p50(name: str, index: int) -> float:
        return percentile([r[index] for r in results[name]], 50)

    def fastest(name: str) -> float:
        return min(r[0] for r in results[name])

    start, floor_start = p50("plansight", 0), p50("floor", 0)
    rss, floor_rss = p50("plansight", 2), p50("floor", 2)
    return [
        Row(
            "startup",
            "spawn → InitializeResult (p50)",
            ms(start),
            goal=f"≤ {ms(GOAL_START)}",
            met=start <= GOAL_START,
            note=(
                f"CPU {ms(p50('plansight', 1))}, fastest {ms(fastest('plansight'))}; bare pygls "
                f"server {ms(floor_start)} (CPU {ms(p50('floor', 1))}, fastest "
                f"{ms(fastest('floor'))}); {REPEATS} starts each, alternated"
            ),
        ),
        Row(
            "startup",
            f"idle RSS after initialized + {IDLE:.0f} s (p50)",
            f"{rss:.1f} MiB",
            goal=f"≤ {GOAL_RSS:.0f} MB",
            met=rss <= GOAL_RSS,
            note=f"bare pygls server {floor_rss:.1f} MiB",
        ),
    ]
