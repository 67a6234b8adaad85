"""Thinking signatures (`plansight.fakeapi.signing`): the fake signs the thinking it streams and
accepts thinking and redacted thinking back only unchanged, as the real API does.
"""

from __future__ import annotations

from typing import Any

import anthropic
import pytest

from fakeapi_support import (
    MODEL,
    THINKING_ON,
    TOOLS,
    assistant,
    body_with,
    client_for,
    raw_events,
    text,
    tool_result,
    user,
)
from plansight.fakeapi import FakeMessagesAPI, Reply, reply, text_reply, validate_request


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
