"""The fake Messages API in a process of its own, driven through a pipe.

The bench process also plays the editor (or runs the bench's own agent loops); with the fake
in a thread of that process, the bench's own Python work would hold the GIL while the fake
wants to stamp a request's arrival, and bias the very timestamps we measure with. In a process
of its own the fake's clock readings (``time.perf_counter``, CLOCK_MONOTONIC, comparable across
processes on Linux) are the fake's alone.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.connection
from collections.abc import Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Any

from plansight.fakeapi import FakeMessagesAPI, ScriptStep

_START_TIMEOUT = 60.0
_CALL_TIMEOUT = 60.0


@dataclass(frozen=True)
class Record:
    """What the fake recorded of one ``POST /v1/messages`` (times: perf_counter seconds)."""

    index: int
    status: int | None
    outcome: str | None
    received_at: float
    first_byte_at: float | None
    finished_at: float | None
    body_bytes: int
    usage: dict[str, int] | None
    prompt_tokens: int | None = None  # the fake's count of the request's input


def _records(api: FakeMessagesAPI) -> list[Record]:
    return [
        Record(
            index=r.index,
            status=r.status,
            outcome=r.outcome,
            received_at=r.received_at,
            first_byte_at=r.first_byte_at,
            finished_at=r.finished_at,
            body_bytes=len(r.raw_body),
            usage=dict(r.usage) if r.usage else None,
            prompt_tokens=r.prompt_tokens,
        )
        for r in api.message_requests
    ]


def _serve(
    conn: multiprocessing.connection.Connection,
    steps: list[ScriptStep],
    options: dict[str, Any],
) -> None:
    api = FakeMessagesAPI(steps, **options)
    api.start()
    try:
        conn.send(api.base_url)
        while True:
            command, args = conn.recv()
            if command == "stop":
                break
            try:
                if command == "push":
                    api.push(*args)
                    conn.send(("ok", None))
                elif command == "turnaround_times":
                    conn.send(("ok", api.turnaround_times()))
                elif command == "records":
                    conn.send(("ok", _records(api)))
                elif command == "bodies":
                    conn.send(("ok", api.bodies))
                elif command == "reports":
                    # What stateful steps (callables with a `report()`) saw in this process.
                    stateful = {id(s): s for s in steps if hasattr(s, "report")}
                    conn.send(("ok", [s.report() for s in stateful.values()]))
                else:
                    conn.send(("error", f"unknown command {command!r}"))
            except Exception as exc:  # answered, so the bench sees the fake's problem
                conn.send(("error", f"{type(exc).__name__}: {exc}"))
    finally:
        api.stop()
        conn.close()


class FakeAPIProcess:
    """``with FakeAPIProcess(steps) as api:`` → ``api.base_url``, ``api.turnaround_times()``.

    ``options`` go to ``FakeMessagesAPI`` (``context_window=...``, say)."""

    def __init__(self, steps: Sequence[ScriptStep] = (), **options: Any) -> None:
        context = multiprocessing.get_context("spawn")
        self._conn, child = context.Pipe()
        self._process = context.Process(
            target=_serve, args=(child, list(steps), options), name="bench-fakeapi", daemon=True
        )
        self._process.start()
        child.close()
        if not self._conn.poll(_START_TIMEOUT):
            self._process.kill()
            raise RuntimeError("the fake API process did not start")
        self.base_url: str = self._conn.recv()

    def _call(self, command: str, *args: Any) -> Any:
        self._conn.send((command, args))
        if not self._conn.poll(_CALL_TIMEOUT):
            raise TimeoutError(f"the fake API process did not answer {command!r}")
        status, value = self._conn.recv()
        if status != "ok":
            raise RuntimeError(f"fake API process: {value}")
        return value

    def push(self, *steps: ScriptStep) -> None:
        self._call("push", *steps)

    def turnaround_times(self) -> list[float]:
        """The fake's own ``turnaround_times()``: end of an answer → next request received."""
        result: list[float] = self._call("turnaround_times")
        return result

    def records(self) -> list[Record]:
        result: list[Record] = self._call("records")
        return result

    def bodies(self) -> list[Any]:
        result: list[Any] = self._call("bodies")
        return result

    def reports(self) -> list[Any]:
        """``report()`` of each step that has one, as the fake's process holds it."""
        result: list[Any] = self._call("reports")
        return result

    def close(self) -> None:
        if self._process.is_alive():
            try:
                self._conn.send(("stop", ()))
            except OSError:
                pass
            self._process.join(10)
        if self._process.is_alive():
            self._process.kill()
            self._process.join(5)
        self._conn.close()

    def __enter__(self) -> FakeAPIProcess:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
