"""The meter: a pass-through proxy between one attempt's server and the Messages API.

Every attempt's language server is pointed (`ANTHROPIC_BASE_URL`) at a `MeteringProxy` on
127.0.0.1, which forwards each request unchanged to the upstream endpoint (the real API in a
live run, the fake Messages API serving a recording in a replay) and streams the answer back
as it arrives. On the way it reads the answers: each finished message's usage goes to
`on_usage` (the running cost, the cost limit), and each answer to `POST /v1/messages` becomes
a step in the fake Messages API's script format (`plansight.fakeapi`): a reply with its
content, stop reason and usage; an HTTP error; a stream cut by an error event or a dropped
connection. `GET /v1/models/{id}` answers are kept too, so a replay serves the same model
facts. The proxy never changes what passes through it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import urllib.parse
from collections.abc import Callable
from typing import Any

import httpx2

from plansight.engine.events import Usage

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
USAGE_KEYS = (
    "input_tokens",
    "output_tokens",
    "cache_read_input_tokens",
    "cache_creation_input_tokens",
)
MAX_BODY = 64 * 1024 * 1024


def usage_of(raw: Any) -> Usage:
    raw = raw if isinstance(raw, dict) else {}
    values = {k: raw.get(k) for k in USAGE_KEYS}
    return Usage(**{k: v if isinstance(v, int) else 0 for k, v in values.items()})


class MessageAssembler:
    """A Message rebuilt from the Messages API's server-sent events, fed as bytes arrive."""

    def __init__(self) -> None:
        self._buffer = b""
        self.blocks: dict[int, dict[str, Any]] = {}
        self._json: dict[int, list[str]] = {}
        self.complete: list[int] = []
        self.stop_reason: str | None = None
        self.usage: dict[str, int] = {}
        self.error: dict[str, Any] | None = None
        self.finished = False

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
        if kind == "message_start":
            self._usage(event.get("message", {}).get("usage"))
        elif kind == "content_block_start":
            block = dict(event.get("content_block") or {})
            index = int(event.get("index", len(self.blocks)))
            if block.get("type") == "tool_use":
                block["input"] = {}
                self._json[index] = []
            elif block.get("type") == "thinking":
                block.setdefault("thinking", "")
            self.blocks[index] = block
        elif kind == "content_block_delta":
            self._delta(int(event.get("index", -1)), event.get("delta") or {})
        elif kind == "content_block_stop":
            index = int(event.get("index", -1))
            if index in self._json:
                text = "".join(self._json.pop(index))
                try:
                    self.blocks[index]["input"] = json.loads(text) if text else {}
                except ValueError:
                    self.blocks[index]["input"] = {"_unparsed": text}
            if index in self.blocks:
                self.complete.append(index)
        elif kind == "message_delta":
            delta = event.get("delta") or {}
            if isinstance(delta.get("stop_reason"), str):
                self.stop_reason = delta["stop_reason"]
            self._usage(event.get("usage"))
        elif kind == "message_stop":
            self.finished = True
        elif kind == "error":
            self.error = event.get("error") if isinstance(event.get("error"), dict) else {}

    def _delta(self, index: int, delta: dict[str, Any]) -> None:
        block = self.blocks.get(index)
        if block is None:
            return
        kind = delta.get("type")
        if kind == "text_delta":
            block["text"] = block.get("text", "") + str(delta.get("text", ""))
        elif kind == "input_json_delta":
            self._json.setdefault(index, []).append(str(delta.get("partial_json", "")))
        elif kind == "thinking_delta":
            block["thinking"] = block.get("thinking", "") + str(delta.get("thinking", ""))
        elif kind == "signature_delta":
            block["signature"] = str(delta.get("signature", ""))

    def _usage(self, raw: Any) -> None:
        if isinstance(raw, dict):
            for key in USAGE_KEYS:
                if isinstance(raw.get(key), int):
                    self.usage[key] = raw[key]

    def content(self) -> list[dict[str, Any]]:
        """The complete blocks, in order; thinking signatures left for the replaying fake."""
        blocks = []
        for index in sorted(set(self.complete)):
            block = dict(self.blocks[index])
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
        if self.stop_reason is not None:
            step["stop_reason"] = self.stop_reason
        return step


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
        self._server: asyncio.Server | None = None
        self._client: httpx2.AsyncClient | None = None
        self._connections: set[asyncio.Task[None]] = set()

    @property
    def base_url(self) -> str:
        assert self._server is not None, "start the proxy first"
        port = self._server.sockets[0].getsockname()[1]
        return f"http://{self.host}:{port}"

    async def start(self) -> MeteringProxy:
        self._client = httpx2.AsyncClient(timeout=httpx2.Timeout(None, connect=30.0))
        self._server = await asyncio.start_server(self._on_connection, self.host, 0)
        return self

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
        for task in list(self._connections):
            task.cancel()
        for task in list(self._connections):
            with contextlib.suppress(BaseException):
                await task
        if self._server is not None:
            with contextlib.suppress(Exception):
                await self._server.wait_closed()
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

    # Connections -------------------------------------------------------------------------
    async def _on_connection(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._connections.add(task)
        try:
            while await self._serve_one(reader, writer):
                pass
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("the metering proxy failed on a request")
        finally:
            self._connections.discard(task)
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def _serve_one(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        line = await reader.readline()
        while line in (b"\r\n", b"\n"):
            line = await reader.readline()
        if not line:
            return False
        method, target, version = line.decode("latin-1").rstrip("\r\n").split(" ", 2)
        headers: list[tuple[str, str]] = []
        while True:
            raw = await reader.readline()
            if raw in (b"\r\n", b"\n", b""):
                break
            name, _, value = raw.decode("latin-1").partition(":")
            headers.append((name.strip(), value.strip()))
        lowered = {k.lower(): v for k, v in headers}
        length = int(lowered.get("content-length", "0") or 0)
        if length > MAX_BODY:
            return False
        body = await reader.readexactly(length) if length else b""
        keep_alive = "close" not in lowered.get("connection", "").lower() and version == "HTTP/1.1"
        forwarded = [(k, v) for k, v in headers if k.lower() not in HOP_BY_HOP]
        forwarded.append(("accept-encoding", "identity"))
        path = urllib.parse.urlsplit(target).path
        is_messages = method == "POST" and path == "/v1/messages"
        is_model = method == "GET" and path.startswith("/v1/models/")
        if is_messages and self.model is None:
            self._note_request(body)
        return await self._forward(
            writer, method, target, forwarded, body, keep_alive, is_messages, is_model
        )

    async def _forward(
        self,
        writer: asyncio.StreamWriter,
        method: str,
        target: str,
        headers: list[tuple[str, str]],
        body: bytes,
        keep_alive: bool,
        is_messages: bool,
        is_model: bool,
    ) -> bool:
        assert self._client is not None
        request = self._client.build_request(
            method, self.upstream + target, headers=headers, content=body
        )
        try:
            response = await self._client.send(request, stream=True)
        except httpx2.HTTPError as err:
            log.info("upstream %s failed: %s", self.upstream, err)
            payload = json.dumps(
                {"type": "error", "error": {"type": "api_error", "message": str(err)}}
            ).encode()
            writer.write(
                b"HTTP/1.1 502 Bad Gateway\r\ncontent-type: application/json\r\n"
                + f"content-length: {len(payload)}\r\n\r\n".encode()
                + payload
            )
            await writer.drain()
            return keep_alive
        streamed = response.headers.get("content-type", "").startswith("text/event-stream")
        assembler = MessageAssembler() if is_messages and streamed else None
        kept = bytearray()
        head = [f"HTTP/1.1 {response.status_code} {response.reason_phrase}\r\n".encode()]
        for name, value in response.headers.multi_items():
            if name.lower() not in HOP_BY_HOP:
                head.append(f"{name}: {value}\r\n".encode("latin-1", "replace"))
        head.append(b"transfer-encoding: chunked\r\n")
        head.append(
            b"connection: keep-alive\r\n\r\n" if keep_alive else b"connection: close\r\n\r\n"
        )
        writer.write(b"".join(head))
        try:
            async for chunk in response.aiter_bytes():
                if assembler is not None:
                    assembler.feed(chunk)
                elif is_messages or is_model:
                    kept.extend(chunk)
                writer.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                await writer.drain()
        except httpx2.HTTPError as err:
            # The upstream dropped the stream: drop ours too, as the server would have seen it.
            log.info("upstream stream broke: %s", err)
            if assembler is not None:
                self._record(assembler.step(), assembler.usage)
            await response.aclose()
            return False
        finally:
            await response.aclose()
        writer.write(b"0\r\n\r\n")
        await writer.drain()
        if assembler is not None:
            self._record(assembler.step(), assembler.usage)
        elif is_messages:
            step = step_from_json(response.status_code, bytes(kept))
            if step is not None:
                self._record(step, step.get("usage") if "fault" not in step else None)
        elif is_model and response.status_code == 200:
            with contextlib.suppress(ValueError):
                info = json.loads(bytes(kept))
                if isinstance(info, dict) and isinstance(info.get("id"), str):
                    self.models[info["id"]] = info
        return keep_alive

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
        if usage:
            counted = usage_of(usage)
            self.usage.add(counted)
            self.messages += 1
            if self.on_usage is not None:
                self.on_usage(counted)
