"""The metering proxy: the real SDK through it to the fake Messages API; what it passes on and
what it records (script steps a fake can serve again, usage, model facts)."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import anthropic
import httpx2
import pytest

from plansight.engine.events import Usage
from plansight.eval.meter import MessageAssembler, MeteringProxy
from plansight.eval.plancost import GATE_OPENING
from plansight.fakeapi import (
    Drop,
    FakeMessagesAPI,
    HttpError,
    Reply,
    Script,
    StreamError,
    model_info,
)

MODEL = "claude-sonnet-5-5"
TOOLS: list[Any] = [
    {
        "name": "read_file",
        "description": "Read a file",
        "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}},
    }
]
REPLY = Reply(
    content=[
        {"type": "text", "text": "Let me read both files, then decide."},
        {"type": "tool_use", "id": "toolu_a", "name": "read_file", "input": {"path": "a.py"}},
        {"type": "tool_use", "id": "toolu_b", "name": "read_file", "input": {"path": "ü/b.py"}},
    ],
    usage={"input_tokens": 12, "output_tokens": 34, "cache_read_input_tokens": 5},
)


async def start(
    steps: list[Any], **fake: Any
) -> tuple[FakeMessagesAPI, MeteringProxy, list[Usage]]:
    api = FakeMessagesAPI(Script(steps), **fake)
    await api.start_async()
    seen: list[Usage] = []
    proxy = await MeteringProxy(api.base_url, on_usage=seen.append).start()
    return api, proxy, seen


@pytest.fixture
async def stack() -> AsyncIterator[list[Any]]:
    made: list[Any] = []
    yield made
    for api, proxy in made:
        await proxy.stop()
        await api.stop_async()


async def wait_until(what: str, check: Callable[[], bool]) -> None:
    deadline = time.monotonic() + 30
    while not check():
        if time.monotonic() > deadline:
            pytest.fail(f"waited 30 s for {what}")
        await asyncio.sleep(0.01)


def client(proxy: MeteringProxy, retries: int = 0) -> anthropic.AsyncAnthropic:
    return anthropic.AsyncAnthropic(base_url=proxy.base_url, api_key="k", max_retries=retries)


async def stream(sdk: anthropic.AsyncAnthropic) -> tuple[list[str], Any]:
    texts: list[str] = []
    async with sdk.messages.stream(
        model=MODEL,
        max_tokens=100,
        tools=TOOLS,
        messages=[{"role": "user", "content": "look"}],
    ) as events:
        async for text in events.text_stream:
            texts.append(text)
        return texts, await events.get_final_message()


async def test_a_streamed_reply_passes_through_and_is_recorded_as_served(stack: list[Any]) -> None:
    api, proxy, seen = await start([REPLY])
    stack.append((api, proxy))
    texts, message = await stream(client(proxy))
    assert "".join(texts) == "Let me read both files, then decide."
    assert [b.type for b in message.content] == ["text", "tool_use", "tool_use"]
    assert message.content[2].input == {"path": "ü/b.py"}
    step = proxy.steps[0]
    assert step["content"] == [dict(b) for b in REPLY.content]
    assert step["stop_reason"] == "tool_use"
    assert step["usage"]["output_tokens"] == 34 and step["usage"]["input_tokens"] == 12
    assert seen == [Usage(12, 34, 5, 0)] and proxy.usage == Usage(12, 34, 5, 0)
    assert proxy.model == MODEL
    # What was recorded is a script the fake serves again, to the same final message.
    again, proxy2, _ = await start(Script.from_dict(proxy.recording()).steps)
    stack.append((again, proxy2))
    _, replayed = await stream(client(proxy2))
    assert replayed.model_dump()["content"] == message.model_dump()["content"]
    assert replayed.usage.output_tokens == 34


async def test_a_held_proxy_forwards_no_more_requests_for_messages(stack: list[Any]) -> None:
    api, proxy, seen = await start([REPLY, REPLY])
    stack.append((api, proxy))
    sdk = client(proxy)
    # The limit is reached by the first answer, before its end reaches the agent: what the
    # agent asks next (on any connection) is held.
    proxy.on_usage = lambda usage: (seen.append(usage), proxy.hold())
    await stream(sdk)
    assert proxy.held and len(seen) == 1
    waiting = asyncio.ensure_future(stream(sdk))
    await wait_until("the request held", lambda: proxy.requests_held == 1)
    assert not waiting.done(), "the held request was answered"
    waiting.cancel()  # what the run's cancel does to the agent's request
    with contextlib.suppress(asyncio.CancelledError):
        await waiting
    assert len(api.requests) == 1 and len(proxy.steps) == 1 and proxy.usage == Usage(12, 34, 5, 0)


async def test_a_retried_overload_is_recorded_as_a_fault_then_the_reply(stack: list[Any]) -> None:
    overloaded = HttpError(529, message="Overloaded", headers={"retry-after": "0"})
    api, proxy, seen = await start([overloaded, Reply(content=[{"type": "text", "text": "hi"}])])
    stack.append((api, proxy))
    _, message = await stream(client(proxy, retries=2))
    assert message.content[0].text == "hi"
    assert [s.get("fault") for s in proxy.steps] == ["http", None]
    fault = proxy.steps[0]
    assert (fault["status"], fault["error_type"], fault["message"]) == (
        529,
        "overloaded_error",
        "Overloaded",
    )
    assert fault["headers"] == {"retry-after": "0"}
    assert len(seen) == 1


async def test_a_stream_error_and_a_drop_are_recorded_as_such(stack: list[Any]) -> None:
    blocks = [{"type": "text", "text": "Reading."}, {"type": "text", "text": "More."}]
    api, proxy, _ = await start(
        [StreamError(after_blocks=1, content=blocks), Drop(after_blocks=1, content=blocks)]
    )
    stack.append((api, proxy))
    with pytest.raises(anthropic.APIStatusError):
        await stream(client(proxy))
    with pytest.raises((anthropic.APIConnectionError, httpx2.RemoteProtocolError)):
        await stream(client(proxy))  # the SDK sees the drop as it would have without us
    error, drop = proxy.steps
    assert error["fault"] == "stream_error" and error["after_blocks"] == 1
    assert error["content"] == [blocks[0]] and error["error_type"] == "overloaded_error"
    assert drop == {"fault": "drop", "after_blocks": 1, "content": [blocks[0]]}
    Script.from_dict(proxy.recording())  # both are valid script steps


async def test_model_facts_are_kept_for_the_replay(stack: list[Any]) -> None:
    info = model_info(MODEL, max_input_tokens=123_456)
    api, proxy, _ = await start([], models=[info])
    stack.append((api, proxy))
    fetched = await client(proxy).models.retrieve(MODEL)
    assert fetched.max_input_tokens == 123_456
    assert proxy.recording()["models"] == [info]


def test_the_assembler_takes_events_split_anywhere() -> None:
    frames = (
        b'event: message_start\ndata: {"type":"message_start","message":{"usage":'
        b'{"input_tokens":3,"output_tokens":1}}}\n\n'
        b'event: content_block_start\ndata: {"type":"content_block_start","index":0,'
        b'"content_block":{"type":"tool_use","id":"t1","name":"todo","input":{}}}\n\n'
        b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,'
        b'"delta":{"type":"input_json_delta","partial_json":"{\\"items\\": ["}}\n\n'
        b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,'
        b'"delta":{"type":"input_json_delta","partial_json":"]}"}}\n\n'
        b'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n'
        b'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":'
        b'"tool_use"},"usage":{"output_tokens":9}}\n\n'
        b'event: message_stop\ndata: {"type":"message_stop"}\n\n'
    )
    assembler = MessageAssembler()
    for i in range(0, len(frames), 7):
        assembler.feed(frames[i : i + 7])
    assert assembler.step() == {
        "content": [{"type": "tool_use", "id": "t1", "name": "todo", "input": {"items": []}}],
        "usage": {"input_tokens": 3, "output_tokens": 9},
        "stop_reason": "tool_use",
    }


async def test_the_todo_calls_tokens_and_the_gate_are_counted_as_the_api_saw_them(
    stack: list[Any],
) -> None:
    plan_input = {"items": [{"id": "1", "text": "Rename it", "status": "in_progress"}]}
    calls = Reply(
        content=[
            {"type": "text", "text": "My plan."},
            {"type": "tool_use", "id": "toolu_t", "name": "todo", "input": plan_input},
            {"type": "tool_use", "id": "toolu_r", "name": "read_file", "input": {"path": "a"}},
        ],
        usage={"output_tokens": 120},
    )
    answer = Reply(
        content=[{"type": "text", "text": "Done."}],
        usage={"input_tokens": 40, "cache_read_input_tokens": 960, "output_tokens": 3},
    )
    overloaded = HttpError(529, message="Overloaded", headers={"retry-after": "0"})
    api, proxy, _ = await start([calls, overloaded, answer])
    stack.append((api, proxy))
    sdk = client(proxy, retries=2)
    tools = [*TOOLS, {**TOOLS[0], "name": "todo"}]
    first = await sdk.messages.create(
        model=MODEL, max_tokens=100, tools=tools, messages=[{"role": "user", "content": "go"}]
    )
    result = "Plan: 1 item, #1 in progress."
    await sdk.messages.create(
        model=MODEL,
        max_tokens=100,
        tools=tools,
        messages=[
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": [b.model_dump() for b in first.content]},
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_t", "content": result},
                    {"type": "tool_result", "tool_use_id": "toolu_r", "content": "x = 1\n"},
                    {"type": "text", "text": GATE_OPENING + "\n#1: Rename it (in_progress)"},
                ],
            },
        ],
    )
    # Output: the answer's 120 tokens by the characters of its blocks (the todo input's JSON).
    todo_chars = len('{"items":[{"id":"1","text":"Rename it","status":"in_progress"}]}')
    mine = todo_chars / (len("My plan.") + todo_chars + len('{"path":"a"}'))
    assert proxy.plan.output_tokens == pytest.approx(120 * mine)
    # Input: the result's share of the request that carried it (sent twice: once counted),
    # of that request's 1000 input tokens.
    sent = int(api.message_requests[-1].headers["content-length"])
    assert len(api.message_requests) == 3
    assert proxy.plan.input_tokens == pytest.approx(1000 * len(result) / sent)
    assert proxy.plan.gate_refusals == 1  # the retried request is the same gate
