"""The bench's editor: starts `python -m plansight lsp` over stdio and timestamps what it sends.

Like tests/lsp_harness.py (a pygls client on the server's stdio, realistic capabilities), but
with no pytest dependency, the server's stderr going to a file (a pipe nobody reads would fill
and stall the server), and every notification recorded with the ``time.perf_counter()`` at
which its handler ran.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from lsprotocol import types
from pygls.io_ import run_async
from pygls.lsp.client import LanguageClient
from pygls.protocol import default_converter

from plansight.protocol.names import to_plain

SERVER_COMMAND = (sys.executable, "-m", "plansight", "lsp")
_SHUTDOWN_TIMEOUT = 10.0


@dataclass(frozen=True)
class Received:
    """A notification from the server and the perf_counter time its handler ran."""

    at: float
    method: str
    params: dict[str, Any]


@dataclass
class Inbox:
    """Every plansight notification, in arrival order, and listeners for them."""

    items: list[Received] = field(default_factory=list)
    listeners: list[Callable[[Received], None]] = field(default_factory=list)

    def add(self, method: str, params: Any) -> None:
        at = time.perf_counter()
        item = Received(at, method, to_plain(params))
        self.items.append(item)
        for listener in list(self.listeners):
            listener(item)

    def events(self, kind: str | None = None) -> list[Received]:
        return [
            item
            for item in self.items
            if item.method == "plansight/event" and (kind is None or item.params["type"] == kind)
        ]

    def todos(self) -> list[Received]:
        return [item for item in self.items if item.method == "plansight/todos"]

    async def wait_for(self, predicate: Callable[[], bool], timeout: float) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while not predicate():
            if loop.time() > deadline:
                raise TimeoutError("the server did not send what was expected in time")
            await asyncio.sleep(0.002)


def server_env(base_url: str | None, extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "PLANSIGHT_"))}
    if base_url is not None:
        env["ANTHROPIC_BASE_URL"] = base_url
        env["ANTHROPIC_API_KEY"] = "bench-key"
    env.update(extra or {})
    return env


def capabilities(tool_input_deltas: bool = False) -> types.ClientCapabilities:
    """What an editor like VS Code announces, as far as Plansight looks at it.

    `tool_input_deltas`: also ask for the `toolInputDelta` events (a client that renders tool
    calls while they stream; the plan-latency stretch parses them as an editor would)."""
    return types.ClientCapabilities(
        window=types.WindowClientCapabilities(work_done_progress=True),
        text_document=types.TextDocumentClientCapabilities(
            synchronization=types.TextDocumentSyncClientCapabilities(did_save=True),
            publish_diagnostics=types.PublishDiagnosticsClientCapabilities(),
        ),
        experimental={
            "plansight": {
                "reviewEdit": True,
                "approveCommand": True,
                "toolInputDelta": tool_input_deltas,
            }
        },
    )


class Editor:
    """A started server and its client. Use ``await Editor.start(...)``, then ``stop()``."""

    def __init__(self, client: LanguageClient, process: asyncio.subprocess.Process) -> None:
        self.client = client
        self.process = process
        self.inbox = Inbox()
        self.init_result: types.InitializeResult | None = None
        self._stderr: IO[bytes] | None = None

    @property
    def pid(self) -> int:
        return self.process.pid

    @classmethod
    async def start(
        cls,
        root: Path,
        *,
        base_url: str | None,
        storage: Path,
        init_options: dict[str, Any] | None = None,
        env: dict[str, str] | None = None,
        command: tuple[str, ...] = SERVER_COMMAND,
        tool_input_deltas: bool = False,
    ) -> Editor:
        client = LanguageClient("plansight-bench", "1", converter_factory=default_converter)
        stderr = tempfile.TemporaryFile(prefix="plansight-bench-stderr-")
        process = await asyncio.create_subprocess_exec(
            *command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=stderr,
            env=server_env(base_url, env),
            cwd=str(root),
        )
        assert process.stdin is not None and process.stdout is not None
        editor = cls(client, process)
        editor._stderr = stderr
        editor._register()
        client.protocol.set_writer(process.stdin)
        client._server = process
        client._async_tasks.append(
            asyncio.create_task(
                run_async(
                    stop_event=client._stop_event,
                    reader=process.stdout,
                    protocol=client.protocol,
                )
            )
        )
        options = {"storageDir": str(storage), **(init_options or {})}
        initialize = asyncio.ensure_future(
            client.initialize_async(
                types.InitializeParams(
                    capabilities=capabilities(tool_input_deltas),
                    root_uri=root.as_uri(),
                    workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name="ws")],
                    initialization_options=options,
                )
            )
        )
        exited = asyncio.ensure_future(process.wait())
        try:
            await asyncio.wait({initialize, exited}, timeout=60, return_when="FIRST_COMPLETED")
            if not initialize.done():
                why = "exited" if exited.done() else "did not answer initialize in 60 s"
                raise RuntimeError(f"the server {why}: {editor.stderr_tail(1500)}")
            editor.init_result = initialize.result()
        except BaseException:
            initialize.cancel()
            await editor.kill()
            raise
        finally:
            exited.cancel()
        client.initialized(types.InitializedParams())
        return editor

    def _register(self) -> None:
        inbox = self.inbox

        def handle(method: str, handler: Callable[[Any], Any]) -> None:
            self.client.feature(method)(handler)

        def recorder(method: str) -> Callable[[Any], None]:
            return lambda params: inbox.add(method, params)

        for method in ("plansight/todos", "plansight/event", "plansight/scratchpad"):
            handle(method, recorder(method))
        # An editor that accepts every edit and command (the benchmarks' scripts are benign).
        handle("plansight/reviewEdit", lambda params: {"accepted": True})
        handle("plansight/approveCommand", lambda params: {"approved": True})
        for method in (
            types.WINDOW_WORK_DONE_PROGRESS_CREATE,
            types.PROGRESS,
            types.WINDOW_LOG_MESSAGE,
            types.WINDOW_SHOW_MESSAGE,
            types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS,
        ):
            handle(method, lambda params: None)

    async def request(self, method: str, params: Any, timeout: float = 300.0) -> Any:
        result = await asyncio.wait_for(
            self.client.protocol.send_request_async(method, params), timeout
        )
        return to_plain(result)

    async def run(self, prompt: str, *, new_session: bool = True, timeout: float = 300.0) -> Any:
        """One `plansight/run`; returns its RunResult as a dict."""
        return await self.request(
            "plansight/run", {"prompt": prompt, "newSession": new_session}, timeout
        )

    def stderr_tail(self, limit: int = 4000) -> str:
        if self._stderr is None:
            return ""
        self._stderr.seek(0)
        return self._stderr.read().decode("utf-8", errors="replace")[-limit:]

    async def stop(self) -> None:
        """shutdown + exit, then wait for the process (killed if it lingers)."""
        try:
            if self.process.returncode is None:
                await asyncio.wait_for(self.client.shutdown_async(None), _SHUTDOWN_TIMEOUT)
                self.client.exit(None)
                await asyncio.wait_for(self.process.wait(), _SHUTDOWN_TIMEOUT)
        except (TimeoutError, RuntimeError, ConnectionError):
            pass
        finally:
            await self.kill()

    async def kill(self) -> None:
        if self.process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self.process.kill()
            await self.process.wait()
        self.client._stop_event.set()
        for task in self.client._async_tasks:
            task.cancel()
        await asyncio.gather(*self.client._async_tasks, return_exceptions=True)
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None


def proc_cpu_seconds(pid: int) -> float:
    """utime + stime of a process, from /proc/<pid>/stat, in seconds."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as handle:
        fields = handle.read().rsplit(")", 1)[1].split()
    ticks = int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15 of stat)
    return ticks / os.sysconf("SC_CLK_TCK")


def proc_cpu_ns(pid: int) -> int | None:
    """CPU time of all threads of a process in ns, from /proc/<pid>/task/*/schedstat (finer
    than the 10 ms ticks of /proc/<pid>/stat); None where schedstat is missing. Threads that
    ended before the call are not counted."""
    total = 0
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            try:
                with open(f"/proc/{pid}/task/{task}/schedstat", encoding="ascii") as handle:
                    total += int(handle.read().split()[0])
            except FileNotFoundError:
                continue
    except OSError:
        return None
    return total


def proc_rss_mib(pid: int) -> float:
    """VmRSS of a process, from /proc/<pid>/status, in MiB."""
    with open(f"/proc/{pid}/status", encoding="ascii") as handle:
        for line in handle:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for pid {pid}")
