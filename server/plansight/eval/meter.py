"""The meter: a pass-through proxy between one attempt's server and the Messages API.

Every attempt's language server is pointed (`ANTHROPIC_BASE_URL`) at a `MeteringProxy` on
127.0.0.1, which forwards each request unchanged to the upstream endpoint (the real API in a
live run, the fake Messages API serving a recording in a replay) and streams the answer back
as it arrives. On the way it reads the answers: each finished message's usage goes to
`on_usage` (the running cost, the cost limit), and each answer to `POST /v1/messages` becomes
a step in the fake Messages API's script format (`plansight.fakeapi`): a reply with its
content, stop reason and usage; an HTTP error; a stream cut by an error event or a dropped
connection. `GET /v1/models/{id}` answers are kept too, so a replay serves the same model
facts. Requests and answers also go to `plan` (`plansight.eval.plancost.PlanTokens`): the
tokens of the `todo` calls and the done gate's refusals. The proxy never changes what passes
through it; once told to `hold`, it stops passing requests for messages on at all (they wait,
unanswered, until the run is cancelled), so a limit reached spends nothing more.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Callable
from typing import Any

import httpx2

from plansight.engine.events import Usage
from plansight.engine.model import USAGE_KEYS, StreamAssembly
from plansight.eval.plancost import PlanTokens
from plansight.httpserve import HttpServer, Request, Responder

log = logging.getLogger(__name__)

HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
        "host",
        "content-length",
        "accept-encoding",
        "content-encoding",
    }
)
MAX_BODY = 64 * 1024 * 1024


def usage_of(raw: Any) -> Usage:
    raw = raw if isinstance(raw, dict) else {}
    values = {k: raw.get(k) for k in USAGE_KEYS}
    return Usage(**{k: v if isinstance(v, int) else 0 for k, v in values.items()})


def _index(event: dict[str, Any], default: int = -1) -> int:
    return int(event.get("index", default))


class MessageAssembler:
    """A Message rebuilt from the Messages API's server-sent events, fed as bytes arrive.

    The SSE framing is read here; the events go to the model client's own assembler
    (`plansight.engine.model.StreamAssembly`), so the meter reads a stream as the agent does.
    """

    def __init__(self) -> None:
        self._buffer = b""
        self.parts = StreamAssembly()
        self.error: dict[str, Any] | None = None

    @property
    def usage(self) -> dict[str, int]:
        """The counts the stream gave, by name (only those it gave)."""
        return self.parts.usage

    @property
    def finished(self) -> bool:
        return self.parts.stopped

    def feed(self, data: bytes) -> None:
        self._buffer += data.replace(b"\r\n", b"\n")
        while b"\n\n" in self._buffer:
            frame, self._buffer = self._buffer.split(b"\n\n", 1)
            payload = [line[5:].strip() for line in frame.split(b"\n") if line.startswith(b"data:")]
            if not payload:
                continue
            try:
                event = json.loads(b"\n".join(payload))
            except ValueError:
                log.warning("unreadable event in the stream: %r", frame[:200])
                continue
            if isinstance(event, dict):
                self.event(event)

    def event(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        parts = self.parts
        if kind == "message_start":
            usage = event.get("message", {}).get("usage")
            parts.start_message(usage if isinstance(usage, dict) else {})
        elif kind == "content_block_start":
            # Kept as sent (the replaying fake serves it again), the input from the deltas.
            block = dict(event.get("content_block") or {})
            parts.start_block(_index(event, len(parts.blocks)), block)
        elif kind == "content_block_delta":
            delta = event.get("delta") or {}
            kind = str(delta.get("type"))
            field = _DELTA_FIELDS.get(kind)
            if field is not None:
                parts.add_delta(_index(event), kind, str(delta.get(field, "")))
        elif kind == "content_block_stop":
            parts.stop_block(_index(event))
        elif kind == "message_delta":
            delta = event.get("delta") or {}
            reason = delta.get("stop_reason")
            usage = event.get("usage")
            parts.end_message(
                reason if isinstance(reason, str) else parts.stop_reason,
                None,
                usage if isinstance(usage, dict) else {},
            )
        elif kind == "message_stop":
            parts.stop_message()
        elif kind == "error":
            self.error = event.get("error") if isinstance(event.get("error"), dict) else {}

    def content(self) -> list[dict[str, Any]]:
        """The complete blocks, in order; thinking signatures left for the replaying fake."""
        blocks = []
        for index in sorted(set(self.parts.complete)):
            block = dict(self.parts.blocks[index])
            if index in self.parts.tool_json:
                try:
                    block["input"] = self.parts.tool_input(index)
                except ValueError:
                    block["input"] = {"_unparsed": "".join(self.parts.tool_json[index])}
            if block.get("type") == "thinking":
                block.pop("signature", None)
            if block.get("type") == "text" and "citations" in block and not block["citations"]:
                block.pop("citations")
            blocks.append(block)
        return blocks

    def step(self) -> dict[str, Any]:
        """This answer as a script step."""
        content = self.content()
        if self.error is not None:
            return {
                "fault": "stream_error",
                "after_blocks": len(content),
                "error_type": str(self.error.get("type", "api_error")),
                "message": str(self.error.get("message", "")),
                "content": content,
            }
        if not self.finished:
            return {"fault": "drop", "after_blocks": len(content), "content": content}
        step: dict[str, Any] = {"content": content, "usage": dict(self.usage)}
        if self.parts.stop_reason is not None:
            step["stop_reason"] = self.parts.stop_reason
        return step


# The field that carries each kind of content_block_delta's one string.
_DELTA_FIELDS = {
    "text_delta": "text",
    "input_json_delta": "partial_json",
    "thinking_delta": "thinking",
    "signature_delta": "signature",
}


def step_from_json(status: int, body: bytes) -> dict[str, Any] | None:
    """A non-streamed answer to POST /v1/messages as a script step."""
    try:
        data = json.loads(body)
    except ValueError:
        data = None
    if status >= 400:
        error = data.get("error") if isinstance(data, dict) else None
        error = error if isinstance(error, dict) else {}
        return {
            "fault": "http",
            "status": status,
            "error_type": str(error.get("type", "api_error")),
            "message": str(error.get("message", "")),
            "headers": {"retry-after": "0"},  # a replay need not wait as the live run did
        }
    if isinstance(data, dict) and isinstance(data.get("content"), list):
        step: dict[str, Any] = {"content": data["content"], "usage": data.get("usage") or {}}
        if isinstance(data.get("stop_reason"), str):
            step["stop_reason"] = data["stop_reason"]
        return step
    return None


class MeteringProxy:
    """Forwards HTTP/1.1 requests from 127.0.0.1 to `upstream`, reading the answers."""

    def __init__(
        self,
        upstream: str,
        *,
        on_usage: Callable[[Usage], None] | None = None,
        host: str = "127.0.0.1",
    ) -> None:
        self.upstream = upstream.rstrip("/")
        self.on_usage = on_usage
        self.host = host
        self.steps: list[dict[str, Any]] = []
        self.models: dict[str, dict[str, Any]] = {}
        self.usage = Usage()
        self.messages = 0
        self.model: str | None = None  # as the first request to /v1/messages names it
        self.tools: list[str] = []  # the tools that request offered, by name
        self.plan = PlanTokens()
        self.held = False
        self.requests_held = 0  # requests for messages kept waiting since `hold`
        self._http = HttpServer(self._handle, host=host, max_body=MAX_BODY)
        self._client: httpx2.AsyncClient | None = None

    @property
    def base_url(self) -> str:
        assert self._http.running, "start the proxy first"
        return self._http.base_url

    async def start(self) -> MeteringProxy:
        self._client = httpx2.AsyncClient(timeout=httpx2.Timeout(None, connect=30.0))
        await self._http.start()
        return self

    async def stop(self) -> None:
        await self._http.stop()
        if self._client is not None:
            await self._client.aclose()

    async def __aenter__(self) -> MeteringProxy:
        return await self.start()

    async def __aexit__(self, *_exc: object) -> None:
        await self.stop()

    def recording(self) -> dict[str, Any]:
        """What passed through, in the script format (plus the models the server asked about)."""
        out: dict[str, Any] = {"steps": list(self.steps)}
        if self.models:
            out["models"] = list(self.models.values())
        return out

    def hold(self) -> None:
        """From now on, requests for messages are kept waiting and never forwarded.

        A limit stops the run with a cancel through its front door, and that lands a round or
        more late (the agent has the answer and asks again at once); the requests in between
        are what the limit is there to refuse. They wait rather than fail, so the run ends as
        cancelled, not as an error of the endpoint."""
        self.held = True

    # Requests ----------------------------------------------------------------------------
    async def _handle(self, request: Request, out: Responder) -> bool:
        forwarded = [(k, v) for k, v in request.raw_headers if k.lower() not in HOP_BY_HOP]
        forwarded.append(("accept-encoding", "identity"))
        path = request.path
        is_messages = request.method == "POST" and path == "/v1/messages"
        is_model = request.method == "GET" and path.startswith("/v1/models/")
        if is_messages and self.model is None:
            self._note_request(request.body)
        if is_messages and self.held:
            log.info("a request for messages held: the attempt is over its limit")
            self.requests_held += 1
            await asyncio.get_running_loop().create_future()  # until stop() cancels it
        if is_messages:
            self.plan.request(request.body)
        return await self._forward(out, request, forwarded, is_messages, is_model)

    async def _forward(
        self,
        out: Responder,
        request: Request,
        headers: list[tuple[str, str]],
        is_messages: bool,
        is_model: bool,
    ) -> bool:
        """Pass the request on and its answer back; False when the connection must close."""
        assert self._client is not None
        upstream = self._client.build_request(
            request.method, self.upstream + request.target, headers=headers, content=request.body
        )
        try:
            response = await self._client.send(upstream, stream=True)
        except httpx2.HTTPError as err:
            log.info("upstream %s failed: %s", self.upstream, err)
            payload = json.dumps(
                {"type": "error", "error": {"type": "api_error", "message": str(err)}}
            ).encode()
            await out.send(502, [("content-type", "application/json")], payload)
            return True
        streamed = response.headers.get("content-type", "").startswith("text/event-stream")
        assembler = MessageAssembler() if is_messages and streamed else None
        kept = bytearray()
        passed = [
            (name, value)
            for name, value in response.headers.multi_items()
            if name.lower() not in HOP_BY_HOP
        ]
        await out.start_stream(response.status_code, passed, reason=response.reason_phrase)
        recorded = broke = False
        try:
            async for chunk in response.aiter_bytes():
                if assembler is not None:
                    assembler.feed(chunk)
                    if assembler.finished and not recorded:
                        # Counted before the agent has the answer's end: a limit it reaches
                        # holds the next request, which may come on another connection.
                        self._record(assembler.step(), assembler.usage)
                        recorded = True
                elif is_messages or is_model:
                    kept.extend(chunk)
                await out.send_chunk(chunk)
        except httpx2.HTTPError as err:
            # The upstream dropped the stream: drop ours too, as the server would have seen it.
            log.info("upstream stream broke: %s", err)
            broke = True
        finally:
            await response.aclose()
        if assembler is not None and not recorded:  # a stream that never finished
            self._record(assembler.step(), assembler.usage)
        if broke:
            return False
        await out.end_stream()
        if is_messages and assembler is None:  # a whole JSON answer (or an error)
            step = step_from_json(response.status_code, bytes(kept))
            if step is not None:
                self._record(step, step.get("usage") if "fault" not in step else None)
        elif is_model and response.status_code == 200:
            with contextlib.suppress(ValueError):
                info = json.loads(bytes(kept))
                if isinstance(info, dict) and isinstance(info.get("id"), str):
                    self.models[info["id"]] = info
        return True

    def _note_request(self, body: bytes) -> None:
        try:
            request = json.loads(body)
        except ValueError:
            return
        if isinstance(request, dict):
            model = request.get("model")
            self.model = model if isinstance(model, str) else None
            tools = request.get("tools")
            if isinstance(tools, list):
                self.tools = [str(t.get("name")) for t in tools if isinstance(t, dict)]

    def _record(self, step: dict[str, Any], usage: Any) -> None:
        self.steps.append(step)
        # A broken answer is retried with the same request: its share goes to the retry's.
        whole = isinstance(usage, dict) and "fault" not in step
        self.plan.answer(step.get("content") or [], usage if whole else None)
        if usage:
            counted = usage_of(usage)
            self.usage.add(counted)
            self.messages += 1
            if self.on_usage is not None:
                self.on_usage(counted)
