"""The `planning: false` initialization option (the eval's noplan arm): no todo tool, no
reminders, no done gate, a prompt without a plan; everything else as with planning."""

from __future__ import annotations

import re
from pathlib import Path

from plansight.engine.events import Reminder
from plansight.engine.model import ModelSettings
from plansight.engine.prompt import SYSTEM_PROMPT, UNPLANNED_EDITS, system_prompt, unplanned
from plansight.fakeapi import FakeMessagesAPI, tool_reply
from plansight.fakeapi import text_reply as text
from plansight.protocol.options import InitOptions
from plansight.session.session import Session
from plansight.session.settings import SessionSettings
from plansight.tools import default_tools

from conftest import FIXTURES, user_texts


def session(root: Path, api: FakeMessagesAPI, planning: bool) -> Session:
    model = ModelSettings(model="claude-sonnet-5-5", api_key="k", base_url=api.base_url)
    settings = SessionSettings(model, planning=planning)
    return Session(root, settings)


def test_the_option_is_read_and_defaults_to_planning() -> None:
    assert InitOptions.parse({}).planning is True
    assert InitOptions.parse({"planning": False}).planning is False
    options = InitOptions.parse({"planning": False})
    assert SessionSettings.from_options(options, {}).planning is False
    assert SessionSettings.from_options(InitOptions.parse({}), {}).planning is True
    odd = InitOptions.parse({"planning": "no"})
    assert odd.planning is True and any("planning" in p for p in odd.problems)


def test_only_the_plan_tools_are_left_out() -> None:
    planned = [t["name"] for t in default_tools().definitions()]
    unplanned_tools = [t["name"] for t in default_tools(planning=False).definitions()]
    assert {"todo", "submit_plan", "ask_user"} <= set(planned)
    assert unplanned_tools == [name for name in planned if name not in ("todo", "submit_plan")]


def test_the_prompt_loses_its_plan_and_nothing_else() -> None:
    for old, _new in UNPLANNED_EDITS:
        assert old in SYSTEM_PROMPT, f"an edit no longer applies: {old!r}"
    text = unplanned(SYSTEM_PROMPT)
    assert not re.search(r"\b(todo|plan|replan|in_progress|submit_plan)\b", text, re.IGNORECASE)
    plan_words = ("plan", "todo", "in_progress", "submit")
    kept = [
        line
        for line in SYSTEM_PROMPT.splitlines()
        if not any(word in line.lower() for word in plan_words)
    ]
    assert kept and all(line in text for line in kept)
    assert "ask_user" in text  # questions are not part of the plan
    # The wording is kept under test, as the planned prompt's is: a change shows in a review.
    assert text == (FIXTURES / "prompt" / "unplanned_prompt.txt").read_text(encoding="utf-8")
    assert system_prompt("w") == SYSTEM_PROMPT + "\nThe workspace folder is named 'w'.\n"


async def test_no_reminder_and_no_done_gate_without_planning(
    hello_workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    for _ in range(4):
        fake_api.push(tool_reply("read_file", {"path": "hello.py"}))
    fake_api.push(text("Done."))
    agent = session(hello_workspace, fake_api, planning=False)
    # An open item the model cannot see: a user's edit. Without planning it does not gate.
    agent.edit_plan([{"id": "1", "text": "Left open", "status": "pending"}])
    reminders: list[Reminder] = []
    agent.events.subscribe(lambda e: reminders.append(e) if isinstance(e, Reminder) else None)
    result = await agent.run("Read hello.py four times")
    assert (result.status, result.rounds) == ("done", 5)
    assert not reminders
    bodies = fake_api.bodies
    assert len(bodies) == 5
    for body in bodies:
        assert "todo" not in {t["name"] for t in body["tools"]}
        assert "todo" not in str(body["system"])
        assert not any("reminder" in t for m in body["messages"] for t in user_texts(m))


async def test_the_same_run_with_planning_is_reminded(
    hello_workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    for _ in range(4):
        fake_api.push(tool_reply("read_file", {"path": "hello.py"}))
    fake_api.push(text("Done."))
    agent = session(hello_workspace, fake_api, planning=True)
    # Reminders need a plan to update (a run that never makes one is not nagged): a closed one.
    agent.edit_plan([{"id": "1", "text": "Read hello.py", "status": "completed"}])
    reminders: list[Reminder] = []
    agent.events.subscribe(lambda e: reminders.append(e) if isinstance(e, Reminder) else None)
    result = await agent.run("Read hello.py four times")
    assert result.status == "done" and len(reminders) == 2  # after rounds 3 and 4
    assert "todo" in {t["name"] for t in fake_api.bodies[0]["tools"]}
