"""The arms of the comparison (eval/arms.py): the same server, planning on, off or in plan
mode, or with one part of it (reminders, done gate) off or at another cadence; choosing them
by name on the command line; and what the real server sends the API in each arm, as the fake
Messages API received it."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from plansight.engine.pricing import list_prices
from plansight.eval.arms import ARMS, DEFAULT_ARMS, select_arms
from plansight.eval.attempt import AttemptResult, AttemptSpec, Limits, Upstream, run_attempt
from plansight.eval.recordings import find_recordings
from plansight.eval.tasks import default_tasks_dir, load_task
from plansight.fakeapi import FakeMessagesAPI, Script
from plansight.protocol.options import InitOptions
from plansight.workspace.sandbox import detect

from conftest import FIXTURES

RECORDINGS = FIXTURES.parent / "eval" / "recordings"
TASK = load_task(default_tasks_dir() / "rename-function")
GATE = "Your plan still has open items"


def test_the_arms_differ_only_in_planning_and_mode() -> None:
    assert ARMS["plan"].options == {} and ARMS["plan"].mode == "act"
    assert ARMS["noplan"].options == {"planning": False} and ARMS["noplan"].mode == "act"
    assert ARMS["planmode"].options == {} and ARMS["planmode"].mode == "plan"
    assert DEFAULT_ARMS == ("plan", "noplan", "planmode")
    assert all(ARMS[name].unavailable is None for name in DEFAULT_ARMS)
    assert all(arm.name == name for name, arm in ARMS.items())


def test_arms_are_chosen_in_the_order_named_each_once() -> None:
    assert [a.name for a in select_arms(["noplan", "plan"])] == ["noplan", "plan"]
    assert [a.name for a in select_arms(["plan", "noplan", "plan"])] == ["plan", "noplan"]


@pytest.mark.parametrize(
    ("names", "message"),
    [
        (["plan", "bogus"], "unknown arm 'bogus'; arms: plan, noplan, planmode"),
        (["remind0"], "unknown arm 'remind0'"),
        (["remindx"], "unknown arm 'remindx'"),
        ([], "no arm given"),
    ],
)
def test_an_unknown_arm_or_none_is_refused(names: list[str], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        select_arms(names)


def test_each_part_of_planning_is_an_initialization_option() -> None:
    assert ARMS["noreminder"].options == {"reminders": False}
    assert ARMS["nogate"].options == {"doneGate": False}
    (remind5,) = select_arms(["remind5"])
    assert remind5.options == {"reminderAfter": 5} and remind5.mode == "act"
    # --reminder-after: every arm that reminds, none that does not, no arm's own cadence.
    arms = select_arms(["plan", "noplan", "planmode", "noreminder", "nogate", "remind2"], 6)
    assert {a.name: dict(a.options) for a in arms} == {
        "plan": {"reminderAfter": 6},
        "noplan": {"planning": False},
        "planmode": {"reminderAfter": 6},
        "noreminder": {"reminders": False},
        "nogate": {"doneGate": False, "reminderAfter": 6},
        "remind2": {"reminderAfter": 2},
    }
    assert [dict(a.options) for a in select_arms(["plan", "nogate"], 3)] == [
        {},
        {"doneGate": False},
    ]


def test_the_server_reads_the_options_and_names_a_bad_one() -> None:
    parsed = InitOptions.parse({"reminders": False, "reminderAfter": 4, "doneGate": False})
    assert (parsed.reminders, parsed.reminder_after, parsed.done_gate) == (False, 4, False)
    assert parsed.problems == ()
    bad = InitOptions.parse({"reminders": "no", "reminderAfter": 0, "doneGate": 1})
    assert (bad.reminders, bad.reminder_after, bad.done_gate) == (True, None, True)
    assert [p.split(" ")[0] for p in bad.problems] == [
        "initializationOptions.reminders",
        "initializationOptions.reminderAfter",
        "initializationOptions.doneGate",
    ]


# Through the real server: one attempt per arm against the fake Messages API, which answers
# with a committed recording's answers and keeps every request it received.


def steps_of(arm: str) -> dict[str, Any]:
    (found,) = [r for r in find_recordings(RECORDINGS) if (r.task, r.arm) == (TASK.name, arm)]
    return found.data


async def attempt(arm: str, script_of: str) -> tuple[AttemptResult, list[list[str]]]:
    """The attempt's result and, per request the API received, the texts of its newest
    message (what the server added for that request)."""
    fake = FakeMessagesAPI(Script.from_dict(steps_of(script_of)))
    await fake.start_async()
    try:
        (chosen,) = select_arms([arm])
        result = await run_attempt(
            AttemptSpec(
                TASK,
                chosen,
                1,
                "claude-sonnet-5-5",
                Upstream(base_url=fake.base_url, api_key="test-key"),
                Limits(sandbox=detect().available),
                list_prices("claude-sonnet-5-5"),
            )
        )
        texts = [
            [
                str(block.get("text", ""))
                for block in request.body["messages"][-1]["content"]
                if isinstance(block, dict) and block.get("type") == "text"
            ]
            for request in fake.message_requests
        ]
    finally:
        await fake.stop_async()
    assert result.error is None, result.error
    return result, texts


def carrying(texts: list[list[str]], needle: str) -> list[int]:
    """The requests (by index) whose newest message has a text containing `needle`."""
    return [i for i, blocks in enumerate(texts) if any(needle in text for text in blocks)]


def quiet_positions(steps: list[dict[str, Any]], after: int) -> list[int]:
    """The requests that must carry a reminder when the model answers `steps` and the server
    reminds after `after` rounds in a row without a todo call (tool rounds only)."""
    expected, quiet = [], 0
    for index, step in enumerate(steps):
        names = [b.get("name") for b in step.get("content", []) if b.get("type") == "tool_use"]
        if not names:
            continue  # an answer: no tool round, no reminder
        quiet = 0 if "todo" in names else quiet + 1
        if quiet >= after:
            expected.append(index + 1)
    return expected


Run = tuple[AttemptResult, list[list[str]]]


@pytest.fixture(scope="module")
def runs() -> dict[str, Run]:
    """One attempt per arm, at once: plan, noreminder and remind2 on the plan arm's answers,
    nogate on its own."""
    wanted = {"plan": "plan", "noreminder": "plan", "remind2": "plan", "nogate": "nogate"}

    async def all_of_them() -> list[Run]:
        return await asyncio.gather(*(attempt(arm, script) for arm, script in wanted.items()))

    return dict(zip(wanted, asyncio.run(all_of_them()), strict=True))


@pytest.mark.slow
@pytest.mark.timeout(600)  # the first to use `runs` waits for four attempts
def test_noreminder_sends_no_reminder_where_plan_does_and_keeps_the_gate(
    runs: dict[str, Run],
) -> None:
    (plan, plan_texts), (quiet, quiet_texts) = runs["plan"], runs["noreminder"]
    assert carrying(plan_texts, "<reminder>") and plan.reminders == 1
    assert carrying(quiet_texts, "<reminder>") == [] and quiet.reminders == 0
    assert len(carrying(quiet_texts, GATE)) == 1 and quiet.gate_refusals == 1
    assert quiet.passed and quiet.plan_closed is True and quiet.todo_calls == plan.todo_calls


@pytest.mark.slow
@pytest.mark.timeout(600)  # the first to use `runs` waits for four attempts
def test_nogate_lets_the_run_end_with_its_plan_open(runs: dict[str, Run]) -> None:
    result, texts = runs["nogate"]
    assert carrying(texts, GATE) == [] and result.gate_refusals == 0
    assert result.status == "done" and result.rounds == len(steps_of("nogate")["steps"])
    assert result.plan_closed is False  # the last item was still in progress
    assert carrying(texts, "<reminder>")  # the reminders stay
    assert result.passed  # the files decide


@pytest.mark.slow
@pytest.mark.timeout(600)  # the first to use `runs` waits for four attempts
def test_the_reminder_comes_after_reminder_after_quiet_rounds(runs: dict[str, Run]) -> None:
    steps = steps_of("plan")["steps"]
    (_, every_three), (result, every_two) = runs["plan"], runs["remind2"]
    assert carrying(every_three, "<reminder>") == quiet_positions(steps, 3)
    assert carrying(every_two, "<reminder>") == quiet_positions(steps, 2)
    assert quiet_positions(steps, 2) != quiet_positions(steps, 3)
    assert result.reminders == len(quiet_positions(steps, 2))
