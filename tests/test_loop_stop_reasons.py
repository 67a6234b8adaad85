"""What the real Messages API sends, and how a run answers it: cut responses, paused turns,
refusals, errors inside a 200 stream, blank text, extended thinking. Through the real SDK
against the fake, which refuses what the real API refuses: every request a run sends after
one of these must pass its validation."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from plansight.engine.conversation import Conversation
from plansight.engine.events import Event, ThinkingDelta, ToolCall
from plansight.engine.hooks import accept_all_edits, approve_all_commands
from plansight.engine.loop import CONTINUE_TEXT, MAX_CONTINUATIONS
from plansight.engine.model import ModelSettings, ThinkingOption
from plansight.fakeapi import FakeMessagesAPI, Reply, StreamError, model_info, reply
from plansight.fakeapi import text_reply as text
from plansight.fakeapi import tool_reply as tool
from plansight.session.session import Session
from plansight.session.settings import SessionSettings
from plansight.session.storage import SessionStore

from conftest import user_texts

MODEL = "claude-sonnet-5-5"
OPEN_PLAN = {
    "items": [
        {"id": "1", "text": "Write the module", "status": "in_progress"},
        {"id": "2", "text": "Test it", "status": "pending"},
    ]
}


def session_for(
    root: Path,
    api: FakeMessagesAPI,
    *,
    thinking: ThinkingOption | None = None,
    store: SessionStore | None = None,
) -> Session:
    settings = SessionSettings(
        ModelSettings(model=MODEL, api_key="test-key", base_url=api.base_url, thinking=thinking)
    )
    return Session(
        root, settings, review=accept_all_edits, approve=approve_all_commands, store=store
    )


def collect(session: Session) -> list[Event]:
    events: list[Event] = []
    session.events.subscribe(events.append)
    return events


def answered(api: FakeMessagesAPI) -> None:
    """Every request of the run passed the fake's validation (the real API's rules)."""
    for request in api.message_requests:
        assert request.status == 200, request.error


def last_texts(api: FakeMessagesAPI, index: int) -> list[str]:
    return user_texts(api.bodies[index]["messages"][-1])


# ------------------------------------------------------------------ max_tokens


async def test_a_tool_call_cut_by_max_tokens_is_not_run_and_the_model_is_told(
    hello_workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    big = {"path": "generated.py", "content": "x = 1\n" * 2000}
    fake_api.push(
        tool("write_file", big, text="Writing the module.", stop_reason="max_tokens"),
        text("Done, in smaller steps."),
    )
    session = session_for(hello_workspace, fake_api)
    events = collect(session)
    result = await session.run("Generate the module")
    assert result.status == "done" and result.text == "Done, in smaller steps."
    assert not (hello_workspace / "generated.py").exists(), "the cut call never ran"
    assert not [e for e in events if isinstance(e, ToolCall)]
    second = fake_api.bodies[1]["messages"]
    assert not any(
        b.get("type") == "tool_use" for m in second for b in m["content"] if isinstance(b, dict)
    )
    assert second[-2] == {
        "role": "assistant",
        "content": [{"type": "text", "text": "Writing the module."}],
    }
    notice = last_texts(fake_api, 1)[-1]
    assert "cut off at the output token limit" in notice and "write_file" in notice
    assert "not run" in notice and "smaller steps" in notice
    answered(fake_api)


async def test_complete_calls_before_a_cut_one_run_and_the_cut_one_is_reported(
    hello_workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    fake_api.push(
        reply(
            None,
            [("read_file", {"path": "hello.py"}), ("write_file", {"path": "b.py", "content": "y"})],
            stop_reason="max_tokens",
        ),
        text("ok"),
    )
    session = session_for(hello_workspace, fake_api)
    assert (await session.run("go")).status == "done"
    last = fake_api.bodies[1]["messages"][-1]["content"]
    assert [b["type"] for b in last] == ["tool_result", "text"]
    assert "def greet" in last[0]["content"]
    assert "write_file" in last[1]["text"] and not (hello_workspace / "b.py").exists()
    answered(fake_api)


async def test_a_text_answer_cut_by_max_tokens_is_continued_and_never_done_as_if_complete(
    hello_workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    fake_api.push(
        text("The first part, ", stop_reason="max_tokens"),
        text("the second part, ", stop_reason="max_tokens"),
        text("and the end."),
    )
    session = session_for(hello_workspace, fake_api)
    result = await session.run("Explain")
    assert result.status == "done"
    assert result.text == "The first part, the second part, and the end."
    assert last_texts(fake_api, 1)[-1] == CONTINUE_TEXT
    assert last_texts(fake_api, 2)[-1] == CONTINUE_TEXT
    answered(fake_api)


async def test_a_text_cut_more_than_three_times_in_a_row_ends_limit(
    hello_workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    fake_api.push(tool("todo", OPEN_PLAN))
    fake_api.push(*[text(f"part {n} ", stop_reason="max_tokens") for n in range(5)])
    session = session_for(hello_workspace, fake_api)
    result = await session.run("Explain at length")
    assert result.status == "limit"
    assert result.text.startswith("part 0 part 1 part 2 part 3")
    assert "cut off at the output token limit 4 times in a row" in result.text
    # 1 todo round + 1 answer + 3 continuations; no done gate for a cut answer
    assert len(fake_api.message_requests) == 2 + MAX_CONTINUATIONS
    assert not any(
        "open items" in t for b in fake_api.bodies for t in user_texts(b["messages"][-1])
    )
    answered(fake_api)


# ------------------------------------------------------------------ pause_turn, refusal


async def test_a_paused_turn_is_sent_back_trimmed_and_the_model_goes_on(
    hello_workspace: Path, fake_api: FakeMessagesAPI, tmp_path: Path
) -> None:
    fake_api.push(text("Searching the docs. \n", stop_reason="pause_turn"), text("Found it."))
    store = SessionStore(tmp_path / "state")
    session = session_for(hello_workspace, fake_api, store=store)
    result = await session.run("Look it up")
    assert result.status == "done" and result.text == "Searching the docs. \nFound it."
    continued = fake_api.bodies[1]["messages"]
    assert continued[-1]["role"] == "assistant"
    assert continued[-1]["content"][-1]["text"] == "Searching the docs."
    # stored as one assistant turn: the paused part and its continuation
    stored = store.conversation.load()
    assert stored is not None and [m["role"] for m in stored] == ["user", "assistant"]
    assert [b["text"] for b in stored[1]["content"]] == ["Searching the docs. \n", "Found it."]
    answered(fake_api)


async def test_a_refusal_ends_refused_without_the_done_gate_and_is_not_carried_on(
    hello_workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    fake_api.push(tool("todo", OPEN_PLAN), text("I can't help with that.", stop_reason="refusal"))
    session = session_for(hello_workspace, fake_api)
    result = await session.run("Do the thing")
    assert result.status == "refused" and result.text == "I can't help with that."
    assert len(fake_api.message_requests) == 2, "no done gate after a refusal"
    fake_api.push(text("Sure."), text("The plan stays open."))  # the gate applies again
    assert (await session.run("Something else")).status == "done"
    sent = json.dumps(fake_api.bodies[-1]["messages"])
    assert "I can't help with that." not in sent
    answered(fake_api)


async def test_a_refused_first_round_drops_the_prompt_it_refused(
    hello_workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    fake_api.push(text("Hello..", stop_reason="refusal"), text("Hi."))
    session = session_for(hello_workspace, fake_api)
    refused = await session.run("a refused request")
    assert refused.status == "refused" and refused.text == "Hello.."
    assert session.conversation.messages == []
    await session.run("a fine request")
    sent = json.dumps(fake_api.bodies[-1]["messages"])
    assert "a refused request" not in sent and "a fine request" in sent
    answered(fake_api)


# ------------------------------------------------------------------ errors inside a stream


@pytest.mark.parametrize("error_type", ["overloaded_error", "api_error"])
async def test_an_error_event_in_a_200_stream_is_retried(
    hello_workspace: Path, fake_api: FakeMessagesAPI, error_type: str
) -> None:
    fake_api.push(StreamError(after_blocks=1, error_type=error_type), text("Recovered."))
    session = session_for(hello_workspace, fake_api)
    result = await session.run("hi")
    assert result.status == "done" and result.text == "Recovered."
    assert [r.outcome for r in fake_api.message_requests] == ["stream_error", "reply"]
    assert fake_api.bodies[0] == fake_api.bodies[1], "the same request, sent again"


# ------------------------------------------------------------------ blank text


async def test_a_blank_final_answer_with_open_items_gets_a_valid_done_gate(
    hello_workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    fake_api.push(tool("todo", OPEN_PLAN), text("\n\n"), text("Both are done now."))
    session = session_for(hello_workspace, fake_api)
    result = await session.run("Write and test it")
    assert result.status == "done" and result.text == "Both are done now."
    gate = fake_api.bodies[2]["messages"]
    assert "#1: Write the module" in user_texts(gate[-1])[-1]
    blanks = [
        b for m in gate for b in m["content"] if b.get("type") == "text" and not b["text"].strip()
    ]
    assert blanks == []
    answered(fake_api)


async def test_a_stored_conversation_with_blank_text_does_not_fail_later_runs(
    hello_workspace: Path, fake_api: FakeMessagesAPI, tmp_path: Path
) -> None:
    store = SessionStore(tmp_path / "state")
    stored = Conversation(
        [
            {"role": "user", "content": [{"type": "text", "text": "First"}]},
            {"role": "assistant", "content": [{"type": "text", "text": "\n\n"}]},
            {
                "role": "user",
                "content": [{"type": "text", "text": "  "}, {"type": "text", "text": "Again"}],
            },
            {"role": "assistant", "content": [{"type": "text", "text": "Answer. "}]},
        ]
    )
    store.conversation.save(stored.messages)  # as an older version could have left it
    session = session_for(hello_workspace, fake_api, store=store)
    assert session.load_stored()
    fake_api.push(text("Fine."))
    assert (await session.run("Next")).status == "done"
    answered(fake_api)
    assert store.conversation.load()[1]["content"][0]["text"] == "\n\n"  # type: ignore[index]


# ------------------------------------------------------------------ extended thinking


async def test_thinking_enabled_with_a_budget_where_the_models_api_is_absent(
    hello_workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    fake_api.push(
        Reply(
            content=[
                {"type": "thinking", "thinking": "Read it first."},
                *tool("read_file", {"path": "hello.py"}).content,
            ]
        ),
        tool("read_file", {"path": "test_hello.py"}),  # the fake thinks first by itself
        Reply(
            content=[
                {"type": "thinking", "thinking": "All clear."},
                {"type": "text", "text": "Done."},
            ]
        ),
    )
    session = session_for(hello_workspace, fake_api, thinking=ThinkingOption(budget_tokens=10_000))
    events = collect(session)
    result = await session.run("Look")
    assert result.status == "done" and result.text == "Done."
    body = fake_api.bodies[0]
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 10_000}
    assert body["max_tokens"] > 10_000
    thought = "".join(e.text for e in events if isinstance(e, ThinkingDelta))
    assert "Read it first." in thought and "All clear." in thought
    # thinking went back exactly as received (the fake checks signatures and placement)
    answered(fake_api)
    assert fake_api.bodies[1]["messages"][1]["content"][0]["thinking"] == "Read it first."
    models = [r for r in fake_api.requests if r.path_only.startswith("/v1/models")]
    assert len(models) == 1, "the Models API is asked once"


async def test_thinking_is_adaptive_where_the_models_api_says_so(hello_workspace: Path) -> None:
    models = [model_info(MODEL, adaptive=True, enabled=False)]
    with FakeMessagesAPI([text("Hi.")], models=models) as api:
        session = session_for(hello_workspace, api, thinking=ThinkingOption())
        assert (await session.run("hi")).status == "done"
    assert api.bodies[0]["thinking"] == {"type": "adaptive"}
    assert api.bodies[0]["max_tokens"] == 8192


async def test_a_small_budget_is_raised_to_the_apis_minimum(
    hello_workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    fake_api.push(text("Hi."))
    session = session_for(hello_workspace, fake_api, thinking=ThinkingOption(budget_tokens=100))
    assert (await session.run("hi")).status == "done"
    assert fake_api.bodies[0]["thinking"] == {"type": "enabled", "budget_tokens": 1024}
    answered(fake_api)


def test_thinking_request_rules() -> None:
    from plansight.engine.model import ModelFacts, thinking_request

    assert thinking_request(None, None, 8192) == (None, 8192)
    assert thinking_request(ThinkingOption(4096), None, 8192) == (
        {"type": "enabled", "budget_tokens": 4096},
        8192,
    )
    assert thinking_request(ThinkingOption(8192), None, 8192)[1] > 8192
    capped = ModelFacts(max_tokens=16_000, enabled_thinking=True)
    thinking, max_tokens = thinking_request(ThinkingOption(20_000), capped, 8192)
    assert max_tokens == 16_000 and thinking == {"type": "enabled", "budget_tokens": 15_999}
    adaptive = ModelFacts(adaptive_thinking=True)
    assert thinking_request(ThinkingOption(), adaptive, 8192) == ({"type": "adaptive"}, 8192)


async def test_a_response_cut_while_still_thinking_is_continued_without_it(
    hello_workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    fake_api.push(
        Reply(
            content=[{"type": "thinking", "thinking": "Long thoughts"}], stop_reason="max_tokens"
        ),
        text("The answer."),
    )
    session = session_for(hello_workspace, fake_api, thinking=ThinkingOption())
    result = await session.run("Think hard")
    assert result.status == "done" and result.text == "The answer."
    second = fake_api.bodies[1]["messages"]
    assert [m["role"] for m in second] == ["user"]
    assert user_texts(second[0])[-1] == CONTINUE_TEXT
    answered(fake_api)
