"""The agent loop against the fake Messages API, through the real SDK over HTTP."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
from pathlib import Path
from typing import Any

import pytest

from plansight.engine.events import (
    Event,
    PlanDraft,
    Reminder,
    ReminderCleared,
    RunFinished,
    TextDelta,
)
from plansight.engine.hooks import EditDecision, EditProposal
from plansight.fakeapi import FakeMessagesAPI, Hang, HttpError, StreamError, reply
from plansight.fakeapi import text_reply as text
from plansight.fakeapi import tool_reply as tool
from plansight.plan.plan import PlanError, StalePlanError
from plansight.session.session import Session
from plansight.session.settings import SessionSettings
from plansight.workspace.sandbox import CommandSandbox, SandboxOptions

from conftest import block_types, make_session, strip_cache_control, user_texts, wait_until

REMINDER = "<reminder>Update your todos.</reminder>"


def plan(*specs: tuple[str, str, str]) -> dict[str, Any]:
    return {"items": [{"id": i, "text": t, "status": s} for i, t, s in specs]}


def collect(session: Any) -> list[Event]:
    events: list[Event] = []
    session.events.subscribe(events.append)
    return events


async def test_a_simple_run_streams_text_and_ends_done(
    hello_workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    fake_api.push(text("All good, nothing to do here."))
    session = make_session(hello_workspace, fake_api)
    events = collect(session)
    result = await session.run("Say hi")
    assert result.status == "done"
    assert result.text == "All good, nothing to do here."
    assert result.rounds == 1
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == result.text
    body = fake_api.bodies[0]
    assert body["model"] == "claude-sonnet-5-5"
    assert body["stream"] is True
    assert {t["name"] for t in body["tools"]} == {
        "read_file",
        "write_file",
        "edit_file",
        "list_files",
        "grep",
        "bash",
        "todo",
        "read_scratchpad",
        "write_scratchpad",
        "submit_plan",
        "ask_user",
    }
    assert "todo" in body["system"][0]["text"]
    assert result.usage.output_tokens > 0


async def test_reminder_after_three_rounds_without_todo_goes_after_the_tool_results(
    hello_workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    fake_api.push(
        tool("todo", plan(("1", "Read hello.py", "in_progress"))),
        tool("read_file", {"path": "hello.py"}),  # 1 round without todo
        tool("read_file", {"path": "test_hello.py"}),  # 2
        reply("Two at once.", [("list_files", {}), ("grep", {"pattern": "def"})]),  # 3
        tool("read_file", {"path": "hello.py", "offset": 4, "limit": 2}),  # 4
        tool("todo", plan(("1", "Read hello.py", "completed"))),  # plan updated
        tool("read_file", {"path": "hello.py"}),  # 1 again
        text("Done."),
    )
    session = make_session(hello_workspace, fake_api)
    events = collect(session)
    result = await session.run("Look around")
    assert result.status == "done", result
    bodies = fake_api.bodies
    last_user = [b["messages"][-1] for b in bodies]
    # Requests 2 and 3 carry the results of rounds 1 and 2 without todo: no reminder.
    assert not any(REMINDER in t for t in user_texts(last_user[2]))
    # Request 5 returns round 4's two tool results (3rd round without todo): results first.
    assert block_types(last_user[4]) == ["tool_result", "tool_result", "text"]
    assert user_texts(last_user[4])[-1] == REMINDER
    # And again the next round, until todo is called.
    assert block_types(last_user[5])[0] == "tool_result"
    assert user_texts(last_user[5])[-1] == REMINDER
    assert not any("reminder" in t for t in user_texts(last_user[6]))
    assert not any("reminder" in t for t in user_texts(last_user[7]))
    # Nothing earlier was rewritten: each request extends the previous one.
    for before, after in itertools.pairwise(bodies):
        n = len(before["messages"])
        assert strip_cache_control(after["messages"][:n]) == strip_cache_control(before["messages"])
    reminders = [e for e in events if isinstance(e, Reminder)]
    assert [(r.level, r.rounds) for r in reminders] == [(1, 3), (1, 4)]
    assert reminders[-1].location is not None and reminders[-1].location.path == "hello.py"
    assert reminders[-1].location.start_line == 3  # offset 4 is the 4th line (0-based 3)
    assert any(isinstance(e, ReminderCleared) for e in events)


async def test_reminder_wording_grows_stronger_at_six_and_nine_rounds(
    hello_workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    fake_api.push(*[tool("read_scratchpad", {}) for _ in range(10)], text("ok"))
    session = make_session(hello_workspace, fake_api)
    session.edit_plan(plan(("1", "Think", "completed"))["items"], None)  # done: no gate
    events = collect(session)
    await session.run("Think")
    levels = [(e.rounds, e.level) for e in events if isinstance(e, Reminder)]
    assert levels == [(3, 1), (4, 1), (5, 1), (6, 2), (7, 2), (8, 2), (9, 3), (10, 3)]
    texts = [user_texts(b["messages"][-1])[-1] for b in fake_api.bodies[3:]]
    assert texts[0] == REMINDER
    assert all(t.startswith("<reminder>") and t.endswith("</reminder>") for t in texts)
    assert texts[3] != REMINDER and texts[6] not in (REMINDER, texts[3])


async def test_the_done_gate_asks_once_about_open_items(
    hello_workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    fake_api.push(
        tool("todo", plan(("1", "Add hints", "in_progress"), ("2", "Add docs", "pending"))),
        text("I am done."),
        text("Item 2 is out of scope, stopping."),
    )
    session = make_session(hello_workspace, fake_api)
    result = await session.run("Refactor")
    assert result.status == "done"
    assert result.text == "Item 2 is out of scope, stopping."
    assert len(fake_api.bodies) == 3
    gate = "\n".join(user_texts(fake_api.bodies[2]["messages"][-1]))
    assert "#1: Add hints" in gate and "#2: Add docs" in gate
    assert "cancel" in gate and "explain" in gate


async def test_api_retries_then_succeeds(hello_workspace: Path, fake_api: FakeMessagesAPI) -> None:
    fake_api.push(
        HttpError(429, headers={"retry-after": "0"}),
        HttpError(529, headers={"retry-after": "0"}),
        text("Finally."),
    )
    result = await make_session(hello_workspace, fake_api).run("hi")
    assert result.status == "done" and result.text == "Finally."
    assert len(fake_api.message_requests) == 3


async def test_api_refusal_ends_the_run_with_the_apis_message(
    hello_workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    fake_api.push(HttpError(400, message="prompt is too long: 300000 tokens > 200000 maximum"))
    session = make_session(hello_workspace, fake_api)
    result = await session.run("hi")
    assert result.status == "error"
    assert result.error is not None and "prompt is too long" in result.error
    # The conversation stays valid: a next run goes through the validating fake.
    fake_api.push(text("ok"))
    assert (await session.run("again")).status == "done"


async def test_error_events_mid_stream_are_retried_then_end_the_run_cleanly(
    hello_workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    # Retried like a 529 (the SDK's two retries), then the run ends with the API's words.
    fake_api.push(*[StreamError(after_blocks=1, message="Overloaded") for _ in range(3)])
    session = make_session(hello_workspace, fake_api)
    result = await session.run("hi")
    assert result.status == "error" and result.error and "Overloaded" in result.error
    assert len(fake_api.message_requests) == 3
    fake_api.push(text("recovered"))
    assert (await session.run("again")).text == "recovered"
    assert fake_api.message_requests[-1].status == 200


async def test_round_limit_ends_a_runaway_run(
    hello_workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    fake_api.push(*[tool("read_scratchpad", {}) for _ in range(5)])
    result = await make_session(hello_workspace, fake_api, max_rounds=3).run("loop")
    assert result.status == "limit" and result.rounds == 3
    assert len(fake_api.bodies) == 3


async def test_usage_is_summed_over_the_run(
    hello_workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    fake_api.push(
        reply(
            "a",
            [("read_scratchpad", {})],
            usage={
                "input_tokens": 10,
                "output_tokens": 5,
                "cache_read_input_tokens": 100,
                "cache_creation_input_tokens": 7,
            },
        ),
        reply(
            "b",
            usage={
                "input_tokens": 1,
                "output_tokens": 2,
                "cache_read_input_tokens": 200,
                "cache_creation_input_tokens": 3,
            },
        ),
    )
    result = await make_session(hello_workspace, fake_api).run("hi")
    assert result.usage.to_wire() == {
        "inputTokens": 11,
        "outputTokens": 7,
        "cacheReadInputTokens": 300,
        "cacheCreationInputTokens": 10,
        "totalInputTokens": 321,  # the whole input: 11 + 300 + 10
    }


async def test_cache_breakpoints_cover_the_prefix_and_the_newest_messages(
    hello_workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    fake_api.push(*[tool("read_file", {"path": "hello.py"}) for _ in range(3)], text("ok"))
    await make_session(hello_workspace, fake_api).run("read")
    for body in fake_api.bodies:
        marked = [
            (i, j)
            for i, m in enumerate(body["messages"])
            for j, b in enumerate(m["content"])
            if isinstance(b, dict) and "cache_control" in b
        ]
        assert "cache_control" in body["system"][-1]
        assert len(marked) <= 3
        last = len(body["messages"]) - 1
        assert (last, len(body["messages"][last]["content"]) - 1) in marked
        if last >= 2:
            assert (last - 2, len(body["messages"][last - 2]["content"]) - 1) in marked
    # The simulated cache reads the previous round's prefix from round 2 on.
    reads = [r.usage["cache_read_input_tokens"] for r in fake_api.message_requests if r.usage]
    assert all(reads[1:]), reads


async def test_cancel_mid_stream_leaves_the_conversation_valid(
    hello_workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    fake_api.push(Hang(30))
    session = make_session(hello_workspace, fake_api)
    events = collect(session)
    task = asyncio.create_task(session.run("slow"))
    await wait_until(lambda: bool(fake_api.message_requests))
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        pass
    finished = [e for e in events if isinstance(e, RunFinished)]
    assert finished and finished[-1].result.status == "cancelled"
    assert not session.running
    fake_api.push(text("back"))
    assert (await session.run("again")).text == "back"
    last = fake_api.bodies[-1]["messages"]
    assert [m["role"] for m in last] == ["user"]  # the two prompts joined one user turn
    assert user_texts(last[0])[:1] == ["slow"] and "again" in user_texts(last[0])


async def test_a_cancelled_prompt_is_marked_interrupted_with_what_the_user_saw(
    hello_workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    # Version 4: the next prompt joins the stopped one's user message, so the stopped one must
    # say it is no live instruction, and keep the text already streamed to the user.
    fake_api.push(text("I will delete every test file first. " * 40, chunk_delay=0.2))
    session = make_session(hello_workspace, fake_api)
    events = collect(session)
    task = asyncio.create_task(session.run("Delete the tests"))
    await wait_until(lambda: any(isinstance(e, TextDelta) for e in events), "text streamed")
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
    seen = "".join(e.text for e in events if isinstance(e, TextDelta)).strip()
    fake_api.push(text("Hello."))
    await session.run("Just say hello")
    [message] = fake_api.bodies[-1]["messages"]
    texts = user_texts(message)
    assert texts[0] == "Delete the tests" and texts[-1] == "Just say hello"
    [note] = [t for t in texts if t.startswith("<interrupted>")]
    assert texts.index(note) == 1 and "not an instruction to carry out now" in note
    assert json.dumps(seen) in note and seen.startswith("I will delete")


async def test_cancel_mid_tool_kills_the_command_and_answers_its_tool_use(
    hello_workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    pid_file = hello_workspace / "child.pid"
    fake_api.push(tool("bash", {"command": f"sleep 300 & echo $! > {pid_file.name}; wait"}))
    session = make_session(hello_workspace, fake_api)
    # Unsandboxed: the test follows the child by its host pid (`$!`).
    session.ctx.sandbox = CommandSandbox(hello_workspace, SandboxOptions(enabled=False))
    task = asyncio.create_task(session.run("run it"))
    await wait_until(lambda: pid_file.exists() and bool(pid_file.read_text().strip()))
    pid = int(pid_file.read_text())
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        pass
    # Killed at once; the kernel may take a moment to tear it down.
    await wait_until(lambda: not _alive(pid), "the command's child is gone")
    fake_api.push(text("ok"))
    await session.run("next")
    first_next = fake_api.bodies[-1]["messages"][2]
    assert first_next["role"] == "user"
    assert first_next["content"][0]["type"] == "tool_result"
    assert first_next["content"][0]["is_error"] is True
    assert "next" in user_texts(first_next)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie still answers kill(0); look at its state.
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False


def test_a_user_plan_edit_is_told_once_and_a_refused_one_never(tmp_path: Path) -> None:
    session = Session(tmp_path, SessionSettings())
    notices, ctx = session.notices, session.ctx
    with pytest.raises(PlanError):
        session.edit_plan([{"id": "1", "text": "a", "status": "started"}])
    with pytest.raises(StalePlanError):
        session.edit_plan([{"id": "1", "text": "a", "status": "pending"}], version=7)
    assert notices.drain(ctx) == []
    session.edit_plan([{"id": "1", "text": "mine", "status": "pending"}])
    [block] = notices.drain(ctx)
    assert block["text"] == (
        "<plan-update>The user edited your plan. It is now:\n[ ] #1: mine\n(0/1 completed)\n"
        "Work from this plan.</plan-update>"
    )
    assert notices.drain(ctx) == []
    # A new session starts with nothing to tell.
    session.edit_plan([{"id": "1", "text": "again", "status": "pending"}])
    session.changes.files_changed([str(tmp_path / "f.txt")])
    session.reset()
    assert notices.drain(ctx) == []


async def test_user_plan_edit_reaches_the_model_after_the_tool_results(
    hello_workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    session = make_session(hello_workspace, fake_api)

    def step_two(body: dict[str, Any]) -> Any:
        return text("noted")

    fake_api.push(
        tool("todo", plan(("1", "a", "in_progress"))), tool("read_scratchpad", {}), step_two
    )
    events = collect(session)

    def edit_on_first_result(event: Event) -> None:
        if getattr(event, "type", "") == "toolResult" and getattr(event, "name", "") == "todo":
            session.edit_plan([{"id": "1", "text": "a", "status": "completed"}], None)

    session.events.subscribe(edit_on_first_result)
    result = await session.run("go")
    assert result.status == "done"
    second = fake_api.bodies[1]["messages"][-1]
    assert block_types(second)[0] == "tool_result"
    notice = user_texts(second)[-1]
    assert "The user edited your plan" in notice and "[x] #1: a" in notice
    assert any(getattr(e, "type", "") == "planChanged" for e in events)


async def test_edit_review_outcomes_reach_the_model(
    hello_workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    decisions = [
        EditDecision(accepted=False, feedback="Use f-strings instead"),
        EditDecision(accepted=True, new_text=None),
    ]
    seen: list[EditProposal] = []

    async def review(proposal: EditProposal) -> EditDecision:
        seen.append(proposal)
        return decisions.pop(0)

    edit = {
        "path": "hello.py",
        "old_text": '"Hello, " + name + "!"',
        "new_text": 'f"Hello, {name}!"',
    }
    fake_api.push(
        tool("todo", plan(("1", "Use f-strings", "in_progress"))),
        tool("read_file", {"path": "hello.py"}),
        tool("edit_file", edit),
        tool("edit_file", edit),
        tool("todo", plan(("1", "Use f-strings", "completed"))),
        text("Done."),
    )
    session = make_session(hello_workspace, fake_api, review=review)
    assert (await session.run("f-strings please")).status == "done"
    rejected = fake_api.bodies[3]["messages"][-1]["content"][0]
    assert rejected["type"] == "tool_result" and rejected.get("is_error") is True
    assert "Use f-strings instead" in str(rejected["content"])
    assert 'f"Hello, {name}!"' in (hello_workspace / "hello.py").read_text()
    assert seen[0].todo_id == "1" and seen[0].old_text != seen[0].new_text


async def test_plan_items_show_as_a_draft_while_the_todo_call_streams(
    hello_workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    items = plan(
        ("1", "Add hints", "in_progress"),
        ("2", "Add docs", "pending"),
        ("3", "Run tests", "pending"),
    )
    fake_api.push(reply(None, [("todo", items)], chunk_delay=0.002), text("ok"))
    session = make_session(hello_workspace, fake_api)
    events = collect(session)
    await session.run("plan it")
    kinds = [e.type for e in events if e.type in ("planDraft", "planChanged")]
    assert kinds.index("planDraft") < kinds.index("planChanged")
    drafts = [e for e in events if isinstance(e, PlanDraft)]
    assert [len(d.items) for d in drafts] == sorted({len(d.items) for d in drafts})
    assert drafts[-1].items[-1] == {"id": "3", "text": "Run tests", "status": "pending"}


async def test_the_reminder_clears_as_soon_as_todo_is_accepted_mid_round(
    hello_workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    fake_api.push(
        *[tool("read_scratchpad", {}) for _ in range(3)],
        reply("Back on plan.", [("todo", plan(("1", "x", "completed"))), ("read_scratchpad", {})]),
        text("done"),
    )
    session = make_session(hello_workspace, fake_api)
    session.edit_plan(plan(("1", "x", "in_progress"))["items"], None)  # one to update
    events = collect(session)
    await session.run("go")
    kinds = [(e.type, getattr(e, "name", "")) for e in events]
    cleared = kinds.index(("reminderCleared", ""))
    assert kinds.index(("reminder", "")) < cleared
    assert cleared < kinds.index(("toolCall", "read_scratchpad"), kinds.index(("toolCall", "todo")))
    assert kinds.count(("reminderCleared", "")) == 1
    assert kinds[-1] == ("runFinished", "")
