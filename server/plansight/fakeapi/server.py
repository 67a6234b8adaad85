"""The fake Messages API's behaviour: routing, the endpoints, the script's answers, errors.

`FakeMessagesAPI` serves, over `plansight.httpserve` on 127.0.0.1, ``POST /v1/messages``
(``?beta=true`` too; checked by `plansight.fakeapi.validation`, answered by the next step of
the script, `plansight.fakeapi.script`, streamed as SSE (`plansight.fakeapi.sse`) when the
request asks), ``POST /v1/messages/count_tokens``, ``GET /v1/models`` and
``GET /v1/models/{id}`` (`plansight.fakeapi.models`), ``GET /_fake/requests`` (the
records as JSON, for a client in another process) and ``POST /_fake/release`` (ends every
hang waiting now, so that a test in another process decides when a hanging answer comes
instead of waiting out a fixed time). Usage comes from the prompt-cache simulation
(`plansight.fakeapi.cache`), thinking signatures from `plansight.fakeapi.signing`.
Every request but ``/_fake/*`` is recorded (`plansight.fakeapi.recording`). Errors
have the real API's shape: ``{"type": "error", "error": {"type", "message"}, "request_id"}``.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import time
import urllib.parse
import uuid
from collections.abc import Iterable, Mapping, Sequence
from types import TracebackType
from typing import Any

from plansight.fakeapi import sse
from plansight.fakeapi.cache import PromptCache, estimate_tokens
from plansight.fakeapi.recording import RecordedRequest, RequestLog
from plansight.fakeapi.script import (
    ERROR_STATUS,
    Drop,
    Hang,
    HttpError,
    Malformed,
    Reply,
    Script,
    ScriptStep,
    Step,
    StreamError,
)
from plansight.fakeapi.signing import redacted_data, sign_thinking
from plansight.fakeapi.validation import validate_request
from plansight.httpserve import CloseConnection, HttpServer, LoopThread, Request, Responder

__all__ = ["FakeMessagesAPI", "RecordedRequest"]

log = logging.getLogger(__name__)


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
        conversations: Mapping[str, Iterable[ScriptStep]] | None = None,
    ) -> None:
        if script is None:
            script = Script()
        elif not isinstance(script, Script):
            script = Script(script)
        self._steps: list[ScriptStep] = list(script.steps)
        self._no_tools_reply = script.no_tools_reply
        self.host = host
        self.latency = latency
        self.require_api_key = require_api_key
        self.context_window = context_window
        self.models: dict[str, dict[str, Any]] | None = (
            None if models is None else {str(m["id"]): dict(m) for m in models}
        )
        self.cache = PromptCache(min_tokens=min_cacheable_tokens)
        self._cursor = 0
        # Several conversations at once (parallel workers): a request whose system prompt or
        # first user message contains a marker takes that conversation's next step (the
        # marker found first in that text, when several are); each
        # marker has its own queue, so the order the conversations' requests arrive in does
        # not matter. Requests with no marker take the main script's steps.
        self._conversations: dict[str, list[ScriptStep]] = {
            marker: list(steps) for marker, steps in (conversations or {}).items()
        }
        self._script_lock = threading.Lock()
        # The hangs waiting now (each its own event, on the serving loop): `release()` and
        # `POST /_fake/release` end them early, so their `then` is answered at once.
        self._hangs: set[asyncio.Event] = set()
        self._log = RequestLog()
        self._tool_counter = 0
        # Ids must stay unique across fake instances too: a stored conversation from an earlier
        # run (another instance) is sent back to a later one.
        self._id_prefix = uuid.uuid4().hex[:8]
        self._message_counter = 0
        self._request_counter = 0
        self._http = HttpServer(self._handle, host=host, port=port)
        self._thread: LoopThread | None = None

    # ------------------------------------------------------------------ lifecycle

    @property
    def port(self) -> int:
        try:
            return self._http.port
        except RuntimeError:
            raise RuntimeError("FakeMessagesAPI is not started") from None

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def running(self) -> bool:
        return self._http.running

    async def start_async(self) -> None:
        """Start serving on the running event loop."""
        if self._http.running:
            raise RuntimeError("FakeMessagesAPI already started")
        await self._http.start()
        log.info("fake Messages API listening on %s", self.base_url)

    async def stop_async(self) -> None:
        """Stop serving and close open connections (hanging requests included)."""
        if not self._http.running:
            return
        await self._http.stop()
        log.info("fake Messages API stopped")

    def start(self) -> FakeMessagesAPI:
        """Start serving on a new event loop in a background daemon thread."""
        if self._thread is not None or self._http.running:
            raise RuntimeError("FakeMessagesAPI already started")
        thread = LoopThread(self.start_async, self.stop_async, name="plansight-fakeapi")
        thread.start()
        self._thread = thread
        return self

    def stop(self) -> None:
        """Stop the background thread started by ``start()`` (no-op if not running)."""
        thread, self._thread = self._thread, None
        if thread is not None:
            thread.stop()

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
        with self._script_lock:
            self._steps.extend(steps)

    def reset(self) -> None:
        """Forget the script, the recorded requests and the prompt cache, and count connections
        from 0 again: a fake serving one client after another (the tests' shared server) looks
        new to each. Ids stay unique; open connections stay open."""
        with self._script_lock:
            self._steps = []
            self._cursor = 0
            self._log.clear()
            self._http.restart_connection_count()
            self.cache.clear()

    @property
    def steps_used(self) -> int:
        with self._script_lock:
            return self._cursor

    @property
    def steps_remaining(self) -> int:
        with self._script_lock:
            return len(self._steps) - self._cursor

    @property
    def connections(self) -> int:
        """How many TCP connections were accepted so far."""
        return self._http.connections

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received so far (rejected ones included), oldest first."""
        return self._log.requests

    @property
    def message_requests(self) -> list[RecordedRequest]:
        """The ``POST /v1/messages`` requests only."""
        return self._log.message_requests

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
        return self._log.turnaround_times()

    def wait_for_requests(self, count: int, timeout: float = 5.0) -> list[RecordedRequest]:
        """Block until ``count`` requests were received and answered (or raise TimeoutError)."""
        return self._log.wait_for(count, timeout)

    def _release_hangs(self) -> int:
        """End every hang waiting now (on the serving loop); how many there were."""
        hangs = list(self._hangs)
        for hang in hangs:
            hang.set()
        return len(hangs)

    def push_conversation(self, marker: str, *steps: ScriptStep) -> None:
        """Append steps to the conversation marked `marker` (see `conversations`)."""
        with self._script_lock:
            self._conversations.setdefault(marker, []).extend(steps)

    @staticmethod
    def _opening_text(body: Mapping[str, Any]) -> str:
        """The system prompt and the first user message, as text (where markers are looked
        for)."""
        parts: list[str] = []
        system = body.get("system")
        blocks: list[Any] = [system] if isinstance(system, str) else list(system or [])
        messages = body.get("messages") or []
        if messages and isinstance(messages[0], Mapping):
            content = messages[0].get("content")
            blocks += [content] if isinstance(content, str) else list(content or [])
        for block in blocks:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, Mapping) and isinstance(block.get("text"), str):
                parts.append(block["text"])
        return "\n".join(parts)

    def _next_step(self, body: Mapping[str, Any] | None = None) -> tuple[int, ScriptStep] | None:
        if self._conversations and body is not None:
            opening = self._opening_text(body)
            # The marker that comes first wins: a worker's first message names its own item
            # before it shows the whole plan (where its siblings' items are named too).
            found = [(opening.find(m), m) for m in self._conversations if m in opening]
            if found:
                marker = min(found)[1]
                with self._script_lock:
                    steps = self._conversations[marker]
                    # Index -1: a conversation's step, not one of the main script's.
                    return (-1, steps.pop(0)) if steps else None
        with self._script_lock:
            if self._cursor >= len(self._steps):
                return None
            index = self._cursor
            self._cursor += 1
            return index, self._steps[index]

    # ------------------------------------------------------------------ routing

    async def _handle(self, request: Request, out: Responder) -> bool:
        """Answer one request; False when the connection should close."""
        path = request.path
        if request.method == "GET" and path == "/_fake/requests":
            payload = json.dumps([r.to_json() for r in self.requests], ensure_ascii=False)
            await self._write_json(out, 200, payload.encode(), "")
            return True
        if request.method == "POST" and path == "/_fake/release":
            released = self._release_hangs()
            await self._write_json(out, 200, json.dumps({"released": released}).encode(), "")
            return True

        self._request_counter += 1
        rec = RecordedRequest(
            index=self._request_counter - 1,
            method=request.method,
            path=request.target,
            headers=dict(request.headers),
            body=None,
            arrived_at=request.arrived_at,
            received_at=request.received_at,
            request_id=f"req_fake_{self._request_counter:08d}",
            connection=request.connection,
            raw_body=request.body,
        )
        if request.body:
            try:
                rec.body = json.loads(request.body)
            except ValueError:
                rec.body = None
        self._log.add(rec)
        method = request.method
        try:
            if method == "POST" and path == "/v1/messages":
                return await self._handle_messages(rec, out)
            if method == "POST" and path == "/v1/messages/count_tokens":
                return await self._handle_count_tokens(rec, out)
            if method == "GET" and (path == "/v1/models" or path.startswith("/v1/models/")):
                return await self._handle_models(rec, out, path)
            rec.outcome = "not_found"
            await self._send_error(out, rec, 404, "not_found_error", f"Not found: {method} {path}")
            return True
        finally:
            if rec.finished_at is None:
                self._log.finish(rec)

    # ------------------------------------------------------------------ endpoints

    def _has_api_key(self, headers: dict[str, str]) -> bool:
        if headers.get("x-api-key"):
            return True
        auth = headers.get("authorization", "")
        return auth.lower().startswith("bearer ") and bool(auth[7:].strip())

    async def _precheck(
        self,
        rec: RecordedRequest,
        out: Responder,
        defaults: dict[str, Any] | None = None,
        *,
        window: bool = True,
    ) -> bool:
        """Auth, JSON, validation and (with ``window``) the context window; answers and returns
        False when the request is rejected."""
        if self.require_api_key and not self._has_api_key(rec.headers):
            rec.outcome = "rejected"
            await self._send_error(
                out, rec, 401, "authentication_error", "x-api-key header is required"
            )
            return False
        if rec.body is None:
            rec.outcome = "rejected"
            await self._send_error(
                out, rec, 400, "invalid_request_error", "The request body is not valid JSON."
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
            await self._send_error(out, rec, 400, "invalid_request_error", problem)
            return False
        return True

    def _model_info(self, body: Any) -> dict[str, Any] | None:
        if self.models is None or not isinstance(body, dict):
            return None
        return self.models.get(str(body.get("model")))

    async def _handle_models(self, rec: RecordedRequest, out: Responder, path: str) -> bool:
        if self.require_api_key and not self._has_api_key(rec.headers):
            rec.outcome = "rejected"
            await self._send_error(
                out, rec, 401, "authentication_error", "x-api-key header is required"
            )
            return True
        if self.models is None:
            rec.outcome = "not_found"
            await self._send_error(out, rec, 404, "not_found_error", f"Not found: GET {path}")
            return True
        if path == "/v1/models":
            # Paged as the real API pages it: `limit` (default 20, 1 to 1000), then `after_id`
            # or `before_id` as the cursor; `has_more` says whether more lie that way.
            query = urllib.parse.parse_qs(urllib.parse.urlsplit(rec.path).query)
            everything = list(self.models.values())
            try:
                limit = int(query.get("limit", ["20"])[0])
            except ValueError:
                limit = 0
            if not 1 <= limit <= 1000:
                rec.outcome = "rejected"
                await self._send_error(
                    out, rec, 400, "invalid_request_error", "limit: must be between 1 and 1000"
                )
                return True
            ids = [m["id"] for m in everything]
            after, before = query.get("after_id", [None])[0], query.get("before_id", [None])[0]
            if before is not None and before in ids:
                end = ids.index(before)
                data = everything[max(0, end - limit) : end]
                more = end - limit > 0
            else:
                start = ids.index(after) + 1 if after is not None and after in ids else 0
                data = everything[start : start + limit]
                more = start + limit < len(everything)
            page = {
                "data": data,
                "has_more": more,
                "first_id": data[0]["id"] if data else None,
                "last_id": data[-1]["id"] if data else None,
            }
            payload = json.dumps(page).encode()
        else:
            model_id = urllib.parse.unquote(path[len("/v1/models/") :])
            info = self.models.get(model_id)
            if info is None:
                rec.outcome = "not_found"
                await self._send_error(out, rec, 404, "not_found_error", f"model: {model_id}")
                return True
            payload = json.dumps(info).encode()
        rec.outcome = "models"
        rec.status = 200
        await self._write_json(out, 200, payload, rec.request_id, rec=rec)
        return True

    async def _handle_count_tokens(self, rec: RecordedRequest, out: Responder) -> bool:
        # Counting needs no max_tokens (a large one passes the thinking budget rule) and is
        # not limited by the context window: it is how a client learns it is over.
        if not await self._precheck(rec, out, defaults={"max_tokens": 1 << 30}, window=False):
            return True
        rec.outcome = "count_tokens"
        total = rec.prompt_tokens or 0
        payload = json.dumps({"input_tokens": total}).encode()
        rec.status = 200
        await self._write_json(out, 200, payload, rec.request_id, rec=rec)
        return True

    async def _handle_messages(self, rec: RecordedRequest, out: Responder) -> bool:
        if not await self._precheck(rec, out):
            return True
        body: dict[str, Any] = rec.body
        rec.streamed = body.get("stream") is True
        choice = body.get("tool_choice")
        if self._no_tools_reply is not None and isinstance(choice, dict):
            if choice.get("type") == "none":
                return await self._answer(rec, out, body, self._no_tools_reply)
        picked = self._next_step(body)
        if picked is None:
            rec.outcome = "exhausted"
            message = f"fake API: script exhausted after {self.steps_used} requests"
            log.warning("%s", message)
            await self._send_error(out, rec, 400, "invalid_request_error", message)
            return True
        rec.step_index, raw_step = picked
        step: Step
        if isinstance(raw_step, Reply | HttpError | StreamError | Drop | Malformed | Hang):
            step = raw_step
        else:
            try:
                result: object = raw_step(body)
            except Exception as exc:
                log.exception("fake API: step function %d raised", rec.step_index)
                rec.outcome = "step_failed"
                message = f"fake API: step {rec.step_index} raised {type(exc).__name__}: {exc}"
                await self._send_error(out, rec, 500, "api_error", message)
                return True
            if not isinstance(result, Reply | HttpError | StreamError | Drop | Malformed | Hang):
                rec.outcome = "step_failed"
                message = f"fake API: step {rec.step_index} returned {result!r}, not a step"
                await self._send_error(out, rec, 500, "api_error", message)
                return True
            step = result
        if self.latency > 0:
            await asyncio.sleep(self.latency)
        return await self._answer(rec, out, body, step)

    async def _answer(
        self, rec: RecordedRequest, out: Responder, body: dict[str, Any], step: Step
    ) -> bool:
        log.debug("fake API: request %d answered by %s", rec.index, type(step).__name__)
        if isinstance(step, HttpError):
            rec.outcome = "http_error"
            await self._send_error(
                out,
                rec,
                step.status,
                step.effective_error_type,
                step.effective_message,
                step.headers,
            )
            return True
        if isinstance(step, Hang):
            rec.outcome = "hang"
            released = asyncio.Event()
            self._hangs.add(released)
            try:
                await asyncio.wait_for(released.wait(), step.seconds)
            except TimeoutError:
                pass
            finally:
                self._hangs.discard(released)
            if step.then is not None:
                return await self._answer(rec, out, body, step.then)
            self._log.finish(rec)
            raise CloseConnection
        if isinstance(step, Reply):
            rec.outcome = "reply"
            problem = _reply_problem(body, step)
            if problem is not None:
                rec.outcome = "step_failed"
                why = f"fake API: step {rec.step_index}: {problem}"
                log.error("%s", why)
                await self._send_error(out, rec, 500, "api_error", why)
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
                await self._write_json(out, 200, payload, rec.request_id, rec=rec)
                return True
            frames = sse.reply_frames(
                self._start_message(body, usage),
                content,
                stop_reason,
                usage,
                cut=cut,
                details=details,
            )
            await self._stream(out, rec, frames, step.chunk_delay, end=True)
            return True
        if isinstance(step, StreamError):
            rec.outcome = "stream_error"
            rec.error = f"{step.error_type}: {step.effective_message}"
            if not rec.streamed:
                status = ERROR_STATUS.get(step.error_type, 500)
                await self._send_error(out, rec, status, step.error_type, step.effective_message)
                return True
            content = self._materialize(step.content)
            usage = self._usage(rec, content, None)
            rec.usage = usage
            frames = sse.cut_frames(
                self._start_message(body, usage), content, step.after_blocks, step.partial
            )
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
            await self._stream(out, rec, frames, 0.0, end=True)
            return True
        if isinstance(step, Malformed):
            rec.outcome = "malformed"
            if not rec.streamed:
                rec.status = 200
                await self._write_json(out, 200, step.data.encode(), rec.request_id, rec=rec)
                return True
            content = self._materialize(step.content)
            rec.usage = self._usage(rec, content, None)
            frames = sse.cut_frames(
                self._start_message(body, rec.usage), content, step.after_blocks, False
            )
            await self._stream(out, rec, frames, 0.0, end=False)
            self._log.finish(rec)
            raw = f"event: {step.event}\ndata: {step.data}\n\n".encode()
            await out.send_chunk(raw, last=True)
            return True
        # Drop
        rec.outcome = "drop"
        if rec.streamed:
            content = self._materialize(step.content)
            usage = self._usage(rec, content, None)
            rec.usage = usage
            frames = sse.cut_frames(
                self._start_message(body, usage), content, step.after_blocks, step.partial
            )
            await self._stream(out, rec, frames, 0.0, end=False)
        self._log.finish(rec)
        raise CloseConnection

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

    def _start_message(self, body: dict[str, Any], usage: dict[str, int]) -> dict[str, Any]:
        """The message ``message_start`` carries: no content, no stop reason yet."""
        start = self._message(body, [], "", {**usage, "output_tokens": 1})
        start["stop_reason"] = None
        return start

    # ------------------------------------------------------------------ writing

    async def _stream(
        self,
        out: Responder,
        rec: RecordedRequest,
        frames: list[sse.Frame],
        chunk_delay: float,
        *,
        end: bool,
    ) -> None:
        """Send the SSE head and frames, one chunk per frame, flushed per frame. With ``end``,
        the last frame goes out together with the terminating chunk, and the record is
        completed (finished_at) just before that final write, so a client that has seen the
        whole answer always finds a complete record."""
        headers = [
            ("content-type", "text/event-stream; charset=utf-8"),
            ("cache-control", "no-cache"),
            ("request-id", rec.request_id),
        ]
        rec.status = 200
        rec.first_byte_at = time.perf_counter()
        await out.start_stream(200, headers)
        last = len(frames) - 1
        for i, frame in enumerate(frames):
            if frame[2] and chunk_delay > 0:
                await asyncio.sleep(chunk_delay)
            final = end and i == last
            if final:
                self._log.finish(rec)
            await out.send_chunk(sse.encode(frame), last=final)
        if end and not frames:
            self._log.finish(rec)
            await out.end_stream()

    async def _send_error(
        self,
        out: Responder,
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
        await self._write_json(out, status, payload, rec.request_id, extra=extra_headers, rec=rec)

    async def _write_json(
        self,
        out: Responder,
        status: int,
        payload: bytes,
        request_id: str,
        *,
        extra: Any = None,
        rec: RecordedRequest | None = None,
    ) -> None:
        """Write a Content-Length response in one write; ``rec`` is completed just before."""
        headers = [("content-type", "application/json")]
        if request_id:
            headers.append(("request-id", request_id))
        headers.extend((str(name), str(value)) for name, value in dict(extra or {}).items())
        if rec is not None:
            rec.first_byte_at = time.perf_counter()
            self._log.finish(rec)
        await out.send(status, headers, payload)


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
