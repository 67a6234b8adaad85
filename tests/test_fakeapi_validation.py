"""The fake's request validator (`plansight.fakeapi.validation`), pure: it accepts and refuses
what the real Messages API accepts and refuses, with the real messages.
"""

from __future__ import annotations

from typing import Any

import pytest

from fakeapi_support import (
    EPHEMERAL,
    MODEL,
    THINKING_ON,
    TOOLS,
    assistant,
    body_with,
    signed,
    text,
    tool_result,
    tool_use,
    user,
)
from plansight.fakeapi import model_info, validate_request

PNG = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw=="}}

VALID = [
    body_with([user("hi")]),
    # tool results first, then a reminder text; consecutive user messages are merged
    body_with(
        [
            user("fix"),
            assistant([text("Reading."), tool_use("toolu_1"), tool_use("toolu_2")]),
            user([tool_result("toolu_2"), tool_result("toolu_1")]),
            user([text("Reminder: update the plan.")]),
        ],
        tools=TOOLS,
    ),
    # prefill as the last assistant message; consecutive assistant messages
    body_with([user("hi"), assistant("Sure"), assistant("thing")]),
    body_with([user("hi"), assistant("")]),
    body_with(
        [user([text("x", cache_control={"type": "ephemeral", "ttl": "1h"})])],
        system=[text("sys", cache_control=EPHEMERAL)],
        tools=[{**TOOLS[0], "cache_control": EPHEMERAL}],
        cache_control=EPHEMERAL,
    ),
    body_with([user([text("plain")])], system="a string system"),
    # an image inside a tool result (an MCP tool's), as the real API takes it
    body_with(
        [
            user("look"),
            assistant([tool_use("toolu_1")]),
            user([{**tool_result("toolu_1"), "content": [text("a picture"), PNG]}]),
        ],
        tools=TOOLS,
    ),
]


@pytest.mark.parametrize("body", VALID)
def test_validator_accepts(body: dict[str, Any]) -> None:
    assert validate_request(body) is None


INVALID: list[tuple[Any, str]] = [
    ([], "The request body must be a JSON object"),
    ({"max_tokens": 8, "messages": [user("x")]}, "model: Field required"),
    ({"model": MODEL, "messages": [user("x")]}, "max_tokens: Field required"),
    (body_with([user("x")], max_tokens=-1), "max_tokens: Input should be greater than or equal"),
    (body_with([user("x")], max_tokens=True), "max_tokens: Input should be a valid integer"),
    (body_with([]), "messages: at least one message is required"),
    (body_with([{"role": "system", "content": "x"}]), "messages.0.role: Input should be"),
    (body_with([assistant("x")]), 'first message must use the "user" role'),
    (body_with([user("")]), "all messages must have non-empty content"),
    (body_with([user([])]), "all messages must have non-empty content"),
    (body_with([user([text("")])]), "text content blocks must be non-empty"),
    (body_with([user([{"type": "banana"}])]), "messages.0.content.0.type: Input tag 'banana'"),
    (body_with([user("x"), assistant("y ")]), "final assistant content cannot end with trailing"),
    (
        body_with([user("x"), assistant([tool_use("toolu_1")]), user("thanks")], tools=TOOLS),
        "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after",
    ),
    (
        body_with(
            [
                user("x"),
                assistant([tool_use("toolu_1"), tool_use("toolu_2")]),
                user([tool_result("toolu_1")]),
            ],
            tools=TOOLS,
        ),
        "immediately after: toolu_2.",
    ),
    (
        body_with(
            [user("x"), assistant([tool_use("toolu_1")]), user([tool_result("toolu_9")])],
            tools=TOOLS,
        ),
        "messages.2.content.0: unexpected `tool_use_id` found in `tool_result` blocks: toolu_9",
    ),
    (
        body_with(
            [
                user("x"),
                assistant([tool_use("toolu_1")]),
                user([tool_result("toolu_1")]),
                assistant([tool_use("toolu_1")]),
                user([tool_result("toolu_1")]),
            ],
            tools=TOOLS,
        ),
        "messages.3.content.0: `tool_use` ids must be unique",
    ),
    (
        body_with([user("x"), assistant([tool_use("toolu_1")]), user([tool_result("toolu_1")])]),
        "must define tools",
    ),
    (
        body_with([user([tool_result("toolu_1")])], tools=TOOLS),
        "unexpected `tool_use_id` found in `tool_result` blocks: toolu_1",
    ),
    (
        body_with([user([tool_use("toolu_1")])], tools=TOOLS),
        "messages.0.content.0: `tool_use` blocks can only be in `assistant` messages",
    ),
    (
        body_with([user("x")], tools=[{"name": "read file", "input_schema": {"type": "object"}}]),
        "tools.0.custom.name: String should match pattern",
    ),
    (
        body_with([user("x")], tools=[{"name": "a" * 65, "input_schema": {"type": "object"}}]),
        "tools.0.custom.name: String should match pattern",
    ),
    (body_with([user("x")], tools=TOOLS + TOOLS), "tools: Tool names must be unique."),
    (
        body_with([user("x")], tools=[{"name": "t", "input_schema": {"type": "array"}}]),
        "tools.0.custom.input_schema.type: Input should be 'object'",
    ),
    (body_with([user("x")], tools=[{"name": "t"}]), "tools.0.custom.input_schema: Field required"),
    (body_with([user("x")], system=[{"type": "image"}]), "system.0.type: Input should be 'text'"),
    (body_with([user("x")], system=[text("")]), "system: text content blocks must be non-empty"),
    (body_with([user("x")], system=42), "system: Input should be a valid string"),
    (
        body_with(
            [
                user("look"),
                assistant([tool_use("toolu_1")]),
                user(
                    [
                        {
                            **tool_result("toolu_1"),
                            "content": [
                                {**PNG, "source": {**PNG["source"], "media_type": "image/svg"}}
                            ],
                        }
                    ]
                ),
            ],
            tools=TOOLS,
        ),
        "messages.2.content.0.content.0.source.base64.media_type: Input should be",
    ),
    (
        body_with([user([text("x", cache_control={"type": "persistent"})])]),
        "messages.0.content.0.cache_control.type: Input should be 'ephemeral'",
    ),
    (
        body_with([user([text("x", cache_control={"type": "ephemeral", "ttl": "2h"})])]),
        "cache_control.ttl: Input should be '5m' or '1h'",
    ),
    (
        body_with(
            [user([text("a", cache_control=EPHEMERAL), text("b", cache_control=EPHEMERAL)])],
            tools=[{**TOOLS[0], "cache_control": EPHEMERAL}],
            system=[text("s", cache_control=EPHEMERAL)],
            cache_control=EPHEMERAL,
        ),
        "A maximum of 4 blocks with cache_control may be provided. Found 5.",
    ),
]


@pytest.mark.parametrize(("body", "message"), INVALID)
def test_validator_rejects(body: Any, message: str) -> None:
    problem = validate_request(body)
    assert problem is not None and message in problem, problem


def test_max_tokens_above_the_models_output_limit_is_refused() -> None:
    model = model_info(MODEL, max_tokens=8192)
    problem = validate_request(body_with([user("x")], max_tokens=16_000), model=model)
    assert problem == (
        f"max_tokens: 16000 > 8192, which is the maximum allowed number of output tokens for "
        f"{MODEL}"
    )
    assert validate_request(body_with([user("x")], max_tokens=8192), model=model) is None
    assert validate_request(body_with([user("x")], max_tokens=16_000)) is None  # unknown model


REAL_API_REFUSES: list[tuple[Any, str]] = [
    (body_with([user("  \n ")]), "text content blocks must contain non-whitespace text"),
    (body_with([user([text("\n\n")])]), "text content blocks must contain non-whitespace text"),
    (
        body_with([user("q"), assistant([text("\n\n")]), user("go on")]),
        "text content blocks must contain non-whitespace text",
    ),
    (
        body_with(
            [
                user("x"),
                assistant([tool_use("toolu_1")]),
                user([tool_result("toolu_1"), text(" ")]),
            ],
            tools=TOOLS,
        ),
        "text content blocks must contain non-whitespace text",
    ),
    (body_with([user("x")], system=[text("  ")]), "system: text content blocks must contain"),
    (
        body_with([user("x")], thinking={"type": "enabled", "budget_tokens": 512}, max_tokens=4096),
        "budget_tokens: Input should be greater than or equal to 1024",
    ),
    (
        body_with(
            [user("x")], thinking={"type": "enabled", "budget_tokens": 4096}, max_tokens=4096
        ),
        "`max_tokens` must be greater than `thinking.budget_tokens`",
    ),
    (
        body_with(
            [user("x")],
            thinking=THINKING_ON,
            max_tokens=4096,
            tools=TOOLS,
            tool_choice={"type": "any"},
        ),
        "Thinking may not be enabled when tool_choice forces tool use",
    ),
    (
        body_with([user("x")], thinking=THINKING_ON, max_tokens=4096, temperature=0.2),
        "`temperature` may only be set to 1 when thinking is enabled",
    ),
    (
        body_with([user("x"), assistant([signed("hm"), text("so")])]),
        "When thinking is disabled, an `assistant` message in the final position cannot",
    ),
    (
        body_with(
            [
                user("x"),
                assistant(
                    [{"type": "thinking", "thinking": "hm", "signature": "forged"}, text("so")]
                ),
                user("y"),
            ],
            thinking=THINKING_ON,
            max_tokens=4096,
        ),
        "messages.1.content.0: Invalid `signature` in `thinking` block",
    ),
    (body_with([user("x")], thinking={"type": "sometimes"}), "thinking: Input tag 'sometimes'"),
]


@pytest.mark.parametrize(("body", "message"), REAL_API_REFUSES)
def test_refuses_what_the_real_api_refuses(body: Any, message: str) -> None:
    problem = validate_request(body)
    assert problem is not None and message in problem, problem


REAL_API_ACCEPTS = [
    # tool_choice none keeps the tools defined (the summary request's shape)
    body_with(
        [
            user("x"),
            assistant([tool_use("toolu_1")]),
            user([tool_result("toolu_1"), text("Summarize.")]),
        ],
        tools=TOOLS,
        tool_choice={"type": "none"},
    ),
    # thinking blocks of earlier turns may be dropped; only the last tool loop needs its own
    body_with(
        [
            user("x"),
            assistant([text("a")]),
            user("y"),
            assistant([signed("t"), tool_use("toolu_1")]),
            user([tool_result("toolu_1")]),
        ],
        tools=TOOLS,
        thinking=THINKING_ON,
        max_tokens=4096,
    ),
    # an empty tool result is fine (only text blocks must have words)
    body_with(
        [user("x"), assistant([tool_use("toolu_1")]), user([tool_result("toolu_1", "")])],
        tools=TOOLS,
    ),
    body_with([user("x")], thinking={"type": "adaptive"}),
    body_with([user("x")], thinking={"type": "disabled"}),
]


@pytest.mark.parametrize("body", REAL_API_ACCEPTS)
def test_accepts_what_the_real_api_accepts(body: dict[str, Any]) -> None:
    assert validate_request(body) is None
