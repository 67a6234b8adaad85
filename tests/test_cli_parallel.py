"""The terminal's parallel workers: each worker's live line, `/parallel`'s parsing, and
`/parallel` in the interactive terminal (tmux): one live line per worker with its current tool
while they run, how each ended, then each worker's changes put to the user file by file; what
the user accepts reaches the workspace, what they reject does not.

The fake Messages API serves each worker's conversation, picked by its item's text (as in
tests/test_parallel_workers.py); workers need a sandbox (bubblewrap): the tmux test is skipped
where none can be made."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from plansight.cli.interactive import parse_line, take_in_line
from plansight.cli.ui import worker_line
from plansight.fakeapi import FakeMessagesAPI, Hang, ScriptStep, text_reply, tool_reply
from plansight.workspace.sandbox import detect

from test_cli_terminal import (  # noqa: F401 (the fixture)
    PLANSIGHT,
    Terminal,
    api_env,
    plain_env,
    terminal,
)


def test_a_running_worker_shows_its_current_tool_and_a_finished_one_its_files() -> None:
    running = {"status": "running", "tool": "bash", "summary": "$ make test", "rounds": 3}
    assert worker_line("2", running) == "⟳ #2 bash: $ make test (3 tools)"
    assert worker_line("2", {"status": "running", "rounds": 0}) == "⟳ #2 starting (0 tools)"
    done = {"status": "completed", "files": [{"path": "a.py", "added": 2, "removed": 1}]}
    assert worker_line("2", done) == "✓ #2 completed: a.py +2 -1"
    assert worker_line("3", {"status": "failed", "files": []}) == "✗ #3 failed, no changes"


def test_parallel_is_a_command_and_a_take_in_is_told_in_one_line() -> None:
    command = parse_line("/parallel 2 3")
    assert (command.name, command.argument) == ("parallel", "2 3")
    answer = {"applied": ["a.py"], "rejected": [], "conflicts": ["b.py"], "skipped": []}
    assert take_in_line("2", answer) == "#2: 1 applied, 1 conflicts"
    assert take_in_line("3", {}) == "#3: nothing to take in"


PROMPT = "›"
QUESTION_END = "type a reason to reject:"
ONE = "Add a greeting to a.py"
TWO = "Add a farewell to b.py"
A_PY = "def main():\n    return 1\n"
B_PY = "def other():\n    return 2\n"
PLAN = [
    {"id": "1", "text": ONE, "status": "pending"},
    {"id": "2", "text": TWO, "status": "pending"},
]
# How long each worker waits for the model after its first tool: long enough that both are
# seen running at once even when one starts seconds after the other on a busy machine.
WORKING_SECONDS = 10


@pytest.fixture
def top() -> Iterator[Path]:
    """Outside /tmp (the sandbox's /tmp is private): the workspace and the state folder."""
    folder = Path(tempfile.mkdtemp(prefix="plansight-cli-parallel-", dir="/var/tmp"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def worker_steps(todo_id: str, path: str, old: str, new: str) -> list[ScriptStep]:
    done = [{**i, "status": "completed" if i["id"] == todo_id else i["status"]} for i in PLAN]
    return [
        tool_reply("read_file", {"path": path}),
        Hang(
            WORKING_SECONDS,
            then=tool_reply("edit_file", {"path": path, "old_text": old, "new_text": new}),
        ),
        tool_reply("todo", {"items": done}),
        text_reply(f"Changed {path}."),
    ]


def at_prompt(lines: list[str]) -> bool:
    return bool(lines) and lines[-1] == PROMPT


def asking(lines: list[str]) -> bool:
    return " ".join(lines[-2:]).endswith(QUESTION_END)


def planned(
    top: Path,
    terminal: Callable[[int, int], Terminal],  # noqa: F811
    fake_api: FakeMessagesAPI,
) -> tuple[Path, Terminal]:
    """The interactive terminal on a workspace with a.py and b.py, the two items planned."""
    workspace = top / "ws"
    workspace.mkdir()
    (workspace / "a.py").write_text(A_PY)
    (workspace / "b.py").write_text(B_PY)
    fake_api.push(tool_reply("todo", {"items": PLAN}, text="Two items."), text_reply("Planned."))
    env = plain_env(top) | {
        "ANTHROPIC_BASE_URL": fake_api.base_url,
        "ANTHROPIC_API_KEY": "test-key",
    }
    term = terminal(100, 30)
    term.start(PLANSIGHT, env, workspace)
    term.wait_for("the prompt", at_prompt)
    term.type_line("Plan the two changes")
    term.wait_for("the plan", lambda now: at_prompt(now) and "Planned." in now)
    return workspace, term


def both_running(lines: list[str]) -> bool:
    return any(line.startswith("⟳ #1 read_file: a.py") for line in lines[-8:]) and any(
        line.startswith("⟳ #2 read_file: b.py") for line in lines[-8:]
    )


@pytest.mark.skipif(not detect().available, reason="no sandbox can be made here")
def test_parallel_shows_each_worker_live_then_reviews_each_workers_files(
    top: Path,
    terminal: Callable[[int, int], Terminal],  # noqa: F811
    fake_api: FakeMessagesAPI,
) -> None:
    workspace, term = planned(top, terminal, fake_api)
    # The workers' conversations, only now: the main one's requests must not match them.
    fake_api.push_conversation(ONE, *worker_steps("1", "a.py", "return 1", "return 'hello'"))
    fake_api.push_conversation(TWO, *worker_steps("2", "b.py", "return 2", "return 'bye'"))
    term.type_line("/parallel 1 2")

    # While they run: a line per worker in the live region, each with its current tool.
    lines = term.wait_for("both workers running, each with its tool", both_running)
    assert "workers running" in lines[-1], "\n".join(lines[-10:])
    assert (workspace / "a.py").read_text() == A_PY  # nothing taken in yet

    # How each ended, then worker #1's file put to the user: accepted.
    lines = term.wait_for("worker #1's review", asking)
    shown = "\n".join(lines)
    assert "✓ #1 completed: a.py +1 -1" in shown and "✓ #2 completed: b.py +1 -1" in shown
    assert "Worker #1's changes, file by file:" in shown
    assert "review edit a.py" in shown and "+    return 'hello'" in shown
    assert not any(line.startswith("⟳") for line in lines), shown  # the live lines went
    term.send("a", "Enter")
    # Worker #2's file: rejected.
    lines = term.wait_for(
        "worker #2's review", lambda now: asking(now) and "review edit b.py" in "\n".join(now)
    )
    assert "Worker #2's changes, file by file:" in "\n".join(lines)
    assert "+    return 'bye'" in "\n".join(lines)
    term.send("r", "Enter")
    lines = term.wait_for("the prompt after the reviews", at_prompt)
    shown = "\n".join(lines)
    assert "#1: 1 applied" in shown and "#2: 1 rejected" in shown, shown
    assert (workspace / "a.py").read_text() == "def main():\n    return 'hello'\n"
    assert (workspace / "b.py").read_text() == B_PY


@pytest.mark.skipif(not detect().available, reason="no sandbox can be made here")
def test_ctrl_c_during_parallel_stops_every_worker_and_keeps_the_session(
    top: Path,
    terminal: Callable[[int, int], Terminal],  # noqa: F811
    fake_api: FakeMessagesAPI,
) -> None:
    workspace, term = planned(top, terminal, fake_api)
    # Workers that would go on long after the Ctrl-C: only the cancel ends them.
    fake_api.push_conversation(ONE, tool_reply("read_file", {"path": "a.py"}), Hang(300))
    fake_api.push_conversation(TWO, tool_reply("read_file", {"path": "b.py"}), Hang(300))
    term.type_line("/parallel 1 2")
    term.wait_for("both workers running", both_running)
    term.send("C-c")

    # The server stopped both before it answered: their end lines (from its events) come
    # before the prompt is back.
    lines = term.wait_for(
        "the prompt after the cancel",
        lambda now: at_prompt(now) and "Cancelled: the workers" in "\n".join(now),
    )
    shown = "\n".join(lines)
    assert "– #1 cancelled, no changes" in shown and "– #2 cancelled, no changes" in shown, shown
    assert not any(line.startswith("⟳") for line in lines), shown
    assert (workspace / "a.py").read_text() == A_PY
