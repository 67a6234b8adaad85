"""Script steps (`plansight.fakeapi.script`): the JSON recording format round trip, steps given
as functions of the request, and the reply for tool_choice none that consumes no step.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from fakeapi_support import MODEL, TOOLS, client_for, text, user
from plansight.fakeapi import (
    FakeMessagesAPI,
    Hang,
    HttpError,
    Malformed,
    Reply,
    Script,
    ScriptError,
    text_reply,
)


async def test_callable_step_sees_the_request() -> None:
    def echo(body: dict[str, Any]) -> Any:
        return text_reply(f"you said: {body['messages'][-1]['content']}")

    with FakeMessagesAPI([echo]) as api:
        async with client_for(api) as client:
            msg = await client.messages.create(
                model=MODEL, max_tokens=64, messages=[user("banana")]
            )
    assert msg.content[0].type == "text" and msg.content[0].text == "you said: banana"


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


def test_a_malformed_stream_step_survives_a_round_trip_through_json() -> None:
    script = Script.from_dict({"steps": [{"fault": "malformed", "after_blocks": 2, "data": "x"}]})
    assert Script.from_dict(script.to_dict()).to_dict() == script.to_dict()
    assert script.to_dict()["steps"][0]["data"] == "x"
    assert Malformed().data.startswith("{") and not Malformed().data.endswith("}")
