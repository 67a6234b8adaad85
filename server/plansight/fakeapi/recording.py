"""What the fake received: one `RecordedRequest` per request, kept in a `RequestLog`.

A record is made when a request has been read and completed while it is answered (status,
outcome, usage, times); ``finished_at`` is set just before the answer's last write, so a
client that has seen a whole answer always finds its record complete. The log is read from
any thread (tests wait on it with `RequestLog.wait_for`) while the server's loop writes it.
"""

from __future__ import annotations

import itertools
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from typing import Any

from plansight.fakeapi.cache import PromptAnalysis

__all__ = ["RecordedRequest", "RequestLog"]

_REDACTED_HEADERS = frozenset({"x-api-key", "authorization"})


@dataclass
class RecordedRequest:
    """One request the fake received. Times are ``time.perf_counter()`` values.

    Mutable: the server fills in the answer's fields as it answers."""

    index: int
    method: str
    path: str
    headers: dict[str, str]
    body: Any
    arrived_at: float
    """The request line arrived."""
    received_at: float
    """The whole request (headers and body) was read."""
    request_id: str
    connection: int = 0
    """Which TCP connection carried it (1-based, in accept order): shows keep-alive reuse."""
    status: int | None = None
    """The HTTP status answered (None: connection dropped or hung up without an answer)."""
    error: str | None = None
    """Why the fake rejected the request or which error it answered with."""
    step_index: int | None = None
    """The script step that answered (0-based), None if no step was consumed."""
    outcome: str | None = None
    """reply, http_error, stream_error, drop, hang, rejected, exhausted, ..."""
    streamed: bool = False
    first_byte_at: float | None = None
    finished_at: float | None = None
    """The response finished sending (or the connection was closed by a Drop/Hang)."""
    usage: dict[str, int] | None = None
    prompt_tokens: int | None = None
    """The request's input tokens as the fake counts them (validated requests only)."""
    raw_body: bytes = field(default=b"", repr=False)
    analysis: PromptAnalysis | None = field(default=None, repr=False)

    @property
    def path_only(self) -> str:
        return urllib.parse.urlsplit(self.path).path

    def to_json(self, *, redact: bool = True) -> dict[str, Any]:
        headers = dict(self.headers)
        if redact:
            for name in _REDACTED_HEADERS & headers.keys():
                headers[name] = "<redacted>"
        return {
            "index": self.index,
            "method": self.method,
            "path": self.path,
            "headers": headers,
            "body": self.body,
            "arrivedAt": self.arrived_at,
            "receivedAt": self.received_at,
            "requestId": self.request_id,
            "connection": self.connection,
            "status": self.status,
            "error": self.error,
            "stepIndex": self.step_index,
            "outcome": self.outcome,
            "streamed": self.streamed,
            "firstByteAt": self.first_byte_at,
            "finishedAt": self.finished_at,
            "usage": self.usage,
            "promptTokens": self.prompt_tokens,
        }


class RequestLog:
    """The records, oldest first, and a condition to wait on for answered ones."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._requests: list[RecordedRequest] = []

    def add(self, rec: RecordedRequest) -> None:
        with self._cond:
            self._requests.append(rec)
            self._cond.notify_all()

    def finish(self, rec: RecordedRequest) -> None:
        """The answer to ``rec`` is (about to be) complete: stamp it and wake the waiters."""
        with self._cond:
            rec.finished_at = time.perf_counter()
            self._cond.notify_all()

    def clear(self) -> None:
        with self._cond:
            self._requests = []

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._cond:
            return list(self._requests)

    @property
    def message_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.method == "POST" and r.path_only == "/v1/messages"]

    def turnaround_times(self) -> list[float]:
        """For each pair of consecutive message requests: seconds from the end of the
        previous answer to the arrival of the next request (the client's think time)."""
        out: list[float] = []
        for prev, nxt in itertools.pairwise(self.message_requests):
            if prev.finished_at is not None:
                out.append(nxt.received_at - prev.finished_at)
        return out

    def wait_for(self, count: int, timeout: float) -> list[RecordedRequest]:
        """Block until ``count`` requests were received and answered (or raise TimeoutError)."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                done = [r for r in self._requests if r.finished_at is not None]
                if len(done) >= count:
                    return list(self._requests)
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError(
                        f"fake API: {len(done)} of {count} requests after {timeout}s"
                    )
                self._cond.wait(remaining)
