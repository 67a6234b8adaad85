"""Request validation with the real Messages API's rules and (approximate) wording.

``validate_request(body, model=...)`` is a pure function: it returns the error message the fake
answers with (HTTP 400 ``invalid_request_error``), or ``None`` when the request is acceptable.
``model`` is the ModelInfo (``plansight.fakeapi.models.model_info``) of the model the request
names, when the fake knows it: it decides which kinds of thinking are accepted.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from plansight.fakeapi.signing import valid_redacted_data, valid_signature

__all__ = ["MAX_CACHE_BREAKPOINTS", "validate_request"]

MAX_CACHE_BREAKPOINTS = 4

TOOL_NAME_RE = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
TOOL_ID_RE = re.compile(r"^[a-zA-Z0-9_-]+$")

_MESSAGE_BLOCK_TYPES = frozenset(
    {
        "text",
        "image",
        "document",
        "search_result",
        "thinking",
        "redacted_thinking",
        "tool_use",
        "tool_result",
        "server_tool_use",
        "web_search_tool_result",
        "web_fetch_tool_result",
        "code_execution_tool_result",
        "bash_code_execution_tool_result",
        "text_editor_code_execution_tool_result",
        "tool_search_tool_result",
        "container_upload",
        "mcp_tool_use",
        "mcp_tool_result",
    }
)
_TOOL_RESULT_CONTENT_TYPES = frozenset(
    {"text", "image", "document", "search_result", "tool_reference", "browser_state"}
)
_ASSISTANT_ONLY = frozenset(
    {
        "tool_use",
        "thinking",
        "redacted_thinking",
        "server_tool_use",
        "web_search_tool_result",
        "web_fetch_tool_result",
        "code_execution_tool_result",
        "bash_code_execution_tool_result",
        "text_editor_code_execution_tool_result",
        "tool_search_tool_result",
        "mcp_tool_use",
        "mcp_tool_result",
    }
)
_USER_ONLY = frozenset({"tool_result", "container_upload"})

EMPTY_TEXT = "messages: text content blocks must be non-empty"
WHITESPACE_TEXT = "messages: text content blocks must contain non-whitespace text"
THINKING_DOCS = "https://docs.claude.com/en/docs/build-with-claude/extended-thinking"
EMPTY_CONTENT = (
    "messages: all messages must have non-empty content except for the optional final "
    "assistant message"
)


class _Invalid(Exception):
    pass


@dataclass
class _Turn:
    """Consecutive messages of one role, merged as the real API does."""

    role: str
    # (message index, block index, block) for every block of the merged messages
    blocks: list[tuple[int, int, dict[str, Any]]] = field(default_factory=list)
    first_index: int = 0


def validate_request(body: object, *, model: Mapping[str, Any] | None = None) -> str | None:
    """The 400 message the real API would give for this request body, or None if valid."""
    try:
        _validate(body, model)
    except _Invalid as exc:
        return str(exc)
    return None


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _validate(body: object, model: Mapping[str, Any] | None) -> None:
    if not isinstance(body, dict):
        raise _Invalid("The request body must be a JSON object")
    _check_model_and_limits(body, model)
    thinking = _check_thinking_config(body, model)
    counter = _CacheControlCounter()
    tools = _check_tools(body.get("tools"), counter)
    _check_system(body.get("system"), counter)
    turns = _check_messages(body.get("messages"), counter)
    _check_tool_pairing(turns, has_tools=bool(tools))
    _check_tool_choice(body.get("tool_choice"), tools)
    _check_thinking_blocks(turns, thinking)
    top = body.get("cache_control")
    if top is not None:
        _check_cache_control(top, "cache_control")
        counter.count += 1
    if counter.count > MAX_CACHE_BREAKPOINTS:
        raise _Invalid(
            f"A maximum of {MAX_CACHE_BREAKPOINTS} blocks with cache_control may be provided. "
            f"Found {counter.count}."
        )


def _check_model_and_limits(body: dict[str, Any], model: Mapping[str, Any] | None) -> None:
    if "model" not in body:
        raise _Invalid("model: Field required")
    if not isinstance(body["model"], str):
        raise _Invalid("model: Input should be a valid string")
    if not body["model"]:
        raise _Invalid("model: String should have at least 1 character")
    if "max_tokens" not in body:
        raise _Invalid("max_tokens: Field required")
    if not _is_int(body["max_tokens"]):
        raise _Invalid("max_tokens: Input should be a valid integer")
    if body["max_tokens"] < 1:
        raise _Invalid("max_tokens: Input should be greater than or equal to 1")
    limit = model.get("max_tokens") if model is not None else None
    if _is_int(limit) and body["max_tokens"] > limit:
        raise _Invalid(
            f"max_tokens: {body['max_tokens']} > {limit}, which is the maximum allowed number "
            f"of output tokens for {body['model']}"
        )
    if "stream" in body and body["stream"] is not None and not isinstance(body["stream"], bool):
        raise _Invalid("stream: Input should be a valid boolean")
    temperature = body.get("temperature")
    if temperature is not None:
        if not _is_number(temperature):
            raise _Invalid("temperature: Input should be a valid number")
        if not 0 <= temperature <= 1:
            raise _Invalid("temperature: Input should be less than or equal to 1")
    stops = body.get("stop_sequences")
    if stops is not None and (
        not isinstance(stops, list) or not all(isinstance(s, str) for s in stops)
    ):
        raise _Invalid("stop_sequences: Input should be a valid list of strings")


@dataclass
class _CacheControlCounter:
    count: int = 0

    def visit(self, block: Mapping[str, Any], path: str) -> None:
        cc = block.get("cache_control")
        if cc is None:
            return
        _check_cache_control(cc, f"{path}.cache_control")
        self.count += 1


def _check_cache_control(cc: object, path: str) -> None:
    if not isinstance(cc, dict):
        raise _Invalid(f"{path}: Input should be a valid dictionary")
    if cc.get("type") != "ephemeral":
        raise _Invalid(f"{path}.type: Input should be 'ephemeral'")
    if "ttl" in cc and cc["ttl"] not in ("5m", "1h"):
        raise _Invalid(f"{path}.ttl: Input should be '5m' or '1h'")
    extra = set(cc) - {"type", "ttl"}
    if extra:
        raise _Invalid(f"{path}.{sorted(extra)[0]}: Extra inputs are not permitted")


def _check_tools(tools: object, counter: _CacheControlCounter) -> list[str]:
    if tools is None:
        return []
    if not isinstance(tools, list):
        raise _Invalid("tools: Input should be a valid list")
    names: list[str] = []
    for k, tool in enumerate(tools):
        path = f"tools.{k}"
        if not isinstance(tool, dict):
            raise _Invalid(f"{path}: Input should be a valid dictionary")
        kind = tool.get("type")
        custom = kind is None or kind == "custom"
        label = f"{path}.custom" if custom else f"{path}.{kind}"
        name = tool.get("name")
        if name is None:
            raise _Invalid(f"{label}.name: Field required")
        if not isinstance(name, str) or not TOOL_NAME_RE.match(name):
            raise _Invalid(f"{label}.name: String should match pattern '^[a-zA-Z0-9_-]{{1,64}}$'")
        if custom:
            if "input_schema" not in tool:
                raise _Invalid(f"{label}.input_schema: Field required")
            schema = tool["input_schema"]
            if not isinstance(schema, dict):
                raise _Invalid(f"{label}.input_schema: Input should be a valid dictionary")
            if schema.get("type") != "object":
                raise _Invalid(f"{label}.input_schema.type: Input should be 'object'")
            desc = tool.get("description")
            if desc is not None and not isinstance(desc, str):
                raise _Invalid(f"{label}.description: Input should be a valid string")
        counter.visit(tool, path)
        names.append(name)
    if len(set(names)) != len(names):
        raise _Invalid("tools: Tool names must be unique.")
    return names


def _check_system(system: object, counter: _CacheControlCounter) -> None:
    if system is None or isinstance(system, str):
        return
    if not isinstance(system, list):
        raise _Invalid("system: Input should be a valid string or a list of text blocks")
    for k, block in enumerate(system):
        path = f"system.{k}"
        if not isinstance(block, dict):
            raise _Invalid(f"{path}: Input should be a valid dictionary")
        if block.get("type") != "text":
            raise _Invalid(f"{path}.type: Input should be 'text'")
        text = block.get("text")
        if not isinstance(text, str):
            raise _Invalid(f"{path}.text: Input should be a valid string")
        if not text:
            raise _Invalid("system: text content blocks must be non-empty")
        if not text.strip():
            raise _Invalid("system: text content blocks must contain non-whitespace text")
        counter.visit(block, path)


def _check_messages(messages: object, counter: _CacheControlCounter) -> list[_Turn]:
    if messages is None:
        raise _Invalid("messages: Field required")
    if not isinstance(messages, list):
        raise _Invalid("messages: Input should be a valid list")
    if not messages:
        raise _Invalid("messages: at least one message is required")
    turns: list[_Turn] = []
    last = len(messages) - 1
    for i, message in enumerate(messages):
        path = f"messages.{i}"
        if not isinstance(message, dict):
            raise _Invalid(f"{path}: Input should be a valid dictionary")
        role = message.get("role")
        if role is None:
            raise _Invalid(f"{path}.role: Field required")
        if role not in ("user", "assistant"):
            raise _Invalid(f"{path}.role: Input should be 'user' or 'assistant'")
        if i == 0 and role != "user":
            raise _Invalid('messages: first message must use the "user" role')
        if "content" not in message:
            raise _Invalid(f"{path}.content: Field required")
        content = message["content"]
        final_assistant = i == last and role == "assistant"
        blocks: list[dict[str, Any]]
        if isinstance(content, str):
            if not content and not final_assistant:
                raise _Invalid(EMPTY_CONTENT)
            blocks = [{"type": "text", "text": content}] if content else []
            if content:
                _check_text(blocks[0], f"{path}.content")
        elif isinstance(content, list):
            if not content and not final_assistant:
                raise _Invalid(EMPTY_CONTENT)
            blocks = []
            for j, block in enumerate(content):
                _check_block(block, f"{path}.content.{j}", role, counter)
                blocks.append(block)
        else:
            raise _Invalid(f"{path}.content: Input should be a valid string or list")
        if final_assistant and blocks:
            tail = blocks[-1]
            if tail.get("type") == "text" and tail["text"] != tail["text"].rstrip():
                raise _Invalid(
                    "messages: final assistant content cannot end with trailing whitespace"
                )
        if turns and turns[-1].role == role:
            turn = turns[-1]
        else:
            turn = _Turn(role=role, first_index=i)
            turns.append(turn)
        turn.blocks.extend((i, j, b) for j, b in enumerate(blocks))
    return turns


def _check_block(block: object, path: str, role: str, counter: _CacheControlCounter) -> None:
    if not isinstance(block, dict):
        raise _Invalid(f"{path}: Input should be a valid dictionary")
    kind = block.get("type")
    if kind is None:
        raise _Invalid(f"{path}.type: Field required")
    if kind not in _MESSAGE_BLOCK_TYPES:
        raise _Invalid(
            f"{path}.type: Input tag '{kind}' found using 'type' does not match any of the "
            f"expected tags: {', '.join(sorted(repr(t) for t in _MESSAGE_BLOCK_TYPES))}"
        )
    if role == "user" and kind in _ASSISTANT_ONLY:
        raise _Invalid(f"{path}: `{kind}` blocks can only be in `assistant` messages")
    if role == "assistant" and kind in _USER_ONLY:
        raise _Invalid(f"{path}: `{kind}` blocks can only be in `user` messages")
    if kind == "text":
        _check_text(block, path)
    elif kind == "tool_use":
        tool_id = block.get("id")
        if not isinstance(tool_id, str):
            raise _Invalid(f"{path}.id: Field required")
        if not TOOL_ID_RE.match(tool_id):
            raise _Invalid(f"{path}.id: String should match pattern '^[a-zA-Z0-9_-]+$'")
        if not isinstance(block.get("name"), str) or not block["name"]:
            raise _Invalid(f"{path}.name: Field required")
        if not isinstance(block.get("input"), dict):
            raise _Invalid(f"{path}.input: Input should be a valid dictionary")
    elif kind == "tool_result":
        if not isinstance(block.get("tool_use_id"), str):
            raise _Invalid(f"{path}.tool_use_id: Field required")
        if "is_error" in block and not isinstance(block["is_error"], bool):
            raise _Invalid(f"{path}.is_error: Input should be a valid boolean")
        inner = block.get("content")
        if isinstance(inner, list):
            for k, sub in enumerate(inner):
                sub_path = f"{path}.content.{k}"
                if not isinstance(sub, dict):
                    raise _Invalid(f"{sub_path}: Input should be a valid dictionary")
                if sub.get("type") not in _TOOL_RESULT_CONTENT_TYPES:
                    raise _Invalid(
                        f"{sub_path}.type: Input tag '{sub.get('type')}' found using 'type' "
                        "does not match any of the expected tags: "
                        f"{', '.join(sorted(repr(t) for t in _TOOL_RESULT_CONTENT_TYPES))}"
                    )
                if sub["type"] == "text":
                    _check_text(sub, sub_path)
                elif sub["type"] == "image":
                    _check_image(sub, sub_path)
                counter.visit(sub, sub_path)
        elif inner is not None and not isinstance(inner, str):
            raise _Invalid(f"{path}.content: Input should be a valid string or list")
    elif kind == "thinking":
        if not isinstance(block.get("thinking"), str):
            raise _Invalid(f"{path}.thinking: Field required")
        if not isinstance(block.get("signature"), str):
            raise _Invalid(f"{path}.signature: Field required")
        if not valid_signature(block["thinking"], block["signature"]):
            raise _Invalid(f"{path}: Invalid `signature` in `thinking` block")
    elif kind == "redacted_thinking":
        if not isinstance(block.get("data"), str):
            raise _Invalid(f"{path}.data: Field required")
        if not valid_redacted_data(block["data"]):
            raise _Invalid(f"{path}: Invalid `data` in `redacted_thinking` block")
    elif kind == "image":
        _check_image(block, path)
    elif kind == "document" and not isinstance(block.get("source"), dict):
        raise _Invalid(f"{path}.source: Field required")
    counter.visit(block, path)


_IMAGE_MEDIA_TYPES = ("image/jpeg", "image/png", "image/gif", "image/webp")


def _check_image(block: dict[str, Any], path: str) -> None:
    """An image block, at the top of a message or inside a tool_result, as the API checks it."""
    source = block.get("source")
    if not isinstance(source, dict):
        raise _Invalid(f"{path}.source: Field required")
    kind = source.get("type")
    if kind == "base64":
        if source.get("media_type") not in _IMAGE_MEDIA_TYPES:
            raise _Invalid(
                f"{path}.source.base64.media_type: Input should be 'image/jpeg', 'image/png', "
                "'image/gif' or 'image/webp'"
            )
        if not isinstance(source.get("data"), str):
            raise _Invalid(f"{path}.source.base64.data: Field required")
    elif kind == "url":
        if not isinstance(source.get("url"), str):
            raise _Invalid(f"{path}.source.url.url: Field required")
    elif kind != "file":
        raise _Invalid(
            f"{path}.source: Input tag '{kind}' found using 'type' does not match any of the "
            "expected tags: 'base64', 'file', 'url'"
        )


def _check_text(block: dict[str, Any], path: str) -> None:
    text = block.get("text")
    if not isinstance(text, str):
        raise _Invalid(f"{path}.text: Input should be a valid string")
    if not text:
        raise _Invalid(EMPTY_TEXT)
    if not text.strip():
        raise _Invalid(WHITESPACE_TEXT)


def _check_tool_pairing(turns: list[_Turn], *, has_tools: bool) -> None:
    seen_ids: set[str] = set()
    uses_tools = False
    for t, turn in enumerate(turns):
        if turn.role == "assistant":
            for i, j, block in turn.blocks:
                if block.get("type") != "tool_use":
                    continue
                uses_tools = True
                if block["id"] in seen_ids:
                    raise _Invalid(f"messages.{i}.content.{j}: `tool_use` ids must be unique")
                seen_ids.add(block["id"])
            continue
        # a user turn
        previous: list[tuple[int, str]] = []
        if t > 0:
            previous = [
                (i, b["id"]) for i, _, b in turns[t - 1].blocks if b.get("type") == "tool_use"
            ]
        expected = {tool_id for _, tool_id in previous}
        leading: set[str] = set()
        in_prefix = True
        for i, j, block in turn.blocks:
            if block.get("type") != "tool_result":
                in_prefix = False
                continue
            uses_tools = True
            tool_id = block["tool_use_id"]
            if tool_id not in expected:
                raise _Invalid(
                    f"messages.{i}.content.{j}: unexpected `tool_use_id` found in `tool_result` "
                    f"blocks: {tool_id}. Each `tool_result` block must have a corresponding "
                    "`tool_use` block in the previous message."
                )
            if tool_id in leading:
                raise _Invalid(
                    f"messages.{i}.content.{j}: each tool_use must have a single result. "
                    f"Found multiple `tool_result` blocks with id: {tool_id}"
                )
            if in_prefix:
                leading.add(tool_id)
        missing = [(i, tool_id) for i, tool_id in previous if tool_id not in leading]
        if missing:
            ids = ", ".join(tool_id for _, tool_id in missing)
            raise _Invalid(
                f"messages.{missing[0][0]}: `tool_use` ids were found without `tool_result` "
                f"blocks immediately after: {ids}. Each `tool_use` block must have a "
                "corresponding `tool_result` block in the next message."
            )
    if uses_tools and not has_tools:
        raise _Invalid(
            "Requests which include `tool_use` or `tool_result` blocks must define tools."
        )


def _check_tool_choice(choice: object, tools: list[str]) -> None:
    if choice is None:
        return
    if not isinstance(choice, dict):
        raise _Invalid("tool_choice: Input should be a valid dictionary")
    kind = choice.get("type")
    if kind not in ("auto", "any", "tool", "none"):
        raise _Invalid("tool_choice.type: Input should be 'auto', 'any', 'tool' or 'none'")
    if kind == "tool":
        name = choice.get("name")
        if not isinstance(name, str):
            raise _Invalid("tool_choice.tool.name: Field required")
        if name not in tools:
            raise _Invalid(f"tool_choice: tool '{name}' was not found in the `tools` list")
    if kind in ("any", "tool") and not tools:
        raise _Invalid("tool_choice: may only be specified while providing tools")


def _supports(model: Mapping[str, Any] | None, kind: str) -> bool:
    if model is None:
        return True
    try:
        return bool(model["capabilities"]["thinking"]["types"][kind]["supported"])
    except (KeyError, TypeError):
        return True


def _check_thinking_config(body: dict[str, Any], model: Mapping[str, Any] | None) -> str | None:
    """The kind of thinking the request turns on ("enabled", "adaptive"), or None."""
    config = body.get("thinking")
    if config is None:
        return None
    if not isinstance(config, dict):
        raise _Invalid("thinking: Input should be a valid dictionary")
    kind = config.get("type")
    if kind not in ("enabled", "adaptive", "disabled", "between_tools"):
        raise _Invalid(
            f"thinking: Input tag '{kind}' found using 'type' does not match any of the "
            "expected tags: 'adaptive', 'between_tools', 'disabled', 'enabled'"
        )
    if kind in ("disabled", "between_tools"):
        return None
    if not _supports(model, kind):
        hint = (
            ' Use "thinking.type.adaptive" and "output_config.effort" to control thinking behavior.'
            if kind == "enabled"
            else ' Use "thinking.type.enabled" with "budget_tokens".'
        )
        raise _Invalid(f'"thinking.type.{kind}" is not supported for this model.{hint}')
    if kind == "enabled":
        budget = config.get("budget_tokens")
        if budget is None:
            raise _Invalid("thinking.enabled.budget_tokens: Field required")
        if not _is_int(budget):
            raise _Invalid("thinking.enabled.budget_tokens: Input should be a valid integer")
        if budget < 1024:
            raise _Invalid(
                "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024"
            )
        if body["max_tokens"] <= budget:
            raise _Invalid(
                "`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our "
                f"documentation at {THINKING_DOCS}#max-tokens-and-context-window-size"
            )
    choice = body.get("tool_choice")
    if isinstance(choice, dict) and choice.get("type") in ("any", "tool"):
        raise _Invalid("Thinking may not be enabled when tool_choice forces tool use.")
    temperature = body.get("temperature")
    if temperature is not None and temperature != 1:
        raise _Invalid(
            "`temperature` may only be set to 1 when thinking is enabled or in "
            f"interleaved mode. Please consult our documentation at {THINKING_DOCS}"
        )
    return str(kind)


_THINKING_TYPES = ("thinking", "redacted_thinking")


def _check_thinking_blocks(turns: list[_Turn], thinking: str | None) -> None:
    if not turns:
        return
    last = turns[-1]
    if thinking is None:
        if last.role == "assistant":
            for i, j, block in last.blocks:
                if block.get("type") in _THINKING_TYPES:
                    raise _Invalid(
                        f"messages.{i}.content.{j}: When thinking is disabled, an `assistant` "
                        "message in the final position cannot contain `thinking`. To use "
                        "thinking blocks, enable `thinking` in your request."
                    )
        return
    if thinking != "enabled" or last.role != "user" or len(turns) < 2:
        return
    # In a tool-use loop the assistant turn whose tool results end the request must start
    # with its thinking block (the model's reasoning for those calls, sent back as it was).
    if not any(b.get("type") == "tool_result" for _, _, b in last.blocks):
        return
    previous = turns[-2]
    if not previous.blocks:
        return
    i, j, first = previous.blocks[0]
    if first.get("type") not in _THINKING_TYPES:
        raise _Invalid(
            f"messages.{i}.content.{j}.type: Expected `thinking` or `redacted_thinking`, but "
            f"found `{first.get('type')}`. When `thinking` is enabled, a final `assistant` "
            "message must start with a thinking block (preceeding the lastmost set of "
            "`tool_use` and `tool_result` blocks). We recommend you include thinking blocks "
            "from previous turns. To avoid this requirement, disable `thinking`. Please "
            f"consult our documentation at {THINKING_DOCS}"
        )
