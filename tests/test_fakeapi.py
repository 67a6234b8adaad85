"""The fake Messages API, driven through the real anthropic SDK and raw HTTP only."""

from __future__ import annotations

import http.client
import importlib.util
import json
import logging
import os
import re
import select
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import httpx2
import pytest

ROOT = Path(__file__).resolve().parents[1]
if importlib.util.find_spec("plansight") is None:  # not installed: use the source tree
    sys.path.insert(0, str(ROOT / "server"))

from plansight.fakeapi import (  # noqa: E402
    Drop,
    FakeMessagesAPI,
    Hang,
    HttpError,
    PromptCache,
    Reply,
    Script,
    ScriptError,
    ScriptStep,
    StreamError,
    estimate_tokens,
    model_info,
    reply,
    sign_thinking,
    text_reply,
    tool_reply,
    validate_request,
)

from conftest import PATIENCE, wait_until  # noqa: E402

MODEL = "claude-fake-1"
TOOLS: list[Any] = [
    {
        "name": "read_file",
        "description": "Read a file",
        "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}},
    }
]
LONG_SYSTEM = "You are Plansight, a careful coding agent. " * 120  # ~1300 tokens


def user(content: Any) -> Any:
    return {"role": "user", "content": content}


def assistant(content: Any) -> Any:
    return {"role": "assistant", "content": content}


def tool_use(tool_id: str, name: str = "read_file") -> dict[str, Any]:
    return {"type": "tool_use", "id": tool_id, "name": name, "input": {"path": "a.py"}}


def tool_result(tool_id: str, content: str = "print(1)") -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": tool_id, "content": content}


def text(value: str, **extra: Any) -> Any:
    return {"type": "text", "text": value, **extra}


EPHEMERAL = {"type": "ephemeral"}


@pytest.fixture
def fake() -> Iterator[FakeMessagesAPI]:
    api = FakeMessagesAPI()
    api.start()
    yield api
    api.stop()


def client_for(api: FakeMessagesAPI, **kwargs: Any) -> anthropic.AsyncAnthropic:
    options: dict[str, Any] = {"api_key": "test-key", "timeout": 5, "max_retries": 0}
    options.update(kwargs)
    return anthropic.AsyncAnthropic(base_url=api.base_url, **options)


def post(
    api: FakeMessagesAPI,
    body: Any,
    *,
    path: str = "/v1/messages",
    headers: dict[str, str] | None = None,
    conn: http.client.HTTPConnection | None = None,
) -> tuple[int, dict[str, str], bytes]:
    own = conn is None
    conn = conn or http.client.HTTPConnection("127.0.0.1", api.port, timeout=PATIENCE)
    sent = {"content-type": "application/json", "x-api-key": "test-key"}
    sent.update(headers or {})
    conn.request("POST", path, body=json.dumps(body), headers=sent)
    resp = conn.getresponse()
    data = resp.read()
    result = resp.status, {k.lower(): v for k, v in resp.getheaders()}, data
    if own:
        conn.close()
    return result


def sse_frames(data: bytes) -> list[tuple[str, dict[str, Any]]]:
    frames: list[tuple[str, dict[str, Any]]] = []
    for raw in data.decode().split("\n\n"):
        if not raw:
            continue
        lines = raw.split("\n")
        assert len(lines) == 2 and lines[0].startswith("event: "), raw
        assert lines[1].startswith("data: "), raw
        payload = json.loads(lines[1][len("data: ") :])
        assert payload["type"] == lines[0][len("event: ") :]
        frames.append((payload["type"], payload))
    return frames


# ------------------------------------------------------------------ SDK: replies


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


async def test_sdk_create_and_second_turn_with_tool_result() -> None:
    steps = [tool_reply("read_file", {"path": "a.py"}, id="toolu_abc"), text_reply("All done.")]
    with FakeMessagesAPI(steps) as api:
        async with client_for(api) as client:
            first = await client.messages.create(
                model=MODEL, max_tokens=256, messages=[user("fix a.py")], tools=TOOLS
            )
            assert first.stop_reason == "tool_use"
            assert first.content[0].type == "tool_use" and first.content[0].id == "toolu_abc"
            history = [
                user("fix a.py"),
                assistant([b.model_dump(exclude_none=True) for b in first.content]),
                user([tool_result("toolu_abc"), text("Reminder: keep the plan updated.")]),
            ]
            second = await client.messages.create(
                model=MODEL, max_tokens=256, messages=history, tools=TOOLS
            )
    assert second.stop_reason == "end_turn"
    assert second.content[0].type == "text" and second.content[0].text == "All done."
    assert len(api.requests) == 2 and all(r.status == 200 for r in api.requests)
    assert api.bodies[1]["messages"][2]["content"][0]["tool_use_id"] == "toolu_abc"
    assert api.connections == 1, "the SDK's pool should reuse one keep-alive connection"


async def test_callable_step_sees_the_request() -> None:
    def echo(body: dict[str, Any]) -> Any:
        return text_reply(f"you said: {body['messages'][-1]['content']}")

    with FakeMessagesAPI([echo]) as api:
        async with client_for(api) as client:
            msg = await client.messages.create(
                model=MODEL, max_tokens=64, messages=[user("banana")]
            )
    assert msg.content[0].type == "text" and msg.content[0].text == "you said: banana"


async def test_async_start_on_the_current_loop() -> None:
    async with FakeMessagesAPI([text_reply("hi")]) as api:
        async with client_for(api) as client:
            msg = await client.messages.create(model=MODEL, max_tokens=8, messages=[user("x")])
    assert msg.content[0].type == "text" and msg.content[0].text == "hi"
    assert not api.running


# ------------------------------------------------------------------ SDK: faults


async def test_429_is_retried_by_the_sdk() -> None:
    steps: list[ScriptStep] = [HttpError(429, headers={"retry-after": "0"}), text_reply("after")]
    with FakeMessagesAPI(steps) as api:
        async with client_for(api, max_retries=2) as client:
            msg = await client.messages.create(model=MODEL, max_tokens=8, messages=[user("x")])
    assert msg.content[0].type == "text" and msg.content[0].text == "after"
    reqs = api.requests
    assert [r.status for r in reqs] == [429, 200]
    assert reqs[1].headers["x-stainless-retry-count"] == "1"


async def test_529_three_times_exhausts_retries() -> None:
    overloaded = HttpError(529, headers={"retry-after-ms": "1"})
    steps: list[ScriptStep] = [overloaded, overloaded, overloaded, text_reply("unused")]
    with FakeMessagesAPI(steps) as api:
        async with client_for(api, max_retries=2) as client:
            with pytest.raises(anthropic.APIStatusError) as caught:
                async with client.messages.stream(
                    model=MODEL, max_tokens=8, messages=[user("x")]
                ) as stream:
                    await stream.get_final_message()
    assert isinstance(caught.value, anthropic.OverloadedError)
    assert caught.value.status_code == 529
    assert caught.value.body == {
        "type": "error",
        "error": {"type": "overloaded_error", "message": "Overloaded"},
        "request_id": api.requests[-1].request_id,
    }
    assert caught.value.response.headers["request-id"] == api.requests[-1].request_id
    assert len(api.requests) == 3 and api.steps_remaining == 1


async def test_stream_error_mid_stream_raises_and_is_not_retried() -> None:
    step = StreamError(after_blocks=1, message="Overloaded mid-stream")
    with FakeMessagesAPI([step]) as api:
        async with client_for(api, max_retries=2) as client:
            seen: list[str] = []
            with pytest.raises(anthropic.APIStatusError, match="Overloaded mid-stream"):
                async with client.messages.stream(
                    model=MODEL, max_tokens=8, messages=[user("x")]
                ) as stream:
                    async for event in stream:
                        seen.append(event.type)
    assert "text" in seen and "content_block_stop" in seen
    assert len(api.requests) == 1


async def test_drop_mid_stream_raises() -> None:
    with FakeMessagesAPI([Drop(after_blocks=1, partial=True)]) as api:
        async with client_for(api) as client:
            with pytest.raises((httpx2.RemoteProtocolError, anthropic.APIConnectionError)):
                async with client.messages.stream(
                    model=MODEL, max_tokens=8, messages=[user("x")]
                ) as stream:
                    await stream.get_final_message()
    assert api.requests[0].outcome == "drop"


async def test_hang_times_out_and_stop_does_not_wait_for_it() -> None:
    never = 10 * PATIENCE
    with FakeMessagesAPI([Hang(never)]) as api:
        async with client_for(api, timeout=0.3) as client:
            with pytest.raises(anthropic.APITimeoutError):
                await client.messages.create(model=MODEL, max_tokens=8, messages=[user("x")])
        # The client gave up after sending the request; the fake may read it only now.
        await wait_until(lambda: bool(api.requests), "the fake API received the request")
        started = time.perf_counter()
    assert time.perf_counter() - started < PATIENCE  # not the hang's length
    assert api.requests[0].outcome == "hang"


async def test_script_exhausted_is_a_bad_request() -> None:
    with FakeMessagesAPI([text_reply("only one")]) as api:
        async with client_for(api) as client:
            await client.messages.create(model=MODEL, max_tokens=8, messages=[user("x")])
            with pytest.raises(
                anthropic.BadRequestError, match="fake API: script exhausted after 1 requests"
            ):
                await client.messages.create(model=MODEL, max_tokens=8, messages=[user("x")])


# ------------------------------------------------------------------ validation through the SDK


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            {"messages": [user([text("")])]},
            "messages: text content blocks must be non-empty",
        ),
        (
            {
                "messages": [
                    user("fix a.py"),
                    assistant([tool_use("toolu_1")]),
                    user([text("Reminder first"), tool_result("toolu_1")]),
                ],
                "tools": TOOLS,
            },
            "tool_use` ids were found without `tool_result` blocks immediately after: toolu_1",
        ),
        (
            {"messages": [user("x")], "max_tokens": 0},
            "max_tokens: Input should be greater than or equal to 1",
        ),
        (
            {
                "messages": [user("x")],
                "system": [text(f"s{i}", cache_control=EPHEMERAL) for i in range(5)],
            },
            "A maximum of 4 blocks with cache_control may be provided. Found 5.",
        ),
    ],
)
async def test_validation_errors_surface_as_bad_request(
    fake: FakeMessagesAPI, kwargs: dict[str, Any], message: str
) -> None:
    fake.push(text_reply("valid"))
    params: dict[str, Any] = {"model": MODEL, "max_tokens": 64, **kwargs}
    async with client_for(fake) as client:
        with pytest.raises(anthropic.BadRequestError) as caught:
            await client.messages.create(**params)
        assert message in str(caught.value)
        assert caught.value.body["error"]["type"] == "invalid_request_error"  # type: ignore[index]
        # the rejected request did not consume the step
        ok = await client.messages.create(model=MODEL, max_tokens=8, messages=[user("x")])
    assert ok.content[0].type == "text"
    rejected = fake.requests[0]
    assert rejected.status == 400 and rejected.error is not None and message in rejected.error
    assert rejected.body["max_tokens"] == params["max_tokens"]


# ------------------------------------------------------------------ raw HTTP


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


def test_api_key_required_and_error_shape(fake: FakeMessagesAPI) -> None:
    fake.push(text_reply("ok"))
    body = {"model": MODEL, "max_tokens": 8, "messages": [user("x")]}
    status, headers, data = post(fake, body, headers={"x-api-key": ""})
    assert status == 401
    error = json.loads(data)
    assert error["type"] == "error" and error["error"]["type"] == "authentication_error"
    assert error["request_id"] == headers["request-id"]
    status, _, _ = post(fake, body, headers={"x-api-key": "", "authorization": "Bearer k"})
    assert status == 200
    assert [r.status for r in fake.requests] == [401, 200]


def test_beta_query_and_unknown_paths(fake: FakeMessagesAPI) -> None:
    fake.push(text_reply("beta"))
    body = {"model": MODEL, "max_tokens": 8, "messages": [user("x")]}
    status, _, data = post(fake, body, path="/v1/messages?beta=true")
    assert status == 200 and json.loads(data)["content"] == [text("beta")]
    status, _, data = post(fake, body, path="/v1/nothing")
    assert status == 404 and json.loads(data)["error"]["type"] == "not_found_error"
    status, _, data = post(fake, {"model": MODEL, "max_tokens": 8}, path="/v1/messages")
    assert status == 400 and json.loads(data)["error"]["message"] == "messages: Field required"


# ------------------------------------------------------------------ prompt cache through the SDK


async def test_cache_read_on_second_request_sharing_a_long_prefix() -> None:
    system = [text(LONG_SYSTEM, cache_control=EPHEMERAL)]
    first_msgs = [user([text("fix a.py", cache_control=EPHEMERAL)])]
    second_msgs = [
        user([text("fix a.py")]),
        assistant([text("Which bug?")]),
        user([text("the off-by-one", cache_control=EPHEMERAL)]),
    ]
    sys_tokens = estimate_tokens(system[0])
    assert sys_tokens >= 1024
    with FakeMessagesAPI([text_reply("a"), text_reply("b")]) as api:
        async with client_for(api) as client:
            first = await client.messages.create(
                model=MODEL, max_tokens=8, system=system, messages=first_msgs
            )
            second = await client.messages.create(
                model=MODEL, max_tokens=8, system=system, messages=second_msgs
            )
    u1 = estimate_tokens(text("fix a.py"))
    assert first.usage.cache_read_input_tokens == 0
    assert first.usage.cache_creation_input_tokens == sys_tokens + u1
    assert first.usage.input_tokens == 0
    # the second request reads system + first user message (found by looking back from the
    # moved breakpoint) and writes the two new messages
    assert second.usage.cache_read_input_tokens == sys_tokens + u1
    assert second.usage.cache_creation_input_tokens == estimate_tokens(
        text("Which bug?")
    ) + estimate_tokens(text("the off-by-one"))
    assert second.usage.input_tokens == 0


# ------------------------------------------------------------------ standalone process


def test_standalone_prints_base_url_and_serves_recorded_requests(tmp_path: Path) -> None:
    recording = tmp_path / "recording.json"
    recording.write_text(
        json.dumps(
            {
                "steps": [
                    {"content": [{"type": "text", "text": "Hello from the recording."}]},
                    {"fault": "http", "status": 529},
                ]
            }
        )
    )
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(ROOT / "server"), env.get("PYTHONPATH")) if p
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "plansight.fakeapi", "--script", str(recording), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        text=True,
    )
    try:
        assert proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], PATIENCE)
        assert ready, "no baseUrl line"
        base_url = json.loads(proc.stdout.readline())["baseUrl"]
        assert base_url.startswith("http://127.0.0.1:")
        client = anthropic.Anthropic(
            base_url=base_url, api_key="secret", timeout=PATIENCE, max_retries=0
        )
        with client:
            msg = client.messages.create(model=MODEL, max_tokens=8, messages=[user("hi")])
            assert msg.content[0].type == "text"
            assert msg.content[0].text == "Hello from the recording."
            with pytest.raises(anthropic.OverloadedError):
                client.messages.create(model=MODEL, max_tokens=8, messages=[user("again")])
        host, port = base_url.removeprefix("http://").split(":")
        conn = http.client.HTTPConnection(host, int(port), timeout=PATIENCE)
        conn.request("GET", "/_fake/requests")
        resp = conn.getresponse()
        recorded = json.loads(resp.read())
        conn.close()
        assert resp.status == 200
        assert [r["body"]["messages"][0]["content"] for r in recorded] == ["hi", "again"]
        assert [r["status"] for r in recorded] == [200, 529]
        assert recorded[0]["headers"]["authorization"] == "<redacted>"
        assert recorded[0]["finishedAt"] >= recorded[0]["receivedAt"]
    finally:
        proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=PATIENCE)
    assert proc.returncode == 0, stderr


# ------------------------------------------------------------------ timing records


async def test_timing_records_and_turnaround() -> None:
    with FakeMessagesAPI([text_reply("a"), text_reply("b"), text_reply("c")]) as api:
        async with client_for(api) as client:
            for _ in range(3):
                async with client.messages.stream(
                    model=MODEL, max_tokens=8, messages=[user("x")]
                ) as stream:
                    await stream.get_final_message()
        done = api.wait_for_requests(3, timeout=PATIENCE)
    for rec in done:
        assert rec.finished_at is not None and rec.first_byte_at is not None
        assert rec.arrived_at <= rec.received_at <= rec.first_byte_at <= rec.finished_at
    gaps = api.turnaround_times()
    assert len(gaps) == 2 and all(0 <= g < PATIENCE for g in gaps)
    assert api.received_at == [r.received_at for r in done]


# ------------------------------------------------------------------ validator (pure)


def body_with(messages: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {"model": MODEL, "max_tokens": 64, "messages": messages, **extra}


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


# ------------------------------------------------------------------ cache arithmetic (pure)


def sized_text(tokens: int, tag: str) -> Any:
    """A text block whose estimate is exactly `tokens` (canonical JSON length 4*tokens)."""
    block = text(tag)
    pad = 4 * tokens - len(json.dumps(block, separators=(",", ":")))
    assert pad >= 0
    block = text(tag + "x" * pad)
    assert estimate_tokens(block) == tokens
    return block


def test_cache_arithmetic_write_then_read() -> None:
    cache = PromptCache()
    sys_block = sized_text(1000, "sys")
    u1 = sized_text(100, "u1")
    body1 = body_with([user([{**u1, "cache_control": EPHEMERAL}])], system=[sys_block])
    first = cache.process(body1)
    assert (first.cache_read_input_tokens, first.cache_creation_input_tokens) == (0, 1100)
    assert first.input_tokens == 0
    again = cache.process(body1)
    assert (again.cache_read_input_tokens, again.cache_creation_input_tokens) == (1100, 0)
    # a longer conversation with the breakpoint moved to the end; the tail after it is input
    a1, u2, u3 = sized_text(50, "a1"), sized_text(30, "u2"), sized_text(7, "u3")
    body2 = body_with(
        [user([u1]), assistant([a1]), user([{**u2, "cache_control": EPHEMERAL}, u3])],
        system=[sys_block],
    )
    second = cache.process(body2)
    assert second.cache_read_input_tokens == 1100
    assert second.cache_creation_input_tokens == 80
    assert second.input_tokens == 7
    assert second.total == 1187


def test_cache_arithmetic_minimum_and_no_breakpoints() -> None:
    cache = PromptCache()
    short = body_with([user([{**sized_text(1000, "u"), "cache_control": EPHEMERAL}])])
    for _ in range(2):
        usage = cache.process(short)
        assert usage.as_dict() == {
            "input_tokens": 1000,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
        }
    assert len(cache) == 0
    plain = body_with([user([sized_text(2000, "u")])])
    assert cache.process(plain).input_tokens == 2000
    assert len(cache) == 0


def test_cache_lookback_is_limited_to_20_blocks() -> None:
    head = sized_text(1100, "head")
    fillers = [sized_text(8, f"{i:02d}") for i in range(30)]

    def body(n: int) -> dict[str, Any]:
        blocks = [head, *fillers[:n]]
        blocks[-1] = {**blocks[-1], "cache_control": EPHEMERAL}
        return body_with([user(blocks)])

    cache = PromptCache()
    cache.process(body(0))  # writes the prefix ending at head
    assert cache.peek(body(20)).cache_read_input_tokens == 1100  # 20 blocks back: found
    missed = cache.peek(body(21))  # 21 blocks back: not found, everything is written anew
    assert missed.cache_read_input_tokens == 0
    assert missed.cache_creation_input_tokens == 1100 + 21 * 8


def test_cache_is_keyed_by_model_and_content_not_cache_control() -> None:
    cache = PromptCache()
    block = sized_text(1200, "a")
    cache.process(body_with([user([{**block, "cache_control": EPHEMERAL}])]))
    moved = body_with([user([block, {**sized_text(8, "b"), "cache_control": EPHEMERAL}])])
    assert cache.peek(moved).cache_read_input_tokens == 1200
    other_model = {**moved, "model": "claude-fake-2"}
    assert cache.peek(other_model).cache_read_input_tokens == 0
    changed = body_with([user([{**sized_text(1200, "z"), "cache_control": EPHEMERAL}])])
    assert cache.peek(changed).cache_read_input_tokens == 0
    # tool_choice and thinking are part of the message blocks' prefix (tools/system are not)
    with_choice = {**moved, "tool_choice": {"type": "none"}}
    assert cache.peek(with_choice).cache_read_input_tokens == 0
    assert cache.peek({**moved, "tool_choice": {"type": "auto"}}).cache_read_input_tokens == 1200
    thinking = {**moved, "thinking": {"type": "enabled", "budget_tokens": 1024}}
    assert cache.peek(thinking).cache_read_input_tokens == 0
    # the same block as a system block is a different prefix
    as_system = body_with([user("x")], system=[{**block, "cache_control": EPHEMERAL}])
    assert cache.peek(as_system).cache_read_input_tokens == 0
    tools_only = as_system
    cache.process(tools_only)
    assert (
        cache.peek({**tools_only, "tool_choice": {"type": "none"}}).cache_read_input_tokens == 1200
    )


# ------------------------------------------------------------------ script loading


def test_script_round_trips_and_rejects_bad_steps(tmp_path: Path) -> None:
    data = {
        "steps": [
            {"content": [text("hi"), {"type": "tool_use", "name": "t", "input": {"a": 1}}]},
            {"text": "short"},
            {"fault": "http", "status": 429, "headers": {"retry-after": "0"}},
            {"fault": "stream_error", "after_blocks": 1, "message": "boom"},
            {"fault": "drop", "after_blocks": 0},
            {"fault": "hang", "seconds": 1.5, "then": {"text": "late"}},
        ]
    }
    path = tmp_path / "rec.json"
    path.write_text(json.dumps(data))
    script = Script.from_json(path)
    assert len(script) == 6
    assert script.to_dict()["steps"][0]["content"][1]["input"] == {"a": 1}
    assert Script.from_dict(script.to_dict()).to_dict() == script.to_dict()
    first = script.steps[0]
    assert not callable(first) and first.effective_stop_reason == "tool_use"  # type: ignore[union-attr]
    http_step = script.steps[2]
    assert isinstance(http_step, HttpError) and http_step.effective_error_type == "rate_limit_error"
    hang = script.steps[5]
    assert isinstance(hang, Hang) and hang.then is not None
    with_summary = Script.from_dict({**data, "tool_choice_none": {"text": "A summary."}})
    assert isinstance(with_summary.no_tools_reply, Reply)
    assert Script.from_dict(with_summary.to_dict()).to_dict() == with_summary.to_dict()
    bad: dict[str, Any]
    for bad in (
        {"steps": [], "tool_choice_none": {"fault": "http", "status": 500}},
        {"steps": [{"fault": "meteor"}]},
        {"steps": [{"stop_reason": "end_turn"}]},
        {"steps": [{"content": [{"type": "tool_use", "input": {}}]}]},
        {"steps": [{"fault": "http", "status": 200}]},
        {"nope": []},
    ):
        with pytest.raises(ScriptError):
            Script.from_dict(bad)


def test_stop_with_idle_keep_alive_connection_logs_no_error(
    caplog: pytest.LogCaptureFixture,
) -> None:
    api = FakeMessagesAPI([text_reply("hi")]).start()
    conn = http.client.HTTPConnection("127.0.0.1", api.port, timeout=PATIENCE)
    status, _, _ = post(api, {"model": MODEL, "max_tokens": 8, "messages": [user("x")]}, conn=conn)
    assert status == 200
    with caplog.at_level(logging.WARNING):
        api.stop()  # the connection is still open and idle
    conn.close()
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == []
    assert not api.running


# ------------------------------------------------------------------ what the real API sends
# Each behaviour below is the real Messages API's (see the api-compaction notes): the fake
# must send and refuse the same things, or tests against it prove nothing.

THINKING_ON = {"type": "enabled", "budget_tokens": 1024}


async def raw_events(client: anthropic.AsyncAnthropic, **request: Any) -> list[Any]:
    """The raw SSE events of one streamed request (messages.create(stream=True))."""
    events = []
    stream = await client.messages.create(stream=True, **request)
    async with stream:
        async for event in stream:
            events.append(event)
    return events


async def test_prompt_over_the_context_window_is_the_real_400() -> None:
    big = "word " * 4000  # ~ 5000 tokens by the fake's count
    with FakeMessagesAPI([text_reply("fits")], context_window=2000) as api:
        async with client_for(api) as client:
            with pytest.raises(anthropic.BadRequestError) as caught:
                await client.messages.create(model=MODEL, max_tokens=8, messages=[user(big)])
            error = caught.value.body["error"]  # type: ignore[index]
            assert error["type"] == "invalid_request_error"
            assert re.fullmatch(r"prompt is too long: \d+ tokens > 2000 maximum", error["message"])
            assert api.steps_remaining == 1, "a refused request consumes no step"
            message = await client.messages.create(
                model=MODEL, max_tokens=8, messages=[user("short")]
            )
    assert message.content[0].text == "fits"  # type: ignore[union-attr]
    assert api.requests[0].prompt_tokens is not None and api.requests[0].prompt_tokens > 2000
    assert api.requests[1].prompt_tokens is not None and api.requests[1].prompt_tokens <= 2000


async def test_context_window_defaults_from_the_models_max_input_tokens() -> None:
    models = [model_info(MODEL, max_input_tokens=500)]
    with FakeMessagesAPI([text_reply("x")], models=models) as api:
        async with client_for(api) as client:
            with pytest.raises(anthropic.BadRequestError, match="tokens > 500 maximum"):
                await client.messages.create(
                    model=MODEL, max_tokens=8, messages=[user("y " * 2000)]
                )


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


async def test_pause_turn_then_the_paused_turn_sent_back() -> None:
    steps = [
        text_reply("Searching the docs for the answer. ", stop_reason="pause_turn"),
        text_reply("Found it."),
    ]
    with FakeMessagesAPI(steps) as api:
        async with client_for(api) as client:
            first = await client.messages.create(model=MODEL, max_tokens=64, messages=[user("q")])
            assert first.stop_reason == "pause_turn"
            paused = first.content[0].text  # type: ignore[union-attr]
            with pytest.raises(anthropic.BadRequestError, match="cannot end with trailing"):
                await client.messages.create(
                    model=MODEL, max_tokens=64, messages=[user("q"), assistant(paused)]
                )
            second = await client.messages.create(
                model=MODEL,
                max_tokens=64,
                messages=[user("q"), assistant([text(paused.rstrip())])],
            )
    assert second.content[0].text == "Found it."  # type: ignore[union-attr]


async def test_refusal_carries_stop_details_on_message_delta() -> None:
    with FakeMessagesAPI([text_reply("I can't help with", stop_reason="refusal")]) as api:
        async with client_for(api) as client:
            events = await raw_events(client, model=MODEL, max_tokens=64, messages=[user("q")])
    delta = next(e for e in events if e.type == "message_delta")
    assert delta.delta.stop_reason == "refusal"
    assert delta.delta.stop_details is not None and delta.delta.stop_details.type == "refusal"


@pytest.mark.parametrize("error_type", ["overloaded_error", "api_error"])
async def test_error_event_in_a_200_stream_reaches_the_caller_unretried(error_type: str) -> None:
    step = StreamError(after_blocks=1, error_type=error_type)
    with FakeMessagesAPI([step, text_reply("late")]) as api:
        async with client_for(api, max_retries=2) as client:
            with pytest.raises(anthropic.APIStatusError) as caught:
                await raw_events(client, model=MODEL, max_tokens=64, messages=[user("q")])
    # The SDK raises with the 200 of the response that had begun; the error's type is in the
    # body, and retrying is the caller's job.
    assert caught.value.status_code == 200
    assert caught.value.body["error"]["type"] == error_type  # type: ignore[index]
    assert len(api.message_requests) == 1 and api.steps_remaining == 1


async def test_thinking_blocks_stream_signed_and_verify_only_unchanged() -> None:
    steps = [
        reply(None, [("read_file", {"path": "a.py"})]),  # the fake thinks first by itself
        Reply(content=[{"type": "thinking", "thinking": "Now the fix."}, text("Done.")]),
        text_reply("never sent"),
    ]
    with FakeMessagesAPI(steps) as api:
        async with client_for(api) as client:
            request: dict[str, Any] = {
                "model": MODEL,
                "max_tokens": 2048,
                "thinking": THINKING_ON,
                "tools": TOOLS,
            }
            events = await raw_events(client, messages=[user("fix")], **request)
            deltas = [e.delta for e in events if e.type == "content_block_delta"]
            assert {"thinking_delta", "signature_delta"} <= {d.type for d in deltas}
            starts = [e.content_block for e in events if e.type == "content_block_start"]
            assert [b.type for b in starts] == ["thinking", "tool_use"]
            thinking_text = "".join(d.thinking for d in deltas if d.type == "thinking_delta")
            signature = next(d.signature for d in deltas if d.type == "signature_delta")
            tool_id = starts[1].id
            thought = {"type": "thinking", "thinking": thinking_text, "signature": signature}
            use = {
                "type": "tool_use",
                "id": tool_id,
                "name": "read_file",
                "input": {"path": "a.py"},
            }
            result = user([tool_result(tool_id)])

            def conversation(*blocks: Any) -> list[Any]:
                return [user("fix"), assistant(list(blocks)), result]

            altered = {**thought, "thinking": thinking_text + " (edited)"}
            with pytest.raises(
                anthropic.BadRequestError, match="Invalid `signature` in `thinking`"
            ):
                await client.messages.create(messages=conversation(altered, use), **request)
            with pytest.raises(anthropic.BadRequestError, match="must start with a thinking block"):
                await client.messages.create(messages=conversation(use), **request)
            done = await client.messages.create(messages=conversation(thought, use), **request)
    assert [b.type for b in done.content] == ["thinking", "text"]
    assert api.steps_remaining == 1


async def test_redacted_thinking_must_come_back_unchanged() -> None:
    steps = [Reply(content=[{"type": "redacted_thinking", "data": "secret"}, text("Hm.")])]
    with FakeMessagesAPI(steps) as api:
        async with client_for(api) as client:
            request: dict[str, Any] = {"model": MODEL, "max_tokens": 2048, "thinking": THINKING_ON}
            first = await client.messages.create(messages=[user("q")], **request)
    redacted = first.content[0].model_dump()
    assert redacted["type"] == "redacted_thinking" and "secret" not in redacted["data"]
    history = [user("q"), assistant([redacted, text("Hm.")]), user("go on")]
    assert validate_request(body_with(history, thinking=THINKING_ON, max_tokens=2048)) is None
    tampered = {**redacted, "data": redacted["data"][:-4] + "AAAA"}
    bad = [user("q"), assistant([tampered, text("Hm.")]), user("go on")]
    problem = validate_request(body_with(bad, thinking=THINKING_ON, max_tokens=2048))
    assert problem is not None and "Invalid `data` in `redacted_thinking`" in problem


async def test_thinking_kinds_follow_the_models_capabilities() -> None:
    models = [
        model_info("old-model", adaptive=False, enabled=True),
        model_info("new-model", adaptive=True, enabled=False),
    ]
    with FakeMessagesAPI([text_reply("a"), text_reply("b")], models=models) as api:
        async with client_for(api) as client:
            with pytest.raises(
                anthropic.BadRequestError, match=re.escape('"thinking.type.adaptive" is not')
            ):
                await client.messages.create(
                    model="old-model",
                    max_tokens=64,
                    messages=[user("q")],
                    thinking={"type": "adaptive"},
                )
            with pytest.raises(
                anthropic.BadRequestError, match=re.escape('"thinking.type.enabled" is not')
            ):
                await client.messages.create(
                    model="new-model", max_tokens=2048, messages=[user("q")], thinking=THINKING_ON
                )
            adaptive = await client.messages.create(
                model="new-model",
                max_tokens=64,
                messages=[user("q")],
                thinking={"type": "adaptive"},
            )
            info = await client.models.retrieve("new-model")
            assert info.max_input_tokens == 200_000
            assert info.capabilities is not None
            assert info.capabilities.thinking.types.adaptive.supported
            assert not info.capabilities.thinking.types.enabled.supported
            with pytest.raises(anthropic.NotFoundError):
                await client.models.retrieve("unknown-model")
    assert [b.type for b in adaptive.content] == ["text"], "adaptive may answer without thinking"


def test_max_tokens_above_the_models_output_limit_is_refused() -> None:
    model = model_info(MODEL, max_tokens=8192)
    problem = validate_request(body_with([user("x")], max_tokens=16_000), model=model)
    assert problem == (
        f"max_tokens: 16000 > 8192, which is the maximum allowed number of output tokens for "
        f"{MODEL}"
    )
    assert validate_request(body_with([user("x")], max_tokens=8192), model=model) is None
    assert validate_request(body_with([user("x")], max_tokens=16_000)) is None  # unknown model


async def test_without_models_the_models_api_is_absent() -> None:
    with FakeMessagesAPI() as api:
        async with client_for(api) as client:
            with pytest.raises(anthropic.NotFoundError):
                await client.models.retrieve(MODEL)


async def test_a_scripted_reply_the_real_model_cannot_give_is_a_fake_error() -> None:
    steps = [
        tool_reply("read_file", {"path": "a.py"}),
        Reply(content=[{"type": "thinking", "thinking": "x"}, text("y")]),
    ]
    with FakeMessagesAPI(steps) as api:
        async with client_for(api) as client:
            with pytest.raises(anthropic.InternalServerError, match="tool_choice is none"):
                await client.messages.create(
                    model=MODEL,
                    max_tokens=64,
                    messages=[user("q")],
                    tools=TOOLS,
                    tool_choice={"type": "none"},
                )
            with pytest.raises(anthropic.InternalServerError, match="did not turn thinking on"):
                await client.messages.create(model=MODEL, max_tokens=64, messages=[user("q")])


async def test_a_scripted_call_of_a_tool_the_request_does_not_offer_is_a_fake_error() -> None:
    # The real model calls only the tools it is given: a script that does otherwise is wrong.
    steps = [tool_reply("delete_everything", {}), tool_reply("read_file", {"path": "a.py"})]
    with FakeMessagesAPI(steps) as api:
        async with client_for(api) as client:
            with pytest.raises(anthropic.InternalServerError, match="'delete_everything'"):
                await client.messages.create(
                    model=MODEL, max_tokens=64, messages=[user("q")], tools=TOOLS
                )
            with pytest.raises(anthropic.InternalServerError, match="does not offer"):
                await client.messages.create(model=MODEL, max_tokens=64, messages=[user("q")])


def signed(thinking: str) -> dict[str, Any]:
    return {"type": "thinking", "thinking": thinking, "signature": sign_thinking(thinking)}


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


async def test_a_no_tools_reply_answers_tool_choice_none_without_a_step() -> None:
    script = Script([text_reply("the next step")], no_tools_reply=text_reply("A summary."))
    with FakeMessagesAPI(script) as api:
        async with client_for(api) as client:
            summary = await client.messages.create(
                model=MODEL,
                max_tokens=64,
                messages=[user("q")],
                tools=TOOLS,
                tool_choice={"type": "none"},
            )
            step = await client.messages.create(model=MODEL, max_tokens=64, messages=[user("q")])
    assert summary.content[0].text == "A summary."  # type: ignore[union-attr]
    assert step.content[0].text == "the next step"  # type: ignore[union-attr]
    assert api.steps_remaining == 0
