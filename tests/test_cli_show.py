"""`plansight plan` and `plansight history` as a user runs them: subprocesses, the real server,
no API key (nothing here asks the model), after runs made with the fake Messages API."""

from __future__ import annotations

import datetime
import subprocess
import sys
from pathlib import Path

from plansight.cli.show import history_lines, plan_lines, run_summary
from plansight.fakeapi import FakeMessagesAPI, text_reply, tool_reply
from test_cli_run import HINT_EDIT, client_env, plan


def plansight(
    *args: str, state: Path, api: FakeMessagesAPI | None = None, stdin: str = ""
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "plansight", *args],
        env=client_env(api, state),
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_plan_and_history_show_the_session_without_a_run(
    hello_workspace: Path, fake_api: FakeMessagesAPI, tmp_path: Path
) -> None:
    state = tmp_path / "state"
    where = ("--workspace", str(hello_workspace))

    # Before any run: nothing yet, said so.
    done = plansight("plan", *where, state=state)
    assert done.returncode == 0, done.stderr
    assert "No plan yet" in done.stdout
    done = plansight("history", *where, state=state)
    assert done.returncode == 0, done.stderr
    assert "No runs yet in this workspace." in done.stdout

    fake_api.push(
        tool_reply("todo", plan("in_progress", "pending"), text="Planning."),
        tool_reply("read_file", {"path": "hello.py"}),
        tool_reply("edit_file", HINT_EDIT),
        tool_reply("write_scratchpad", {"content": "greet takes a str"}),
        tool_reply("todo", plan("completed", "pending")),
        text_reply("Hints added.\nThe tests come next."),
        text_reply("The tests are for the next run."),  # the done gate's answer
        text_reply("Nothing else to do."),
        text_reply("Only the tests."),
    )
    first = plansight("run", "Add type hints", "--yes", *where, state=state, api=fake_api)
    assert "done after 7 rounds" in first.stdout, first.stdout + first.stderr
    second = plansight("run", "Anything else?", "--yes", *where, state=state, api=fake_api)
    assert "done after 2 rounds" in second.stdout, second.stdout + second.stderr
    requests = len(fake_api.bodies)

    # The plan as the next run continues it, and the scratchpad.
    done = plansight("plan", *where, state=state)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == f"The session of {hello_workspace.resolve()}:"
    assert lines[1] == "Plan · ▶ 1/2"
    assert "[x] #1: Add type hints" in lines and "[ ] #2: Run the tests" in lines
    assert "Scratchpad:" in lines and "greet takes a str" in lines

    # The runs, oldest first: how each ended, what it did, its prompt and answer.
    done = plansight("history", *where, state=state)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert out.index("› Add type hints") < out.index("› Anything else?")
    assert "done after 7 rounds · 1 edit" in out
    assert "    The tests are for the next run." in out
    done = plansight("history", "--limit", "1", *where, state=state)
    assert "› Anything else?" in done.stdout and "› Add type hints" not in done.stdout

    assert len(fake_api.bodies) == requests  # neither asked the model anything
    assert "\x1b[" not in out and "Traceback" not in done.stderr


def test_plan_and_history_of_a_folder_that_is_not_there(tmp_path: Path) -> None:
    for command in ("plan", "history"):
        done = plansight(command, "--workspace", str(tmp_path / "nowhere"), state=tmp_path)
        assert done.returncode == 1
        assert "no such folder" in done.stdout + done.stderr


def test_history_and_plan_lines() -> None:
    today = datetime.date(2026, 12, 1)
    run = {
        "prompt": "Add docstrings\nto every function",
        "startedAt": "2026-11-30T10:00:00Z",
        "result": {"status": "done", "rounds": 1, "text": "\nDone: 3 docstrings."},
        "events": [
            {"type": "toolCall", "name": "edit_file"},
            {"type": "toolCall", "name": "write_file"},
            {"type": "toolCall", "name": "bash"},
        ],
        "newSession": True,
    }
    assert run_summary(run) == "done after 1 round · 2 edits · 1 command"
    lines = [line.plain for line in history_lines([run, {"prompt": "Go on"}], today)]
    assert lines[0].endswith("done after 1 round · 2 edits · 1 command  (a new conversation)")
    assert lines[1] == "  › Add docstrings to every function"
    assert lines[2] == "    Done: 3 docstrings."
    assert "in progress" in lines[3] and lines[4] == "  › Go on"
    assert [line.plain for line in plan_lines({"todos": {"items": []}, "scratchpad": ""})] == [
        "No plan yet: the agent makes one as it starts a task."
    ]
