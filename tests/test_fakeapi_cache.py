"""The prompt-cache simulation (`plansight.fakeapi.cache`): its arithmetic (pure) and the usage
numbers the SDK sees through the fake.
"""

from __future__ import annotations

import json
from typing import Any

from fakeapi_support import EPHEMERAL, MODEL, assistant, body_with, client_for, text, user
from plansight.fakeapi import FakeMessagesAPI, PromptCache, estimate_tokens, text_reply

LONG_SYSTEM = "You are Plansight, a careful coding agent. " * 120  # ~1300 tokens


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


def png_head(width: int, height: int) -> str:
    """The base64 of a PNG's signature and IHDR chunk: all the fake reads of an image."""
    import base64
    import struct

    ihdr = struct.pack(">I", 13) + b"IHDR" + struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return base64.b64encode(b"\x89PNG\r\n\x1a\n" + ihdr + b"\x00" * 4).decode()


def image(data: str, media_type: str = "image/png") -> dict[str, Any]:
    return {"type": "image", "source": {"type": "base64", "media_type": media_type, "data": data}}


def test_an_image_costs_what_the_api_charges_not_its_base64_text() -> None:
    from plansight.fakeapi.cache import image_tokens

    assert image_tokens(image(png_head(1000, 1000))["source"]) == 1334  # 1000 × 1000 / 750
    assert image_tokens(image(png_head(200, 100))["source"]) == 27
    # Scaled to fit 1568 px and ~1.15 megapixels first: a 4000 × 3000 photo costs ~1,534.
    assert image_tokens(image(png_head(4000, 3000))["source"]) == 1534
    # A JPEG (or anything not read): the most an image costs.
    assert image_tokens(image("/9j/4AAQSkZJRgABAQ" + "A" * 1000, "image/jpeg")["source"]) == 1600
    padded = png_head(1000, 1000) + "A" * 2_000_000  # 2 MB of base64 after the header
    block = {"type": "tool_result", "tool_use_id": "t", "content": [image(padded)]}
    assert 1334 < estimate_tokens(block) < 1334 + 50
