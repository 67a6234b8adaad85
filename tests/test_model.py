"""Model access (model.py) through the real `anthropic` SDK, over HTTP, against the fake API.

What is checked is what the model received (the request as the API saw it) and what the agent
got back: streamed text and tool input as they came, the whole response, the usage, and, when
the API fails, an error that keeps the API's own words. (Stop reasons and thinking, which the
loop acts on, are tested through the loop in test_loop_stop_reasons.py.)
"""

from __future__ import annotations

import copy
import json
import socket
from collections.abc import AsyncIterator
from typing import Any

import pytest

from plansight.engine.model import ModelClient, ModelError, ModelSettings, ModelTurn, newest_sonnet
from plansight.fakeapi import (
    Drop,
    FakeMessagesAPI,
    HttpError,
    model_info,
    reply,
    text_reply,
    tool_reply,
)

from conftest import strip_cache_control

MODEL = "claude-sonnet-5-5"
FAST = {"retry-after-ms": "1"}  # the SDK honours it instead of its backoff
SYSTEM = "You are Plansight, a careful coding agent. " * 200  # above the cacheable minimum
TOOLS = [
    {
        "name": "read_file",
        "description": "Read a file of the workspace.",
        "input_schema": {
            "type": "object",
            "properties": {"path": {"type": "string"}},
            "required": ["path"],
        },
        "cache_control": {"type": "ephemeral"},
    }
]


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}]}


class Heard:
    """What the streaming callbacks received, in order."""

    def __init__(self) -> None:
        self.text: list[str] = []
        self.tool_input: list[tuple[str, str, str]] = []

    def on_text(self, chunk: str) -> None:
        self.text.append(chunk)

    def on_tool_input(self, tool_id: str, name: str, partial: str) -> None:
        self.tool_input.append((tool_id, name, partial))


@pytest.fixture
async def client(fake_api: FakeMessagesAPI) -> AsyncIterator[ModelClient]:
    model = ModelClient(ModelSettings(model=MODEL, api_key="test-key", base_url=fake_api.base_url))
    yield model
    await model.close()


async def turn(
    client: ModelClient, messages: list[dict[str, Any]], heard: Heard | None = None
) -> ModelTurn:
    heard = heard or Heard()
    return await client.stream_turn(
        system=SYSTEM,
        tools=TOOLS,
        messages=messages,
        on_text=heard.on_text,
        on_tool_input=heard.on_tool_input,
    )


async def test_a_text_answer_streams_as_it_comes_and_ends_whole(
    client: ModelClient, fake_api: FakeMessagesAPI
) -> None:
    answer = "Hello! " * 30 + "That is all."
    fake_api.push(text_reply(answer, chunk_delay=0.001))
    heard = Heard()
    result = await turn(client, [user("Say hello")], heard)
    assert result.text == answer and result.stop_reason == "end_turn"
    assert len(heard.text) > 1 and "".join(heard.text) == answer  # in pieces, all of it
    assert result.tool_uses == [] and heard.tool_input == []
    assert result.usage.output_tokens > 0
    assert result.usage.input_tokens + result.usage.cache_creation_input_tokens > 0


async def test_a_tool_call_comes_back_with_its_input_and_streams_its_json(
    client: ModelClient, fake_api: FakeMessagesAPI
) -> None:
    fake_api.push(reply("Let me look.", [("read_file", {"path": "src/ünïcode.py"})]))
    heard = Heard()
    result = await turn(client, [user("Read it")], heard)
    assert result.stop_reason == "tool_use"
    [use] = result.tool_uses
    assert use["name"] == "read_file" and use["input"] == {"path": "src/ünïcode.py"}
    assert use["id"].startswith("toolu_")
    assert [b["type"] for b in result.content] == ["text", "tool_use"]
    assert {(i, n) for i, n, _ in heard.tool_input} == {(use["id"], "read_file")}
    assert json.loads("".join(p for _, _, p in heard.tool_input)) == use["input"]
    assert "".join(heard.text) == "Let me look."


async def test_the_request_caches_tools_system_and_the_newest_prefix(
    client: ModelClient, fake_api: FakeMessagesAPI
) -> None:
    messages = [
        user("Read hello.py"),
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {}}],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "print('hi')"},
                {"type": "text", "text": "<reminder>Update your todos.</reminder>"},
            ],
        },
    ]
    stored = copy.deepcopy(messages)
    fake_api.push(text_reply("ok"), text_reply("ok again"))
    first = await turn(client, messages)
    assert first.usage.cache_creation_input_tokens > 0
    body = fake_api.bodies[0]
    assert body["model"] == MODEL and body["stream"] is True and body["max_tokens"] > 0
    assert body["system"] == [
        {"type": "text", "text": SYSTEM, "cache_control": {"type": "ephemeral"}}
    ]
    assert body["tools"] == TOOLS
    # Breakpoints on the last block of the newest message and of the user message before it.
    marked = [
        (i, j)
        for i, m in enumerate(body["messages"])
        for j, b in enumerate(m["content"])
        if "cache_control" in b
    ]
    assert marked == [(0, 0), (2, 1)]
    assert strip_cache_control(body["messages"]) == stored
    assert messages == stored  # the conversation itself is never marked
    # The next round reads this one's prefix from the cache.
    messages += [{"role": "assistant", "content": [{"type": "text", "text": "ok"}]}, user("Go on")]
    second = await turn(client, messages)
    assert second.usage.cache_read_input_tokens > 0


async def test_blank_text_blocks_never_reach_the_api(
    client: ModelClient, fake_api: FakeMessagesAPI
) -> None:
    """A stored conversation may hold an answer of blank lines (an older version, a model's
    "\\n\\n"): the API refuses such blocks, so they are left out of the request."""
    messages = [
        user("First"),
        {"role": "assistant", "content": [{"type": "text", "text": "\n\n"}]},
        {
            "role": "user",
            "content": [{"type": "text", "text": "  "}, {"type": "text", "text": "Second"}],
        },
    ]
    fake_api.push(text_reply("fine"))
    result = await turn(client, messages)
    assert result.text == "fine"  # the fake, like the API, would have answered 400
    sent = strip_cache_control(fake_api.bodies[0]["messages"])
    texts = [b["text"] for m in sent for b in m["content"] if b["type"] == "text"]
    assert texts == ["First", "Second"]


async def test_without_a_model_the_newest_sonnet_the_sdk_names_is_asked(
    fake_api: FakeMessagesAPI,
) -> None:
    client = ModelClient(ModelSettings(api_key="test-key", base_url=fake_api.base_url))
    try:
        fake_api.push(text_reply("hi"))
        await turn(client, [user("hi")])
    finally:
        await client.close()
    name = fake_api.bodies[0]["model"]
    assert name == newest_sonnet() and name.startswith("claude-sonnet-")


async def test_max_tokens_stays_within_the_models_output_limit() -> None:
    """The real API refuses a `max_tokens` above the model's output limit (`max_tokens: 8192 >
    4096, which is the maximum allowed number of output tokens for ...`): where the Models API
    gives the limit, requests keep to it."""
    with FakeMessagesAPI([text_reply("hi")], models=[model_info(MODEL, max_tokens=4096)]) as api:
        client = ModelClient(ModelSettings(model=MODEL, api_key="test-key", base_url=api.base_url))
        try:
            assert (await turn(client, [user("hi")])).text == "hi"
        finally:
            await client.close()
    assert api.bodies[-1]["max_tokens"] == 4096


async def test_rate_limits_and_overload_are_retried_by_the_sdk(
    client: ModelClient, fake_api: FakeMessagesAPI
) -> None:
    fake_api.push(HttpError(429, headers=FAST), HttpError(529, headers=FAST), text_reply("made it"))
    result = await turn(client, [user("hi")])
    assert result.text == "made it"
    assert [r.status for r in fake_api.message_requests] == [429, 529, 200]


async def test_an_api_error_keeps_the_apis_own_words(
    client: ModelClient, fake_api: FakeMessagesAPI
) -> None:
    fake_api.push(*[HttpError(529, message="Overloaded right now", headers=FAST)] * 3)
    with pytest.raises(ModelError) as overloaded:
        await turn(client, [user("hi")])
    assert str(overloaded.value) == "overloaded_error: Overloaded right now (HTTP 529)"
    assert len(fake_api.message_requests) == 3  # two retries, then it gave up
    fake_api.push(HttpError(401, message="invalid x-api-key"))
    with pytest.raises(ModelError) as refused:
        await turn(client, [user("hi")])
    assert str(refused.value) == "authentication_error: invalid x-api-key (HTTP 401)"
    assert len(fake_api.message_requests) == 4  # not retried


async def test_a_prompt_longer_than_the_window_says_how_long(
    fake_api: FakeMessagesAPI,
) -> None:
    api = FakeMessagesAPI(context_window=2000)
    api.start()
    client = ModelClient(ModelSettings(model=MODEL, api_key="k", base_url=api.base_url))
    try:
        api.push(text_reply("never"))
        with pytest.raises(ModelError) as too_long:
            await turn(client, [user("word " * 5000)])
    finally:
        await client.close()
        api.stop()
    error = too_long.value
    assert error.prompt_too_long and error.prompt_limit == 2000
    assert error.prompt_tokens is not None and error.prompt_tokens > 2000
    assert "prompt is too long" in str(error)


async def test_a_request_that_the_api_refuses_is_an_error_not_a_crash(
    client: ModelClient, fake_api: FakeMessagesAPI
) -> None:
    # Two user messages in a row break no rule; a tool_result without its tool_use does.
    orphan = {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": "toolu_nope", "content": "x"}],
    }
    fake_api.push(text_reply("never"))
    with pytest.raises(ModelError) as bad:
        await turn(client, [orphan])
    assert "invalid_request_error" in str(bad.value) and "(HTTP 400)" in str(bad.value)


async def test_without_an_api_key_nothing_is_sent_and_the_error_says_what_to_set(
    fake_api: FakeMessagesAPI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    client = ModelClient(ModelSettings(model=MODEL, base_url=fake_api.base_url))
    try:
        with pytest.raises(ModelError, match="ANTHROPIC_API_KEY"):
            await turn(client, [user("hi")])
    finally:
        await client.close()
    assert fake_api.requests == []


async def test_an_unreachable_api_is_an_error_that_says_so() -> None:
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    client = ModelClient(
        ModelSettings(model=MODEL, api_key="k", base_url=f"http://127.0.0.1:{port}", max_retries=0)
    )
    try:
        with pytest.raises(ModelError, match="Could not reach the model API"):
            await turn(client, [user("hi")])
    finally:
        await client.close()


@pytest.mark.parametrize("partial", [False, True], ids=["between blocks", "inside a tool call"])
async def test_a_connection_dropped_mid_stream_is_an_error_not_a_crash(
    client: ModelClient, fake_api: FakeMessagesAPI, partial: bool
) -> None:
    content = [
        {"type": "text", "text": "Reading the file now. "},
        {"type": "tool_use", "name": "read_file", "input": {"path": "hello.py"}},
    ]
    fake_api.push(Drop(after_blocks=1, partial=partial, content=content))
    heard = Heard()
    with pytest.raises(ModelError):
        await turn(client, [user("hi")], heard)
    assert "".join(heard.text) == "Reading the file now. "  # what was shown stays shown


async def test_a_client_serves_many_turns_on_one_connection(
    client: ModelClient, fake_api: FakeMessagesAPI
) -> None:
    fake_api.push(*(tool_reply("read_file", {"path": f"f{i}.py"}) for i in range(5)))
    for i in range(5):
        result = await turn(client, [user(f"turn {i}")])
        assert result.tool_uses[0]["input"] == {"path": f"f{i}.py"}
    assert fake_api.connections == 1  # kept alive: no new connection per round
