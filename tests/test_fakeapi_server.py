"""The fake Messages API's behaviour (`plansight.fakeapi.server`), through the real anthropic
SDK and raw HTTP: replies and turns, faults, errors and their shape, routing, the context
window, the real API's stop reasons, script mistakes, starting and stopping.

Each behaviour here is the real Messages API's (see the api-compaction notes): the fake must
send and refuse the same things, or tests against it prove nothing.
"""

from __future__ import annotations

import asyncio
import http.client
import json
import logging
import re
import time
from collections.abc import Iterator
from typing import Any

import anthropic
import httpx2
import pytest

from fakeapi_support import (
    EPHEMERAL,
    MODEL,
    TOOLS,
    assistant,
    client_for,
    post,
    raw_events,
    text,
    tool_result,
    tool_use,
    user,
)
from plansight.fakeapi import (
    Drop,
    FakeMessagesAPI,
    Hang,
    HttpError,
    Reply,
    ScriptStep,
    StreamError,
    text_reply,
    tool_reply,
)

from conftest import PATIENCE, wait_until


@pytest.fixture
def fake() -> Iterator[FakeMessagesAPI]:
    api = FakeMessagesAPI()
    api.start()
    yield api
    api.stop()


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


async def test_async_start_on_the_current_loop() -> None:
    async with FakeMessagesAPI([text_reply("hi")]) as api:
        async with client_for(api) as client:
            msg = await client.messages.create(model=MODEL, max_tokens=8, messages=[user("x")])
    assert msg.content[0].type == "text" and msg.content[0].text == "hi"
    assert not api.running


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


async def test_release_ends_the_hangs_waiting_now_and_their_then_is_answered() -> None:
    """`POST /_fake/release`: a test in another process (the VS Code e2e) decides when a hanging
    answer comes, instead of waiting out a fixed time."""
    never = 10 * PATIENCE
    late = Hang(never, then=text_reply("late answer"))
    with FakeMessagesAPI([late, late]) as api:
        async with client_for(api, timeout=PATIENCE) as client:
            asked = [
                asyncio.create_task(
                    client.messages.create(model=MODEL, max_tokens=8, messages=[user("x")])
                )
                for _ in range(2)
            ]
            await wait_until(lambda: len(api.requests) == 2, "both requests hang")
            assert not any(task.done() for task in asked)
            started = time.perf_counter()
            status, _, body = await asyncio.to_thread(post, api, {}, path="/_fake/release")
            answers = await asyncio.gather(*asked)
        assert time.perf_counter() - started < PATIENCE  # not the hang's length
    assert status == 200
    assert json.loads(body) == {"released": 2}
    assert [a.content[0].text for a in answers] == ["late answer", "late answer"]  # type: ignore[union-attr]
    assert len(api.requests) == 2  # the release is not one of the recorded requests


async def test_script_exhausted_is_a_bad_request() -> None:
    with FakeMessagesAPI([text_reply("only one")]) as api:
        async with client_for(api) as client:
            await client.messages.create(model=MODEL, max_tokens=8, messages=[user("x")])
            with pytest.raises(
                anthropic.BadRequestError, match="fake API: script exhausted after 1 requests"
            ):
                await client.messages.create(model=MODEL, max_tokens=8, messages=[user("x")])


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


def test_conversations_are_answered_by_the_marker_their_opening_names_first() -> None:
    """Several conversations at once (parallel workers): each request takes the next step of
    the conversation whose marker comes first in its system prompt and first user message."""
    with FakeMessagesAPI(
        [text_reply("main")],
        conversations={"item one": [text_reply("one")], "item two": [text_reply("two")]},
    ) as api:

        def answer(first: str) -> str:
            body = {
                "model": MODEL,
                "max_tokens": 50,
                "messages": [{"role": "user", "content": first}],
            }
            status, _, data = post(api, body)
            assert status == 200, data
            return str(json.loads(data)["content"][0]["text"])

        # Both markers appear (the whole plan is shown); the one named first wins.
        assert answer("Your item: item two. The plan: item one, item two.") == "two"
        assert answer("Your item: item one. The plan: item one, item two.") == "one"
        assert answer("No marker here.") == "main"
        assert api.steps_used == 1  # the conversations' steps are not the main script's
