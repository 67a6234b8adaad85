"""The streamed replies (`plansight.fakeapi.sse`): the real API's event order and chunking, as
raw bytes and through the SDK; a tool call cut by max_tokens; a refusal's stop details.
"""

from __future__ import annotations

import http.client
import json

import pytest

from fakeapi_support import MODEL, TOOLS, client_for, post, raw_events, sse_frames, text, user
from plansight.fakeapi import FakeMessagesAPI, reply, text_reply, tool_reply

from conftest import PATIENCE


async def test_sdk_stream_gives_text_and_tool_use() -> None:
    steps = [reply("I will read the file now, then fix it.", [("read_file", {"path": "a.py"})])]
    with FakeMessagesAPI(steps) as api:
        async with client_for(api) as client:
            text_events: list[str] = []
            json_events = 0
            async with client.messages.stream(
                model=MODEL, max_tokens=256, messages=[user("fix a.py")], tools=TOOLS
            ) as stream:
                async for event in stream:
                    if event.type == "text":
                        text_events.append(event.text)
                    elif event.type == "input_json":
                        json_events += 1
                message = await stream.get_final_message()
    assert len(text_events) > 1, "text should arrive in several deltas"
    assert "".join(text_events) == "I will read the file now, then fix it."
    assert json_events > 1, "tool input should arrive in several deltas"
    assert message.model == MODEL
    assert message.stop_reason == "tool_use"
    assert [b.type for b in message.content] == ["text", "tool_use"]
    block = message.content[1]
    assert block.type == "tool_use"
    assert block.id.startswith("toolu_") and block.id.endswith("_1")
    assert block.name == "read_file" and block.input == {"path": "a.py"}
    assert message.usage.input_tokens > 0 and message.usage.output_tokens > 0
    assert api.bodies[0]["stream"] is True
    assert api.bodies[0]["messages"] == [user("fix a.py")]


def test_raw_sse_framing_and_keep_alive() -> None:
    steps = [reply("one two three four five six seven", [("read_file", {"path": "a.py"})])]
    steps.append(text_reply("second"))
    with FakeMessagesAPI(steps) as api:
        conn = http.client.HTTPConnection("127.0.0.1", api.port, timeout=PATIENCE)
        body = {"model": MODEL, "max_tokens": 8, "messages": [user("x")], "stream": True}
        status, headers, data = post(api, {**body, "tools": TOOLS}, conn=conn)
        assert status == 200
        assert headers["content-type"].startswith("text/event-stream")
        assert headers["request-id"].startswith("req_")
        frames = sse_frames(data)
        names = [n for n, _ in frames]
        assert names[:3] == ["message_start", "content_block_start", "ping"]
        assert names[-2:] == ["message_delta", "message_stop"]
        start = frames[0][1]["message"]
        assert start["model"] == MODEL and start["role"] == "assistant"
        assert start["content"] == [] and start["usage"]["input_tokens"] > 0
        json_deltas = [
            p["delta"]["partial_json"]
            for n, p in frames
            if n == "content_block_delta" and p["delta"]["type"] == "input_json_delta"
        ]
        assert json_deltas[0] == "" and len(json_deltas) > 2
        assert json.loads("".join(json_deltas)) == {"path": "a.py"}
        text_deltas = [
            p["delta"]["text"]
            for n, p in frames
            if n == "content_block_delta" and p["delta"]["type"] == "text_delta"
        ]
        assert len(text_deltas) > 1 and "".join(text_deltas) == "one two three four five six seven"
        delta = frames[-2][1]
        assert delta["delta"] == {"stop_reason": "tool_use", "stop_sequence": None}
        assert delta["usage"]["output_tokens"] > 0
        # the same connection serves the next request (non-streaming: Content-Length JSON)
        status, headers, data = post(
            api, {"model": MODEL, "max_tokens": 8, "messages": [user("x")]}, conn=conn
        )
        conn.close()
        assert status == 200 and headers["content-type"] == "application/json"
        assert int(headers["content-length"]) == len(data)
        message = json.loads(data)
        assert message["type"] == "message" and message["content"] == [text("second")]
        assert message["stop_reason"] == "end_turn" and message["stop_sequence"] is None
    assert api.connections == 1
    assert [r.connection for r in api.requests] == [1, 1]


async def test_max_tokens_inside_a_tool_call_streams_cut_json() -> None:
    call = {"path": "src/some/long/module_name.py", "offset": 10, "limit": 200}
    step = tool_reply("read_file", call, text="Reading it.", stop_reason="max_tokens")
    with FakeMessagesAPI([step]) as api:
        async with client_for(api) as client:
            events = await raw_events(
                client, model=MODEL, max_tokens=64, messages=[user("read")], tools=TOOLS
            )
    kinds = [e.type for e in events]
    assert kinds[0] == "message_start" and kinds[-2:] == ["message_delta", "message_stop"]
    partial = "".join(
        e.delta.partial_json
        for e in events
        if e.type == "content_block_delta" and e.delta.type == "input_json_delta"
    )
    assert partial and json.dumps(call).startswith(partial)
    with pytest.raises(ValueError):
        json.loads(partial)
    stops = [e.index for e in events if e.type == "content_block_stop"]
    assert stops == [0, 1], "the cut block still ends with content_block_stop"
    delta = events[-2]
    assert delta.delta.stop_reason == "max_tokens"
    assert delta.usage.output_tokens == 64, "the whole max_tokens was spent"


async def test_refusal_carries_stop_details_on_message_delta() -> None:
    with FakeMessagesAPI([text_reply("I can't help with", stop_reason="refusal")]) as api:
        async with client_for(api) as client:
            events = await raw_events(client, model=MODEL, max_tokens=64, messages=[user("q")])
    delta = next(e for e in events if e.type == "message_delta")
    assert delta.delta.stop_reason == "refusal"
    assert delta.delta.stop_details is not None and delta.delta.stop_details.type == "refusal"
