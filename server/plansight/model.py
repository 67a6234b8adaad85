"""Model access: one streamed Messages API call per round, with prompt caching and usage.

This is the only module that talks to the SDK. It knows the wire format of requests;
callers hand it the conversation as Messages API dicts and get plain data back.
"""

from __future__ import annotations

import json
import logging
import re
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from plansight.events import Usage

if TYPE_CHECKING:
    import anthropic
    from anthropic import AsyncStream
    from anthropic.types import RawMessageStreamEvent

# The SDK takes about a second to import on these machines: it is imported on first use, so
# the language server answers `initialize` at once and idles small.

log = logging.getLogger(__name__)

CACHE = {"type": "ephemeral"}
DEFAULT_MAX_TOKENS = 8192


def newest_sonnet() -> str:
    """The newest Sonnet the installed SDK names, e.g. 'claude-sonnet-5-5'."""
    from anthropic.types import Model

    names = [
        name
        for arg in typing.get_args(Model)
        for name in typing.get_args(arg)
        if isinstance(name, str)
    ]
    best: tuple[tuple[int, ...], str] | None = None
    for name in names:
        match = re.fullmatch(r"claude-sonnet-(\d+)(?:-(\d))?", name)
        if match:
            version = tuple(int(part) for part in match.groups() if part is not None)
            if best is None or version > best[0]:
                best = (version, name)
    return best[1] if best else "claude-sonnet-4-5"


class ModelError(Exception):
    """The API refused or failed after the SDK's retries; `str()` keeps the API's own message."""


@dataclass
class ModelTurn:
    content: list[dict[str, Any]]
    stop_reason: str | None
    usage: Usage = field(default_factory=Usage)

    @property
    def tool_uses(self) -> list[dict[str, Any]]:
        return [block for block in self.content if block["type"] == "tool_use"]

    @property
    def text(self) -> str:
        return "".join(block["text"] for block in self.content if block["type"] == "text")


@dataclass(frozen=True)
class ModelSettings:
    model: str | None = None  # None: the newest Sonnet the SDK names
    api_key: str | None = None
    base_url: str | None = None
    max_tokens: int = DEFAULT_MAX_TOKENS
    max_retries: int = 2  # the SDK's default: 3 attempts on 408/409/429/5xx
    timeout: float = 600.0


TextListener = Callable[[str], None]
ToolInputListener = Callable[[str, str, str], None]  # id, name, partial JSON


def with_cache_breakpoints(
    system: str, messages: list[dict[str, Any]]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Copies of system and messages with at most 3 cache breakpoints.

    Order on the wire is tools → system → messages, so one breakpoint on the system block
    caches tools and system. One on the newest message lets the next round read this
    round's prefix; one on the previous user message (the newest breakpoint of the
    previous request) still hits when a round adds more than the 20-block lookback.
    The stored conversation is never modified.
    """
    system_blocks = [{"type": "text", "text": system, "cache_control": CACHE}]
    out = list(messages)
    marks = [len(out) - 1] if out else []
    previous_user = next((i for i in range(len(out) - 2, -1, -1) if out[i]["role"] == "user"), None)
    if previous_user is not None:
        marks.append(previous_user)
    for index in marks:
        out[index] = _mark_last_block(out[index])
    return system_blocks, out


def _mark_last_block(message: dict[str, Any]) -> dict[str, Any]:
    content = message["content"]
    if isinstance(content, str):
        blocks: list[dict[str, Any]] = [{"type": "text", "text": content}]
    else:
        blocks = list(content)
    if not blocks:
        return message
    blocks[-1] = {**blocks[-1], "cache_control": CACHE}
    return {**message, "content": blocks}


def _usage(raw: Any) -> Usage:
    return Usage(
        input_tokens=getattr(raw, "input_tokens", 0) or 0,
        output_tokens=getattr(raw, "output_tokens", 0) or 0,
        cache_read_input_tokens=getattr(raw, "cache_read_input_tokens", 0) or 0,
        cache_creation_input_tokens=getattr(raw, "cache_creation_input_tokens", 0) or 0,
    )


def _api_message(err: anthropic.APIStatusError) -> str:
    body = err.body
    if isinstance(body, dict):
        error = body.get("error")
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return f"{error.get('type', 'error')}: {error['message']} (HTTP {err.status_code})"
    return f"{err.message} (HTTP {err.status_code})"


class ModelClient:
    def __init__(self, settings: ModelSettings) -> None:
        import anthropic

        self.settings = settings
        self._client = anthropic.AsyncAnthropic(
            api_key=settings.api_key,
            base_url=settings.base_url,
            max_retries=settings.max_retries,
            timeout=settings.timeout,
        )

    @property
    def model(self) -> str:
        return self.settings.model or newest_sonnet()

    async def close(self) -> None:
        await self._client.close()

    async def stream_turn(
        self,
        *,
        system: str,
        tools: list[dict[str, Any]],
        messages: list[dict[str, Any]],
        on_text: TextListener,
        on_tool_input: ToolInputListener,
    ) -> ModelTurn:
        import anthropic
        import httpx2

        if not (self._client.api_key or self._client.auth_token):
            raise ModelError(
                "No API key: set ANTHROPIC_API_KEY (or try `plansight demo`, which needs none)."
            )
        system_blocks, request_messages = with_cache_breakpoints(system, messages)
        # The raw event stream, assembled here: measurably cheaper per round than the SDK's
        # MessageStream helper, which rebuilds a snapshot of the message on every event.
        turn = TurnBuilder(on_text, on_tool_input)
        try:
            stream: AsyncStream[RawMessageStreamEvent] = await self._client.messages.create(  # type: ignore[assignment]
                model=self.model,
                max_tokens=self.settings.max_tokens,
                system=system_blocks,  # type: ignore[arg-type]
                tools=tools,  # type: ignore[arg-type]
                messages=request_messages,  # type: ignore[arg-type]
                stream=True,
            )
            async with stream:
                async for event in stream:
                    turn.add(event)
        except anthropic.APIStatusError as err:
            raise ModelError(_api_message(err)) from err
        except anthropic.APIConnectionError as err:
            raise ModelError(f"Could not reach the model API: {err}") from err
        except (httpx2.HTTPError, anthropic.APIError) as err:
            # A connection dropped mid-stream surfaces as an httpx2 error, not an APIError.
            raise ModelError(f"The model API connection failed: {err!r}") from err
        return turn.finish()


class TurnBuilder:
    """Assembles one streamed response from the Messages API's raw events."""

    def __init__(self, on_text: TextListener, on_tool_input: ToolInputListener) -> None:
        self.on_text = on_text
        self.on_tool_input = on_tool_input
        self.blocks: dict[int, dict[str, Any]] = {}
        self.tool_json: dict[int, list[str]] = {}
        self.stop_reason: str | None = None
        self.usage = Usage()
        self.stopped = False

    def add(self, event: Any) -> None:
        kind = event.type
        if kind == "content_block_delta":
            self._delta(event.index, event.delta)
        elif kind == "content_block_start":
            block = event.content_block
            if block.type == "tool_use":
                self.blocks[event.index] = {
                    "type": "tool_use",
                    "id": block.id,
                    "name": block.name,
                    "input": {},
                }
                self.tool_json[event.index] = []
            elif block.type == "text":
                self.blocks[event.index] = {"type": "text", "text": block.text or ""}
            else:
                self.blocks[event.index] = block.model_dump(exclude_none=True)
        elif kind == "content_block_stop":
            parts = self.tool_json.get(event.index)
            if parts is not None:
                raw = "".join(parts)
                try:
                    self.blocks[event.index]["input"] = json.loads(raw) if raw else {}
                except ValueError as err:
                    raise ModelError(f"The model sent tool input that is not JSON: {err}") from err
        elif kind == "message_start":
            self.usage = _usage(event.message.usage)
        elif kind == "message_delta":
            self.stop_reason = event.delta.stop_reason
            usage = event.usage
            self.usage.output_tokens = usage.output_tokens or self.usage.output_tokens
            for name in ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"):
                value = getattr(usage, name, None)
                if value is not None:
                    setattr(self.usage, name, value)
        elif kind == "message_stop":
            self.stopped = True

    def _delta(self, index: int, delta: Any) -> None:
        block = self.blocks[index]
        kind = delta.type
        if kind == "text_delta":
            block["text"] += delta.text
            if delta.text:
                self.on_text(delta.text)
        elif kind == "input_json_delta":
            self.tool_json[index].append(delta.partial_json)
            if delta.partial_json:
                self.on_tool_input(block["id"], block["name"], delta.partial_json)
        elif kind == "thinking_delta":
            block["thinking"] = block.get("thinking", "") + delta.thinking
        elif kind == "signature_delta":
            block["signature"] = delta.signature

    def finish(self) -> ModelTurn:
        if not self.stopped:
            raise ModelError("The model API stream ended before the message was complete.")
        content = [
            self.blocks[i]
            for i in sorted(self.blocks)
            if not (self.blocks[i]["type"] == "text" and not self.blocks[i]["text"])
        ]
        return ModelTurn(content=content, stop_reason=self.stop_reason, usage=self.usage)
