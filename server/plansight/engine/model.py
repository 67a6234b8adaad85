"""Model access: one streamed Messages API call per round, with prompt caching and usage.

This is the only module that talks to the SDK. It knows the wire format of requests;
callers hand it the conversation as Messages API dicts and get plain data back.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import logging
import random
import re
import threading
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from plansight.engine.events import Retrying, Usage

if TYPE_CHECKING:
    import anthropic
    from anthropic import AsyncStream
    from anthropic.types import RawMessageStreamEvent

# The SDK takes about a second to import on these machines: an `SdkLoader` imports it in a
# background thread, so the event loop never waits for it (a cancel, another request).

log = logging.getLogger(__name__)

CACHE = {"type": "ephemeral"}
DEFAULT_MAX_TOKENS = 8192
DEFAULT_THINKING_BUDGET = 4096
MIN_THINKING_BUDGET = 1024  # the API refuses less
# An `error` event inside a 200 stream is retried like the HTTP status of the same error.
RETRIED_STREAM_ERRORS = {"overloaded_error": 529, "api_error": 500, "rate_limit_error": 429}
# The statuses the SDK retries (408, 409, 429 and 5xx), retried here so that each retry is seen.
RETRIED_STATUSES = frozenset({408, 409, 429})
# A server's retry-after longer than this is not waited for (the SDK's own limit).
MAX_RETRY_AFTER = 60.0
# What a retry is for, as the `retrying` event names it.
RETRY_REASONS = {
    408: "timeout",
    429: "rate_limited",
    529: "overloaded",
    "rate_limit_error": "rate_limited",
    "overloaded_error": "overloaded",
}
THINKING_TYPES = ("thinking", "redacted_thinking")
# Stop reasons that mean the response was cut, not finished.
TRUNCATED = ("max_tokens", "model_context_window_exceeded")
# The counts of a usage object, as `Usage` names them.
USAGE_KEYS = (
    "input_tokens",
    "output_tokens",
    "cache_read_input_tokens",
    "cache_creation_input_tokens",
)


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


def import_sdk() -> None:
    """Import what the first request needs (the SDK, its HTTP client, the stream's models)."""
    import anthropic  # noqa: F401
    import httpx2  # noqa: F401
    from anthropic.types import RawMessageStreamEvent  # noqa: F401


class SdkLoader:
    """Imports the SDK once, in a background thread started by `start()` (or the first wait)."""

    def __init__(self) -> None:
        self._done: concurrent.futures.Future[None] | None = None

    def start(self) -> None:
        if self._done is not None:
            return
        done: concurrent.futures.Future[None] = concurrent.futures.Future()
        done.set_running_or_notify_cancel()  # a waiter's cancel must not cancel the import
        self._done = done
        threading.Thread(target=self._load, args=(done,), name="plansight-sdk", daemon=True).start()

    @staticmethod
    def _load(done: concurrent.futures.Future[None]) -> None:
        try:
            import_sdk()
        except BaseException as err:
            done.set_exception(err)
        else:
            done.set_result(None)

    async def ready(self) -> None:
        """Wait, without blocking the event loop, until the SDK is imported."""
        self.start()
        assert self._done is not None
        if not self._done.done():
            await asyncio.wrap_future(self._done)
        self._done.result()


_TOO_LONG = re.compile(r"prompt is too long: (\d+) tokens > (\d+) maximum")


class ModelError(Exception):
    """The API refused or failed after the retries; `str()` keeps the API's own message.

    ``prompt_tokens`` and ``prompt_limit`` are set when the API refused the prompt as longer
    than the context window (a 400 ``prompt is too long: N tokens > W maximum``): N and W.
    ``sent`` is False when no request left this process (no API key), so no round was made.
    """

    def __init__(
        self,
        message: str,
        *,
        prompt_tokens: int | None = None,
        prompt_limit: int | None = None,
        sent: bool = True,
    ) -> None:
        super().__init__(message)
        self.prompt_tokens = prompt_tokens
        self.prompt_limit = prompt_limit
        self.sent = sent

    @property
    def prompt_too_long(self) -> bool:
        return self.prompt_tokens is not None


@dataclass
class ModelTurn:
    content: list[dict[str, Any]]
    stop_reason: str | None
    usage: Usage = field(default_factory=Usage)
    stop_details: dict[str, Any] | None = None
    cut_tools: list[str] = field(default_factory=list)
    """Tool calls cut short by max_tokens (their input JSON unfinished): dropped, by name."""

    @property
    def truncated(self) -> bool:
        return self.stop_reason in TRUNCATED

    @property
    def tool_uses(self) -> list[dict[str, Any]]:
        return [block for block in self.content if block["type"] == "tool_use"]

    @property
    def text(self) -> str:
        return "".join(block["text"] for block in self.content if block["type"] == "text")


@dataclass(frozen=True)
class ThinkingOption:
    """Extended thinking is on; ``budget_tokens`` is used where the model takes a budget."""

    budget_tokens: int = DEFAULT_THINKING_BUDGET


@dataclass(frozen=True)
class ModelSettings:
    model: str | None = None  # None: the newest Sonnet the SDK names
    api_key: str | None = None
    base_url: str | None = None
    max_tokens: int = DEFAULT_MAX_TOKENS
    max_retries: int = 2  # the SDK's default: 3 attempts on 408/409/429/5xx
    timeout: float = 600.0
    thinking: ThinkingOption | None = None
    retry_delay: float = 0.5  # first backoff of a retried stream error, doubling, at most 8 s


@dataclass(frozen=True)
class ListedModel:
    """One model as the Models API lists it: its id, its name for people, whether it thinks."""

    id: str
    display_name: str
    created_at: str = ""
    thinking: bool | None = None  # None: the API did not say (no capabilities in the answer)

    @classmethod
    def from_info(cls, info: Any) -> ListedModel:
        thinking: bool | None = None
        capabilities = getattr(info, "capabilities", None)
        if capabilities is not None and getattr(capabilities, "thinking", None) is not None:
            thinking = bool(capabilities.thinking.supported)
        created: Any = getattr(info, "created_at", None)
        when = created.isoformat() if hasattr(created, "isoformat") else str(created or "")
        return cls(
            id=str(info.id),
            display_name=str(getattr(info, "display_name", None) or info.id),
            created_at=when,
            thinking=thinking,
        )

    def to_wire(self) -> dict[str, Any]:
        wire: dict[str, Any] = {"id": self.id, "displayName": self.display_name}
        if self.created_at:
            wire["createdAt"] = self.created_at
        if self.thinking is not None:
            wire["thinking"] = self.thinking
        return wire


@dataclass(frozen=True)
class ModelList:
    """`plansight/models`'s answer: the listed models and the one this server uses."""

    models: tuple[ListedModel, ...]
    current: str

    def to_wire(self) -> dict[str, Any]:
        return {"models": [m.to_wire() for m in self.models], "current": self.current}


@dataclass(frozen=True)
class ModelFacts:
    """What the Models API (``GET /v1/models/{id}``) says about the model."""

    max_input_tokens: int | None = None
    max_tokens: int | None = None
    adaptive_thinking: bool = False
    enabled_thinking: bool = True

    @classmethod
    def from_info(cls, info: Any) -> ModelFacts:
        types = None
        capabilities = getattr(info, "capabilities", None)
        if capabilities is not None:
            types = capabilities.thinking.types
        return cls(
            max_input_tokens=getattr(info, "max_input_tokens", None),
            max_tokens=getattr(info, "max_tokens", None),
            adaptive_thinking=bool(types and types.adaptive.supported),
            enabled_thinking=bool(types.enabled.supported) if types else True,
        )


def thinking_request(
    option: ThinkingOption | None, facts: ModelFacts | None, max_tokens: int
) -> tuple[dict[str, Any] | None, int]:
    """The request's ``thinking`` and ``max_tokens``: adaptive where the Models API says the
    model takes it, else enabled with the budget (at least 1024), ``max_tokens`` raised above
    the budget where it is not (thinking counts toward it). ``max_tokens`` never passes the
    model's output limit where the Models API gives it (the API refuses more)."""
    limit = facts.max_tokens if facts is not None else None
    if option is None or (facts is not None and facts.adaptive_thinking):
        thinking = None if option is None else {"type": "adaptive"}
        return thinking, min(max_tokens, limit) if limit else max_tokens
    budget = max(MIN_THINKING_BUDGET, option.budget_tokens)
    if max_tokens <= budget:
        max_tokens = budget + DEFAULT_MAX_TOKENS
    if limit and max_tokens > limit:
        max_tokens = limit
        budget = max(MIN_THINKING_BUDGET, min(budget, max_tokens - 1))
    return {"type": "enabled", "budget_tokens": budget}, max_tokens


TextListener = Callable[[str], None]
ToolInputListener = Callable[[str, str, str], None]  # id, name, partial JSON


def sendable(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The conversation as the API takes it: no empty or whitespace-only text block, no
    message left empty by that, and the final assistant message without trailing whitespace.

    A stored conversation may hold such blocks (an answer of "\n\n", an older version); they
    are left out of the request, never written back. The list is returned as is when it is
    already fine, so this costs one pass over the blocks.
    """
    out: list[dict[str, Any]] | None = None
    for index, message in enumerate(messages):
        fixed = _sendable_message(message, final=index == len(messages) - 1)
        if fixed is not message and out is None:
            out = list(messages[:index])
        if out is not None and fixed is not None:
            out.append(fixed)
    return messages if out is None else out


def _blank(block: Mapping[str, Any]) -> bool:
    return block.get("type") == "text" and not str(block.get("text", "")).strip()


def _sendable_message(message: dict[str, Any], *, final: bool) -> dict[str, Any] | None:
    """The message fixed (a new dict), the same object if fine, None if nothing is left."""
    content = message["content"]
    blocks: list[dict[str, Any]] = (
        [{"type": "text", "text": content}] if isinstance(content, str) else content
    )
    kept = [b for b in blocks if not _blank(b)]
    if final and message["role"] == "assistant" and kept and kept[-1].get("type") == "text":
        tail = kept[-1]
        if tail["text"] != tail["text"].rstrip():
            kept[-1] = {**tail, "text": tail["text"].rstrip()}
    if not kept:
        return None
    if isinstance(content, list) and len(kept) == len(content) and kept[-1] is content[-1]:
        return message
    if isinstance(content, str) and kept[0]["text"] == content:
        return message
    return {**message, "content": kept}


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
    # Thinking blocks cannot carry a breakpoint: mark the last block that can.
    for index in range(len(blocks) - 1, -1, -1):
        if blocks[index].get("type") not in THINKING_TYPES:
            blocks[index] = {**blocks[index], "cache_control": CACHE}
            return {**message, "content": blocks}
    return message


def _counts(raw: Any) -> dict[str, Any]:
    """An SDK usage object's counts by name (None where it has none)."""
    return {key: getattr(raw, key, None) for key in USAGE_KEYS}


def _api_error(err: anthropic.APIStatusError) -> tuple[str | None, str | None]:
    """(error.type, error.message) from an API error's body, where it has them."""
    body = err.body
    if isinstance(body, dict):
        error = body.get("error")
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return str(error.get("type", "error")), error["message"]
    return None, None


def _api_message(err: anthropic.APIStatusError) -> str:
    kind, message = _api_error(err)
    if message is not None:
        return f"{kind}: {message} (HTTP {err.status_code})"
    return f"{err.message} (HTTP {err.status_code})"


def _model_error(err: anthropic.APIStatusError) -> ModelError:
    kind, message = _api_error(err)
    tokens = limit = None
    if err.status_code == 400 and kind == "invalid_request_error" and message:
        match = _TOO_LONG.search(message)
        if match:
            tokens, limit = int(match.group(1)), int(match.group(2))
    if err.status_code == 200 and kind is not None:  # an `error` event in the stream
        return ModelError(f"{kind}: {message} (in the response stream)")
    return ModelError(_api_message(err), prompt_tokens=tokens, prompt_limit=limit)


# Told of each retry before its pause (the `retrying` event, for the clients to show).
RetryListener = Callable[[Retrying], None]


class _Retryable(Exception):
    """A failure the SDK would have retried (an HTTP status, a connection that could not be
    made, an `error` event of the same kind in the stream); `after`: the server's
    retry-after, in seconds, where it gave one."""

    def __init__(self, error: ModelError, reason: str, after: float | None = None) -> None:
        self.error = error
        self.reason = reason
        self.after = after


def _first_line(text: str, limit: int = 200) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _retry_reason(status: int, kind: str | None) -> str:
    return RETRY_REASONS.get(kind or "") or RETRY_REASONS.get(status) or "server_error"


def _retry_after(headers: Mapping[str, str]) -> float | None:
    """The server's retry-after-ms or retry-after (seconds), if it gave a usable one."""
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        raw = headers.get(name)
        if raw is None:
            continue
        try:
            seconds = float(raw) * scale
        except ValueError:
            continue  # an HTTP date: the backoff applies
        if 0 <= seconds <= MAX_RETRY_AFTER:
            return seconds
    return None


class ModelClient:
    """The SDK's client, created at the first request once the SDK is imported."""

    def __init__(self, settings: ModelSettings, sdk: SdkLoader | None = None) -> None:
        self.settings = settings
        self.sdk = sdk or SdkLoader()
        self._client: anthropic.AsyncAnthropic | None = None
        self._facts: ModelFacts | None = None
        self._facts_known = False

    @property
    def model(self) -> str:
        return self.settings.model or newest_sonnet()

    async def sdk_client(self) -> anthropic.AsyncAnthropic:
        if self._client is None:
            await self.sdk.ready()
            import anthropic

            self._client = anthropic.AsyncAnthropic(
                api_key=self.settings.api_key,
                base_url=self.settings.base_url,
                # stream_turn retries itself, so that each retry can be shown (the SDK's are
                # silent); the Models API calls set their own.
                max_retries=0,
                timeout=self.settings.timeout,
            )
        return self._client

    async def close(self) -> None:
        """Close the SDK's connections (at shutdown)."""
        client, self._client = self._client, None
        if client is not None:
            await client.close()

    async def facts(self) -> ModelFacts | None:
        """What the Models API says about the model, asked once; None where the endpoint has
        no Models API (a compatible server) or it fails: callers then use defaults."""
        if self._facts_known:
            return self._facts
        sdk_client = await self.sdk_client()
        if not (sdk_client.api_key or sdk_client.auth_token):
            return None  # the request that follows says what is missing
        import anthropic
        import httpx2

        try:
            client = sdk_client.with_options(max_retries=1, timeout=30.0)
            info = await client.models.retrieve(self.model)
            self._facts = ModelFacts.from_info(info)
        except (anthropic.APIError, httpx2.HTTPError, AttributeError) as err:
            log.info("no model facts from the Models API (%s); using defaults", err)
            self._facts = None
        self._facts_known = True
        return self._facts

    async def list_models(self) -> ModelList:
        """The models the Models API lists (`client.models.list()`, every page), newest first,
        for a client's model picker; ModelError (saying why) where it cannot be asked."""
        sdk_client = await self.sdk_client()
        if not (sdk_client.api_key or sdk_client.auth_token):
            raise ModelError("No API key: set ANTHROPIC_API_KEY to list the models")
        import anthropic
        import httpx2

        listed: list[ListedModel] = []
        try:
            client = sdk_client.with_options(max_retries=1, timeout=30.0)
            async for info in client.models.list(limit=100):
                listed.append(ListedModel.from_info(info))
        except anthropic.APIStatusError as err:
            raise ModelError(f"The Models API did not answer: {_api_message(err)}") from err
        except (anthropic.APIError, httpx2.HTTPError) as err:
            raise ModelError(f"Could not reach the Models API: {err}") from err
        return ModelList(tuple(listed), self.model)

    async def stream_turn(
        self,
        *,
        system: str,
        tools: list[dict[str, Any]],
        messages: list[dict[str, Any]],
        on_text: TextListener,
        on_tool_input: ToolInputListener,
        on_thinking: TextListener | None = None,
        tool_choice: dict[str, Any] | None = None,
        on_retry: RetryListener | None = None,
    ) -> ModelTurn:
        """One response, streamed. What the SDK retries (408, 409, 429, 5xx, a connection
        that could not be made), and an `error` event inside the stream of the same kind, is
        retried here as the SDK would (`max_retries` times, the server's retry-after or a
        doubling backoff), each retry told to `on_retry` first; what was streamed before an
        error event stays shown. A connection that drops mid-answer is not retried (the SDK
        does not either)."""
        client = await self.sdk_client()
        if not (client.api_key or client.auth_token):
            raise ModelError(
                "No API key: set ANTHROPIC_API_KEY (or try `plansight demo`, which needs none).",
                sent=False,
            )
        facts = await self.facts()
        thinking, max_tokens = thinking_request(
            self.settings.thinking, facts, self.settings.max_tokens
        )
        system_blocks, request_messages = with_cache_breakpoints(system, sendable(messages))
        request: dict[str, Any] = {
            "model": self.model,
            "max_tokens": max_tokens,
            "system": system_blocks,
            "tools": tools,
            "messages": request_messages,
            "stream": True,
        }
        if thinking is not None:
            request["thinking"] = thinking
        if tool_choice is not None:
            request["tool_choice"] = tool_choice
        attempt = 0
        of = self.settings.max_retries
        while True:
            try:
                return await self._stream_once(client, request, on_text, on_tool_input, on_thinking)
            except _Retryable as retry:
                if attempt >= of:
                    raise retry.error from None
                delay = retry.after
                if delay is None:
                    backoff = min(self.settings.retry_delay * 2**attempt, 8.0)
                    delay = backoff * random.uniform(0.75, 1.0)
                attempt += 1
                log.info("%s; retry %d of %d in %.2f s", retry.error, attempt, of, delay)
                if on_retry is not None:
                    on_retry(Retrying(attempt, of, retry.reason, round(delay, 3), str(retry.error)))
                await asyncio.sleep(delay)

    async def _stream_once(
        self,
        client: anthropic.AsyncAnthropic,
        request: dict[str, Any],
        on_text: TextListener,
        on_tool_input: ToolInputListener,
        on_thinking: TextListener | None,
    ) -> ModelTurn:
        import anthropic
        import httpx2

        # The raw event stream, assembled here: measurably cheaper per round than the SDK's
        # MessageStream helper, which rebuilds a snapshot of the message on every event.
        turn = TurnBuilder(on_text, on_tool_input, on_thinking)
        try:
            stream: AsyncStream[RawMessageStreamEvent] = await client.messages.create(**request)
        except anthropic.APIStatusError as err:
            error = _model_error(err)
            kind, _ = _api_error(err)
            if err.status_code in RETRIED_STATUSES or err.status_code >= 500:
                reason = _retry_reason(err.status_code, kind)
                raise _Retryable(error, reason, _retry_after(err.response.headers)) from err
            raise error from err
        except anthropic.APITimeoutError as err:
            raise _Retryable(
                ModelError(f"Could not reach the model API: {err}"), "timeout"
            ) from err
        except anthropic.APIConnectionError as err:
            error = ModelError(f"Could not reach the model API: {err}")
            raise _Retryable(error, "connection") from err
        try:
            async with stream:
                async for event in stream:
                    turn.add(event)
        except anthropic.APIStatusError as err:  # an `error` event inside the stream
            error = _model_error(err)
            kind, _ = _api_error(err)
            if kind in RETRIED_STREAM_ERRORS:
                raise _Retryable(error, _retry_reason(err.status_code, kind)) from err
            raise error from err
        except (httpx2.HTTPError, anthropic.APIConnectionError) as err:
            # The answer had begun: this is no endpoint that cannot be reached.
            raise ModelError(
                f"The connection to the model API dropped mid-answer ({type(err).__name__}: "
                f"{err}); try again."
            ) from err
        except (ValueError, LookupError, AttributeError, TypeError, anthropic.APIError) as err:
            # Not JSON, or not the events the Messages API sends (a proxy or a compatible
            # endpoint broke it): one line for the user, the traceback for the log.
            log.info("malformed stream from the model API", exc_info=True)
            raise ModelError(
                f"The model API sent a malformed response stream ({type(err).__name__}: "
                f"{_first_line(str(err))}); try again, or check the endpoint (ANTHROPIC_BASE_URL)."
            ) from err
        return turn.finish()


class StreamAssembly:
    """The parts of one streamed response, put together from its events' fields in order.

    Pure (no SDK types, no I/O): `TurnBuilder` feeds it the fields of the SDK's raw events,
    the eval meter (`plansight.eval.meter`) those of the JSON events it reads off the wire.
    ``blocks`` by index as they grew, ``complete`` the indices whose ``content_block_stop``
    came, ``usage`` the latest count each event gave (by `USAGE_KEYS` name, only those given).
    """

    def __init__(self) -> None:
        self.blocks: dict[int, dict[str, Any]] = {}
        self.tool_json: dict[int, list[str]] = {}
        self.complete: list[int] = []
        self.stop_reason: str | None = None
        self.stop_details: dict[str, Any] | None = None
        self.usage: dict[str, int] = {}
        self.stopped = False

    def start_message(self, usage: Mapping[str, Any]) -> None:
        """``message_start``: its usage (the input counts)."""
        self._count(usage)

    def start_block(self, index: int, block: dict[str, Any]) -> None:
        """``content_block_start``: a tool call's input comes as JSON deltas."""
        if block.get("type") == "tool_use":
            block["input"] = {}
            self.tool_json[index] = []
        elif block.get("type") == "thinking":
            block.setdefault("thinking", "")
        self.blocks[index] = block

    def add_delta(self, index: int, kind: str, value: str) -> None:
        """``content_block_delta`` of ``kind`` (text_delta, input_json_delta, thinking_delta,
        signature_delta) with its one string; ignored for a block that never started."""
        block = self.blocks.get(index)
        if block is None:
            return
        if kind == "text_delta":
            block["text"] = block.get("text", "") + value
        elif kind == "input_json_delta":
            self.tool_json.setdefault(index, []).append(value)
        elif kind == "thinking_delta":
            block["thinking"] = block.get("thinking", "") + value
        elif kind == "signature_delta":
            block["signature"] = value

    def stop_block(self, index: int) -> None:
        """``content_block_stop``."""
        if index in self.blocks:
            self.complete.append(index)

    def end_message(
        self,
        stop_reason: str | None,
        stop_details: dict[str, Any] | None,
        usage: Mapping[str, Any],
    ) -> None:
        """``message_delta``: the stop reason (and its details) and the final counts."""
        self.stop_reason = stop_reason
        if stop_details is not None:
            self.stop_details = stop_details
        self._count(usage)

    def stop_message(self) -> None:
        """``message_stop``: the response is complete."""
        self.stopped = True

    def tool_input(self, index: int) -> Any:
        """The input of the tool call at ``index`` from its JSON deltas ({} when none came);
        ValueError when the JSON is unfinished (a cut stream) or not JSON."""
        raw = "".join(self.tool_json.get(index, ()))
        return json.loads(raw) if raw else {}

    def _count(self, usage: Mapping[str, Any]) -> None:
        for key in USAGE_KEYS:
            value = usage.get(key)
            if isinstance(value, int):
                self.usage[key] = value


class TurnBuilder:
    """Assembles one streamed response from the Messages API's raw events (SDK objects)."""

    def __init__(
        self,
        on_text: TextListener,
        on_tool_input: ToolInputListener,
        on_thinking: TextListener | None = None,
    ) -> None:
        self.on_text = on_text
        self.on_tool_input = on_tool_input
        self.on_thinking = on_thinking
        self.parts = StreamAssembly()

    @property
    def usage(self) -> Usage:
        counts = self.parts.usage
        return Usage(**{key: counts.get(key, 0) for key in USAGE_KEYS})

    def add(self, event: Any) -> None:
        kind = event.type
        parts = self.parts
        if kind == "content_block_delta":
            self._delta(event.index, event.delta)
        elif kind == "content_block_start":
            block = event.content_block
            if block.type == "tool_use":
                parts.start_block(
                    event.index,
                    {"type": "tool_use", "id": block.id, "name": block.name, "input": {}},
                )
            elif block.type == "text":
                parts.start_block(event.index, {"type": "text", "text": block.text or ""})
            else:
                # thinking and redacted_thinking go back exactly as received
                parts.start_block(event.index, block.model_dump(exclude_none=True))
        elif kind == "content_block_stop":
            parts.stop_block(event.index)
        elif kind == "message_start":
            parts.start_message(_counts(event.message.usage))
        elif kind == "message_delta":
            details = getattr(event.delta, "stop_details", None)
            counts = _counts(event.usage)
            if not counts.get("output_tokens"):
                counts.pop("output_tokens", None)  # no output count: message_start's stands
            parts.end_message(
                event.delta.stop_reason, None if details is None else details.model_dump(), counts
            )
        elif kind == "message_stop":
            parts.stop_message()

    def _delta(self, index: int, delta: Any) -> None:
        block = self.parts.blocks[index]
        kind = delta.type
        if kind == "text_delta":
            self.parts.add_delta(index, kind, delta.text)
            if delta.text:
                self.on_text(delta.text)
        elif kind == "input_json_delta":
            self.parts.add_delta(index, kind, delta.partial_json)
            if delta.partial_json:
                self.on_tool_input(block["id"], block["name"], delta.partial_json)
        elif kind == "thinking_delta":
            self.parts.add_delta(index, kind, delta.thinking)
            if delta.thinking and self.on_thinking is not None:
                self.on_thinking(delta.thinking)
        elif kind == "signature_delta":
            self.parts.add_delta(index, kind, delta.signature)

    def finish(self) -> ModelTurn:
        parts = self.parts
        if not parts.stopped:
            raise ModelError("The model API stream ended before the message was complete.")
        content: list[dict[str, Any]] = []
        cut: list[str] = []
        for index in sorted(parts.blocks):
            block = parts.blocks[index]
            if _blank(block):  # the API refuses empty and whitespace-only text blocks
                continue
            if index in parts.tool_json:
                try:
                    block["input"] = parts.tool_input(index)
                except ValueError as err:
                    if parts.stop_reason in TRUNCATED:
                        cut.append(block["name"])  # cut by the token limit: never run it
                        continue
                    raise ModelError(f"The model sent tool input that is not JSON: {err}") from err
            content.append(block)
        return ModelTurn(
            content=content,
            stop_reason=parts.stop_reason,
            usage=self.usage,
            stop_details=parts.stop_details,
            cut_tools=cut,
        )
