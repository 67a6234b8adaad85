"""`plansight sessions` and `plansight run --session ID|last|new` as a user runs them:
subprocesses, the real server, the fake Messages API."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from plansight.fakeapi import FakeMessagesAPI, text_reply
from test_cli_run import client_env

# A title with a terminal sequence in it (from a prompt the user pasted, say): shown, not obeyed.
SNEAKY = "Second task \x1b[2J\x1b]0;pwned\x07 with a clear-screen"


def plansight(
    api: FakeMessagesAPI, workspace: Path, state: Path, *args: str
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "plansight", *args, "--workspace", str(workspace)],
        env=client_env(api, state),
        capture_output=True,
        text=True,
        timeout=120,
    )


def listed_ids(out: str) -> list[tuple[bool, str]]:
    """(current, id) of each session line of `plansight sessions`."""
    rows = []
    for line in out.splitlines()[1:]:
        current, rest = line[:2], line[2:].split()
        rows.append((current == "* ", rest[0]))
    return rows


def test_sessions_lists_them_and_run_picks_one_by_id_last_or_new(
    hello_workspace: Path, fake_api: FakeMessagesAPI, tmp_path: Path
) -> None:
    state = tmp_path / "state"
    fake_api.push(
        text_reply("First answer."),
        text_reply("Second answer."),
        text_reply("Back in the first."),
        text_reply("Still the first."),
    )
    first = plansight(fake_api, hello_workspace, state, "run", "first-task-canary", "--yes")
    assert first.returncode == 0, first.stdout + first.stderr
    second = plansight(fake_api, hello_workspace, state, "run", SNEAKY, "--yes", "--session", "new")
    assert second.returncode == 0, second.stdout + second.stderr
    assert "first-task-canary" not in json.dumps(fake_api.bodies[-1])  # a new conversation

    shown = plansight(fake_api, hello_workspace, state, "sessions")
    assert shown.returncode == 0, shown.stdout + shown.stderr
    out = shown.stdout
    # The title is shown with its control characters made visible, never sent to the terminal.
    assert "\x1b" not in out and "\x07" not in out
    assert "Second task ^[[2J^[]0;pwned^G with a clear-screen" in out, out
    assert "first-task-canary" in out
    rows = listed_ids(out)
    assert [current for current, _ in rows] == [True, False], out  # newest first, it current
    (_, second_id), (_, first_id) = rows
    assert out.index(second_id) < out.index("Second task") < out.index(first_id)

    # By id: the first session's conversation goes on, the second's stays out.
    back = plansight(
        fake_api, hello_workspace, state, "run", "more", "--yes", "--session", first_id
    )
    assert back.returncode == 0, back.stdout + back.stderr
    sent = json.dumps(fake_api.bodies[-1])
    assert "first-task-canary" in sent and "First answer." in sent and "Second task" not in sent
    # `last`: the session used last, the first one now.
    again = plansight(
        fake_api, hello_workspace, state, "run", "again", "--yes", "--session", "last"
    )
    assert again.returncode == 0, again.stdout + again.stderr
    sent = json.dumps(fake_api.bodies[-1])
    assert "first-task-canary" in sent and "Back in the first." in sent

    requests = len(fake_api.message_requests)
    unknown = plansight(
        fake_api, hello_workspace, state, "run", "x", "--yes", "--session", "nosuchsession"
    )
    assert unknown.returncode == 1
    assert "nosuchsession" in unknown.stdout + unknown.stderr
    assert len(fake_api.message_requests) == requests  # nothing reached the model


def test_session_and_new_session_together_are_a_usage_error(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "plansight", "run", "x", "--new-session", "--session", "abc"],
        env=client_env(None, tmp_path / "state"),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and "--session" in done.stderr
