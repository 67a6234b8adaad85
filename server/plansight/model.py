"""Model access: one streamed Messages API call per round, with prompt caching and usage.

This is the only module that talks to the SDK. It knows the wire format of requests;
callers hand it the conversation as Messages API dicts and get plain data back.
"""

from __future__ import annotations

import logging
import re
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from plansight.events import Usage

if TYPE_CHECKING:
    import anthropic

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


def _block_to_dict(block: Any) -> dict[str, Any] | None:
    if block.type == "text":
        # The API rejects empty text blocks if we send them back.
        return {"type": "text", "text": block.text} if block.text else None
    if block.type == "tool_use":
        return {"type": "tool_use", "id": block.id, "name": block.name, "input": block.input}
    if block.type in ("thinking", "redacted_thinking"):
        data: dict[str, Any] = block.model_dump(exclude_none=True)
        return data
    log.warning("ignoring content block of unknown type %s", block.type)
    return None


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
        try:
            async with self._client.messages.stream(
                model=self.model,
                max_tokens=self.settings.max_tokens,
                system=system_blocks,  # type: ignore[arg-type]
                tools=tools,  # type: ignore[arg-type]
                messages=request_messages,  # type: ignore[arg-type]
            ) as stream:
                current_tool: tuple[str, str] | None = None
                async for event in stream:
                    if event.type == "text":
                        if event.text:
                            on_text(event.text)
                    elif event.type == "content_block_start":
                        block = event.content_block
                        current_tool = (block.id, block.name) if block.type == "tool_use" else None
                    elif event.type == "input_json" and current_tool and event.partial_json:
                        on_tool_input(current_tool[0], current_tool[1], event.partial_json)
                final = await stream.get_final_message()
        except anthropic.APIStatusError as err:
            raise ModelError(_api_message(err)) from err
        except anthropic.APIConnectionError as err:
            raise ModelError(f"Could not reach the model API: {err}") from err
        except (httpx2.HTTPError, anthropic.APIError) as err:
            # A connection dropped mid-stream surfaces as an httpx2 error, not an APIError.
            raise ModelError(f"The model API connection failed: {err!r}") from err
        content = [d for d in (_block_to_dict(b) for b in final.content) if d is not None]
        return ModelTurn(content=content, stop_reason=final.stop_reason, usage=_usage(final.usage))
