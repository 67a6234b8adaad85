"""What the terminal client puts on a real screen (tmux): nothing from the model, a file or a
command is obeyed as a control sequence, nothing printed is redrawn at any width, text wraps at
words, Markdown is rendered, questions reach the user when stdout is a file, a cancel leaves a
clean screen. Each check reads the screen (`capture-pane`), as the user would."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from plansight.fakeapi import FakeMessagesAPI, Hang, reply, text_reply, tool_reply

from test_cli_terminal import Terminal, api_env, plain_env, terminal  # noqa: F401 (the fixture)

ESCAPES = "Clear \x1b[2J\x1b[31mRED\x1b[0m and a bell\x07."
COMMAND = "printf 'out \\033[2J\\033[32mgreen\\n'"
ODD_NAME = "odd\x1b[2Jname.txt"


def run_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "plansight", "run", *args]


def ended(term: Terminal) -> Callable[[list[str]], bool]:
    return lambda _: term.exit_status() is not None


def from_the_first_line(rows: list[str]) -> list[str]:
    """`rows` from the first that is not blank (inside tmux the output begins at the screen's
    bottom, the rows above it blank)."""
    first = next((n for n, row in enumerate(rows) if row.strip()), len(rows))
    return rows[first:]


def styled_screen(term: Terminal) -> str:
    """The scrollback with its colours as escape sequences (`capture-pane -e`)."""
    return term.tmux("capture-pane", "-p", "-e", "-J", "-S", "-", "-t", "main")


def test_control_characters_from_the_model_a_file_and_a_command_are_shown_not_obeyed(
    tmp_path: Path,
    terminal: Callable[[int, int], Terminal],  # noqa: F811
    fake_api: FakeMessagesAPI,
    hello_workspace: Path,
) -> None:
    (hello_workspace / ODD_NAME).write_text("odd\n")
    fake_api.push(
        reply(ESCAPES + "\nReading.", [("read_file", {"path": ODD_NAME})]),
        tool_reply("bash", {"command": COMMAND}, text="Now \x1b[2J\x1b[44mblue\x1b[0m."),
        Hang(120),  # the screen is read while the run waits, then the run is cancelled
    )
    term = terminal(100, 40)
    term.start(run_command("Look", "--yes"), api_env(tmp_path, fake_api), hello_workspace)
    lines = term.wait_for(
        "the command's result, and the wait for the model",
        lambda now: any("✓ out" in line for line in now) and "waiting for the model" in now[-1],
    )
    shown = "\n".join(lines)
    # Every escape shows as text: the model's, the file name's and the command output's.
    assert "Clear ^[[2J^[[31mRED^[[0m and a bell^G." in shown, shown
    assert "⚙ read_file odd^[[2Jname.txt" in shown
    assert "✓ out ^[[2J^[[32mgreen · exit code 0" in shown
    assert "Now ^[[2J^[[44mblue^[[0m." in shown
    # The screen was never cleared: the header is still on it, above what followed (the
    # output began at the screen's bottom: blank rows above it).
    screen = from_the_first_line(term.tmux("capture-pane", "-p", "-J", "-t", "main").splitlines())
    # (The header's first line may wrap at words where the workspace's path is long.)
    assert screen[0].startswith("plansight · ") and "› Look" in screen[1:3], "\n".join(screen)
    # And nothing was recoloured: no red, green or blue background reached the terminal.
    styled = styled_screen(term)
    for colour in ("\x1b[31m", "\x1b[32mgreen", "\x1b[44m"):
        assert colour not in styled, colour
    term.send("C-c")
    lines = term.wait_for("the cancelled run's end", ended(term))
    assert term.exit_status() == 130, "\n".join(lines)


def printed_lines(text: str) -> list[str]:
    """The lines a run prints the same way in a file and on a terminal (tool calls and their
    results, reminders, the diffs of the edits), with the seconds a test took left out."""
    kept = []
    in_diff = False  # between an edit's `⚙` line and its result
    for line in text.splitlines():
        if line.startswith(("⚙ ", "  ✓ ", "  ! ", "⚠ ")) or (in_diff and line[:1] in "+-"):
            kept.append(re.sub(r"in [\d.]+s", "in Ns", line))
        in_diff = line.startswith(("⚙ edit_file", "⚙ write_file")) or (
            in_diff and not line.startswith("  ")
        )
    return kept


def squeezed(text: str) -> str:
    return re.sub(r"in[\d.]+s", "inNs", re.sub(r"\s+", "", text))


@pytest.mark.slow
@pytest.mark.parametrize(("width", "runs"), [(40, 1), (60, 3), (100, 1)])
def test_every_printed_line_stays_once_and_in_order_at_any_width(
    tmp_path: Path,
    terminal: Callable[[int, int], Terminal],  # noqa: F811
    width: int,
    runs: int,
) -> None:
    piped = subprocess.run(
        [sys.executable, "-m", "plansight", "demo", "--yes", "--workspace", str(tmp_path / "p")],
        env=plain_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert piped.returncode == 0, piped.stdout + piped.stderr
    expected = printed_lines(piped.stdout)
    assert sum(line.startswith("⚙ edit_file hello.py") for line in expected) == 5
    for run in range(runs):
        term = terminal(width, 24)
        workspace = tmp_path / f"demo{run}"
        command = [
            sys.executable,
            "-m",
            "plansight",
            "demo",
            "--yes",
            "--workspace",
            str(workspace),
        ]
        term.start(command, plain_env(tmp_path), tmp_path)
        lines = term.wait_for("the end of the demo", ended(term))
        assert term.exit_status() == 0, "\n".join(lines)
        # Wrapped at `width`, so compared without the spaces and line ends wrapping moves.
        screen = squeezed("\n".join(lines))
        position = 0
        for line in expected:
            found = screen.find(squeezed(line), position)
            assert found >= 0, f"run {run}: {line!r} is missing or out of order:\n" + "\n".join(
                lines
            )
            position = found + len(squeezed(line))
        everything = squeezed("\n".join(expected))
        for line in {line for line in expected if len(squeezed(line)) >= 12}:  # not `+`
            assert screen.count(squeezed(line)) == everything.count(squeezed(line)), line
        # No piece of the live region was left behind: only the final plan panel is printed.
        assert screen.count("╭─plan") == 1, "\n".join(lines)
        assert "waitingforthemodel" not in screen and "startingthelanguage" not in screen


MARKDOWN = """# Summary

The **refactor** is done and every function now has a docstring, which makes the module \
pleasant to read.

- `greet` has hints
- `shout` has hints

```python
print(greet("Ada"))
```

| function | lines |
|----------|------:|
| greet    |     3 |
"""


def test_the_answer_is_markdown_rendered_and_wrapped_at_words(
    tmp_path: Path,
    terminal: Callable[[int, int], Terminal],  # noqa: F811
    fake_api: FakeMessagesAPI,
    hello_workspace: Path,
) -> None:
    fake_api.push(text_reply(MARKDOWN))
    term = terminal(60, 40)
    term.start(run_command("Sum up", "--yes"), api_env(tmp_path, fake_api), hello_workspace)
    term.wait_for("the end of the run", ended(term))
    assert term.exit_status() == 0
    # Row by row, as the screen shows it (not joined: a word cut by the terminal would be).
    rows = [line.rstrip() for line in term.tmux("capture-pane", "-p", "-S", "-").splitlines()]
    shown = "\n".join(rows)
    assert "Summary" in rows and "# Summary" not in shown
    assert "**" not in shown and "```" not in shown and "|---" not in shown
    assert "• greet has hints" in shown and "• shout has hints" in shown
    # One blank row between the paragraph and the list below it (rich opens a list with one).
    first_item = next(n for n, row in enumerate(rows) if "• greet has hints" in row)
    assert rows[first_item - 1] == "" and rows[first_item - 2].endswith("read."), shown
    assert 'print(greet("Ada"))' in shown
    assert re.search(r"function\s+lines", shown) and re.search(r"greet\s+3", shown)
    # Every word of the long sentence is whole on one row.
    sentence = "every function now has a docstring, which makes the module pleasant to read."
    words = " ".join(rows).split()
    for word in sentence.split():
        assert word in words, f"{word!r} was cut:\n{shown}"


def test_with_stdout_in_a_file_the_review_is_asked_on_the_terminal_and_errors_on_stderr(
    tmp_path: Path,
    terminal: Callable[[int, int], Terminal],  # noqa: F811
    fake_api: FakeMessagesAPI,
    hello_workspace: Path,
) -> None:
    edit = {"path": "hello.py", "old_text": "def greet(name):", "new_text": "def greet(who):"}
    fake_api.push(
        tool_reply("read_file", {"path": "hello.py"}),
        tool_reply("edit_file", edit),
        text_reply("Renamed."),
    )
    out = tmp_path / "out.txt"
    term = terminal(100, 30)
    command = run_command("Rename", "--workspace", ".")
    term.start(
        ["sh", "-c", '"$@" > "$0"', str(out), *command],
        api_env(tmp_path, fake_api),
        hello_workspace,
    )
    lines = term.wait_for(
        "the review on the terminal",
        lambda now: bool(now) and now[-1].endswith("type a reason to reject:"),
    )
    shown = "\n".join(lines)
    assert "review edit hello.py" in shown and "+def greet(who):" in shown
    term.send("a", "Enter")
    term.wait_for("the end of the run", ended(term))
    assert term.exit_status() == 0
    assert "def greet(who):" in (hello_workspace / "hello.py").read_text()
    written = out.read_text()  # the file keeps the transcript: the review and its answer
    assert (
        "Apply this edit? [a]ccept, [s] accept all this session, [r]eject, "
        "or type a reason to reject: a" in written
    )
    assert "done after 3 rounds" in written


def test_ctrl_c_at_a_review_leaves_one_whole_plan_and_a_cancelled_demo_promises_nothing(
    tmp_path: Path,
    terminal: Callable[[int, int], Terminal],  # noqa: F811
) -> None:
    term = terminal(60, 24)
    term.start(
        [sys.executable, "-m", "plansight", "demo", "--workspace", str(tmp_path / "demo")],
        plain_env(tmp_path),
        tmp_path,
    )
    term.wait_for("the first review", lambda now: bool(now) and now[-1].endswith("reject:"))
    term.send("C-c")
    lines = term.wait_for("the end of the demo", ended(term))
    assert term.exit_status() == 130, "\n".join(lines)
    shown = "\n".join(lines)
    assert "cancelled after" in shown
    assert "The refactored project is in" not in shown and "Try: cd" not in shown
    assert "The demo was cancelled; its project, as far as it got, is in" in shown
    # The plan panel is printed once, whole: its top, every item, its bottom.
    assert shown.count("╭─ plan") == 1 and shown.count("╰─ ▶") == 1, shown
    top = next(n for n, line in enumerate(lines) if line.startswith("╭─ plan"))
    bottom = next(n for n, line in enumerate(lines) if line.startswith("╰─ ▶"))
    assert all(line.startswith("│") for line in lines[top + 1 : bottom]), shown


def test_two_model_turns_of_one_run_are_two_paragraphs_not_one_line(
    tmp_path: Path,
    terminal: Callable[[int, int], Terminal],  # noqa: F811
    fake_api: FakeMessagesAPI,
    hello_workspace: Path,
) -> None:
    # Plan mode asks a model that ends its turn without a plan to submit one: its answer is a
    # second turn, with no event between the two texts.
    fake_api.push(
        text_reply("I read the code first and planned."),
        text_reply("The plan waits for you."),
    )
    term = terminal(80, 30)
    command = run_command("Plan it", "--plan", "--yes")
    term.start(command, api_env(tmp_path, fake_api), hello_workspace)
    term.wait_for("the end of the run", ended(term))
    assert term.exit_status() == 0
    rows = [line.rstrip() for line in term.tmux("capture-pane", "-p", "-S", "-").splitlines()]
    rows = from_the_first_line(rows)
    shown = "\n".join(rows)
    assert "planned.The plan" not in shown, shown
    # Each turn is a paragraph of its own, a blank line between them, and the earlier turn's
    # line is still on screen above the later one.
    first = rows.index("I read the code first and planned.")
    assert rows[first + 1 : first + 3] == ["", "The plan waits for you."], shown
    # The header stays at the top (wrapped at words where the workspace's path is long):
    # nothing printed was redrawn away.
    assert rows[0].startswith("plansight ·") and "› Plan it" in rows[1:4], shown
