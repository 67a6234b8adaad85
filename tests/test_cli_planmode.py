"""`plansight run --plan` and `--step` as a user runs them: the plan review (approve, edit in
$EDITOR, feedback, cancel) and the agent's questions in a real terminal (tmux), `--step` as a
subprocess; the answers' parsing as functions."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from plansight.cli.client import question_prompt, read_answer
from plansight.fakeapi import FakeMessagesAPI, text_reply, tool_reply
from plansight.plan.text import PLAN_TEXT_HELP, PlanTextError, parse_plan_text, plan_text

from conftest import FIXTURES
from test_cli_terminal import Terminal, plain_env, terminal  # noqa: F401 (the fixture)

PLAN_QUESTION_END = "or [c]ancel:"
ASK_END = "let the agent decide):"
EDIT_END = "type a reason to reject:"
EDITOR = FIXTURES / "cli-plan" / "editor.py"
EDIT = {"path": "hello.py", "old_text": "def greet(name):", "new_text": "def greet(name: str):"}


def items(*specs: tuple[str, str, str]) -> dict[str, Any]:
    return {"items": [{"id": i, "text": t, "status": s} for i, t, s in specs]}


THREE = items(
    ("1", "Add type hints", "pending"),
    ("2", "Add docstrings", "pending"),
    ("3", "Add a main guard", "pending"),
)


def ends_with(ending: str, after: int) -> Callable[[list[str]], bool]:
    """The terminal asks a question ending so, below line `after`."""
    return lambda lines: len(lines) > after and lines[-1].endswith(ending)


def tool_result(api: FakeMessagesAPI, index: int) -> dict[str, Any]:
    content = api.bodies[index]["messages"][-1]["content"]
    result: dict[str, Any] = next(b for b in content if b["type"] == "tool_result")
    return result


def test_plan_review_edit_with_a_slip_feedback_approve_and_questions_in_a_terminal(
    tmp_path: Path,
    terminal: Callable[[int, int], Terminal],  # noqa: F811
    fake_api: FakeMessagesAPI,
    hello_workspace: Path,
) -> None:
    fake_api.push(
        tool_reply("todo", THREE, text="My plan."),
        tool_reply("write_scratchpad", {"content": "greet and shout lack hints"}),
        tool_reply("submit_plan", {"summary": "Hints, docstrings and a guard, in that order."}),
        tool_reply("todo", items(("3", "Add a main guard", "pending"), ("1", "Hints", "pending"))),
        tool_reply("submit_plan", {"summary": "The guard first, then hints."}),
        tool_reply("read_file", {"path": "hello.py"}),
        tool_reply("edit_file", EDIT),
        tool_reply(
            "ask_user",
            {
                "question": "Which files get docstrings?",
                "options": ["hello.py", "test_hello.py", "both"],
                "multiSelect": True,
            },
        ),
        tool_reply("ask_user", {"question": "Which style?", "options": ["Google", "NumPy"]}),
        tool_reply(
            "todo", items(("3", "Add a main guard", "completed"), ("1", "Hints", "completed"))
        ),
        text_reply("All done."),
    )
    log = tmp_path / "editor-log"
    log.mkdir()
    env = plain_env(tmp_path) | {
        "ANTHROPIC_BASE_URL": fake_api.base_url,
        "ANTHROPIC_API_KEY": "test-key",
        "EDITOR": f"{sys.executable} {EDITOR}",
        "PLANSIGHT_TEST_EDITOR_LOG": str(log),
    }
    term = terminal(100, 30)
    term.start(
        [
            sys.executable,
            "-m",
            "plansight",
            "run",
            "Refactor hello.py",
            "--plan",
            "--workspace",
            ".",
        ],
        env,
        hello_workspace,
    )

    def answer(ending: str, typed: str) -> list[str]:
        before = term.wait_for(f"a question ending {ending!r}", ends_with(ending, 0))
        term.send(typed, "Enter")
        after = term.wait_for(
            f"what follows the answer {typed!r}",
            lambda now: len(now) > len(before) or term.exit_status() is not None,
        )
        # Everything shown before the answer is still there, and the question got it.
        assert after[: len(before) - 1] == before[:-1]
        assert after[len(before) - 1] == f"{before[-1]} {typed}"
        return before

    shown = answer(PLAN_QUESTION_END, "e")  # the editor adds a line that is no item
    # The header (wrapped at words where the workspace's path is long) says plan mode.
    assert "plansight · " in shown[0] and "plan first" in " ".join(shown[:2])
    review = "\n".join(shown)
    assert "plan proposed for your approval" in review
    assert "Hints, docstrings and a guard, in that order." in review
    assert "[ ] #2: Add docstrings" in review
    lines = term.wait_for(
        "the parse error, asked again",
        lambda now: (
            any("is not an item" in line for line in now) and now[-1].endswith(PLAN_QUESTION_END)
        ),
    )
    error = next(line for line in lines if "is not an item" in line)
    assert error.startswith("The plan was not changed: line ")
    answer(PLAN_QUESTION_END, "e")  # the editor gets the slip back, and writes the plan
    lines = term.wait_for(
        "the edited plan",
        lambda now: now[-1].endswith(PLAN_QUESTION_END) and "your edited plan" in "\n".join(now),
    )
    edited = "\n".join(lines)
    assert (
        "[ ] #3: Add a main guard\n[ ] #1: Add type hints to greet and shout\n"
        "[ ] #4: Write a changelog"
    ) in edited
    answer(PLAN_QUESTION_END, "Drop the changelog please")
    # The second review, then approve.
    term.wait_for("the second review", lambda now: "The guard first, then hints." in "\n".join(now))
    answer(PLAN_QUESTION_END, "a")
    answer(EDIT_END, "a")
    question = answer(ASK_END, "1 3")
    asked = "\n".join(question)
    assert "? Which files get docstrings?\n  1. hello.py\n  2. test_hello.py\n  3. both" in asked
    assert question[-1].startswith("Choose one or more of 1-3")
    answer(ASK_END, "9")  # out of range: said, and asked again
    lines = term.wait_for(
        "the range",
        lambda now: "Choose between 1 and 2." in "\n".join(now) and now[-1].endswith(ASK_END),
    )
    answer(ASK_END, "Google, with examples")
    lines = term.wait_for("the end", lambda _: term.exit_status() is not None)
    assert term.exit_status() == 0, "\n".join(lines)
    assert "done after 11 rounds" in "\n".join(lines)
    assert "Traceback" not in "\n".join(lines)

    # The editor was given the plan as s03 text under the help, then the user's own text back.
    given = sorted(log.glob("given-*.txt"))
    assert given[0].read_text() == PLAN_TEXT_HELP + plan_text(THREE["items"])
    assert "and also write a changelog" in given[1].read_text()
    # What the model read: the feedback and the edited plan, the approval, the answers.
    revised = tool_result(fake_api, 3)["content"]
    assert "Their feedback: Drop the changelog please" in revised
    assert "[ ] #4: Write a changelog" in revised
    assert tool_result(fake_api, 5)["content"].startswith("The user approved your plan:")
    assert tool_result(fake_api, 8)["content"] == "The user chose: hello.py; both"
    assert tool_result(fake_api, 9)["content"] == "The user answered: Google, with examples"
    assert "def greet(name: str):" in (hello_workspace / "hello.py").read_text()


def test_cancel_at_the_plan_review_ends_the_run_with_the_proposal_dropped(
    tmp_path: Path,
    terminal: Callable[[int, int], Terminal],  # noqa: F811
    fake_api: FakeMessagesAPI,
    hello_workspace: Path,
) -> None:
    fake_api.push(tool_reply("todo", THREE), tool_reply("submit_plan", {"summary": "Three steps."}))
    env = plain_env(tmp_path) | {
        "ANTHROPIC_BASE_URL": fake_api.base_url,
        "ANTHROPIC_API_KEY": "test-key",
    }
    term = terminal(100, 30)
    term.start(
        [sys.executable, "-m", "plansight", "run", "Plan it", "--plan", "--workspace", "."],
        env,
        hello_workspace,
    )
    term.wait_for("the review", ends_with(PLAN_QUESTION_END, 0))
    term.send("c", "Enter")
    lines = term.wait_for("the end", lambda _: term.exit_status() is not None)
    assert term.exit_status() == 0
    shown = "\n".join(lines)
    assert "done after 2 rounds" in shown and "The user cancelled the plan" in shown
    # Version 4: the refused proposal is dropped; the plan is as it was before (none).
    stored = subprocess.run(
        [sys.executable, "-m", "plansight", "plan", "--workspace", str(hello_workspace)],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=True,
    )
    assert "Add a main guard" not in stored.stdout
    assert len(fake_api.bodies) == 2


# ----- --step, as a subprocess --------------------------------------------------------------


def run_plansight(api: FakeMessagesAPI, workspace: Path, tmp_path: Path, *args: str) -> Any:
    env = plain_env(tmp_path) | {"ANTHROPIC_BASE_URL": api.base_url, "ANTHROPIC_API_KEY": "k"}
    return subprocess.run(
        [sys.executable, "-m", "plansight", "run", *args, "--workspace", str(workspace), "--yes"],
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_step_runs_one_item_and_an_unknown_step_says_so(
    tmp_path: Path, fake_api: FakeMessagesAPI, hello_workspace: Path
) -> None:
    fake_api.push(tool_reply("todo", THREE), text_reply("planned"), text_reply("planned"))
    first = run_plansight(fake_api, hello_workspace, tmp_path, "Plan it")
    assert first.returncode == 0, first.stdout + first.stderr
    fake_api.push(
        tool_reply(
            "todo",
            items(
                ("1", "Add type hints", "pending"),
                ("2", "Add docstrings", "completed"),
                ("3", "Add a main guard", "pending"),
            ),
        ),
        text_reply("Step 2 is done."),
    )
    done = run_plansight(fake_api, hello_workspace, tmp_path, "Do it", "--step", "#2")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "step 2 only" in done.stdout.splitlines()[0]
    opening = fake_api.bodies[3]["messages"][-1]["content"]
    texts = [b["text"] for b in opening if b["type"] == "text"]
    assert texts[0] == "Do it" and texts[1].startswith(
        "<focus>Work on plan item #2: Add docstrings"
    )
    assert len(fake_api.bodies) == 5  # no done gate: the items left open are not this run's
    unknown = run_plansight(fake_api, hello_workspace, tmp_path, "Do it", "--step", "9")
    assert unknown.returncode == 1
    assert "The plan has no item #9 (its items: #1, #2, #3)" in unknown.stdout
    assert len(fake_api.bodies) == 5


# ----- the answers ------------------------------------------------------------------------------


def test_plan_text_round_trips_and_names_the_line_it_cannot_read() -> None:
    wire = THREE["items"] + [{"id": "4", "text": "Done", "status": "completed"}]
    text = PLAN_TEXT_HELP + plan_text(wire)
    assert parse_plan_text(text) == wire
    assert parse_plan_text("[>] #a: x\n[!] y\n(0/2 completed)\n", reserved=["1"]) == [
        {"id": "a", "text": "x", "status": "in_progress"},
        {"id": "2", "text": "y", "status": "failed"},
    ]
    for bad, message in (
        ("[ ] #1: a\nnot an item", "line 2: 'not an item' is not an item"),
        ("[?] #1: a", "line 1: unknown marker [?]"),
        ("[ ] #1:   ", "line 1: the item has no text"),
        ("[ ] #1 a", "line 1: write the id as `#1: text`"),
        ("[ ] #1: a\n[x] #1: b", "line 2: #1 is used twice"),
    ):
        with pytest.raises(PlanTextError, match=message.replace("[", r"\[").replace("?", r"\?")):
            parse_plan_text(bad)


def test_an_answer_is_a_number_several_numbers_or_free_text() -> None:
    single = {"question": "Which?", "options": ["a", "b"]}
    multi = {**single, "multiSelect": True}
    free = {"question": "Why?"}
    assert read_answer(single, "2") == {"answer": "b"}
    assert read_answer(single, "1 2") == "Choose one option (or type your own answer)."
    assert read_answer(single, "3") == "Choose between 1 and 2."
    assert read_answer(multi, "2, 1 2") == {"answers": ["b", "a"]}
    assert read_answer(multi, "both of them") == {"answer": "both of them"}
    assert read_answer(free, "12") == {"answer": "12"}
    assert read_answer(free, "  ") == {"dismissed": True}
    assert question_prompt(free).startswith("Your answer")
    assert json.dumps(read_answer(single, " b ")) == '{"answer": "b"}'
