"""`plansight` alone in a real terminal: the interactive session, driven through tmux as a person
types, against the scripted fake Messages API.

What is checked is what the user sees (`capture-pane` of the whole scrollback) and what the
fake API received; every wait polls the screen up to a bound (`Terminal.wait_for`).
"""

from __future__ import annotations

import os
import re
import shutil
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from plansight.cli.interactive import Command, completions, parse_line, step_id
from plansight.fakeapi import FakeMessagesAPI, Hang, text_reply, tool_reply

from conftest import Held, strip_cache_control, user_texts, wait_until_sync
from test_cli_terminal import (  # noqa: F401 (the fixture)
    PLANSIGHT,
    Terminal,
    api_env,
    plain_env,
    terminal,
)

PROMPT = "›"
QUESTION_END = "type a reason to reject:"
HINT_EDIT = {
    "path": "hello.py",
    "old_text": "def greet(name):",
    "new_text": "def greet(name: str) -> str:",
}
FIRST_TASK = "Add type hints to greet"
FIRST_ANSWER = "Type hints added to greet."


def plan(*statuses: str) -> dict[str, Any]:
    texts = ("Add type hints", "Check the result")
    return {
        "items": [
            {"id": str(n), "text": text, "status": status}
            for n, (text, status) in enumerate(zip(texts, statuses, strict=True), start=1)
        ]
    }


def asking(lines: list[str]) -> bool:
    """A review question is the last thing shown (rich wraps it at words when narrow)."""
    return " ".join(lines[-2:]).endswith(QUESTION_END)


def at_prompt(lines: list[str]) -> bool:
    return bool(lines) and lines[-1] == PROMPT


def lsp_servers(root: int) -> list[int]:
    """The `plansight lsp` processes among `root`'s descendants."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, stack = [], [root]
    while stack:
        for child in children.get(stack.pop(), []):
            try:
                argv = Path(f"/proc/{child}/cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if b"plansight" in argv and b"lsp" in argv:
                found.append(child)
            stack.append(child)
    return found


class Session:
    """The terminal of one interactive session, with what a person does in it."""

    def __init__(self, term: Terminal) -> None:
        self.term = term
        self.shown: list[str] = []  # the scrollback when the prompt last came back

    def pane_pid(self) -> int:
        return int(self.term.tmux("display-message", "-p", "-t", "main", "#{pane_pid}").strip())

    def type_line(self, line: str, until: Callable[[list[str]], bool] | None = None) -> list[str]:
        """Type `line` and Enter at the prompt; the scrollback once `until` holds (by default:
        the prompt is back). Every line shown before is still there, in place."""
        before = self.shown
        assert at_prompt(before), before[-5:]
        self.term.send("-l", line)
        self.term.send("Enter")
        wanted = until or (lambda now: at_prompt(now) and len(now) > len(before))
        lines = self.term.wait_for(f"the answer to {line!r}", wanted)
        self.assert_kept(before, lines, line)
        if until is None:
            self.shown = lines
        return lines[len(before) - 1 :]  # from the line typed on

    def answer(self, text: str) -> list[str]:
        before = self.term.scrollback()
        self.term.send("-l", text)
        self.term.send("Enter")
        lines = self.term.wait_for(
            "the prompt after the answer", lambda now: at_prompt(now) and len(now) > len(before)
        )
        self.assert_kept(self.shown, lines, None)
        new = lines[len(self.shown) - 1 :]
        self.shown = lines
        return new

    @staticmethod
    def assert_kept(before: list[str], after: list[str], typed: str | None) -> None:
        """What was on screen stays, line for line; the prompt line got what was typed."""
        assert len(after) >= len(before), "lines went missing:\n" + "\n".join(after[-20:])
        for number, (was, now) in enumerate(zip(before[:-1], after, strict=False)):
            assert now == was, f"line {number + 1} was {was!r}, now {now!r}"
        if typed is not None and before:
            assert after[len(before) - 1] == f"{PROMPT} {typed}"


@pytest.mark.slow
@pytest.mark.parametrize("width", [100, 60])
def test_an_interactive_session_continues_one_conversation_on_one_server(
    tmp_path: Path,
    terminal: Callable[[int, int], Terminal],  # noqa: F811
    fake_api: FakeMessagesAPI,
    hello_workspace: Path,
    width: int,
) -> None:
    original = (hello_workspace / "hello.py").read_text()
    fake_api.push(
        tool_reply("todo", plan("in_progress", "pending"), text="Planning first."),
        tool_reply("read_file", {"path": "hello.py"}),
        tool_reply("edit_file", HINT_EDIT, text="Adding the hints."),
        tool_reply("todo", plan("completed", "completed")),
        text_reply(FIRST_ANSWER),
        text_reply("It was greet in hello.py."),
        Hang(120),
        tool_reply("read_file", {"path": "hello.py"}),
        tool_reply("edit_file", HINT_EDIT, text="Trying again."),
        text_reply("Still here."),
    )
    env = api_env(tmp_path, fake_api)
    term = terminal(width, 24)
    term.start(PLANSIGHT, env, hello_workspace)
    session = Session(term)
    session.shown = term.wait_for("the prompt", at_prompt)
    assert session.shown[0].startswith("plansight ·")
    assert "/help" in "\n".join(session.shown)

    # A task: the edit is reviewed on the terminal, the answer printed, the prompt back.
    lines = session.type_line(FIRST_TASK, until=asking)
    assert lines[0] == f"{PROMPT} {FIRST_TASK}"
    assert any(line.startswith("review edit hello.py") for line in lines)
    lines = session.answer("a")
    shown = "\n".join(lines)
    assert "+def greet(name: str) -> str:" in shown and FIRST_ANSWER in shown
    assert "done after 5 rounds" in shown
    assert "def greet(name: str) -> str:" in (hello_workspace / "hello.py").read_text()
    servers = lsp_servers(session.pane_pid())
    assert len(servers) == 1, servers

    # A follow-up continues the conversation, on the same server.
    lines = session.type_line("Which function was it?")
    assert "It was greet in hello.py." in lines
    follow_up = fake_api.bodies[-1]["messages"]
    said = str(follow_up)
    assert FIRST_TASK in said and FIRST_ANSWER in said and "Which function was it?" in said
    first = fake_api.bodies[0]["messages"][0]
    assert strip_cache_control(follow_up[0]) == strip_cache_control(first)
    assert lsp_servers(session.pane_pid()) == servers

    # The plan, the checkpoints, and undoing a step.
    lines = session.type_line("/plan")
    assert "[x] #1: Add type hints" in lines and "[x] #2: Check the result" in lines
    lines = session.type_line("/checkpoints")
    assert any("#1" in line and "hello.py" in line for line in lines)
    lines = session.type_line("/undo 1")
    shown = "\n".join(lines)
    assert "Step #1 undone: restored 1 file" in shown and "✓ hello.py" in shown
    assert (hello_workspace / "hello.py").read_text() == original
    lines = session.type_line("/plan")
    assert "[ ] #1: Add type hints" in lines

    # Ctrl-C cancels a run that hangs; the session goes on with the next prompt.
    session.type_line(
        "Take your time",
        until=lambda now: bool(now) and "waiting for the model… 1 s" in now[-1],
    )
    term.send("C-c")
    lines = term.wait_for("the prompt after the cancel", at_prompt)
    shown = "\n".join(lines[len(session.shown) :])
    assert "Cancelling the run" in shown and "cancelled" in shown
    assert "waiting for the model" not in shown  # the live line went with the run
    session.assert_kept(session.shown, lines, "Take your time")
    session.shown = lines
    # Its reviews wait for the user, as before the cancel.
    lines = session.type_line("Are you there?", until=asking)
    assert "Trying again." in lines
    lines = session.answer("r")
    assert "Still here." in lines
    assert "def greet(name):" in (hello_workspace / "hello.py").read_text()  # rejected
    assert lsp_servers(session.pane_pid()) == servers

    # Ctrl-D leaves, with exit status 0; everything printed is still on screen.
    term.send("C-d")
    lines = term.wait_for("the end", lambda _: term.exit_status() is not None)
    assert term.exit_status() == 0, "\n".join(lines)
    session.assert_kept(session.shown, lines, None)
    assert "Traceback" not in "\n".join(lines)


def test_new_help_unknown_commands_and_ctrl_c_twice_at_the_prompt(
    tmp_path: Path,
    terminal: Callable[[int, int], Terminal],  # noqa: F811
    fake_api: FakeMessagesAPI,
    hello_workspace: Path,
) -> None:
    fake_api.push(
        tool_reply("todo", plan("in_progress", "pending")),
        text_reply("Planned."),
        text_reply("The plan waits for you."),  # the done gate's answer
        tool_reply("todo", plan("in_progress", "completed")),  # /step 2
        text_reply("Step 2 is done."),
        text_reply("Summary: a plan of two steps, the second done."),  # /compact
        tool_reply("todo", plan("pending", "pending")),  # /plan TASK: plan mode
        tool_reply("submit_plan", {"summary": "Two steps."}),
        tool_reply("read_file", {"path": "hello.py"}),  # Ctrl-C at its review
        tool_reply("edit_file", HINT_EDIT),
    )
    env = api_env(tmp_path, fake_api)
    term = terminal(80, 24)
    term.start(PLANSIGHT, env, hello_workspace)
    session = Session(term)
    session.shown = term.wait_for("the prompt", at_prompt)
    lines = session.type_line("/help")
    assert any(line.strip().startswith("/undo N") for line in lines)
    lines = session.type_line("/frobnicate")
    assert "No such command: /frobnicate. /help lists them." in lines
    # Up recalls the last line (readline), Enter runs it again.
    before = session.shown
    term.send("Up")
    term.wait_for("the recalled line", lambda now: now[-1] == f"{PROMPT} /frobnicate")
    term.send("Enter")
    session.shown = term.wait_for("the prompt", lambda now: at_prompt(now) and now != before)
    assert session.shown[-2] == "No such command: /frobnicate. /help lists them."
    lines = session.type_line("/undo 9")  # refused by the server: said, and the session goes on
    assert lines[1].startswith("plansight: ") and "9" in lines[1], lines
    # A pasted task of several lines is one prompt, sent by Enter.
    (tmp_path / "paste.txt").write_text("Plan it\nin two steps")
    term.tmux("load-buffer", str(tmp_path / "paste.txt"))
    term.tmux("paste-buffer", "-p", "-t", "main")
    term.wait_for("the pasted lines", lambda now: now[-2:] == [f"{PROMPT} Plan it", "in two steps"])
    before = session.shown
    term.send("Enter")
    session.shown = term.wait_for("the run", lambda now: at_prompt(now) and len(now) > len(before))
    assert "Planned." in "\n".join(session.shown[len(before) :])
    assert user_texts(fake_api.bodies[0]["messages"][0])[0] == "Plan it\nin two steps"
    lines = session.type_line("/step 2")
    assert "Step 2 is done." in lines
    assert "#2: Check the result" in str(fake_api.bodies[-2]["messages"][-1])
    lines = session.type_line("/compact")
    assert any(line.startswith("⇣ compacted: ~") for line in lines), lines
    # Plan mode: the plan is proposed for approval, and cancelling keeps the session.
    lines = session.type_line("/plan Rework greet", until=lambda now: now[-1].endswith("[c]ancel:"))
    assert "plan proposed for your approval" in lines
    lines = session.answer("c")
    # Ctrl-C at a review cancels the run, the edit not made; the prompt comes back.
    session.type_line("Edit it", until=asking)
    term.send("C-c")
    lines = term.wait_for("the prompt after the cancel", at_prompt)
    assert "cancelled" in "\n".join(lines[len(session.shown) :])
    session.assert_kept(session.shown[:-1], lines, None)
    session.shown = lines
    assert "def greet(name):" in (hello_workspace / "hello.py").read_text()
    # A language server that dies between prompts is replaced at the next command.
    (dead,) = lsp_servers(session.pane_pid())
    os.kill(dead, signal.SIGKILL)
    wait_until_sync(lambda: dead not in lsp_servers(session.pane_pid()), "the server gone")
    lines = session.type_line("/new")
    assert any(line.startswith("A new session") for line in lines)
    lines = session.type_line("/plan")
    assert lines[-2].startswith("No plan yet"), lines
    assert len(lsp_servers(session.pane_pid())) == 1
    # The session before /new is kept: listed, and resumed with its plan.
    lines = session.type_line("/sessions")
    listed = [line for line in lines[1:-1] if line.strip()]
    assert len(listed) == 2 and listed[0].startswith("* ") and "(untitled)" in listed[0], lines
    assert "Plan it" in listed[1] and "1/2 done" in listed[1], lines
    lines = session.type_line("/resume")
    assert "Resumed: Plan it" in lines, lines
    assert any("#2: Check the result" in line for line in lines), lines
    # Ctrl-C at the prompt says how to leave; a second one leaves.
    term.send("C-c")
    term.wait_for("the hint", lambda now: any("Ctrl-C again" in line for line in now[-3:]))
    term.send("C-c")
    lines = term.wait_for("the end", lambda _: term.exit_status() is not None)
    assert term.exit_status() == 0, "\n".join(lines)
    # The lines typed are kept for the next session's Up.
    kept = (tmp_path / "state" / "plansight" / "prompt-history").read_text().splitlines()
    assert kept[-6:] == ["/plan Rework greet", "Edit it", "/new", "/plan", "/sessions", "/resume"]


def test_the_first_task_shows_which_project_instructions_the_model_reads(
    tmp_path: Path,
    terminal: Callable[[int, int], Terminal],  # noqa: F811
    fake_api: FakeMessagesAPI,
    hello_workspace: Path,
) -> None:
    (hello_workspace / "AGENTS.md").write_text("Run the tests with unittest.\n")
    fake_api.push(text_reply("First."), text_reply("Second."))
    env = api_env(tmp_path, fake_api)
    term = terminal(100, 24)
    term.start(PLANSIGHT, env, hello_workspace)
    session = Session(term)
    session.shown = term.wait_for("the prompt", at_prompt)
    first = session.type_line("Say something")
    assert "project instructions: AGENTS.md (29 bytes)" in first, first
    second = session.type_line("Again")
    assert not [line for line in second if "project instructions" in line], second  # once


def test_without_an_api_key_the_session_says_how_to_get_going(
    tmp_path: Path,
    terminal: Callable[[int, int], Terminal],  # noqa: F811
    hello_workspace: Path,
) -> None:
    term = terminal(100, 24)
    term.start(PLANSIGHT, plain_env(tmp_path), hello_workspace)
    lines = term.wait_for("the end", lambda _: term.exit_status() is not None)
    assert term.exit_status() == 1
    assert lines[0].startswith("plansight: set ANTHROPIC_API_KEY"), lines


def test_lines_are_tasks_or_commands() -> None:
    assert parse_line("  Add docstrings ") == Command("", "Add docstrings")
    assert parse_line("/undo 2") == Command("undo", "2")
    assert parse_line("/Plan  Refactor it ") == Command("plan", "Refactor it")
    assert step_id("#3 then run the tests") == ("3", "then run the tests")
    assert step_id("") is None


@pytest.mark.parametrize("width", [40, 120])
def test_ctrl_c_at_a_review_leaves_no_library_warning_on_the_terminal(
    tmp_path: Path,
    terminal: Callable[[int, int], Terminal],  # noqa: F811
    fake_api: FakeMessagesAPI,
    hello_workspace: Path,
    width: int,
) -> None:
    fake_api.push(
        tool_reply("read_file", {"path": "hello.py"}),
        tool_reply("edit_file", HINT_EDIT, text="Adding the hints."),
        text_reply("Stopped."),
        text_reply("Stopped again."),
    )
    env = api_env(tmp_path, fake_api)
    term = terminal(width, 24)
    term.start(PLANSIGHT, env, hello_workspace)
    term.wait_for("the prompt", at_prompt)
    term.send(FIRST_TASK, "Enter")
    term.wait_for("the review", asking)
    term.send("C-c")
    lines = term.wait_for(
        "the prompt after the cancel",
        lambda now: at_prompt(now) and any("cancelled" in line for line in now),
    )
    # A task more, so that anything logged late would be on the screen by its end.
    term.send("Say hi", "Enter")
    lines = term.wait_for(
        "the next answer",
        lambda now: at_prompt(now) and any("Stopped" in line for line in now[-8:]),
    )
    shown = "\n".join(lines)
    assert "Cancel notification" not in shown and "unknown message id" not in shown, shown


@pytest.mark.parametrize("width", [40, 120])
def test_a_notice_at_the_prompt_is_printed_above_the_line_being_typed(
    tmp_path: Path,
    terminal: Callable[[int, int], Terminal],  # noqa: F811
    fake_api: FakeMessagesAPI,
    hello_workspace: Path,
    width: int,
) -> None:
    fake_api.push(text_reply("Nothing to do."), text_reply("Done."))
    env = api_env(tmp_path, fake_api)
    term = terminal(width, 24)
    term.start(PLANSIGHT, env, hello_workspace)
    term.wait_for("the prompt", at_prompt)
    # A first task, so that the server (and its watcher) is surely up.
    term.send("Look", "Enter")
    term.wait_for("the answer", lambda now: at_prompt(now) and "Nothing to do." in now)
    term.send("-l", "half typed")
    term.wait_for("the typed text", lambda now: now[-1] == f"{PROMPT} half typed")
    (hello_workspace / "fresh.py").write_text("print('new')\n")
    lines = term.wait_for(
        "the notice", lambda now: any("files changed: fresh.py" in line for line in now)
    )
    lines = term.wait_for("the typed line redrawn", lambda now: now[-1] == f"{PROMPT} half typed")
    notice = next(n for n, line in enumerate(lines) if "files changed: fresh.py" in line)
    assert lines[notice].startswith("↻"), "\n".join(lines)  # on a line of its own
    # And what is typed next continues the line: the cursor is where it was.
    term.send("-l", " more")
    term.wait_for("the rest", lambda now: now[-1] == f"{PROMPT} half typed more")


def refusal_before_a_task(term: Terminal) -> list[str]:
    """The screen once the interactive session has said at its prompt why it cannot work,
    before anything was typed."""
    return term.wait_for(
        "the refusal, nothing typed",
        lambda now: at_prompt(now) and any(line.startswith("plansight:") for line in now),
    )


@pytest.mark.parametrize("width", [40, 120])
def test_the_banner_is_wrapped_at_words(
    tmp_path: Path,
    terminal: Callable[[int, int], Terminal],  # noqa: F811
    fake_api: FakeMessagesAPI,
    width: int,
) -> None:
    # A folder whose path puts the screen's edge inside "change": "plansight · " (12 columns),
    # the path, then " · review each " (15) and the word at the path's length plus 27.
    length = next(n for n in range(width - 30, 4000, width) if n > len(str(tmp_path)) + 1)
    workspace = tmp_path / ("w" * (length - len(str(tmp_path)) - 1))
    workspace.mkdir()
    term = terminal(width, 24)
    term.start(PLANSIGHT, api_env(tmp_path, fake_api), workspace)
    term.wait_for("the prompt", at_prompt)
    # The rows as the screen shows them (not joined where tmux wrapped them), joined with a
    # space: a word cut at the edge ("review each c", "hange") shows.
    lines = term.tmux("capture-pane", "-p", "-t", "main").splitlines()
    said = " ".join(line.strip() for line in lines)
    assert "· review each change" in said, "\n".join(lines)
    assert "Ctrl-C cancels a run, Ctrl-D leaves." in said, "\n".join(lines)
    term.send("C-d")
    term.wait_for("the session's end", lambda _: term.exit_status() is not None)


@pytest.mark.parametrize("width", [40, 120])
def test_a_second_session_on_the_workspace_is_refused_before_a_task_is_typed(
    tmp_path: Path,
    terminal: Callable[[int, int], Terminal],  # noqa: F811
    fake_api: FakeMessagesAPI,
    hello_workspace: Path,
    width: int,
) -> None:
    env = api_env(tmp_path, fake_api)
    first = terminal(width, 24)
    first.start(PLANSIGHT, env, hello_workspace)
    first.wait_for("the first session's prompt", at_prompt)
    # The first session's server keeps the workspace once it is up: /sessions answers then.
    first.send("/sessions", "Enter")
    first.wait_for("the sessions", lambda now: at_prompt(now) and len(now) > 4)
    second = terminal(width, 24)
    second.start(PLANSIGHT, env, hello_workspace)
    lines = refusal_before_a_task(second)
    said = " ".join(lines)
    assert "another" in said.lower() or "in use" in said.lower(), "\n".join(lines)


@pytest.mark.parametrize("width", [40, 120])
def test_a_state_folder_that_cannot_be_written_is_said_before_a_task_is_typed(
    tmp_path: Path,
    terminal: Callable[[int, int], Terminal],  # noqa: F811
    fake_api: FakeMessagesAPI,
    hello_workspace: Path,
    width: int,
) -> None:
    # A file where the state folder would be: nothing can be saved there (even by root).
    (tmp_path / "not-a-folder").write_text("")
    env = api_env(tmp_path, fake_api, XDG_STATE_HOME=str(tmp_path / "not-a-folder"))
    term = terminal(width, 24)
    term.start(PLANSIGHT, env, hello_workspace)
    lines = refusal_before_a_task(term)
    said = " ".join(lines)
    assert "cannot save this workspace's session" in said, "\n".join(lines)
    assert "XDG_STATE_HOME" in said and not fake_api.message_requests


@pytest.mark.parametrize("width", [40, 120])
def test_commands_without_a_sandbox_are_said_before_a_task_is_typed(
    tmp_path: Path,
    terminal: Callable[[int, int], Terminal],  # noqa: F811
    fake_api: FakeMessagesAPI,
    hello_workspace: Path,
    width: int,
) -> None:
    tools = tmp_path / "bin-without-bwrap"  # what the server needs, and no bwrap
    tools.mkdir()
    for name in ("git", "rg", "sh"):
        found = shutil.which(name)
        if found:
            (tools / name).symlink_to(found)
    env = api_env(tmp_path, fake_api)
    term = terminal(width, 24)
    # PATH for plansight only: tmux itself is found on the test's.
    command = ["env", f"PATH={tools}", *PLANSIGHT]
    term.start(command, env, hello_workspace)
    lines = term.wait_for(
        "the warning, nothing typed",
        lambda now: at_prompt(now) and "without a sandbox" in " ".join(now),
    )
    said = " ".join(lines)
    # What it means, why, and what to do: install bubblewrap, or the option that exists.
    assert "commands run without a sandbox: bubblewrap (the bwrap program) is not on" in said
    assert "Install bubblewrap" in said and "sandbox.enabled" in said, "\n".join(lines)
    assert not fake_api.message_requests


@pytest.mark.parametrize("width", [40, 120])
def test_tab_completes_commands_and_files_and_a_backslash_continues_the_line(
    tmp_path: Path,
    terminal: Callable[[int, int], Terminal],  # noqa: F811
    fake_api: FakeMessagesAPI,
    hello_workspace: Path,
    width: int,
) -> None:
    fake_api.push(text_reply("Read both lines."))
    env = api_env(tmp_path, fake_api)
    term = terminal(width, 24)
    term.start(PLANSIGHT, env, hello_workspace)
    term.wait_for("the prompt", at_prompt)
    term.send("-l", "/che")
    term.send("Tab")
    term.wait_for("the completed command", lambda now: now[-1] == f"{PROMPT} /checkpoints")
    term.send("C-u")
    term.send("-l", "Look at @hel")
    term.send("Tab")
    term.wait_for("the completed file", lambda now: now[-1] == f"{PROMPT} Look at @hello.py")
    term.type_line("first \\")
    term.wait_for("the continuation", lambda now: now[-1] == "…")
    term.type_line("and second")
    term.wait_for("the answer", lambda now: at_prompt(now) and "Read both lines." in now)
    asked = [text for m in fake_api.bodies[-1]["messages"] for text in user_texts(m)]
    assert any("Look at @hello.py first \nand second" in text for text in asked), asked


def test_completions_offer_commands_and_only_the_workspaces_files(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / "src" / "main.py").write_text("")
    (root / ".hidden").write_text("")
    (tmp_path / "secret.txt").write_text("")
    assert completions("/re", root) == ["/resume "]
    assert completions("@s", root) == ["@src/"]
    assert completions("@src/m", root) == ["@src/main.py "]
    assert completions("@", root) == ["@src/"]  # dot files only when asked for
    assert completions("@../", root) == [] and completions("@../se", root) == []
    assert completions("plain", root) == []


@pytest.mark.parametrize("width", [40, 120])
def test_cost_sums_the_sessions_runs_at_the_models_list_prices(
    tmp_path: Path,
    terminal: Callable[[int, int], Terminal],  # noqa: F811
    fake_api: FakeMessagesAPI,
    hello_workspace: Path,
    width: int,
) -> None:
    fake_api.push(text_reply("One."), text_reply("Two."))
    env = api_env(tmp_path, fake_api, PLANSIGHT_MODEL="claude-sonnet-4-20250514")
    term = terminal(width, 30)
    term.start(PLANSIGHT, env, hello_workspace)
    term.wait_for("the prompt", at_prompt)
    term.type_line("/cost")
    term.wait_for("nothing spent", lambda now: at_prompt(now) and "nothing spent." in " ".join(now))
    for task, answer in (("First", "One."), ("Second", "Two.")):
        term.type_line(task)
        term.wait_for(answer, lambda now, answer=answer: at_prompt(now) and answer in now)
    term.type_line("/cost")
    lines = term.wait_for(
        "the cost", lambda now: at_prompt(now) and "list prices" in " ".join(now[-4:])
    )
    said = " ".join(lines[-5:-1])
    # Both runs' tokens together, priced at Sonnet 4's list.
    inputs = [
        int(n.replace(",", "")) for n in re.findall(r"tokens: input ([\d,]+)", " ".join(lines))
    ]
    assert len(inputs) == 3 and inputs[2] == inputs[0] + inputs[1], lines
    assert re.search(r"≈ \$\d+\.\d{4} at claude-sonnet-4-20250514's list prices", said), said
    # A new session has spent nothing (as Claude Code's /cost, per session).
    term.send("-l", "/new")
    term.send("Enter")
    term.wait_for(
        "the new session", lambda now: at_prompt(now) and "A new session" in " ".join(now)
    )
    term.send("-l", "/cost")
    term.send("Enter")
    term.wait_for(
        "nothing spent again",
        lambda now: at_prompt(now) and "nothing spent." in " ".join(now[-4:]),
    )


def test_resume_shows_the_resumed_sessions_cost(
    tmp_path: Path,
    terminal: Callable[[int, int], Terminal],  # noqa: F811
    fake_api: FakeMessagesAPI,
    hello_workspace: Path,
) -> None:
    """/cost is per session, as the server's costUsd is: /resume shows the resumed
    session's figures again, not the session left's."""
    fake_api.push(text_reply("One."), text_reply("Two."))
    env = api_env(tmp_path, fake_api, PLANSIGHT_MODEL="claude-sonnet-4-20250514")
    term = terminal(120, 30)
    term.start(PLANSIGHT, env, hello_workspace)
    term.wait_for("the prompt", at_prompt)

    def cost() -> str:
        """What /cost says, its wrapped lines joined."""
        asked = " ".join(term.scrollback()).count(f"{PROMPT} /cost")
        term.type_line("/cost")
        lines = term.wait_for(
            "the cost",
            lambda now: (
                at_prompt(now)
                and " ".join(now).count(f"{PROMPT} /cost") == asked + 1
                and now[-2] != f"{PROMPT} /cost"
            ),
        )
        said = lines[len(lines) - 1 - lines[::-1].index(f"{PROMPT} /cost") + 1 : -1]
        return " ".join(said)

    term.type_line("First")
    term.wait_for("the first answer", lambda now: at_prompt(now) and "One." in now)
    first = cost()
    assert first.startswith("This session: tokens: input") and "list prices" in first, first
    term.type_line("/new")
    term.wait_for(
        "the new session", lambda now: at_prompt(now) and "A new session" in " ".join(now)
    )
    term.type_line("Second, a longer task than the first one")
    term.wait_for("the second answer", lambda now: at_prompt(now) and "Two." in now)
    second = cost()
    assert second.startswith("This session: tokens: input") and second != first, second
    term.type_line("/resume")
    term.wait_for("resumed", lambda now: at_prompt(now) and "Resumed: First" in " ".join(now))
    assert cost() == first
    term.type_line("/new")
    term.wait_for(
        "another new session",
        lambda now: at_prompt(now) and " ".join(now).count("A new session") == 2,
    )
    assert cost() == "No run yet in this session: nothing spent."


def test_keys_typed_during_a_run_leave_the_live_region_whole(
    tmp_path: Path,
    terminal: Callable[[int, int], Terminal],  # noqa: F811
    fake_api: FakeMessagesAPI,
    hello_workspace: Path,
) -> None:
    """The cursor waits at the live region's top: a line typed during a run, echoed there,
    moved it a row down and the region's top row stayed behind in the scrollback. Typed
    ahead, the line is the next prompt's, as in a shell."""
    held = Held(text_reply("First done."))
    fake_api.push(held, text_reply("Second done."))
    term = terminal(100, 24)
    term.start(PLANSIGHT, api_env(tmp_path, fake_api), hello_workspace)
    term.wait_for("the prompt", at_prompt)
    term.type_line("First task")
    term.wait_for("the live region", lambda now: bool(now) and "waiting for the model" in now[-1])
    term.type_line("typed ahead")
    held.release()
    lines = term.wait_for("both runs", lambda now: at_prompt(now) and "Second done." in now)
    shown = "\n".join(lines)
    assert not any("waiting for the model" in line for line in lines), shown
    assert [line for line in lines if "typed ahead" in line] == [f"{PROMPT} typed ahead"], shown
    assert lines.index("First done.") < lines.index(f"{PROMPT} typed ahead"), shown
