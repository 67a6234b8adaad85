"""A prompt from stdin (`plansight run -`) or a file (`--prompt-file`): the whole text reaches the
model, the header shows only its first line and its size, and bad input is said clearly."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from plansight.cli.prompts import PromptError, prompt_echo, read_prompt
from plansight.fakeapi import FakeMessagesAPI, text_reply, tool_reply
from test_cli_run import HINT_EDIT, client_env

from conftest import user_texts
from test_cli_terminal import Terminal, plain_env, terminal  # noqa: F401 (the fixture)

FIRST_LINE = "Fix every function listed in the specification below."


def long_prompt(size: int = 200_000) -> str:
    lines = [FIRST_LINE]
    number = 0
    while sum(len(line) + 1 for line in lines) < size:
        number += 1
        lines.append(f"- function_{number:05d}: return the sum of its arguments, as documented.")
    return "\n".join(lines)


def run(
    api: FakeMessagesAPI, workspace: Path, state: Path, *args: str, stdin: str = ""
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "plansight", "run", *args, "--yes", "--workspace", str(workspace)],
        env=client_env(api, state),
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
    )


def first_prompt(api: FakeMessagesAPI) -> str:
    return user_texts(api.bodies[0]["messages"][0])[0]


@pytest.mark.parametrize("source", ["stdin", "file"])
def test_a_200_kb_prompt_reaches_the_model_whole_and_is_not_echoed(
    hello_workspace: Path, fake_api: FakeMessagesAPI, tmp_path: Path, source: str
) -> None:
    prompt = long_prompt()
    assert len(prompt.encode()) > 200_000  # more than Linux takes as one argument (128 kB)
    fake_api.push(text_reply("Nothing to fix here."))
    if source == "stdin":
        done = run(fake_api, hello_workspace, tmp_path / "state", "-", stdin=prompt + "\n")
    else:
        spec = tmp_path / "spec.md"
        spec.write_text(prompt + "\n", encoding="utf-8")
        done = run(fake_api, hello_workspace, tmp_path / "state", "--prompt-file", str(spec))
    assert done.returncode == 0, done.stdout + done.stderr
    assert first_prompt(fake_api) == prompt
    lines = done.stdout.splitlines()
    lines_in_prompt = prompt.count("\n") + 1
    assert lines[1] == f"› {FIRST_LINE} … (200 kB, {lines_in_prompt:,} lines)"
    assert "function_00001" not in done.stdout and len(done.stdout) < 2000
    assert "Nothing to fix here." in done.stdout


def test_prompt_sources_that_cannot_be_used_are_said(tmp_path: Path) -> None:
    def plansight(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "plansight", "run", *args, "--workspace", str(tmp_path)],
            env=client_env(None, tmp_path / "state"),
            input=stdin,
            capture_output=True,
            text=True,
            timeout=60,
        )

    both = plansight("a task", "--prompt-file", str(tmp_path / "f"))
    assert both.returncode == 2 and "give the prompt once" in both.stderr
    neither = plansight()
    assert neither.returncode == 2 and "--prompt-file FILE" in neither.stderr
    missing = plansight("--prompt-file", str(tmp_path / "missing.md"))
    assert missing.returncode == 1
    assert f"plansight: no such prompt file: {tmp_path / 'missing.md'}" in missing.stderr
    empty = plansight("-", stdin="\n  \n")
    assert empty.returncode == 1 and "the prompt read from stdin is empty" in empty.stderr


def test_the_echo_of_a_prompt(tmp_path: Path) -> None:
    assert prompt_echo("Add docstrings") == "Add docstrings"
    assert prompt_echo("Fix it\nas follows") == "Fix it\nas follows"
    assert prompt_echo("Fix\n" * 6) == "Fix … (24 characters, 6 lines)"
    assert prompt_echo("x" * 400) == "x" * 159 + "… (400 characters, 1 line)"
    assert prompt_echo("\n\nTitle\n" + "body\n" * 30_000).startswith("Title … (150 kB, ")
    (tmp_path / "folder").mkdir()
    with pytest.raises(PromptError, match="the prompt file is a folder"):
        read_prompt(None, str(tmp_path / "folder"))
    assert read_prompt("as typed ", None).text == "as typed "


def test_with_the_prompt_on_stdin_the_reviews_are_asked_on_the_terminal(
    tmp_path: Path,
    terminal: Callable[[int, int], Terminal],  # noqa: F811
    fake_api: FakeMessagesAPI,
    hello_workspace: Path,
) -> None:
    task = "Add type hints\n\nto greet:\n- name: str\n- returns str\n\nThanks."
    (tmp_path / "task.md").write_text(task + "\n", encoding="utf-8")
    fake_api.push(
        tool_reply("read_file", {"path": "hello.py"}),
        tool_reply("edit_file", HINT_EDIT),
        text_reply("Hints added."),
    )
    env = plain_env(tmp_path) | {
        "ANTHROPIC_BASE_URL": fake_api.base_url,
        "ANTHROPIC_API_KEY": "test-key",
    }
    term = terminal(100, 30)
    command = f"cat {tmp_path / 'task.md'} | {sys.executable} -m plansight run - --workspace ."
    term.start(["sh", "-c", command], env, hello_workspace)
    lines = term.wait_for(
        "the review", lambda now: bool(now) and now[-1].startswith("Apply this edit?")
    )
    assert f"› Add type hints … ({len(task)} characters, 7 lines)" in lines
    term.send("a", "Enter")
    lines = term.wait_for("the end", lambda _: term.exit_status() is not None)
    assert term.exit_status() == 0, "\n".join(lines)
    assert "Hints added." in lines
    assert "def greet(name: str) -> str:" in (hello_workspace / "hello.py").read_text()
    assert first_prompt(fake_api) == task
