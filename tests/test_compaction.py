"""Compaction as pure functions: what is cleared, what is kept verbatim, and that every
conversation it builds is one the real API accepts (checked with the fake's validator)."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from plansight.engine.compaction.rules import (
    HEADER_OPEN,
    NOTE_PREFIX,
    SUMMARY_INSTRUCTION,
    ContextMeter,
    append_text,
    clear_old_tool_results,
    clearing_notice,
    context_parts,
    estimate_tokens,
    fallback_summary,
    first_prompt,
    split_last_round,
    summarized_conversation,
    summary_request,
)
from plansight.fakeapi import sign_thinking, validate_request

KEPT = {"todo", "read_scratchpad", "write_scratchpad"}
TOOLS = [
    {"name": name, "description": name, "input_schema": {"type": "object"}}
    for name in ("read_file", "grep", "todo", "read_scratchpad", "write_scratchpad")
]
PLAN = "[x] #1: Read the code\n[>] #2: Fix the bug\n[ ] #3: Run the tests\n(1/3 completed)"
SCRATCH = "bug is in parse(); keep the API stable"


def keeps(name: str) -> bool:
    return name in KEPT


def thinking(text: str) -> dict[str, Any]:
    return {"type": "thinking", "thinking": text, "signature": sign_thinking(text)}


def round_of(n: int, name: str, tool_input: dict[str, Any], result: str, **extra: Any) -> list[Any]:
    """One round: a response calling one tool (after its thinking), then the result."""
    tool_id = f"toolu_{n:03d}"
    use = {"type": "tool_use", "id": tool_id, "name": name, "input": tool_input}
    done = {"type": "tool_result", "tool_use_id": tool_id, "content": result, **extra}
    return [
        {"role": "assistant", "content": [thinking(f"step {n}"), use]},
        {"role": "user", "content": [done]},
    ]


def session(rounds: int = 6) -> list[Any]:
    messages: list[Any] = [{"role": "user", "content": [{"type": "text", "text": "Fix the bug"}]}]
    for n in range(rounds):
        if n == 1:
            messages += round_of(n, "todo", {"items": []}, PLAN + "\n" * 40)
        elif n == 2:
            messages += round_of(n, "write_scratchpad", {"content": SCRATCH}, "x" * 500)
        else:
            messages += round_of(n, "read_file", {"path": f"src/m{n}.py"}, f"line {n}\n" * 400)
    return messages


def valid(messages: list[Any], **extra: Any) -> None:
    body = {"model": "m", "max_tokens": 4096, "messages": messages, "tools": TOOLS, **extra}
    assert validate_request(body) is None, validate_request(body)


def tool_results(message: dict[str, Any]) -> list[dict[str, Any]]:
    return [b for b in message["content"] if b.get("type") == "tool_result"]


# ------------------------------------------------------------------ the meter


def test_meter_estimates_everything_until_it_has_the_apis_count() -> None:
    messages = session(2)
    meter = ContextMeter()
    full = meter.estimate(messages, overhead=1000)
    assert full == 1000 + sum(estimate_tokens(m) for m in messages)
    meter.record(tokens=50_000, messages=len(messages))
    assert meter.estimate(messages, overhead=1000) == 50_000
    grown = [*messages, {"role": "user", "content": "more " * 100}]
    assert meter.estimate(grown, overhead=1000) == 50_000 + estimate_tokens(grown[-1])
    # the conversation was rewritten below the count (a compaction): estimate it all again
    assert meter.estimate(messages[:1], overhead=1000) == 1000 + estimate_tokens(messages[0])
    meter.reset()
    assert meter.estimate(messages, overhead=1000) == full


def test_meter_learns_from_a_count_above_its_estimate() -> None:
    messages = session(3)
    meter = ContextMeter()
    estimated = meter.full(messages, overhead=100)
    meter.learn(2 * estimated, messages, overhead=100)
    assert meter.scale == pytest.approx(2.0)
    assert meter.estimate(messages, overhead=100) == 2 * estimated
    assert meter.full(messages, overhead=100) == 2 * estimated
    grown = [*messages, {"role": "user", "content": "more " * 100}]
    added = estimate_tokens(grown[-1])
    assert meter.estimate(grown, overhead=100) == 2 * estimated + 2 * added
    meter.learn(estimated // 2, messages, overhead=100)  # a lower count never lowers the scale
    assert meter.scale == pytest.approx(2.0)


def test_estimate_overestimates_the_fakes_count() -> None:
    # The fake counts 4 characters per token: the estimate must not fall below it.
    text = "def f(x):\n    return x  # ünïcode\n" * 50
    assert estimate_tokens({"type": "text", "text": text}) >= len(text) / 4


# ------------------------------------------------------------------ clearing


def test_clearing_keeps_the_last_three_rounds_and_the_plan_tools() -> None:
    messages = session(6)
    before = copy.deepcopy(messages)
    cleared = clear_old_tool_results(messages, keeps)
    assert messages == before, "the input is never modified"
    out = cleared.messages
    assert len(out) == len(messages)
    # rounds 0..2 are old: round 0 (read_file) is cleared, todo and write_scratchpad stay
    (r0,) = tool_results(out[2])
    assert r0["content"].startswith(NOTE_PREFIX)
    assert 'read_file {"path":"src/m0.py"}' in r0["content"]
    assert f"returned {len('line 0' + chr(10)) * 400:,} characters" in r0["content"]
    assert "Call the tool again if you need it." in r0["content"]
    assert tool_results(out[4]) == tool_results(messages[4])  # todo
    assert tool_results(out[6]) == tool_results(messages[6])  # write_scratchpad
    # the last three rounds (3, 4, 5) are as they were, the same objects
    for index in range(7, len(messages)):
        assert out[index] is messages[index]
    # assistant messages (thinking, tool_use) are untouched
    for index in range(1, len(messages), 2):
        assert out[index] is messages[index]
    assert cleared.results == 1 and cleared.chars == len("line 0\n") * 400
    valid(out, thinking={"type": "enabled", "budget_tokens": 1024})
    again = clear_old_tool_results(out, keeps)
    assert again.results == 0 and again.messages == out


def test_small_results_and_errors_keep_their_shape() -> None:
    messages: list[Any] = [{"role": "user", "content": "go"}]
    messages += round_of(0, "grep", {"pattern": "x"}, "no match")
    messages += round_of(1, "read_file", {"path": "a"}, "E" * 3000, is_error=True)
    for n in range(2, 5):
        messages += round_of(n, "grep", {"pattern": "y"}, "a:1")
    out = clear_old_tool_results(messages, keeps).messages
    (small,) = tool_results(out[2])
    assert small["content"] == "no match", "a note would not be shorter"
    (error,) = tool_results(out[4])
    assert error["content"].startswith(NOTE_PREFIX) and error["is_error"] is True
    valid(out)


def test_notes_quote_long_inputs_briefly() -> None:
    messages: list[Any] = [{"role": "user", "content": "go"}]
    messages += round_of(0, "grep", {"pattern": "p" * 1000}, "m" * 5000)
    for n in range(1, 4):
        messages += round_of(n, "grep", {"pattern": "y"}, "a:1")
    (note,) = tool_results(clear_old_tool_results(messages, keeps).messages[2])
    assert len(note["content"]) < 300 and "…" in note["content"]


def test_fewer_rounds_than_kept_clears_nothing() -> None:
    messages = session(3)
    cleared = clear_old_tool_results(messages, keeps)
    assert cleared.results == 0 and cleared.messages == messages


def test_list_content_results_are_measured_and_cleared() -> None:
    messages: list[Any] = [{"role": "user", "content": "go"}]
    messages += round_of(0, "read_file", {"path": "a"}, "")
    messages[2]["content"][0]["content"] = [{"type": "text", "text": "z" * 2000}]
    for n in range(1, 4):
        messages += round_of(n, "grep", {"pattern": "y"}, "a:1")
    cleared = clear_old_tool_results(messages, keeps)
    assert cleared.chars == 2000
    valid(cleared.messages)


def test_the_notice_after_clearing_holds_the_plan_and_scratchpad_verbatim() -> None:
    cleared = clear_old_tool_results(session(6), keeps)
    notice = clearing_notice(cleared, PLAN, SCRATCH)
    out = append_text(cleared.messages, notice)
    assert PLAN in out[-1]["content"][-1]["text"] and SCRATCH in notice
    assert out[-1]["content"][0]["type"] == "tool_result", "text goes after the tool results"
    valid(out)


# ------------------------------------------------------------------ summary


def test_summary_request_appends_the_instruction_and_keeps_the_prefix() -> None:
    messages = session(5)
    request = summary_request(messages)
    assert request[:-1] == messages[:-1]
    assert request[-1]["content"][:-1] == messages[-1]["content"]
    assert request[-1]["content"][-1] == {"type": "text", "text": SUMMARY_INSTRUCTION}
    valid(
        request, tool_choice={"type": "none"}, thinking={"type": "enabled", "budget_tokens": 1024}
    )
    ended = [*messages, {"role": "assistant", "content": [{"type": "text", "text": "Done."}]}]
    assert summary_request(ended)[-1] == {
        "role": "user",
        "content": [{"type": "text", "text": SUMMARY_INSTRUCTION}],
    }
    pending = [*messages, round_of(9, "grep", {"pattern": "q"}, "")[0]]
    with pytest.raises(ValueError, match="no results yet"):
        summary_request(pending)


def test_summarized_conversation_keeps_prompts_plan_scratchpad_and_the_last_round() -> None:
    messages = session(6)
    _, last_round = split_last_round(messages)
    out = summarized_conversation(
        messages,
        summary="Read m0..m5; the bug is in parse().",
        current_prompt="Now also add a test",
        plan_rendered=PLAN,
        scratchpad=SCRATCH,
    )
    header = out[0]["content"][0]["text"]
    assert out[0]["role"] == "user" and header.startswith(HEADER_OPEN)
    for kept in ("Fix the bug", "Now also add a test", "the bug is in parse()", PLAN, SCRATCH):
        assert kept in header
    assert out[1:] == last_round and out[1] is messages[-2] and out[2] is messages[-1]
    # thinking of the summarized turns is gone; the last round's is there, unchanged
    dumped = json.dumps(out)
    assert "step 0" not in dumped and "step 4" not in dumped
    assert out[1]["content"][0] == thinking("step 5")
    valid(out, thinking={"type": "enabled", "budget_tokens": 1024})


def test_the_first_prompt_survives_repeated_compactions() -> None:
    messages = session(4)
    once = summarized_conversation(
        messages, summary="s1", current_prompt="second", plan_rendered=PLAN, scratchpad=""
    )
    assert first_prompt(once) == "Fix the bug"
    grown = [*once, *round_of(50, "grep", {"pattern": "z"}, "z:1")]
    twice = summarized_conversation(
        grown, summary="s2", current_prompt="third", plan_rendered="", scratchpad=""
    )
    header = twice[0]["content"][0]["text"]
    assert first_prompt(twice) == "Fix the bug"
    assert "<current-prompt>\nthird\n</current-prompt>" in header
    assert "(no plan yet)" in header and "<scratchpad>\n(empty)\n</scratchpad>" in header
    assert "s1" not in header, "the old summary was summarized, not kept"
    valid(twice)


def test_a_run_start_compacts_with_the_new_prompt_as_the_last_round() -> None:
    messages = [
        *session(4),
        {"role": "assistant", "content": [{"type": "text", "text": "All fixed."}]},
        {"role": "user", "content": [{"type": "text", "text": "Now the docs"}]},
    ]
    out = summarized_conversation(
        messages, summary="s", current_prompt="Now the docs", plan_rendered=PLAN, scratchpad=""
    )
    assert [m["role"] for m in out] == ["user", "assistant", "user"]
    assert out[1:] == messages[-2:]
    valid(out)


def test_fallback_summary_lists_the_calls() -> None:
    text = fallback_summary(session(4))
    assert 'read_file {"path":"src/m0.py"}' in text and "write_scratchpad" in text
    assert "no tools" in fallback_summary([{"role": "user", "content": "hi"}])


def test_an_image_is_estimated_as_an_image_however_long_its_base64_is() -> None:
    from plansight.engine.compaction.rules import IMAGE_TOKENS, estimate_tokens

    source = {"type": "base64", "media_type": "image/png", "data": "A" * 3_000_000}
    result = {
        "type": "tool_result",
        "tool_use_id": "t",
        "content": [{"type": "image", "source": source}],
    }
    message = {"role": "user", "content": [result, {"type": "text", "text": "and a note"}]}
    assert IMAGE_TOKENS <= estimate_tokens(message) < IMAGE_TOKENS + 60
    assert source["data"] == "A" * 3_000_000  # the message itself is left as it was
    two = {"role": "user", "content": [result, result]}
    assert 2 * IMAGE_TOKENS <= estimate_tokens(two) < 2 * IMAGE_TOKENS + 100  # (the JSON around)


def test_context_parts_count_tool_results_apart_from_the_conversation() -> None:
    result = {"type": "tool_result", "tool_use_id": "t1", "content": "x" * 3500}
    messages = [
        {"role": "user", "content": "Read a.py"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "read_file"}]},
        {"role": "user", "content": [result]},
    ]
    parts = context_parts("s" * 350, [{"name": "read_file"}], messages)
    assert parts["toolResults"] == estimate_tokens(result) >= 1000
    assert parts["conversation"] == estimate_tokens("Read a.py") + estimate_tokens(
        messages[1]["content"][0]
    )
    assert parts["systemPrompt"] == estimate_tokens("s" * 350) + estimate_tokens(
        [{"name": "read_file"}]
    )
