"""Script steps: what the fake answers to each ``POST /v1/messages``, in order.

See the package docstring (``plansight.fakeapi``) for the JSON recording format.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, TypeAlias

__all__ = [
    "Drop",
    "Hang",
    "HttpError",
    "Reply",
    "Script",
    "ScriptError",
    "ScriptStep",
    "Step",
    "StepFunction",
    "StreamError",
    "reply",
    "text_reply",
    "tool_reply",
]

#: Default messages per error type, as the real API words them.
DEFAULT_ERROR_MESSAGES: Mapping[str, str] = MappingProxyType(
    {
        "invalid_request_error": "Invalid request",
        "authentication_error": "invalid x-api-key",
        "permission_error": "Your API key does not have permission to use the specified resource.",
        "not_found_error": "Not found",
        "request_too_large": "Request exceeds the maximum allowed number of bytes.",
        "rate_limit_error": "Number of request tokens has exceeded your per-minute rate limit",
        "api_error": "Internal server error",
        "overloaded_error": "Overloaded",
    }
)

#: HTTP status the real API uses for each error type (a StreamError on a non-streaming
#: request is answered with this status).
ERROR_STATUS: Mapping[str, int] = MappingProxyType(
    {
        "invalid_request_error": 400,
        "authentication_error": 401,
        "permission_error": 403,
        "not_found_error": 404,
        "request_too_large": 413,
        "rate_limit_error": 429,
        "api_error": 500,
        "overloaded_error": 529,
    }
)

_STATUS_ERROR_TYPE: Mapping[int, str] = MappingProxyType(
    {
        400: "invalid_request_error",
        401: "authentication_error",
        403: "permission_error",
        404: "not_found_error",
        413: "request_too_large",
        429: "rate_limit_error",
        500: "api_error",
        529: "overloaded_error",
    }
)

_STOP_REASONS = frozenset(
    {
        "end_turn",
        "max_tokens",
        "stop_sequence",
        "tool_use",
        "pause_turn",
        "refusal",
        "model_context_window_exceeded",
    }
)
_USAGE_KEYS = frozenset(
    {"input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"}
)


class ScriptError(ValueError):
    """A script or recording is malformed."""


def _check_content(content: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for i, raw in enumerate(content):
        if not isinstance(raw, Mapping):
            raise ScriptError(f"content[{i}] must be an object, got {type(raw).__name__}")
        block = copy.deepcopy(dict(raw))
        kind = block.get("type")
        if kind == "text":
            if not isinstance(block.get("text"), str):
                raise ScriptError(f"content[{i}]: text block needs a string 'text'")
        elif kind == "tool_use":
            if not isinstance(block.get("name"), str) or not block["name"]:
                raise ScriptError(f"content[{i}]: tool_use block needs a 'name'")
            block.setdefault("input", {})
            if not isinstance(block["input"], dict):
                raise ScriptError(f"content[{i}]: tool_use 'input' must be an object")
            if "id" in block and not isinstance(block["id"], str):
                raise ScriptError(f"content[{i}]: tool_use 'id' must be a string")
        elif kind == "thinking":
            # The fake signs thinking blocks as it sends them (any scripted signature is
            # replaced), so the conversation verifies when it comes back.
            if not isinstance(block.get("thinking"), str):
                raise ScriptError(f"content[{i}]: thinking block needs a string 'thinking'")
        elif kind == "redacted_thinking":
            # Its 'data' (default: empty) is what it hides; the fake sends it encrypted.
            if not isinstance(block.get("data", ""), str):
                raise ScriptError(f"content[{i}]: redacted_thinking 'data' must be a string")
        elif not isinstance(kind, str):
            raise ScriptError(f"content[{i}] needs a string 'type'")
        blocks.append(block)
    return blocks


@dataclass(frozen=True)
class Reply:
    """A model answer.

    ``content`` holds response blocks (``text``, ``tool_use``, ``thinking``,
    ``redacted_thinking``; others are sent verbatim). ``tool_use`` blocks without an ``id`` get
    ``toolu_<n>`` (a per-server counter). ``stop_reason`` defaults to ``"tool_use"`` when there
    is a tool_use block, else ``"end_turn"``. With ``"max_tokens"`` and a tool_use block last,
    that call is cut as the real API cuts it: half its input JSON streams, then the block and
    the message end. ``stop_details`` goes with the stop reason on ``message_delta`` (a
    ``"refusal"`` gets a default). ``usage`` overrides any of the computed usage numbers.
    ``chunk_delay`` is the pause (seconds) before each streamed delta frame.
    """

    content: Sequence[Mapping[str, Any]] = ()
    stop_reason: str | None = None
    usage: Mapping[str, int] | None = None
    chunk_delay: float = 0.0
    stop_details: Mapping[str, Any] | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "content", tuple(_check_content(self.content)))
        if self.stop_reason is not None and self.stop_reason not in _STOP_REASONS:
            raise ScriptError(f"unknown stop_reason {self.stop_reason!r}")
        if self.usage is not None:
            unknown = set(self.usage) - _USAGE_KEYS
            if unknown:
                raise ScriptError(f"unknown usage keys: {sorted(unknown)}")
        if self.chunk_delay < 0:
            raise ScriptError("chunk_delay must be >= 0")

    @property
    def effective_stop_reason(self) -> str:
        if self.stop_reason is not None:
            return self.stop_reason
        if any(b.get("type") == "tool_use" for b in self.content):
            return "tool_use"
        return "end_turn"


@dataclass(frozen=True)
class HttpError:
    """Answer with an HTTP error status and the real API's error body.

    ``error_type`` defaults from the status (429 → rate_limit_error, 529 → overloaded_error,
    500 → api_error, 400 → invalid_request_error, ...); ``headers`` are added to the
    response (e.g. ``{"retry-after": "0"}``).
    """

    status: int
    error_type: str | None = None
    message: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not 400 <= self.status <= 599:
            raise ScriptError(f"HttpError status must be 4xx/5xx, got {self.status}")

    @property
    def effective_error_type(self) -> str:
        if self.error_type is not None:
            return self.error_type
        if self.status in _STATUS_ERROR_TYPE:
            return _STATUS_ERROR_TYPE[self.status]
        return "api_error" if self.status >= 500 else "invalid_request_error"

    @property
    def effective_message(self) -> str:
        if self.message is not None:
            return self.message
        return DEFAULT_ERROR_MESSAGES.get(self.effective_error_type, "Error")


def _default_partial() -> Sequence[Mapping[str, Any]]:
    return (
        {"type": "text", "text": "Let me look at that for you. "},
        {"type": "tool_use", "name": "read_file", "input": {"path": "README.md"}},
    )


@dataclass(frozen=True)
class StreamError:
    """Start streaming ``content``, then after ``after_blocks`` complete blocks send an SSE
    ``event: error`` frame (as the real API does when it overloads mid-stream) and end the
    stream. With ``partial=True`` the next block is started and half streamed first.

    On a non-streaming request it is answered as an HTTP error of the matching status.
    """

    after_blocks: int = 0
    error_type: str = "overloaded_error"
    message: str | None = None
    content: Sequence[Mapping[str, Any]] = field(default_factory=_default_partial)
    partial: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "content", tuple(_check_content(self.content)))
        if self.after_blocks < 0:
            raise ScriptError("after_blocks must be >= 0")

    @property
    def effective_message(self) -> str:
        if self.message is not None:
            return self.message
        return DEFAULT_ERROR_MESSAGES.get(self.error_type, "Error")


@dataclass(frozen=True)
class Drop:
    """Start streaming ``content`` and close the socket after ``after_blocks`` complete blocks
    (``partial=True``: in the middle of the next block), without finishing the response.
    On a non-streaming request the connection is closed without any response.
    """

    after_blocks: int = 0
    content: Sequence[Mapping[str, Any]] = field(default_factory=_default_partial)
    partial: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "content", tuple(_check_content(self.content)))
        if self.after_blocks < 0:
            raise ScriptError("after_blocks must be >= 0")


@dataclass(frozen=True)
class Malformed:
    """Start streaming ``content`` and after ``after_blocks`` complete blocks send a frame
    whose data is ``data`` as it is (by default not JSON), then end the stream: a broken
    proxy or endpoint. On a non-streaming request that body is the whole 200 answer."""

    after_blocks: int = 0
    data: str = '{"type": "content_block_delta", "index": 0, "delta": {"type": "text_de'
    event: str = "content_block_delta"
    content: Sequence[Mapping[str, Any]] = field(default_factory=_default_partial)

    def __post_init__(self) -> None:
        object.__setattr__(self, "content", tuple(_check_content(self.content)))
        if self.after_blocks < 0:
            raise ScriptError("after_blocks must be >= 0")


@dataclass(frozen=True)
class Hang:
    """Accept the request and send nothing for ``seconds`` (or until ``POST /_fake/release``);
    then close the connection, or, if ``then`` is given, answer with that step (a slow first
    byte)."""

    seconds: float
    then: Reply | HttpError | StreamError | Drop | Malformed | None = None

    def __post_init__(self) -> None:
        if self.seconds < 0:
            raise ScriptError("Hang seconds must be >= 0")


Step: TypeAlias = Reply | HttpError | StreamError | Drop | Malformed | Hang
#: A step computed from the request body (a parsed JSON dict).
StepFunction: TypeAlias = Callable[[dict[str, Any]], Step]
ScriptStep: TypeAlias = Step | StepFunction


# ---------------------------------------------------------------------------- helpers


def reply(
    text: str | None = None,
    tools: Iterable[tuple[str, Mapping[str, Any]] | tuple[str, Mapping[str, Any], str]] = (),
    *,
    stop_reason: str | None = None,
    usage: Mapping[str, int] | None = None,
    chunk_delay: float = 0.0,
) -> Reply:
    """A reply with an optional text block followed by tool_use blocks.

    ``tools`` items are ``(name, input)`` or ``(name, input, id)``.
    """
    content: list[dict[str, Any]] = []
    if text is not None:
        content.append({"type": "text", "text": text})
    for item in tools:
        block: dict[str, Any] = {"type": "tool_use", "name": item[0], "input": dict(item[1])}
        if len(item) == 3:
            block["id"] = item[2]
        content.append(block)
    return Reply(content=content, stop_reason=stop_reason, usage=usage, chunk_delay=chunk_delay)


def text_reply(
    text: str,
    *,
    stop_reason: str | None = None,
    usage: Mapping[str, int] | None = None,
    chunk_delay: float = 0.0,
) -> Reply:
    """A reply with a single text block."""
    return reply(text, stop_reason=stop_reason, usage=usage, chunk_delay=chunk_delay)


def tool_reply(
    name: str,
    input: Mapping[str, Any],
    *,
    text: str | None = None,
    id: str | None = None,
    stop_reason: str | None = None,
    usage: Mapping[str, int] | None = None,
    chunk_delay: float = 0.0,
) -> Reply:
    """A reply calling one tool, optionally preceded by a text block."""
    tool: tuple[str, Mapping[str, Any]] | tuple[str, Mapping[str, Any], str]
    tool = (name, input) if id is None else (name, input, id)
    return reply(text, [tool], stop_reason=stop_reason, usage=usage, chunk_delay=chunk_delay)


# ---------------------------------------------------------------------------- script


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _step_from_dict(raw: Mapping[str, Any], where: str) -> Step:
    try:
        fault = raw.get("fault")
        if fault is None:
            if "content" not in raw and "text" not in raw:
                raise ScriptError("a reply step needs 'content' (or 'text')")
            content = raw.get("content")
            if content is None:
                content = [{"type": "text", "text": raw["text"]}]
            if not isinstance(content, list):
                raise ScriptError("'content' must be a list of blocks")
            usage = raw.get("usage")
            if isinstance(usage, Mapping):  # a real Message's usage has extra fields: keep ours
                usage = {k: v for k, v in usage.items() if k in _USAGE_KEYS and _is_int(v)}
            details = raw.get("stop_details")
            if details is not None and not isinstance(details, Mapping):
                raise ScriptError("'stop_details' must be an object")
            return Reply(
                content=content,
                stop_reason=raw.get("stop_reason"),
                usage=usage or None,
                chunk_delay=float(raw.get("chunk_delay_ms", 0)) / 1000.0,
                stop_details=details,
            )
        if fault == "http":
            return HttpError(
                status=int(raw["status"]),
                error_type=raw.get("error_type"),
                message=raw.get("message"),
                headers={str(k): str(v) for k, v in dict(raw.get("headers") or {}).items()},
            )
        if fault == "stream_error":
            kwargs: dict[str, Any] = {}
            if "content" in raw:
                kwargs["content"] = raw["content"]
            return StreamError(
                after_blocks=int(raw.get("after_blocks", 0)),
                error_type=str(raw.get("error_type", "overloaded_error")),
                message=raw.get("message"),
                partial=bool(raw.get("partial", False)),
                **kwargs,
            )
        if fault == "drop":
            kwargs = {}
            if "content" in raw:
                kwargs["content"] = raw["content"]
            return Drop(
                after_blocks=int(raw.get("after_blocks", 0)),
                partial=bool(raw.get("partial", False)),
                **kwargs,
            )
        if fault == "malformed":
            kwargs = {}
            for key in ("content", "data", "event"):
                if key in raw:
                    kwargs[key] = raw[key]
            return Malformed(after_blocks=int(raw.get("after_blocks", 0)), **kwargs)
        if fault == "hang":
            then_raw = raw.get("then")
            then = None
            if then_raw is not None:
                then_step = _step_from_dict(then_raw, where + ".then")
                if isinstance(then_step, Hang):
                    raise ScriptError("'then' cannot be another hang")
                then = then_step
            return Hang(seconds=float(raw["seconds"]), then=then)
        raise ScriptError(f"unknown fault {fault!r} (http, stream_error, drop, malformed, hang)")
    except ScriptError as exc:
        raise ScriptError(f"{where}: {exc}") from None
    except (KeyError, TypeError, ValueError) as exc:
        raise ScriptError(f"{where}: {type(exc).__name__}: {exc}") from None


def _step_to_dict(step: Step) -> dict[str, Any]:
    if isinstance(step, Reply):
        out: dict[str, Any] = {"content": [dict(b) for b in step.content]}
        if step.stop_reason is not None:
            out["stop_reason"] = step.stop_reason
        if step.usage is not None:
            out["usage"] = dict(step.usage)
        if step.chunk_delay:
            out["chunk_delay_ms"] = step.chunk_delay * 1000.0
        if step.stop_details is not None:
            out["stop_details"] = dict(step.stop_details)
        return out
    if isinstance(step, HttpError):
        out = {"fault": "http", "status": step.status}
        if step.error_type is not None:
            out["error_type"] = step.error_type
        if step.message is not None:
            out["message"] = step.message
        if step.headers:
            out["headers"] = dict(step.headers)
        return out
    if isinstance(step, StreamError):
        out = {
            "fault": "stream_error",
            "after_blocks": step.after_blocks,
            "error_type": step.error_type,
            "content": [dict(b) for b in step.content],
            "partial": step.partial,
        }
        if step.message is not None:
            out["message"] = step.message
        return out
    if isinstance(step, Drop):
        return {
            "fault": "drop",
            "after_blocks": step.after_blocks,
            "content": [dict(b) for b in step.content],
            "partial": step.partial,
        }
    if isinstance(step, Malformed):
        return {
            "fault": "malformed",
            "after_blocks": step.after_blocks,
            "data": step.data,
            "event": step.event,
            "content": [dict(b) for b in step.content],
        }
    out = {"fault": "hang", "seconds": step.seconds}
    if step.then is not None:
        out["then"] = _step_to_dict(step.then)
    return out


class Script:
    """An ordered list of steps, one per ``POST /v1/messages``.

    A Script is plain data: the server that serves it keeps its own cursor, so one Script can
    back several servers. Requests the fake rejects itself (no API key, validation errors)
    do not consume a step. ``no_tools_reply`` answers every request sent with
    ``tool_choice: {"type": "none"}`` (a compaction's summary request, whenever it comes)
    without consuming a step.
    """

    def __init__(
        self, steps: Iterable[ScriptStep] = (), *, no_tools_reply: Reply | None = None
    ) -> None:
        self.steps: list[ScriptStep] = list(steps)
        self.no_tools_reply = no_tools_reply
        for i, step in enumerate(self.steps):
            if not (
                isinstance(step, Reply | HttpError | StreamError | Drop | Malformed | Hang)
            ) and not (callable(step)):
                raise ScriptError(f"steps[{i}]: not a step: {step!r}")

    def __len__(self) -> int:
        return len(self.steps)

    def __repr__(self) -> str:
        return f"Script({self.steps!r})"

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Script:
        """Load ``{"steps": [...]}`` (see the package docstring for the step format)."""
        if not isinstance(data, Mapping):
            raise ScriptError("a recording must be a JSON object with a 'steps' list")
        steps = data.get("steps")
        if not isinstance(steps, list):
            raise ScriptError("a recording must be a JSON object with a 'steps' list")
        out: list[ScriptStep] = []
        for i, raw in enumerate(steps):
            if not isinstance(raw, Mapping):
                raise ScriptError(f"steps[{i}]: must be an object")
            out.append(_step_from_dict(raw, f"steps[{i}]"))
        no_tools = data.get("tool_choice_none")
        reply_step = None
        if no_tools is not None:
            if not isinstance(no_tools, Mapping) or no_tools.get("fault") is not None:
                raise ScriptError("'tool_choice_none' must be a reply step")
            parsed = _step_from_dict(no_tools, "tool_choice_none")
            assert isinstance(parsed, Reply)
            reply_step = parsed
        return cls(out, no_tools_reply=reply_step)

    @classmethod
    def from_json(cls, path: str | Path) -> Script:
        """Load a recording file."""
        text = Path(path).read_text(encoding="utf-8")
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ScriptError(f"{path}: not valid JSON: {exc}") from None
        return cls.from_dict(data)

    def to_dict(self) -> dict[str, Any]:
        """The recording form; raises ScriptError if the script holds callables."""
        out: list[dict[str, Any]] = []
        for i, step in enumerate(self.steps):
            if not isinstance(step, Reply | HttpError | StreamError | Drop | Malformed | Hang):
                raise ScriptError(f"steps[{i}] is a callable and cannot be serialised")
            out.append(_step_to_dict(step))
        data: dict[str, Any] = {"steps": out}
        if self.no_tools_reply is not None:
            data["tool_choice_none"] = _step_to_dict(self.no_tools_reply)
        return data
