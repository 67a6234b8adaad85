"""The terminal's status line (cli/render.py `status_line`, drawn by cli/ui.py) and `/cost`: the
server's figures (the `usage` event), made to fit the terminal's width."""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from plansight.cli.render import context_lines, cost_text, model_lines, status_line
from plansight.fakeapi import FakeMessagesAPI, Hang, text_reply, tool_reply
from plansight.fakeapi.models import model_info

from test_cli_terminal import (  # noqa: F401 (the fixture)
    PLANSIGHT,
    Terminal,
    api_env,
    terminal,
)


def at_prompt(lines: list[str]) -> bool:
    return bool(lines) and lines[-1].startswith("›")


USAGE = {
    "type": "usage",
    "model": "claude-sonnet-4-20250514",
    "contextUsed": 50_000,
    "contextWindow": 200_000,
    "costUsd": 0.0123,
}


def test_the_status_line_says_model_mode_context_left_and_cost() -> None:
    line = status_line(USAGE, "act", 120)
    assert line == "claude-sonnet-4-20250514 · act · 75% context left · $0.0123"


def test_the_status_line_gets_shorter_before_it_is_cropped() -> None:
    assert status_line(USAGE, "plan", 55) == "claude-sonnet-4-20250514 · plan · 75% left · $0.0123"
    assert status_line(USAGE, "act", 40) == "sonnet-4 · act · 75% left · $0.0123"


def test_the_status_line_leaves_out_what_the_server_did_not_say() -> None:
    unpriced = {k: v for k, v in USAGE.items() if k != "costUsd"}
    assert status_line(unpriced, "act", 120) == "claude-sonnet-4-20250514 · act · 75% context left"
    full = USAGE | {"contextUsed": 210_000}
    assert "0% context left" in status_line(full, "act", 120)
    # A model name from the server is shown, never obeyed.
    assert "\x1b" not in status_line(USAGE | {"model": "x\x1b[2J"}, "act", 120)


def test_costs_below_a_dollar_keep_four_places() -> None:
    assert cost_text(0.0046) == "$0.0046" and cost_text(12.345) == "$12.35"


@pytest.mark.parametrize("width", [40, 120])
def test_the_live_region_shows_the_servers_status_line_while_a_run_waits(
    tmp_path: Path,
    terminal: Callable[[int, int], Terminal],  # noqa: F811
    fake_api: FakeMessagesAPI,
    hello_workspace: Path,
    width: int,
) -> None:
    fake_api.push(tool_reply("read_file", {"path": "hello.py"}), Hang(120))
    env = api_env(tmp_path, fake_api, PLANSIGHT_MODEL="claude-sonnet-4-20250514")
    term = terminal(width, 24)
    term.start(PLANSIGHT, env, hello_workspace)
    term.wait_for("the prompt", lambda now: bool(now) and now[-1].startswith("›"))
    term.type_line("Read hello.py")
    model = "claude-sonnet-4-20250514" if width > 60 else "sonnet-4"
    left = "context left" if width > 60 else "left"
    shape = re.compile(rf"^{model} · act · (\d+)% {left} · \$(\d+\.\d{{4}})$")
    lines = term.wait_for(
        "the status line above the activity",
        lambda now: (
            len(now) > 1
            and shape.match(now[-2].strip()) is not None
            and "waiting for the model" in now[-1]
        ),
    )
    found = shape.match(lines[-2].strip())
    assert found is not None
    # The server's figures: the first turn's whole input and output of Sonnet 4's 200k window,
    # priced at $3/$15/$3.75/$0.30 per million (input, output, cache write, cache read).
    usage = fake_api.message_requests[0].usage or {}
    used = sum(usage.get(k, 0) for k in usage if k.endswith("tokens"))
    assert int(found[1]) == 100 - round(used * 100 / 200_000)
    cost = (
        usage.get("input_tokens", 0) * 3
        + usage.get("output_tokens", 0) * 15
        + usage.get("cache_creation_input_tokens", 0) * 3.75
        + usage.get("cache_read_input_tokens", 0) * 0.3
    ) / 1_000_000
    assert found[2] == f"{cost:.4f}"
    term.send("C-c")
    term.wait_for("the prompt after the cancel", lambda now: now[-1].startswith("›"))


def test_context_lines_say_the_share_and_what_fills_it() -> None:
    parts = {"systemPrompt": 9_000, "conversation": 30_000, "toolResults": 11_000}
    lines = context_lines(USAGE | {"parts": parts})
    assert lines[0] == "Context: 50,000 of 200,000 tokens (25%) at the last model turn"
    assert lines[1:] == [
        "  system prompt and tools  ≈ 9,000",
        "  conversation             ≈ 30,000",
        "  tool results             ≈ 11,000",
    ]
    assert context_lines({})[0].startswith("No model turn yet")


@pytest.mark.parametrize("width", [40, 120])
def test_context_shows_the_last_turns_context_and_its_parts(
    tmp_path: Path,
    terminal: Callable[[int, int], Terminal],  # noqa: F811
    fake_api: FakeMessagesAPI,
    hello_workspace: Path,
    width: int,
) -> None:
    fake_api.push(tool_reply("read_file", {"path": "hello.py"}), text_reply("Read it."))
    env = api_env(tmp_path, fake_api, PLANSIGHT_MODEL="claude-sonnet-4-20250514")
    term = terminal(width, 30)
    term.start(PLANSIGHT, env, hello_workspace)
    term.wait_for("the prompt", at_prompt)
    term.type_line("/context")
    term.wait_for(
        "no turn yet", lambda now: at_prompt(now) and "No model turn yet" in " ".join(now[-4:])
    )
    term.type_line("Read hello.py")
    term.wait_for("the answer", lambda now: at_prompt(now) and "Read it." in now)
    term.type_line("/context")
    lines = term.wait_for(
        "the context", lambda now: at_prompt(now) and now[-2].lstrip().startswith("tool results")
    )
    start = max(i for i, line in enumerate(lines) if line.startswith("› /context"))
    said = " ".join(line.strip() for line in lines[start + 1 : -1])
    # The second request's whole input and output, of Sonnet 4's 200,000-token window.
    usage = fake_api.message_requests[1].usage or {}
    used = sum(usage.get(k, 0) for k in usage if k.endswith("tokens"))
    assert f"Context: {used:,} of 200,000 tokens" in said, said
    numbers = [int(n.replace(",", "")) for n in re.findall(r"≈ ([\d,]+)", said)]
    # The system prompt and tools are most of a short session; hello.py's text is a result.
    assert numbers[0] > numbers[1] > 0 and numbers[2] > 0, said


def test_model_lines_mark_the_one_in_use() -> None:
    listed = {
        "models": [
            {"id": "claude-a", "displayName": "Claude A"},
            {"id": "claude-b", "displayName": "claude-b"},
        ],
        "current": "claude-b",
    }
    assert model_lines(listed) == ["Model: claude-b", "  claude-a  Claude A", "* claude-b"]
    assert model_lines({"models": [], "current": "x"}) == [
        "Model: x",
        "(the Models API listed none)",
    ]


@pytest.mark.parametrize("width", [40, 120])
def test_model_lists_the_models_and_a_name_is_used_by_the_next_runs(
    tmp_path: Path,
    terminal: Callable[[int, int], Terminal],  # noqa: F811
    hello_workspace: Path,
    width: int,
) -> None:
    first, second = "claude-sonnet-4-20250514", "claude-opus-4-1-20250805"
    models = [model_info(first, display_name="Claude Sonnet 4"), model_info(second)]
    with FakeMessagesAPI([text_reply("One."), text_reply("Two.")], models=models) as api:
        env = api_env(tmp_path, api, PLANSIGHT_MODEL=first)
        term = terminal(width, 30)
        term.start(PLANSIGHT, env, hello_workspace)
        term.wait_for("the prompt", at_prompt)
        term.type_line("First task")
        term.wait_for("the answer", lambda now: at_prompt(now) and "One." in now)
        term.type_line("/model")
        lines = term.wait_for("the models", lambda now: at_prompt(now) and second in now[-2])
        start = max(i for i, line in enumerate(lines) if line.startswith("› /model"))
        said = " ".join(line.strip() for line in lines[start + 1 : -1])
        assert said == f"Model: {first} * {first}  Claude Sonnet 4 {second}", said
        term.type_line(f"/model {second}")
        term.wait_for(
            "the switch", lambda now: at_prompt(now) and "session goes on" in " ".join(now[-4:])
        )
        term.type_line("Second task")
        term.wait_for("the answer", lambda now: at_prompt(now) and "Two." in now)
        assert [body["model"] for body in api.bodies] == [first, second]
        # The same conversation goes on with the other model.
        assert "First task" in str(api.bodies[1]["messages"])


@pytest.mark.parametrize("width", [40, 120])
def test_edit_sends_the_task_written_in_the_editor(
    tmp_path: Path,
    terminal: Callable[[int, int], Terminal],  # noqa: F811
    fake_api: FakeMessagesAPI,
    hello_workspace: Path,
    width: int,
) -> None:
    fake_api.push(text_reply("Done it."))
    editor = Path(__file__).parent.parent / "fixtures" / "cli-edit-prompt" / "editor.py"
    env = api_env(tmp_path, fake_api, EDITOR=f"{sys.executable} {editor}")
    env.pop("VISUAL", None)
    term = terminal(width, 30)
    term.start(PLANSIGHT, env, hello_workspace)
    term.wait_for("the prompt", at_prompt)
    term.type_line("/edit Look at hello.py")
    term.wait_for("the answer", lambda now: at_prompt(now) and "Done it." in now)
    asked = str(fake_api.bodies[-1]["messages"])
    assert "Look at hello.py\\nfirst line of the task\\nand its second line" in asked, asked
    term.type_line("/edit EMPTY")
    term.wait_for("nothing sent", lambda now: at_prompt(now) and "Nothing sent" in now[-2])
    assert len(fake_api.bodies) == 1
