"""Compaction in running sessions, through the real SDK against a fake that enforces its
context window with the real 400: requests stay inside it, the plan and scratchpad are in the
conversation verbatim after every compaction, a prompt-too-long refusal compacts and retries,
and the cache serves the new prefix."""

from __future__ import annotations

import asyncio
import itertools
import json
from pathlib import Path
from typing import Any

import pytest

from plansight.engine.compaction.compactor import DEFAULT_COMPACT_AT, CompactionSettings
from plansight.engine.compaction.rules import HEADER_OPEN, NOTE_PREFIX, SUMMARY_INSTRUCTION
from plansight.engine.events import Compacted, Event
from plansight.engine.hooks import accept_all_edits, approve_all_commands
from plansight.engine.model import ModelSettings, ThinkingOption
from plansight.fakeapi import FakeMessagesAPI, Hang, HttpError, Reply, Step
from plansight.fakeapi import text_reply as text
from plansight.fakeapi import tool_reply as tool
from plansight.session.lock import SessionBusy
from plansight.session.session import Session
from plansight.session.settings import SessionSettings
from plansight.session.storage import SessionStore

from conftest import strip_cache_control, wait_until

MODEL = "claude-sonnet-5-5"
PLAN = {
    "items": [
        {"id": "1", "text": "Read every module", "status": "in_progress"},
        {"id": "2", "text": "Summarize the design", "status": "pending"},
    ]
}
RENDERED = "[>] #1: Read every module\n[ ] #2: Summarize the design\n(0/2 completed)"
NOTES = "modules m0..m9; the parser is in m3"


def finish(answer: str = "Done.") -> list[Step]:
    """The last answer, then one more after the done gate (the plan stays open)."""
    return [text(answer), text("The plan stays open on purpose.")]


def big_files(root: Path, count: int, lines: int = 100) -> list[str]:
    names = []
    for n in range(count):
        name = f"m{n}.py"
        body = "".join(f"value_{n}_{i} = {i}  # {'padding ' * 5}\n" for i in range(lines))
        (root / name).write_text(body)
        names.append(name)
    return names


def session_for(
    root: Path,
    api: FakeMessagesAPI,
    *,
    context_window: int | None = None,
    compact_at: float = DEFAULT_COMPACT_AT,
    thinking: ThinkingOption | None = None,
) -> Session:
    options = SessionSettings(
        ModelSettings(model=MODEL, api_key="test-key", base_url=api.base_url, thinking=thinking),
        CompactionSettings(context_window, compact_at),
    )
    return Session(root, options, review=accept_all_edits, approve=approve_all_commands)


def compactions(events: list[Event]) -> list[Compacted]:
    return [e for e in events if isinstance(e, Compacted)]


def reading(names: list[str]) -> list[Step]:
    return [
        tool("todo", PLAN),
        tool("write_scratchpad", {"content": NOTES}),
        *[tool("read_file", {"path": name}) for name in names],
    ]


def is_summary_request(body: dict[str, Any]) -> bool:
    last = body["messages"][-1]["content"][-1]
    return last.get("text") == SUMMARY_INSTRUCTION


class Model:
    """Answers each request with the next scripted step, and any summary request (whenever
    compaction asks) with ``summary``, after checking it is shaped as one."""

    def __init__(self, steps: list[Step], summary: str = "SUMMARY") -> None:
        self.steps = list(steps)
        self.summary = summary
        self.summary_requests: list[dict[str, Any]] = []

    def __call__(self, body: dict[str, Any]) -> Step:
        if is_summary_request(body):
            assert body["tool_choice"] == {"type": "none"}
            self.summary_requests.append(body)
            return text(self.summary)
        assert body.get("tool_choice") is None
        return self.steps.pop(0)

    def script(self, extra: int = 10) -> list[Any]:
        return [self] * (len(self.steps) + extra)


async def test_clearing_keeps_every_request_inside_the_window(
    hello_workspace: Path,
) -> None:
    names = big_files(hello_workspace, 8)
    with FakeMessagesAPI([*reading(names), *finish()], context_window=20_000) as api:
        session = session_for(hello_workspace, api, context_window=20_000)
        events: list[Event] = []
        session.events.subscribe(events.append)
        result = await session.run("Read every module")
    assert result.status == "done", result
    assert all(r.status == 200 for r in api.message_requests), "no request over the window"
    done = compactions(events)
    assert done and all(c.strategy == "clearToolResults" for c in done)
    assert all(c.after_tokens < c.before_tokens for c in done)
    first = next(i for i, b in enumerate(api.bodies) if NOTE_PREFIX in json.dumps(b))
    for body in api.bodies[first:]:
        sent = json.dumps(body["messages"])
        assert json.dumps(RENDERED)[1:-1] in sent, "the plan verbatim after a compaction"
        assert NOTES in sent
    # every tool_use still has its result (the fake checked it), the notes name the calls
    assert 'read_file {\\"path\\":\\"m0.py\\"}' in json.dumps(api.bodies[-1])
    # the cache serves the new prefix from the request after the compaction on
    after = api.message_requests[first + 1]
    assert after.usage is not None and after.prompt_tokens is not None
    assert after.usage["cache_read_input_tokens"] > after.prompt_tokens // 2


async def test_a_summary_when_clearing_is_not_enough(hello_workspace: Path) -> None:
    names = big_files(hello_workspace, 5)
    model = Model([*reading(names), *finish()], "SUMMARY: read m0..m3, nothing changed yet.")
    with FakeMessagesAPI(model.script(), context_window=12_000) as api:
        session = session_for(hello_workspace, api, context_window=12_000, compact_at=0.5)
        events: list[Event] = []
        session.events.subscribe(events.append)
        result = await session.run("Read every module")
    assert result.status == "done", result
    assert all(r.status == 200 for r in api.message_requests)
    assert {c.strategy for c in compactions(events)} == {"summary"}
    request = model.summary_requests[0]
    index = next(i for i, b in enumerate(api.bodies) if b is request or b == request)
    before = api.bodies[index - 1]
    assert request["system"] == before["system"] and request["tools"] == before["tools"]
    # It summarizes the conversation before the last round, as the previous request sent it
    # (so its cached prefix serves): that request's messages, then the instruction.
    asked, sent = strip_cache_control(request["messages"]), strip_cache_control(before["messages"])
    assert asked[:-1] == sent[:-1]
    assert asked[-1]["content"] == [
        *sent[-1]["content"],
        {"type": "text", "text": SUMMARY_INSTRUCTION},
    ]
    after = api.bodies[index + 1]["messages"]
    header = after[0]["content"][0]["text"]
    assert after[0]["role"] == "user" and header.startswith(HEADER_OPEN)
    for kept in ("Read every module", "SUMMARY: read m0..m3", RENDERED, NOTES):
        assert kept in header
    # then the last round as it was: the last response and the results it got
    assert [m["role"] for m in after] == ["user", "assistant", "user"]
    assert after[1]["content"][-1]["type"] == "tool_use"
    assert after[2]["content"][0]["type"] == "tool_result"
    summary_usage = api.message_requests[index].usage
    assert summary_usage is not None
    total_output = sum((r.usage or {}).get("output_tokens", 0) for r in api.message_requests)
    assert result.usage.output_tokens == total_output, "the summary requests count in the usage"


async def test_prompt_too_long_compacts_with_the_apis_count_and_retries_once(
    hello_workspace: Path,
) -> None:
    names = big_files(hello_workspace, 6)
    model = Model([*reading(names), *finish()], "SUMMARY: read the modules.")
    # The session thinks the window is 200,000; the fake knows it is 9,000.
    with FakeMessagesAPI(model.script(), context_window=9_000) as api:
        session = session_for(hello_workspace, api)
        events: list[Event] = []
        session.events.subscribe(events.append)
        result = await session.run("Read every module")
    assert result.status == "done", result
    refused = [r for r in api.message_requests if r.status == 400]
    assert len(refused) == 1 and "prompt is too long" in (refused[0].error or "")
    first = compactions(events)[0]
    assert first.before_tokens == refused[0].prompt_tokens
    retried = api.message_requests[api.message_requests.index(refused[0]) + 1 :]
    assert retried and all(r.status == 200 for r in retried)
    assert all((r.prompt_tokens or 0) <= 9_000 for r in retried)


async def test_a_second_refusal_ends_the_run_and_the_next_run_compacts_first(
    hello_workspace: Path,
) -> None:
    # The API's counts are the truth: even compacted, the last round (a large read) does not
    # fit, so the next run's compaction clears that round's results too.
    too_long = "prompt is too long: 12000 tokens > 10000 maximum"
    names = big_files(hello_workspace, 4)
    model = Model([*reading(names), HttpError(400, message=too_long)], "SUMMARY one")
    answered = len(model.steps) + 1  # each step, and the summary request
    steps: list[Any] = [*[model] * answered, HttpError(400, message=too_long)]
    with FakeMessagesAPI(steps) as api:
        session = session_for(hello_workspace, api)
        events: list[Event] = []
        session.events.subscribe(events.append)
        failed = await session.run("Plan it")
        assert failed.status == "error" and failed.error is not None
        assert too_long in failed.error
        assert len(compactions(events)) == 1
        model.steps = finish("Fine now.")
        api.push(*model.script())
        requests_before = len(api.message_requests)
        again = await session.run("Go on")
    assert again.status == "done"
    assert len(compactions(events)) == 2, "the next run compacted before its first request"
    assert is_summary_request(api.bodies[requests_before]), "its first request is the summary"
    assert "Go on" in api.bodies[-1]["messages"][0]["content"][0]["text"]


async def test_compact_on_request_and_refused_while_running(hello_workspace: Path) -> None:
    names = big_files(hello_workspace, 4)
    model = Model([*reading(names), *finish(), Hang(30)], "SUMMARY on request")
    with FakeMessagesAPI(model.script()) as api:
        session = session_for(hello_workspace, api)
        assert (await session.run("Read every module")).status == "done"
        before = len(session.conversation.messages)
        result = await session.compact()
        assert result.strategy == "summary" and result.after_tokens < result.before_tokens
        messages = session.conversation.messages
        assert len(messages) < before and RENDERED in messages[0]["content"][0]["text"]
        assert "SUMMARY on request" in messages[0]["content"][0]["text"]
        # while a run is in progress, compaction is refused
        run = asyncio.create_task(session.run("More"))
        await wait_until(lambda: session.running, "the second run started")
        with pytest.raises(SessionBusy):
            await session.compact()
        run.cancel()
        with pytest.raises(asyncio.CancelledError):
            await run


async def test_compact_on_request_asks_as_the_runs_do_and_names_the_last_prompt(
    hello_workspace: Path, tmp_path: Path
) -> None:
    """The summary request has the runs' own system prompt and tools (with `planning: false`
    too: the cached prefix serves it), and the header names the last run's prompt, also after
    a restart."""
    names = big_files(hello_workspace, 3)
    steps = [*[tool("read_file", {"path": name}) for name in names], text("Read.")]
    model = Model(steps, "SUMMARY on request")
    with FakeMessagesAPI(model.script()) as api:
        settings = SessionSettings(
            ModelSettings(model=MODEL, api_key="test-key", base_url=api.base_url), planning=False
        )

        def start() -> Session:
            return Session(hello_workspace, settings, store=SessionStore(tmp_path / "state"))

        session = start()
        assert (await session.run("Read the modules")).status == "done"
        run_request = api.bodies[-1]
        await session.compact()
        summary_request = model.summary_requests[-1]
        assert summary_request["system"] == run_request["system"]
        assert summary_request["tools"] == run_request["tools"]
        restarted = start()
        assert restarted.load_stored()
        await restarted.compact()
        header = restarted.conversation.messages[0]["content"][0]["text"]
        assert "<current-prompt>\nRead the modules\n</current-prompt>" in header


async def test_thinking_of_summarized_turns_goes_and_the_last_rounds_stays(
    hello_workspace: Path,
) -> None:
    names = big_files(hello_workspace, 5)
    thought: list[Step] = [
        Reply(
            content=[
                {"type": "thinking", "thinking": f"Next: {n}"},
                *tool("read_file", {"path": n}).content,
            ]
        )
        for n in names
    ]
    model = Model([tool("todo", PLAN), *thought, *finish()], "SUMMARY thinking")
    with FakeMessagesAPI(model.script(), context_window=12_000) as api:
        session = session_for(
            hello_workspace, api, context_window=12_000, compact_at=0.5, thinking=ThinkingOption()
        )
        result = await session.run("Read every module")
    assert result.status == "done", result
    assert all(r.status == 200 for r in api.message_requests), "thinking rules held throughout"
    assert model.summary_requests
    last = model.summary_requests[-1]
    after = api.bodies[api.bodies.index(last) + 1]["messages"]
    assert after[1]["content"][0]["type"] == "thinking"
    kept = after[1]["content"][0]["thinking"]
    assert json.dumps(after).count("Next: ") == 1, f"only the last round's thinking: {kept}"


async def test_the_stored_conversation_is_the_compacted_one_even_when_only_its_head_changed(
    hello_workspace: Path, tmp_path: Path
) -> None:
    from plansight.session.storage import SessionStore

    names = big_files(hello_workspace, 4)
    model = Model([*reading(names), *finish()], "SUMMARY again")
    with FakeMessagesAPI(model.script()) as api:
        store = SessionStore(tmp_path / "state")
        options = SessionSettings(ModelSettings(model=MODEL, api_key="k", base_url=api.base_url))
        session = Session(hello_workspace, options, review=accept_all_edits, store=store)
        assert (await session.run("Read every module")).status == "done"
        await session.compact()
        model.summary = "SUMMARY 2nd"  # no longer than the first: never a larger conversation
        await session.compact()  # same length, same last round: only the first message differs
    assert store.conversation.load() == session.conversation.messages
    assert "SUMMARY 2nd" in json.dumps(store.conversation.load())


async def test_the_window_comes_from_the_models_api_where_the_endpoint_has_it(
    hello_workspace: Path,
) -> None:
    from plansight.fakeapi import model_info

    names = big_files(hello_workspace, 8)
    model = Model([*reading(names), *finish()])
    models = [model_info(MODEL, max_input_tokens=20_000)]
    # The fake enforces the model's max_input_tokens; the session is given no contextWindow.
    with FakeMessagesAPI(model.script(), models=models) as api:
        session = session_for(hello_workspace, api)
        events: list[Event] = []
        session.events.subscribe(events.append)
        result = await session.run("Read every module")
    assert result.status == "done", result
    assert compactions(events), "compacted below the model's 20,000 tokens"
    assert all(r.status == 200 for r in api.message_requests)
    assert max(r.prompt_tokens or 0 for r in api.message_requests) <= 20_000
    asked = [r for r in api.requests if r.path_only == f"/v1/models/{MODEL}"]
    assert len(asked) == 1


# ----- a window the plan and the scratchpad fill much of (issue 21) -----------------------------

BIG_PLAN = {
    "items": [
        {
            "id": str(n),
            "text": f"Read module m{n} and note every function it defines and who calls it",
            "status": "in_progress" if n == 1 else "pending",
        }
        for n in range(1, 13)
    ]
}
BIG_NOTES = "".join(
    f"- finding {n}: the parser in m3 keeps state between calls\n" for n in range(90)
)


def crowded(names: list[str]) -> list[Step]:
    """A long plan and long notes first, then one small read per round."""
    return [
        tool("todo", BIG_PLAN),
        tool("write_scratchpad", {"content": BIG_NOTES}),
        *[tool("read_file", {"path": name}) for name in names],
    ]


async def test_compactions_shrink_the_request_and_wait_until_it_grew_again(
    hello_workspace: Path,
) -> None:
    """The plan, the notes and the tools alone fill three quarters of the window, as in
    `plansight demo --compaction` once did: each summary then made the request larger, and
    one came every round."""
    window = 5_500
    names = big_files(hello_workspace, 16, lines=12)
    model = Model([*crowded(names), *finish()], "SUMMARY: read the modules one by one.")
    with FakeMessagesAPI(model.script(), context_window=window) as api:
        session = session_for(hello_workspace, api, context_window=window)
        events: list[Event] = []
        session.events.subscribe(events.append)
        result = await session.run("Read every module")
    assert result.status == "done", result
    assert all(r.status == 200 for r in api.message_requests), "no request over the window"
    done = [c for c in compactions(events) if not c.unchanged]
    assert done, "the conversation was compacted"
    # Never larger than before, and each next one only once the request grew by a real margin.
    assert all(c.after_tokens < c.before_tokens for c in done), done
    for earlier, later in itertools.pairwise(done):
        assert later.before_tokens - earlier.after_tokens >= window // 10, done
    # The plan, the notes and the tools take three quarters of this window, so a compaction
    # comes every few rounds; but never one a round, as when each one grew the request.
    assert len(model.summary_requests) * 3 <= len(api.bodies), len(model.summary_requests)
    assert sum(1 for c in compactions(events) if c.unchanged) <= 1
    for body in api.bodies[api.bodies.index(model.summary_requests[0]) + 1 :]:
        text = json.dumps(body["messages"])
        assert json.dumps(BIG_NOTES)[1:-1] in text, "the scratchpad verbatim"


async def test_when_nothing_can_be_gained_it_is_said_once_and_the_run_goes_on(
    hello_workspace: Path,
) -> None:
    """The prompt (kept word for word by any compaction), the plan and the tools alone are
    above the threshold: nothing can make the request smaller, so no summary is asked for,
    the conversation stays as it was, the user hears of it once, and the run carries on."""
    window = 8_000
    prompt = "Check these requirements one by one:\n" + "".join(
        f"- requirement {n}: the parser must accept nested lists of depth {n}\n" for n in range(200)
    )
    steps = [tool("todo", PLAN), *[tool("read_file", {"path": "hello.py"}) for _ in range(8)]]
    model = Model([*steps, *finish()], "SUMMARY")
    with FakeMessagesAPI(model.script(), context_window=window) as api:
        session = session_for(hello_workspace, api, context_window=window)
        events: list[Event] = []
        session.events.subscribe(events.append)
        result = await session.run(prompt)
    assert result.status == "done", result
    assert all(r.status == 200 for r in api.message_requests)
    assert model.summary_requests == [], "no summary request that could not help"
    said = compactions(events)
    assert len(said) == 1 and said[0].unchanged, said
    assert said[0].after_tokens == said[0].before_tokens
    assert not any(HEADER_OPEN in json.dumps(b["messages"]) for b in api.bodies)


def test_the_terminal_says_nothing_could_be_compacted_in_words() -> None:
    from plansight.cli.render import compacted_line

    said = compacted_line(4_210, 4_210, "summary", True).plain
    assert said.startswith("⇣ not compacted: nothing could make ~4,210 tokens smaller")
    assert said.endswith("going on")
    assert compacted_line(4_210, 2_000, "summary").plain.startswith("⇣ compacted: ~4,210")


def noise_png(width: int, height: int) -> str:
    """A real PNG of random grey pixels (so it does not compress), base64."""
    import base64
    import os
    import struct
    import zlib

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    rows = b"".join(b"\x00" + os.urandom(width) for _ in range(height))
    png = (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0))
        + chunk(b"IDAT", zlib.compress(rows, 1))
        + chunk(b"IEND", b"")
    )
    return base64.b64encode(png).decode()


async def test_a_screenshot_counts_as_an_image_not_as_its_base64_text(
    hello_workspace: Path,
) -> None:
    # An MCP tool's screenshot: 900 kB of PNG, 1.2 MB of base64, but ~1,100 tokens to the API.
    data = noise_png(1000, 900)
    assert len(data) > 1_000_000
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": data}}
    with FakeMessagesAPI([text("Grey noise.")], context_window=20_000) as api:
        session = session_for(hello_workspace, api, context_window=20_000)
        session.conversation.add_user([{"type": "text", "text": "Take a screenshot"}])
        use = {"type": "tool_use", "id": "toolu_shot", "name": "read_file", "input": {"path": "x"}}
        session.conversation.add_assistant([use])
        session.conversation.add_user(
            [{"type": "tool_result", "tool_use_id": "toolu_shot", "content": [image]}]
        )
        events: list[Event] = []
        session.events.subscribe(events.append)
        result = await session.run("What does the screenshot show?")
    assert result.status == "done", result
    assert compactions(events) == []  # nothing to make room for: it fits the window
    assert [r.status for r in api.message_requests] == [200]  # the fake counted it so too
    assert data in json.dumps(api.bodies[0])  # the user's screenshot reached the model
