"""Plan review with comments in a real terminal (tmux), at 40 and 120 columns: `> ` comment
lines written in $EDITOR (a scripted one) reach the model anchored on their items; the next
proposal is printed beside the one the user saw, each change with the comment that asked for it
and the model's `how`, and the comments still open; a comment's escape sequence is shown, not
obeyed."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from plansight.fakeapi import FakeMessagesAPI, Step, text_reply, tool_reply

from conftest import FIXTURES
from test_cli_terminal import Terminal, plain_env, terminal  # noqa: F401 (the fixture)

PLAN_QUESTION_END = "or [c]ancel:"
EDITOR = FIXTURES / "cli-plan-review" / "editor.py"


def items(*specs: tuple[str, str, str]) -> dict[str, Any]:
    return {"items": [{"id": i, "text": t, "status": s} for i, t, s in specs]}


TWO = items(("1", "Add type hints", "pending"), ("2", "Add docstrings", "pending"))
REVISED = items(
    ("1", "Add type hints", "pending"),
    ("2", "Add docstrings to public functions", "pending"),
    ("3", "Run the tests", "pending"),
)
DONE = {"items": [{**i, "status": "completed"} for i in REVISED["items"]]}


def comment_on_2(body: dict[str, Any]) -> str:
    """The id the terminal gave the comment on item #2, as the model read it."""
    found = re.search(r"\[comment (c[0-9a-f]+)\] on #2", json.dumps(body["messages"]))
    assert found, "the comment on #2 never reached the model"
    return found[1]


def submit_again(body: dict[str, Any]) -> Step:
    # The model's words carry a clipboard write (OSC 52): shown, never obeyed.
    how = "Docstrings on public functions only\x1b]52;c;cHduZWQ=\x07"
    return tool_reply(
        "submit_plan",
        {"summary": "Revised.", "addressed": [{"commentId": comment_on_2(body), "how": how}]},
    )


def words(lines: list[str]) -> str:
    """The screen's text with its wrapping undone (rich wraps at words on a narrow terminal)."""
    return " ".join(" ".join(lines).split())


@pytest.mark.parametrize("width", [40, 120])
def test_comments_in_the_editor_then_the_diff_beside_them(
    width: int,
    tmp_path: Path,
    terminal: Callable[[int, int], Terminal],  # noqa: F811
    fake_api: FakeMessagesAPI,
    hello_workspace: Path,
) -> None:
    fake_api.push(
        tool_reply("todo", TWO),
        tool_reply("submit_plan", {"summary": "Hints and docstrings."}),
        tool_reply("todo", REVISED),
        submit_again,
        tool_reply("todo", DONE),
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
    term = terminal(width, 40)
    command = [sys.executable, "-m", "plansight", "run", "Document hello.py", "--plan"]
    term.start([*command, "--workspace", "."], env, hello_workspace)
    title_before = term.tmux("display-message", "-p", "#{pane_title}").strip()

    def asked(after: int) -> Callable[[list[str]], bool]:
        return lambda lines: len(lines) > after and lines[-1].endswith(PLAN_QUESTION_END)

    first = term.wait_for("the first review", asked(0))
    assert "What changed" not in words(first)
    term.send("e", "Enter")
    edited = term.wait_for(
        "the edited plan, asked again",
        lambda now: "your edited plan" in words(now) and asked(len(first))(now),
    )
    term.send("Please revise", "Enter")
    second = term.wait_for(
        "the second review",
        lambda now: "Revised." in words(now) and asked(len(edited))(now),
    )
    shown = words(second[len(edited) :])
    assert (
        'What changed since the proposal you saw: - reworded #2: "Add docstrings" -> '
        '"Add docstrings to public functions" - your comment: "Only public functions '
        '^[]0;pwned", addressed: Docstrings on public functions only^[]52;c;cHduZWQ= - '
        "added #3: Run the tests Open comments (not addressed yet): - Keep the diff small"
    ) in shown
    term.send("a", "Enter")
    end = term.wait_for("the end", lambda _: term.exit_status() is not None)
    assert term.exit_status() == 0, "\n".join(end)
    # The escape sequence was shown, not obeyed: the window's title is unchanged.
    assert term.tmux("display-message", "-p", "#{pane_title}").strip() == title_before
    # What the model read: each comment anchored, the general one on the plan as a whole.
    revise = json.dumps(fake_api.bodies[2]["messages"][-1])
    assert "on #2 (Add docstrings): Only public functions" in revise
    assert "on the plan as a whole: Keep the diff small" in revise
    approved = json.dumps(fake_api.bodies[4]["messages"][-1])
    assert approved.count("The user approved your plan") == 1
