"""The nag (reminders.py): when the model is reminded of its plan, in which words, how firmly.

PROTOCOL.md: a round is one model response and the tools it called; the count starts at 0 with
each run and only an accepted `todo` call resets it; from 3 consecutive rounds without one the
round's tool results are followed by `<reminder>Update your todos.</reminder>`, with stronger
wording from 6 and from 9 rounds, always inside `<reminder>` tags. The user sees the level as
the diagnostic's severity (Information for 3-5 rounds, Warning from 6). While the plan has no items
there is nothing to update: the rounds are not counted and nothing is said (issue 21).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from plansight.engine.events import Event, Reminder
from plansight.engine.hooks import CommandDecision, CommandRequest
from plansight.engine.reminders import quiet_rounds_after, reminder_for
from plansight.fakeapi import FakeMessagesAPI
from plansight.fakeapi import text_reply as text
from plansight.fakeapi import tool_reply as tool

from conftest import make_session, user_texts

REMINDER = "<reminder>Update your todos.</reminder>"


def plan(status: str) -> dict[str, Any]:
    return {"items": [{"id": "1", "text": "Read the code", "status": status}]}


@pytest.mark.parametrize("rounds", [0, 1, 2])
def test_no_reminder_before_three_rounds(rounds: int) -> None:
    assert reminder_for(rounds) is None


@pytest.mark.parametrize("rounds", [3, 4, 5])
def test_three_to_five_rounds_get_the_protocols_words(rounds: int) -> None:
    reminder = reminder_for(rounds)
    assert reminder is not None
    assert reminder.text == REMINDER
    assert (reminder.level, reminder.rounds) == (1, rounds)


def test_the_wording_grows_firmer_at_six_and_nine_and_says_how_long() -> None:
    texts = {n: reminder_for(n) for n in range(3, 40)}
    assert all(r is not None for r in texts.values())
    levels = {n: r.level for n, r in texts.items() if r is not None}
    assert {n for n, level in levels.items() if level == 1} == {3, 4, 5}
    assert {n for n, level in levels.items() if level == 2} == {6, 7, 8}
    assert {n for n, level in levels.items() if level == 3} == set(range(9, 40))
    six, nine = texts[6], texts[9]
    assert six is not None and nine is not None
    assert six.text != REMINDER and nine.text not in (REMINDER, six.text)
    # The stronger reminders say how many rounds went by, so each round's is its own.
    assert "6 rounds" in six.text and "9 rounds" in nine.text
    for reminder in texts.values():
        assert reminder is not None
        assert reminder.text.startswith("<reminder>") and reminder.text.endswith("</reminder>")
        assert reminder.text.count("<reminder>") == 1 and "todo" in reminder.text


def test_the_count_is_of_consecutive_rounds_and_an_update_starts_it_again() -> None:
    def rounds(quiet: int, updates: list[bool]) -> list[int]:
        counts = []
        for updated in updates:
            quiet = quiet_rounds_after(quiet, updated)
            counts.append(quiet)
        return counts

    quiet = rounds(0, [False] * 4)
    assert quiet == [1, 2, 3, 4]
    assert [r.rounds if (r := reminder_for(n)) else None for n in quiet] == [None, None, 3, 4]
    assert rounds(4, [True, False, False, False]) == [0, 1, 2, 3]
    assert reminder_for(quiet_rounds_after(4, plan_updated=True)) is None


def reminders_in(events: list[Event]) -> list[int]:
    return [e.rounds for e in events if isinstance(e, Reminder)]


async def test_a_rejected_todo_call_does_not_count_as_a_plan_update(
    hello_workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    fake_api.push(
        tool("read_scratchpad", {}),
        tool("read_scratchpad", {}),
        tool("todo", {"items": [{"id": "1", "text": " ", "status": "pending"}]}),  # rejected
        text("ok"),
    )
    session = make_session(hello_workspace, fake_api)
    session.edit_plan(plan("in_progress")["items"], None)  # a plan to update (the user's)
    events: list[Event] = []
    session.events.subscribe(events.append)
    await session.run("Think")
    rejected = fake_api.bodies[3]["messages"][-1]
    assert rejected["content"][0]["is_error"] is True
    assert user_texts(rejected)[-1] == REMINDER  # the third round without an accepted todo
    assert reminders_in(events) == [3]


async def test_the_count_starts_again_with_each_run(
    hello_workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    session = make_session(hello_workspace, fake_api)
    for prompt in ("first", "second"):
        fake_api.push(tool("read_scratchpad", {}), tool("read_scratchpad", {}), text("ok"))
        await session.run(prompt)
    # Two runs of two rounds each: never three in a row within a run, so never a reminder.
    assert not any(
        REMINDER in t for body in fake_api.bodies for t in user_texts(body["messages"][-1])
    )


async def test_the_users_plan_edit_does_not_reset_the_models_count(
    hello_workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    """Only the model's own todo call resets the count: the user editing the plan from the
    sidebar mid-run does not excuse the model from keeping it."""
    fake_api.push(
        tool("todo", plan("in_progress")),
        tool("read_scratchpad", {}),
        tool("bash", {"command": "true"}),
        tool("read_scratchpad", {}),
        text("ok"),
    )

    async def approve_and_edit_the_plan(request: CommandRequest) -> CommandDecision:
        session.edit_plan(plan("completed")["items"], None)
        return CommandDecision(approved=True)

    session = make_session(hello_workspace, fake_api, approve=approve_and_edit_the_plan)
    events: list[Event] = []
    session.events.subscribe(events.append)
    await session.run("Work")
    assert session.plan.state.source == "user"  # the edit happened
    assert reminders_in(events) == [3]
    assert user_texts(fake_api.bodies[4]["messages"][-1])[-1] == REMINDER


def test_without_a_plan_the_rounds_are_not_counted() -> None:
    assert quiet_rounds_after(5, plan_updated=False, has_plan=False) == 0
    assert quiet_rounds_after(5, plan_updated=False, has_plan=True) == 6


def reminded_in(bodies: list[dict[str, Any]]) -> list[int]:
    """The requests (by index) whose last user message carries a reminder."""
    return [
        i
        for i, body in enumerate(bodies)
        if any("<reminder>" in t for t in user_texts(body["messages"][-1]))
    ]


async def test_plan_mode_is_not_told_to_update_a_plan_it_has_not_written_yet(
    hello_workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    """Researching before the first plan is what plan mode is for: five rounds of reading
    without a plan get no "Update your todos.", and neither does the model nor the user."""
    fake_api.push(
        *[tool("read_file", {"path": "hello.py"}) for _ in range(5)],
        tool("todo", plan("pending")),
        tool("submit_plan", {"summary": "Read, then act."}),
        tool("todo", plan("completed")),
        text("Done."),
    )
    session = make_session(hello_workspace, fake_api)
    events: list[Event] = []
    session.events.subscribe(events.append)
    result = await session.run("Plan a review of hello.py", mode="plan")
    assert result.status == "done", result.text
    assert reminded_in(fake_api.bodies) == []
    assert reminders_in(events) == []


async def test_a_run_that_never_makes_a_plan_is_not_nagged_about_one(
    hello_workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    fake_api.push(*[tool("read_file", {"path": "hello.py"}) for _ in range(6)], text("It greets."))
    session = make_session(hello_workspace, fake_api)
    events: list[Event] = []
    session.events.subscribe(events.append)
    result = await session.run("What does hello.py do?")
    assert result.status == "done"
    assert len(fake_api.bodies) == 7
    assert reminded_in(fake_api.bodies) == []
    assert reminders_in(events) == []


async def test_once_a_plan_exists_three_quiet_rounds_are_reminded(
    hello_workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    """The count starts with the first plan: rounds before it do not count towards the nag."""
    fake_api.push(
        *[tool("read_file", {"path": "hello.py"}) for _ in range(4)],
        tool("todo", plan("in_progress")),
        *[tool("read_file", {"path": "hello.py"}) for _ in range(3)],
        tool("todo", plan("completed")),
        text("Done."),
    )
    session = make_session(hello_workspace, fake_api)
    events: list[Event] = []
    session.events.subscribe(events.append)
    await session.run("Review hello.py")
    # Request 8 carries the results of round 8, the third read after the plan was made.
    assert reminded_in(fake_api.bodies) == [8]
    assert user_texts(fake_api.bodies[8]["messages"][-1])[-1] == REMINDER
    assert reminders_in(events) == [3]
