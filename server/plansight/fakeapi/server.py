"""The HTTP/1.1 server: plain asyncio, keep-alive, Content-Length bodies and chunked SSE."""

from __future__ import annotations

import asyncio
import contextlib
import http
import itertools
import json
import logging
import math
import re
import socket
import threading
import time
import urllib.parse
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

from plansight.fakeapi.cache import PromptAnalysis, PromptCache, estimate_tokens
from plansight.fakeapi.script import (
    ERROR_STATUS,
    Drop,
    Hang,
    HttpError,
    Reply,
    Script,
    ScriptStep,
    Step,
    StreamError,
)
from plansight.fakeapi.signing import redacted_data, sign_thinking
from plansight.fakeapi.validation import validate_request

__all__ = ["FakeMessagesAPI", "RecordedRequest"]

log = logging.getLogger(__name__)

_REDACTED_HEADERS = frozenset({"x-api-key", "authorization"})
_MAX_BODY = 64 * 1024 * 1024

# (event name, payload, is a delta frame)
_Frame = tuple[str, dict[str, Any], bool]


@dataclass
class RecordedRequest:
    """One request the fake received. Times are ``time.perf_counter()`` values."""

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


class _Closed(Exception):
    """The connection must be closed after the current request."""


def _reason(status: int) -> str:
    if status == 529:
        return "Overloaded"
    try:
        return http.HTTPStatus(status).phrase
    except ValueError:
        return "Error"


def _split_text(text: str, words_per_chunk: int = 3) -> list[str]:
    pieces = re.findall(r"\S+\s*|\s+", text)
    return [
        "".join(pieces[i : i + words_per_chunk]) for i in range(0, len(pieces), words_per_chunk)
    ]


def _split_json(text: str) -> list[str]:
    size = max(8, min(64, math.ceil(len(text) / 4)))
    return [""] + [text[i : i + size] for i in range(0, len(text), size)]


def _block_frames(index: int, block: dict[str, Any], *, cut: bool = False) -> list[_Frame]:
    """The frames of one content block; ``cut``: a tool call cut short by max_tokens (half of
    its input JSON, then the block ends, as the real API streams it)."""
    kind = block.get("type")
    frames: list[_Frame] = []

    def delta(payload: dict[str, Any]) -> None:
        frames.append(
            (
                "content_block_delta",
                {"type": "content_block_delta", "index": index, "delta": payload},
                True,
            )
        )

    if kind == "text":
        start: dict[str, Any] = {"type": "text", "text": ""}
        frames.append(_start_frame(index, start))
        for chunk in _split_text(block["text"]):
            delta({"type": "text_delta", "text": chunk})
    elif kind == "tool_use":
        start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
        frames.append(_start_frame(index, start))
        encoded = json.dumps(block["input"], ensure_ascii=False)
        if cut:
            # Any proper prefix of an object's JSON is not valid JSON.
            encoded = encoded[: max(1, len(encoded) // 2)]
        for chunk in _split_json(encoded):
            delta({"type": "input_json_delta", "partial_json": chunk})
    elif kind == "thinking":
        frames.append(_start_frame(index, {"type": "thinking", "thinking": "", "signature": ""}))
        for chunk in _split_text(block["thinking"]):
            delta({"type": "thinking_delta", "thinking": chunk})
        delta({"type": "signature_delta", "signature": block.get("signature", "")})
    else:
        frames.append(_start_frame(index, block))
    frames.append(("content_block_stop", {"type": "content_block_stop", "index": index}, False))
    return frames


def _start_frame(index: int, block: dict[str, Any]) -> _Frame:
    payload = {"type": "content_block_start", "index": index, "content_block": block}
    return ("content_block_start", payload, False)


def _ping() -> _Frame:
    return ("ping", {"type": "ping"}, False)


class FakeMessagesAPI:
    """A scripted fake of the Anthropic Messages API on 127.0.0.1.

    ``script``: a ``Script`` or a sequence of steps. ``port=0`` picks a free port.
    ``latency``: seconds to wait before answering each scripted request (time to first byte).
    ``min_cacheable_tokens``: the prompt-cache minimum (1024 as for Sonnet/Opus).
    ``require_api_key``: answer 401 without ``x-api-key`` / ``Authorization: Bearer``.
    ``context_window``: refuse a request of more input tokens (as the fake counts them) with the
    real 400 ``prompt is too long: N tokens > W maximum``; default: the model's
    ``max_input_tokens`` where ``models`` names it, else no limit.
    ``models``: ModelInfo dicts (``plansight.fakeapi.models.model_info``) served by
    ``GET /v1/models/{id}`` and ``GET /v1/models``, and used to accept or refuse each kind of
    thinking; without it those paths answer 404, as an endpoint without the Models API does.

    ``start()``/``stop()`` run the server on its own event loop in a daemon thread (also
    ``with FakeMessagesAPI(...) as api:``); ``await start_async()``/``stop_async()`` (or
    ``async with``) run it on the current loop instead.
    """

    def __init__(
        self,
        script: Script | Iterable[ScriptStep] | None = None,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        latency: float = 0.0,
        min_cacheable_tokens: int = 1024,
        require_api_key: bool = True,
        context_window: int | None = None,
        models: Iterable[Mapping[str, Any]] | None = None,
    ) -> None:
        if script is None:
            script = Script()
        elif not isinstance(script, Script):
            script = Script(script)
        self._steps: list[ScriptStep] = list(script.steps)
        self._no_tools_reply = script.no_tools_reply
        self.host = host
        self._requested_port = port
        self.latency = latency
        self.require_api_key = require_api_key
        self.context_window = context_window
        self.models: dict[str, dict[str, Any]] | None = (
            None if models is None else {str(m["id"]): dict(m) for m in models}
        )
        self.cache = PromptCache(min_tokens=min_cacheable_tokens)
        self._cursor = 0
        self._requests: list[RecordedRequest] = []
        self._cond = threading.Condition()
        self._tool_counter = 0
        # Ids must stay unique across fake instances too: a stored conversation from an earlier
        # run (another instance) is sent back to a later one.
        self._id_prefix = uuid.uuid4().hex[:8]
        self._message_counter = 0
        self._request_counter = 0
        self._connection_counter = 0
        self._port: int | None = None
        self._server: asyncio.Server | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._conn_tasks: set[asyncio.Task[Any]] = set()

    # ------------------------------------------------------------------ lifecycle

    @property
    def port(self) -> int:
        if self._port is None:
            raise RuntimeError("FakeMessagesAPI is not started")
        return self._port

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def running(self) -> bool:
        return self._server is not None

    async def start_async(self) -> None:
        """Start serving on the running event loop."""
        if self._server is not None:
            raise RuntimeError("FakeMessagesAPI already started")
        self._loop = asyncio.get_running_loop()
        self._server = await asyncio.start_server(
            self._on_connection, self.host, self._requested_port, limit=1024 * 1024
        )
        self._port = int(self._server.sockets[0].getsockname()[1])
        log.info("fake Messages API listening on %s", self.base_url)

    async def stop_async(self) -> None:
        """Stop serving and close open connections (hanging requests included)."""
        server, self._server = self._server, None
        if server is None:
            return
        server.close()
        tasks = list(self._conn_tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(server.wait_closed(), 2.0)
        log.info("fake Messages API stopped")

    def start(self) -> FakeMessagesAPI:
        """Start serving on a new event loop in a background daemon thread."""
        if self._thread is not None or self._server is not None:
            raise RuntimeError("FakeMessagesAPI already started")
        ready = threading.Event()
        failure: list[BaseException] = []
        loop = asyncio.new_event_loop()

        def run() -> None:
            asyncio.set_event_loop(loop)
            try:
                loop.run_until_complete(self.start_async())
            except BaseException as exc:
                failure.append(exc)
                ready.set()
                loop.close()
                return
            ready.set()
            try:
                loop.run_forever()
            finally:
                loop.run_until_complete(self.stop_async())
                loop.close()

        self._thread = threading.Thread(target=run, name="plansight-fakeapi", daemon=True)
        self._thread.start()
        ready.wait()
        if failure:
            self._thread.join()
            self._thread = None
            raise failure[0]
        return self

    def stop(self) -> None:
        """Stop the background thread started by ``start()`` (no-op if not running)."""
        thread, self._thread = self._thread, None
        loop = self._loop
        if thread is None or loop is None:
            return
        try:
            asyncio.run_coroutine_threadsafe(self.stop_async(), loop).result(timeout=5)
        except Exception:
            log.exception("fake API: stopping failed")
        finally:
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(loop.stop)
            thread.join(timeout=5)

    def __enter__(self) -> FakeMessagesAPI:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    async def __aenter__(self) -> FakeMessagesAPI:
        await self.start_async()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.stop_async()

    # ------------------------------------------------------------------ script and records

    def push(self, *steps: ScriptStep) -> None:
        """Append steps to the script (also while serving)."""
        with self._cond:
            self._steps.extend(steps)

    def reset(self) -> None:
        """Forget the script, the recorded requests and the prompt cache, and count connections
        from 0 again: a fake serving one client after another (the tests' shared server) looks
        new to each. Ids stay unique; open connections stay open."""
        with self._cond:
            self._steps = []
            self._cursor = 0
            self._requests = []
            self._connection_counter = 0
            self.cache.clear()

    @property
    def steps_used(self) -> int:
        with self._cond:
            return self._cursor

    @property
    def steps_remaining(self) -> int:
        with self._cond:
            return len(self._steps) - self._cursor

    @property
    def connections(self) -> int:
        """How many TCP connections were accepted so far."""
        return self._connection_counter

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received so far (rejected ones included), oldest first."""
        with self._cond:
            return list(self._requests)

    @property
    def message_requests(self) -> list[RecordedRequest]:
        """The ``POST /v1/messages`` requests only."""
        return [r for r in self.requests if r.method == "POST" and r.path_only == "/v1/messages"]

    @property
    def bodies(self) -> list[Any]:
        """The parsed bodies of the ``POST /v1/messages`` requests."""
        return [r.body for r in self.message_requests]

    @property
    def received_at(self) -> list[float]:
        """perf_counter times at which each ``POST /v1/messages`` was fully received."""
        return [r.received_at for r in self.message_requests]

    @property
    def finished_at(self) -> list[float | None]:
        """perf_counter times at which each answer to ``POST /v1/messages`` finished."""
        return [r.finished_at for r in self.message_requests]

    def turnaround_times(self) -> list[float]:
        """For each pair of consecutive message requests: seconds from the end of the
        previous answer to the arrival of the next request (the client's think time)."""
        reqs = self.message_requests
        out: list[float] = []
        for prev, nxt in itertools.pairwise(reqs):
            if prev.finished_at is not None:
                out.append(nxt.received_at - prev.finished_at)
        return out

    def wait_for_requests(self, count: int, timeout: float = 5.0) -> list[RecordedRequest]:
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

    def _record(self, rec: RecordedRequest) -> None:
        with self._cond:
            self._requests.append(rec)
            self._cond.notify_all()

    def _finish(self, rec: RecordedRequest) -> None:
        with self._cond:
            rec.finished_at = time.perf_counter()
            self._cond.notify_all()

    def _next_step(self) -> tuple[int, ScriptStep] | None:
        with self._cond:
            if self._cursor >= len(self._steps):
                return None
            index = self._cursor
            self._cursor += 1
            return index, self._steps[index]

    # ------------------------------------------------------------------ connections

    async def _on_connection(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._conn_tasks.add(task)
        self._connection_counter += 1
        connection = self._connection_counter
        sock = writer.get_extra_info("socket")
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            while await self._serve_one(reader, writer, connection):
                pass
        except (_Closed, ConnectionError, asyncio.IncompleteReadError):
            pass
        except asyncio.CancelledError:
            # stop_async() cancels open connections. End the task normally: on Python 3.11
            # asyncio's stream callback calls task.exception() on a cancelled handler task
            # and logs the CancelledError as an error.
            pass
        except Exception:
            log.exception("fake API: connection failed")
        finally:
            if task is not None:
                self._conn_tasks.discard(task)
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def _serve_one(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, connection: int
    ) -> bool:
        """Read one request and answer it; False when the connection should close."""
        line = await reader.readline()
        while line in (b"\r\n", b"\n"):
            line = await reader.readline()
        if not line:
            return False
        arrived = time.perf_counter()
        parts = line.decode("latin-1").rstrip("\r\n").split(" ")
        if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
            await self._write_plain(writer, 400, b"bad request line", keep_alive=False)
            return False
        method, target, version = parts
        headers: dict[str, str] = {}
        while True:
            raw = await reader.readline()
            if raw in (b"\r\n", b"\n", b""):
                break
            name, _, value = raw.decode("latin-1").partition(":")
            key = name.strip().lower()
            headers[key] = f"{headers[key]}, {value.strip()}" if key in headers else value.strip()
        conn_header = headers.get("connection", "").lower()
        keep_alive = (
            "close" not in conn_header if version == "HTTP/1.1" else "keep-alive" in conn_header
        )
        if headers.get("expect", "").lower() == "100-continue":
            writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
        body = await self._read_body(reader, headers)
        received = time.perf_counter()
        path = urllib.parse.urlsplit(target).path

        if method == "GET" and path == "/_fake/requests":
            payload = json.dumps([r.to_json() for r in self.requests], ensure_ascii=False)
            await self._write_json(writer, 200, payload.encode(), "", keep_alive=keep_alive)
            return keep_alive

        self._request_counter += 1
        rec = RecordedRequest(
            index=self._request_counter - 1,
            method=method,
            path=target,
            headers=headers,
            body=None,
            arrived_at=arrived,
            received_at=received,
            request_id=f"req_fake_{self._request_counter:08d}",
            connection=connection,
            raw_body=body,
        )
        if body:
            try:
                rec.body = json.loads(body)
            except ValueError:
                rec.body = None
        self._record(rec)
        try:
            if method == "POST" and path == "/v1/messages":
                keep = await self._handle_messages(rec, writer)
            elif method == "POST" and path == "/v1/messages/count_tokens":
                keep = await self._handle_count_tokens(rec, writer)
            elif method == "GET" and (path == "/v1/models" or path.startswith("/v1/models/")):
                keep = await self._handle_models(rec, writer, path)
            else:
                rec.outcome = "not_found"
                await self._send_error(
                    writer, rec, 404, "not_found_error", f"Not found: {method} {path}"
                )
                keep = True
        finally:
            if rec.finished_at is None:
                self._finish(rec)
        return keep and keep_alive

    async def _read_body(self, reader: asyncio.StreamReader, headers: dict[str, str]) -> bytes:
        if "chunked" in headers.get("transfer-encoding", "").lower():
            chunks: list[bytes] = []
            total = 0
            while True:
                size_line = await reader.readline()
                if not size_line:
                    raise asyncio.IncompleteReadError(b"", None)
                size = int(size_line.split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while (await reader.readline()) not in (b"\r\n", b"\n", b""):
                        pass
                    return b"".join(chunks)
                total += size
                if total > _MAX_BODY:
                    raise _Closed
                chunks.append(await reader.readexactly(size))
                await reader.readexactly(2)
        length = int(headers.get("content-length", "0") or "0")
        if length > _MAX_BODY:
            raise _Closed
        return await reader.readexactly(length) if length else b""

    # ------------------------------------------------------------------ endpoints

    def _has_api_key(self, headers: dict[str, str]) -> bool:
        if headers.get("x-api-key"):
            return True
        auth = headers.get("authorization", "")
        return auth.lower().startswith("bearer ") and bool(auth[7:].strip())

    async def _precheck(
        self,
        rec: RecordedRequest,
        writer: asyncio.StreamWriter,
        defaults: dict[str, Any] | None = None,
        *,
        window: bool = True,
    ) -> bool:
        """Auth, JSON, validation and (with ``window``) the context window; answers and returns
        False when the request is rejected."""
        if self.require_api_key and not self._has_api_key(rec.headers):
            rec.outcome = "rejected"
            await self._send_error(
                writer, rec, 401, "authentication_error", "x-api-key header is required"
            )
            return False
        if rec.body is None:
            rec.outcome = "rejected"
            await self._send_error(
                writer, rec, 400, "invalid_request_error", "The request body is not valid JSON."
            )
            return False
        checked = rec.body
        if defaults and isinstance(checked, dict):
            checked = {**defaults, **checked}
        model = self._model_info(checked)
        problem = validate_request(checked, model=model)
        if problem is None:
            rec.analysis = self.cache.analyse(checked)
            rec.prompt_tokens = rec.analysis.usage.total
            limit = self.context_window
            if limit is None and model is not None:
                limit = model.get("max_input_tokens")
            if window and limit is not None and rec.prompt_tokens > limit:
                problem = f"prompt is too long: {rec.prompt_tokens} tokens > {limit} maximum"
        if problem is not None:
            rec.outcome = "rejected"
            log.info("fake API: rejected request %d: %s", rec.index, problem)
            await self._send_error(writer, rec, 400, "invalid_request_error", problem)
            return False
        return True

    def _model_info(self, body: Any) -> dict[str, Any] | None:
        if self.models is None or not isinstance(body, dict):
            return None
        return self.models.get(str(body.get("model")))

    async def _handle_models(
        self, rec: RecordedRequest, writer: asyncio.StreamWriter, path: str
    ) -> bool:
        if self.require_api_key and not self._has_api_key(rec.headers):
            rec.outcome = "rejected"
            await self._send_error(
                writer, rec, 401, "authentication_error", "x-api-key header is required"
            )
            return True
        if self.models is None:
            rec.outcome = "not_found"
            await self._send_error(writer, rec, 404, "not_found_error", f"Not found: GET {path}")
            return True
        if path == "/v1/models":
            data = list(self.models.values())
            page = {
                "data": data,
                "has_more": False,
                "first_id": data[0]["id"] if data else None,
                "last_id": data[-1]["id"] if data else None,
            }
            payload = json.dumps(page).encode()
        else:
            model_id = urllib.parse.unquote(path[len("/v1/models/") :])
            info = self.models.get(model_id)
            if info is None:
                rec.outcome = "not_found"
                await self._send_error(writer, rec, 404, "not_found_error", f"model: {model_id}")
                return True
            payload = json.dumps(info).encode()
        rec.outcome = "models"
        rec.status = 200
        await self._write_json(writer, 200, payload, rec.request_id, keep_alive=True, rec=rec)
        return True

    async def _handle_count_tokens(
        self, rec: RecordedRequest, writer: asyncio.StreamWriter
    ) -> bool:
        # Counting needs no max_tokens (a large one passes the thinking budget rule) and is
        # not limited by the context window: it is how a client learns it is over.
        if not await self._precheck(rec, writer, defaults={"max_tokens": 1 << 30}, window=False):
            return True
        rec.outcome = "count_tokens"
        total = rec.prompt_tokens or 0
        payload = json.dumps({"input_tokens": total}).encode()
        rec.status = 200
        await self._write_json(writer, 200, payload, rec.request_id, keep_alive=True, rec=rec)
        return True

    async def _handle_messages(self, rec: RecordedRequest, writer: asyncio.StreamWriter) -> bool:
        if not await self._precheck(rec, writer):
            return True
        body: dict[str, Any] = rec.body
        rec.streamed = body.get("stream") is True
        choice = body.get("tool_choice")
        if self._no_tools_reply is not None and isinstance(choice, dict):
            if choice.get("type") == "none":
                return await self._answer(rec, writer, body, self._no_tools_reply)
        picked = self._next_step()
        if picked is None:
            rec.outcome = "exhausted"
            message = f"fake API: script exhausted after {self.steps_used} requests"
            log.warning("%s", message)
            await self._send_error(writer, rec, 400, "invalid_request_error", message)
            return True
        rec.step_index, raw_step = picked
        step: Step
        if isinstance(raw_step, Reply | HttpError | StreamError | Drop | Hang):
            step = raw_step
        else:
            try:
                result: object = raw_step(body)
            except Exception as exc:
                log.exception("fake API: step function %d raised", rec.step_index)
                rec.outcome = "step_failed"
                message = f"fake API: step {rec.step_index} raised {type(exc).__name__}: {exc}"
                await self._send_error(writer, rec, 500, "api_error", message)
                return True
            if not isinstance(result, Reply | HttpError | StreamError | Drop | Hang):
                rec.outcome = "step_failed"
                message = f"fake API: step {rec.step_index} returned {result!r}, not a step"
                await self._send_error(writer, rec, 500, "api_error", message)
                return True
            step = result
        if self.latency > 0:
            await asyncio.sleep(self.latency)
        return await self._answer(rec, writer, body, step)

    async def _answer(
        self, rec: RecordedRequest, writer: asyncio.StreamWriter, body: dict[str, Any], step: Step
    ) -> bool:
        log.debug("fake API: request %d answered by %s", rec.index, type(step).__name__)
        if isinstance(step, HttpError):
            rec.outcome = "http_error"
            await self._send_error(
                writer,
                rec,
                step.status,
                step.effective_error_type,
                step.effective_message,
                step.headers,
            )
            return True
        if isinstance(step, Hang):
            rec.outcome = "hang"
            await asyncio.sleep(step.seconds)
            if step.then is not None:
                return await self._answer(rec, writer, body, step.then)
            self._finish(rec)
            raise _Closed
        if isinstance(step, Reply):
            rec.outcome = "reply"
            problem = _reply_problem(body, step)
            if problem is not None:
                rec.outcome = "step_failed"
                why = f"fake API: step {rec.step_index}: {problem}"
                log.error("%s", why)
                await self._send_error(writer, rec, 500, "api_error", why)
                return True
            content = self._materialize(step.content)
            if _thinking_kind(body) == "enabled" and (
                not content or content[0].get("type") not in ("thinking", "redacted_thinking")
            ):
                # With thinking enabled the real model always thinks first.
                content.insert(0, self._sign({"type": "thinking", "thinking": "Thinking it over."}))
            stop_reason = step.effective_stop_reason
            cut = (
                stop_reason == "max_tokens" and bool(content) and content[-1]["type"] == "tool_use"
            )
            usage = self._usage(rec, content, step.usage)
            if stop_reason == "max_tokens" and not (step.usage and "output_tokens" in step.usage):
                usage["output_tokens"] = int(body["max_tokens"])
            rec.usage = usage
            details = step.stop_details
            if details is None and stop_reason == "refusal":
                details = {
                    "type": "refusal",
                    "category": None,
                    "explanation": "This request was declined.",
                }
            if not rec.streamed:
                if cut:  # the JSON was never finished: nothing of the input is usable
                    content[-1] = {**content[-1], "input": {}}
                message = self._message(body, content, stop_reason, usage)
                if details is not None:
                    message["stop_details"] = dict(details)
                payload = json.dumps(message, ensure_ascii=False).encode()
                rec.status = 200
                await self._write_json(
                    writer, 200, payload, rec.request_id, keep_alive=True, rec=rec
                )
                return True
            frames = self._frames(body, content, stop_reason, usage, cut=cut, details=details)
            await self._stream(writer, rec, frames, step.chunk_delay, end=True)
            return True
        if isinstance(step, StreamError):
            rec.outcome = "stream_error"
            rec.error = f"{step.error_type}: {step.effective_message}"
            if not rec.streamed:
                status = ERROR_STATUS.get(step.error_type, 500)
                await self._send_error(writer, rec, status, step.error_type, step.effective_message)
                return True
            content = self._materialize(step.content)
            usage = self._usage(rec, content, None)
            rec.usage = usage
            frames = self._cut_frames(body, content, usage, step.after_blocks, step.partial)
            frames.append(
                (
                    "error",
                    {
                        "type": "error",
                        "error": {"type": step.error_type, "message": step.effective_message},
                        "request_id": rec.request_id,
                    },
                    False,
                )
            )
            await self._stream(writer, rec, frames, 0.0, end=True)
            return True
        # Drop
        rec.outcome = "drop"
        if rec.streamed:
            content = self._materialize(step.content)
            usage = self._usage(rec, content, None)
            rec.usage = usage
            frames = self._cut_frames(body, content, usage, step.after_blocks, step.partial)
            await self._stream(writer, rec, frames, 0.0, end=False)
        self._finish(rec)
        raise _Closed

    # ------------------------------------------------------------------ message building

    def _materialize(self, content: Sequence[Any]) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for raw in content:
            block = json.loads(json.dumps(raw))
            if block.get("type") == "tool_use" and "id" not in block:
                self._tool_counter += 1
                block["id"] = f"toolu_{self._id_prefix}_{self._tool_counter}"
            out.append(self._sign(block))
        return out

    @staticmethod
    def _sign(block: dict[str, Any]) -> dict[str, Any]:
        if block.get("type") == "thinking":
            block["signature"] = sign_thinking(block["thinking"])
        elif block.get("type") == "redacted_thinking":
            block["data"] = redacted_data(str(block.get("data", "")))
        return block

    def _usage(
        self,
        rec: RecordedRequest,
        content: list[dict[str, Any]],
        override: Any,
    ) -> dict[str, int]:
        assert rec.analysis is not None  # set by _precheck for every answered request
        usage = self.cache.commit(rec.analysis).as_dict()
        usage["output_tokens"] = max(1, sum(estimate_tokens(b) for b in content))
        if override:
            usage.update({k: int(v) for k, v in dict(override).items()})
        return usage

    def _new_message_id(self) -> str:
        self._message_counter += 1
        return f"msg_fake_{self._message_counter:08d}"

    def _message(
        self,
        body: dict[str, Any],
        content: list[dict[str, Any]],
        stop_reason: str,
        usage: dict[str, int],
    ) -> dict[str, Any]:
        return {
            "id": self._new_message_id(),
            "type": "message",
            "role": "assistant",
            "model": body["model"],
            "content": content,
            "stop_reason": stop_reason,
            "stop_sequence": None,
            "usage": usage,
        }

    def _frame_groups(
        self,
        body: dict[str, Any],
        content: list[dict[str, Any]],
        usage: dict[str, int],
        *,
        cut: bool = False,
    ) -> list[list[_Frame]]:
        start_message = self._message(body, [], "", {**usage, "output_tokens": 1})
        start_message["stop_reason"] = None
        groups: list[list[_Frame]] = [
            [("message_start", {"type": "message_start", "message": start_message}, False)]
        ]
        last = len(content) - 1
        for index, block in enumerate(content):
            groups.append(_block_frames(index, block, cut=cut and index == last))
        if len(groups) > 1:
            groups[1].insert(1, _ping())
        else:
            groups[0].append(_ping())
        return groups

    def _frames(
        self,
        body: dict[str, Any],
        content: list[dict[str, Any]],
        stop_reason: str,
        usage: dict[str, int],
        *,
        cut: bool = False,
        details: Mapping[str, Any] | None = None,
    ) -> list[_Frame]:
        groups = self._frame_groups(body, content, usage, cut=cut)
        frames = [f for group in groups for f in group]
        delta: dict[str, Any] = {"stop_reason": stop_reason, "stop_sequence": None}
        if details is not None:
            delta["stop_details"] = dict(details)
        frames.append(
            (
                "message_delta",
                {"type": "message_delta", "delta": delta, "usage": usage},
                False,
            )
        )
        frames.append(("message_stop", {"type": "message_stop"}, False))
        return frames

    def _cut_frames(
        self,
        body: dict[str, Any],
        content: list[dict[str, Any]],
        usage: dict[str, int],
        after_blocks: int,
        partial: bool,
    ) -> list[_Frame]:
        groups = self._frame_groups(body, content, usage)
        frames = [f for group in groups[: after_blocks + 1] for f in group]
        if partial and after_blocks + 1 < len(groups):
            nxt = groups[after_blocks + 1]
            deltas = [f for f in nxt if f[2]]
            head = [f for f in nxt if not f[2] and f[0] != "content_block_stop"]
            frames.extend(head + deltas[: max(1, len(deltas) // 2)])
        return frames

    # ------------------------------------------------------------------ writing

    async def _stream(
        self,
        writer: asyncio.StreamWriter,
        rec: RecordedRequest,
        frames: list[_Frame],
        chunk_delay: float,
        *,
        end: bool,
    ) -> None:
        """Send the SSE head and frames, one chunk per frame, flushed per frame. With ``end``,
        the last frame goes out together with the terminating chunk, and the record is
        completed (finished_at) just before that final write, so a client that has seen the
        whole answer always finds a complete record."""
        head = (
            "HTTP/1.1 200 OK\r\n"
            "content-type: text/event-stream; charset=utf-8\r\n"
            "cache-control: no-cache\r\n"
            "transfer-encoding: chunked\r\n"
            f"request-id: {rec.request_id}\r\n"
            "connection: keep-alive\r\n\r\n"
        )
        rec.status = 200
        rec.first_byte_at = time.perf_counter()
        writer.write(head.encode("latin-1"))
        await writer.drain()
        last = len(frames) - 1
        for i, (name, payload, is_delta) in enumerate(frames):
            if is_delta and chunk_delay > 0:
                await asyncio.sleep(chunk_delay)
            data = f"event: {name}\ndata: {json.dumps(payload, ensure_ascii=False)}\n\n".encode()
            chunk = b"%x\r\n%b\r\n" % (len(data), data)
            if end and i == last:
                self._finish(rec)
                chunk += b"0\r\n\r\n"
            writer.write(chunk)
            await writer.drain()
        if end and not frames:
            self._finish(rec)
            writer.write(b"0\r\n\r\n")
            await writer.drain()

    async def _send_error(
        self,
        writer: asyncio.StreamWriter,
        rec: RecordedRequest,
        status: int,
        error_type: str,
        message: str,
        extra_headers: Any = None,
    ) -> None:
        rec.status = status
        rec.error = message if rec.error is None else rec.error
        payload = json.dumps(
            {
                "type": "error",
                "error": {"type": error_type, "message": message},
                "request_id": rec.request_id,
            },
            ensure_ascii=False,
        ).encode()
        await self._write_json(
            writer, status, payload, rec.request_id, keep_alive=True, extra=extra_headers, rec=rec
        )

    async def _write_json(
        self,
        writer: asyncio.StreamWriter,
        status: int,
        payload: bytes,
        request_id: str,
        *,
        keep_alive: bool,
        extra: Any = None,
        rec: RecordedRequest | None = None,
    ) -> None:
        """Write a Content-Length response in one write; ``rec`` is completed just before."""
        lines = [
            f"HTTP/1.1 {status} {_reason(status)}",
            "content-type: application/json",
            f"content-length: {len(payload)}",
            f"connection: {'keep-alive' if keep_alive else 'close'}",
        ]
        if request_id:
            lines.append(f"request-id: {request_id}")
        for name, value in dict(extra or {}).items():
            lines.append(f"{name}: {value}")
        if rec is not None:
            rec.first_byte_at = time.perf_counter()
            self._finish(rec)
        writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + payload)
        await writer.drain()

    async def _write_plain(
        self, writer: asyncio.StreamWriter, status: int, payload: bytes, *, keep_alive: bool
    ) -> None:
        lines = [
            f"HTTP/1.1 {status} {_reason(status)}",
            "content-type: text/plain",
            f"content-length: {len(payload)}",
            f"connection: {'keep-alive' if keep_alive else 'close'}",
        ]
        writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + payload)
        await writer.drain()


def _thinking_kind(body: Mapping[str, Any]) -> str | None:
    config = body.get("thinking")
    if isinstance(config, Mapping) and config.get("type") in ("enabled", "adaptive"):
        return str(config["type"])
    return None


def _reply_problem(body: Mapping[str, Any], step: Reply) -> str | None:
    """A scripted reply the real model could not give to this request (a script mistake)."""
    kinds = {b.get("type") for b in step.content}
    choice = body.get("tool_choice")
    if "tool_use" in kinds and isinstance(choice, Mapping) and choice.get("type") == "none":
        return "the reply calls a tool but the request's tool_choice is none"
    offered = {t.get("name") for t in body.get("tools") or () if isinstance(t, Mapping)}
    for block in step.content:
        if block.get("type") == "tool_use" and block.get("name") not in offered:
            name = block.get("name")
            return f"the reply calls the tool {name!r}, which the request does not offer"
    if kinds & {"thinking", "redacted_thinking"} and _thinking_kind(body) is None:
        return "the reply has thinking blocks but the request did not turn thinking on"
    return None
