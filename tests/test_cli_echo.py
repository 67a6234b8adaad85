"""What the terminal client's commands print holds no terminal sequence from the model, a file
or a command (cli/echo.py): unit tests of `echo`, and `plansight plan`, `history` and
`checkpoints` in a real terminal (tmux) on a session whose plan, scratchpad, history and
checkpoint labels carry a title change (OSC 0), a clipboard write (OSC 52) and a screen clear."""

from __future__ import annotations

import io
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from rich.text import Text

from plansight.cli.checkpoints import checkpoint_lines
from plansight.cli.echo import echo, shown
from plansight.cli.show import history_lines, plan_lines
from plansight.fakeapi import FakeMessagesAPI, text_reply, tool_reply
from test_cli_checkpoints import env_for

from test_cli_terminal import Terminal, plain_env, terminal

__all__ = ["terminal"]  # the fixture, used by the tmux test

TITLE = "\x1b]0;pwned\x07"
CLIPBOARD = "\x1b]52;c;cHduZWQ=\x07"  # "pwned", base64
CLEAR = "\x1b[2J"
HOSTILE = f"Fix it{TITLE} now{CLIPBOARD}{CLEAR} please"
# As the screen shows them: caret notation, as `cat -v` does (ESC is ^[; a BEL shows as ^G,
# or is gone: rich's `Text` drops it).
TITLE_SHOWN = "^[]0;pwned"
CLIPBOARD_SHOWN = "^[]52;c;cHduZWQ="
CLEAR_SHOWN = "^[[2J"


def printed(*renderables: Any) -> str:
    """What `echo` writes to a terminal (colours on, so rich's own escapes are there too)."""
    out = io.StringIO()
    echo(Console(file=out, force_terminal=True, width=200, highlight=False), *renderables)
    return out.getvalue()


def assert_inert(output: str) -> None:
    """No OSC sequence (title, clipboard), no BEL and no screen clear reach the terminal."""
    assert "\x1b]" not in output and "\x07" not in output and CLEAR not in output, repr(output)


def test_echo_shows_control_characters_and_keeps_styles() -> None:
    out = printed(Text(HOSTILE, style="bold red"), HOSTILE)
    assert_inert(out)
    assert out.count(TITLE_SHOWN) == 2 and out.count(CLIPBOARD_SHOWN) == 2
    assert "\x1b[1;31m" in out  # the style is still applied, around the visible text
    assert shown(Text("plain")).plain == "plain"


def test_plan_history_and_checkpoint_lines_print_inert() -> None:
    state = {
        "todos": {"items": [{"id": "1", "text": HOSTILE, "status": "in_progress"}]},
        "scratchpad": HOSTILE,
    }
    runs = [{"prompt": HOSTILE, "result": {"status": "done", "text": HOSTILE}, "events": []}]
    checkpoints = [{"id": "c1", "label": f"Ran echo {HOSTILE}", "files": [f"a{TITLE}.txt"]}]
    for lines in (plan_lines(state), history_lines(runs), checkpoint_lines(checkpoints)):
        out = printed(*lines)
        assert_inert(out)
        assert TITLE_SHOWN in out


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
@pytest.mark.skipif(shutil.which("git") is None, reason="needs the git program")
def test_plan_history_and_checkpoints_in_a_terminal_obey_nothing(
    tmp_path: Path, fake_api: FakeMessagesAPI, terminal: Callable[[int, int], Terminal]
) -> None:
    root = tmp_path / "project"
    root.mkdir()
    (root / "app.py").write_text("print('hello')\n")
    state = tmp_path / "state"
    items = lambda status: {"items": [{"id": "1", "text": HOSTILE, "status": status}]}  # noqa: E731
    fake_api.push(
        tool_reply("todo", items("in_progress")),
        tool_reply("write_scratchpad", {"content": f"Notes: {HOSTILE}"}),
        tool_reply("bash", {"command": f"echo made > made.txt # {HOSTILE}"}),
        tool_reply("todo", items("completed")),
        text_reply(f"Done. {HOSTILE}"),
    )
    done = subprocess.run(
        [sys.executable, "-m", "plansight", "run", "Go", "--workspace", str(root), "--yes"],
        env=env_for(state, fake_api),
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stdout + done.stderr

    term = terminal(200, 50)
    # tmux takes an OSC 52 into a paste buffer when set-clipboard is on: one would show there.
    term.conf.write_text(term.conf.read_text() + "set -g set-clipboard on\n")
    env = plain_env(tmp_path)
    env["XDG_STATE_HOME"] = str(state)
    where = f"--workspace '{root}'"
    script = "; ".join(
        f"{sys.executable} -m plansight {command} {where}"
        for command in ("plan", "history", "checkpoints")
    )
    term.start(["sh", "-c", script], env, tmp_path)
    title_before = term.tmux("display-message", "-p", "#{pane_title}").strip()
    lines = term.wait_for("the three commands to end", lambda _: term.exit_status() is not None)
    screen = "\n".join(lines)
    assert term.exit_status() == 0, screen
    assert "Checkpoints of" in screen and "Runs in" in screen and "Scratchpad:" in screen

    assert term.tmux("display-message", "-p", "#{pane_title}").strip() == title_before
    assert "pwned" not in title_before
    assert term.tmux("list-buffers") == ""  # no clipboard write reached tmux
    # Each place shows the sequences as text: the plan item, the scratchpad, the prompt's
    # answer in the history, and the command's checkpoint label.
    assert screen.count(TITLE_SHOWN) >= 4, screen
    assert CLIPBOARD_SHOWN in screen and CLEAR_SHOWN in screen
    # The screen was never cleared: the first command's first line is still there.
    assert lines[0].startswith("The session of")
    assert "Traceback" not in screen
