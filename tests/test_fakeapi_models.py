"""The Models API facts the fake is given (`plansight.fakeapi.models`): served by
`GET /v1/models/{id}`, and deciding the context window and the kinds of thinking accepted.
"""

from __future__ import annotations

import re

import anthropic
import pytest

from fakeapi_support import MODEL, THINKING_ON, client_for, user
from plansight.fakeapi import FakeMessagesAPI, model_info, text_reply


async def test_context_window_defaults_from_the_models_max_input_tokens() -> None:
    models = [model_info(MODEL, max_input_tokens=500)]
    with FakeMessagesAPI([text_reply("x")], models=models) as api:
        async with client_for(api) as client:
            with pytest.raises(anthropic.BadRequestError, match="tokens > 500 maximum"):
                await client.messages.create(
                    model=MODEL, max_tokens=8, messages=[user("y " * 2000)]
                )


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


async def test_without_models_the_models_api_is_absent() -> None:
    with FakeMessagesAPI() as api:
        async with client_for(api) as client:
            with pytest.raises(anthropic.NotFoundError):
                await client.models.retrieve(MODEL)


async def test_the_model_list_is_paged_as_the_real_api_pages_it() -> None:
    """`GET /v1/models`: 20 a page unless `limit` says otherwise, `after_id` / `before_id` as
    cursors, `has_more`; the SDK's `models.list()` walks every page."""
    models = [model_info(f"model-{n:02d}", display_name=f"Model {n}") for n in range(25)]
    with FakeMessagesAPI([], models=models) as api:
        async with client_for(api) as client:
            first = await client.models.list()
            assert [m.id for m in first.data] == [f"model-{n:02d}" for n in range(20)]
            assert first.has_more and first.last_id == "model-19"
            assert [m.id async for m in await client.models.list()] == [m["id"] for m in models]
            page = await client.models.list(limit=3, after_id="model-21")
            assert [m.id for m in page.data] == ["model-22", "model-23", "model-24"]
            assert not page.has_more
            back = await client.models.list(limit=2, before_id="model-02")
            assert [m.id for m in back.data] == ["model-00", "model-01"] and not back.has_more
            assert first.data[1].display_name == "Model 1"
            with pytest.raises(anthropic.BadRequestError, match="limit"):
                await client.models.list(limit=0)
