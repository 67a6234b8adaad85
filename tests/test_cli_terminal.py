"""The terminal client in a real terminal: tmux runs it, `capture-pane` reads what the user sees.

Each test has a tmux server of its own (`tmux -L <unique name>`, so parallel workers never share
one) that is killed when the test ends. Every wait waits for what it checks, up to a deadline
that only a broken client reaches.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from plansight.fakeapi import FakeMessagesAPI, Hang

pytestmark = pytest.mark.skipif(
    shutil.which("tmux") is None and not os.environ.get("CI"),
    reason="tmux is not installed (.ci/run installs it)",
)

QUESTION_END = "type a reason to reject:"
DEADLINE = 60.0
PLANSIGHT = [sys.executable, "-m", "plansight"]  # the interactive session
TMUX_CONF = """\
set -g remain-on-exit on
set -g history-limit 100000
set -g status off
"""


class Terminal:
    """One tmux window of `width` x `height` running one command."""

    def __init__(self, directory: Path, width: int, height: int) -> None:
        self.socket = f"plansight-test-{os.getpid()}-{uuid.uuid4().hex[:10]}"
        self.width, self.height = width, height
        self.conf = directory / "tmux.conf"
        self.conf.write_text(TMUX_CONF)
        self.status_file = directory / f"{self.socket}.status"
        self.started = False

    def tmux(self, *args: str, env: dict[str, str] | None = None) -> str:
        done = subprocess.run(
            ["tmux", "-L", self.socket, "-f", str(self.conf), *args],
            capture_output=True,
            text=True,
            timeout=30,
            env=env,
        )
        assert done.returncode == 0, f"tmux {args}: {done.stderr}"
        return done.stdout

    def start(self, command: list[str], env: dict[str, str], cwd: Path) -> None:
        # A shell around the command writes its exit status to a file: tmux's own
        # #{pane_dead_status} can stay empty when the terminal closes before tmux reaps the
        # process. `trap : INT` keeps the shell alive through a Ctrl-C (which reaches the whole
        # foreground group) while the command gets the default handling.
        wrapper = 'trap : INT; "$@"; echo $? > "$0.tmp"; mv "$0.tmp" "$0"'
        # The server starts with this call, so the window inherits exactly `env`.
        self.tmux(
            "new-session",
            "-d",
            "-s",
            "main",
            "-x",
            str(self.width),
            "-y",
            str(self.height),
            "-c",
            str(cwd),
            "sh",
            "-c",
            wrapper,
            str(self.status_file),
            *command,
            env=env,
        )
        self.started = True

    def close(self) -> None:
        if not self.started:
            return
        socket = self.tmux("display-message", "-p", "#{socket_path}").strip()
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True, timeout=30)
        Path(socket).unlink(missing_ok=True)  # tmux leaves it behind

    def send(self, *keys: str) -> None:
        self.tmux("send-keys", "-t", "main", *keys)

    def type_line(self, line: str) -> None:
        """Type `line` as it is (no key names), then Enter."""
        self.send("-l", line)
        self.send("Enter")

    def scrollback(self) -> list[str]:
        """Every line of the scrollback and the screen, wrapped lines joined, as shown, from
        the first that is not blank (inside tmux the output begins at the screen's bottom)."""
        lines = self.tmux("capture-pane", "-p", "-J", "-S", "-", "-t", "main").splitlines()
        lines = [line.rstrip() for line in lines if not line.startswith("Pane is dead")]
        while lines and not lines[-1]:
            lines.pop()
        while lines and not lines[0]:
            lines.pop(0)
        return lines

    def exit_status(self) -> int | None:
        """The command's exit status once it has ended, else None."""
        if not self.status_file.exists():
            return None
        return int(self.status_file.read_text())

    def wait_for(self, what: str, check: Callable[[list[str]], bool]) -> list[str]:
        deadline = time.monotonic() + DEADLINE
        while True:
            lines = self.scrollback()
            if check(lines):
                return lines
            if time.monotonic() > deadline:
                shown = "\n".join(lines[-40:])
                pytest.fail(f"waited {DEADLINE:g} s for {what}; the terminal shows:\n{shown}")
            time.sleep(0.05)


@pytest.fixture
def terminal(tmp_path: Path) -> Iterator[Callable[[int, int], Terminal]]:
    opened: list[Terminal] = []

    def open_terminal(width: int, height: int) -> Terminal:
        term = Terminal(tmp_path, width, height)
        opened.append(term)
        return term

    yield open_terminal
    for term in opened:
        term.close()


def plain_env(tmp_path: Path) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("ANTHROPIC_", "PLANSIGHT_", "TMUX"))
        and k not in ("FORCE_COLOR", "NO_COLOR", "COLUMNS", "LINES")
    }
    env["XDG_STATE_HOME"] = str(tmp_path / "state")
    env["TERM"] = "screen"
    return env


def api_env(tmp_path: Path, api: FakeMessagesAPI, **extra: str) -> dict[str, str]:
    """`plain_env` with the fake Messages API's address and a key, and `extra` variables."""
    return (
        plain_env(tmp_path)
        | {"ANTHROPIC_BASE_URL": api.base_url, "ANTHROPIC_API_KEY": "test-key"}
        | extra
    )


def asking(lines: list[str]) -> bool:
    return bool(lines) and lines[-1].endswith(QUESTION_END)


def next_step(term: Terminal, before: list[str]) -> Callable[[list[str]], bool]:
    """True once a new question is asked below the old one, or the command has ended."""
    return lambda now: (asking(now) and len(now) > len(before)) or term.exit_status() is not None


def assert_kept(before: list[str], after: list[str], answer: str) -> None:
    """Every line shown before the answer is still there, in place; the question got it."""
    assert len(after) >= len(before), "lines went missing:\n" + "\n".join(before[len(after) :])
    for number, (was, now) in enumerate(zip(before[:-1], after, strict=False)):
        assert now == was, f"line {number + 1} was {was!r}, now {now!r}"
    assert after[len(before) - 1] == f"{before[-1]} {answer}"


def test_answering_reviews_keeps_every_line_that_was_shown(
    tmp_path: Path, terminal: Callable[[int, int], Terminal]
) -> None:
    # A short window, so that the run scrolls through it several times.
    term = terminal(100, 24)
    workspace = tmp_path / "demo"
    term.start(
        [sys.executable, "-m", "plansight", "demo", "--workspace", str(workspace)],
        plain_env(tmp_path),
        tmp_path,
    )
    answers = 0
    lines = term.wait_for("the first review", asking)
    while asking(lines):
        before = lines
        term.send("a", "Enter")
        answers += 1
        lines = term.wait_for("the next review or the end of the run", next_step(term, before))
        assert_kept(before, lines, "a")
    lines = term.wait_for("the end", lambda _: term.exit_status() is not None)
    assert term.exit_status() == 0, "\n".join(lines)
    assert answers == 6  # five edits and the test command

    shown = "\n".join(lines)
    # What scrolled by with each review is all there: the whole diffs and the command.
    assert "-def shout(name, times):\n+def shout(name: str, times: int) -> str:" in shown
    assert '+if __name__ == "__main__":\n+    main()' in shown
    # The command is named once, by its tool call; its review says where it runs (issue 21).
    assert f"⚙ bash $ python3 -m unittest -v test_hello\n  in {workspace}\n" in shown
    assert shown.count("$ python3 -m unittest -v test_hello") == 1
    assert re.search(r"\n  ✓ Ran 2 tests in [\d.]+s · OK · exit code 0\n", shown)
    assert (
        shown.count(
            f"Apply this edit? [a]ccept, [s] accept all this session, [r]eject, or {QUESTION_END} a"
        )
        == 5
    )
    # The reminder in words, the final plan, the result and what the input cost.
    assert "⚠ reminder after 3 rounds without a plan update: Update your todos." in shown
    assert "<reminder>" not in shown
    assert "│ [x] #4: Run the tests" in shown and "done after 10 rounds" in shown
    usage = next(line for line in lines if line.startswith("tokens: "))
    assert usage.startswith("tokens: input ") and " cached" in usage, usage
    assert "Traceback" not in shown


def test_the_compaction_demo_shows_the_compaction_and_keeps_it_on_screen(
    tmp_path: Path, terminal: Callable[[int, int], Terminal]
) -> None:
    term = terminal(120, 30)
    workspace = tmp_path / "demo"
    command = [sys.executable, "-m", "plansight", "demo", "--compaction", "--yes"]
    term.start(
        [*command, "--workspace", str(workspace)],
        plain_env(tmp_path),
        tmp_path,
    )
    lines = term.wait_for("the end", lambda _: term.exit_status() is not None)
    assert term.exit_status() == 0, "\n".join(lines)
    shown = "\n".join(lines)
    assert "context window 4,800 tokens" in shown
    compacted = [line for line in lines if line.startswith("⇣ compacted: ~")]
    assert compacted, shown
    assert all("plan and scratchpad kept verbatim" in line for line in compacted)
    assert "done after 13 rounds" in shown and "Traceback" not in shown


def test_progress_shows_while_the_model_is_silent_and_ctrl_c_cancels(
    tmp_path: Path,
    terminal: Callable[[int, int], Terminal],
    fake_api: FakeMessagesAPI,
    hello_workspace: Path,
) -> None:
    fake_api.push(Hang(120))
    env = plain_env(tmp_path) | {
        "ANTHROPIC_BASE_URL": fake_api.base_url,
        "ANTHROPIC_API_KEY": "test-key",
    }
    term = terminal(100, 20)
    term.start(
        [sys.executable, "-m", "plansight", "run", "Add type hints", "--workspace", "."],
        env,
        hello_workspace,
    )
    # The live line says what we are waiting for and counts the seconds.
    lines = term.wait_for(
        "the seconds spent waiting for the model",
        lambda now: bool(now) and "waiting for the model… 1 s" in now[-1],
    )
    # The header (its first line wrapped at words where the path makes it long), the prompt.
    header = lines[: lines.index("› Add type hints") + 1]
    assert header[0].startswith("plansight · ")
    term.send("C-c")
    lines = term.wait_for("the run to end", lambda _: term.exit_status() is not None)
    assert term.exit_status() == 130, "\n".join(lines)
    assert lines[: len(header)] == header
    shown = "\n".join(lines)
    assert "Cancelling the run" in shown and "cancelled after" in shown
    assert "waiting for the model" not in shown  # the live line went with the run
    assert "Traceback" not in shown
