"""`plansight demo`: the recorded hello.py refactor, offline, through the real server and tools."""

from __future__ import annotations

import io
import itertools
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from rich.console import Console

from plansight.cli.demo import load_json, prepare_workspace, project_files, run_demo
from plansight.fakeapi import Script

REPO = Path(__file__).resolve().parent.parent
REMINDER = "<reminder>Update your todos.</reminder>"  # what the model reads
REMINDER_WORDS = "Update your todos."  # what the user reads


def offline_env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "PLANSIGHT_"))}
    env["XDG_STATE_HOME"] = str(tmp_path / "state")
    return env


def assert_refactored(workspace: Path) -> None:
    source = (workspace / "hello.py").read_text()
    assert "def greet(name: str) -> str:" in source
    assert "def shout(name: str, times: int) -> str:" in source
    assert source.startswith('"""')  # a module docstring
    assert '    """Return a friendly greeting' in source
    assert 'if __name__ == "__main__":\n    main()\n' in source
    tests = subprocess.run(
        [sys.executable, "-m", "unittest", "-v"],
        cwd=workspace,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert tests.returncode == 0, tests.stderr
    assert "Ran 2 tests" in tests.stderr
    assert tests.stdout == ""  # importing hello no longer prints a greeting
    greeting = subprocess.run(
        [sys.executable, "hello.py", "Ada"], cwd=workspace, capture_output=True, text=True
    )
    assert greeting.stdout == "Hello, Ada!\n"


def run_demo_command(tmp_path: Path, workspace: Path, *args: str) -> Any:
    """`plansight demo` as a user starts it, offline, without a terminal."""
    return subprocess.run(
        [sys.executable, "-m", "plansight", "demo", "--workspace", str(workspace), *args],
        env=offline_env(tmp_path),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_demo_command_runs_offline_and_leaves_a_refactored_project(tmp_path: Path) -> None:
    workspace = tmp_path / "demo"
    done = run_demo_command(tmp_path, workspace, "--yes")
    out = done.stdout
    assert done.returncode == 0, out + done.stderr
    assert_refactored(workspace)
    # The plan with every item done, the progress line, the nag, the edits and the tests.
    assert "(4/4 done)" in out
    assert "[x] #4: Run the tests" in out
    assert "▶ 2/4 · Move the script code into main() behind a main guard" in out
    assert f"⚠ reminder after 3 rounds without a plan update: {REMINDER_WORDS}" in out
    assert "<reminder>" not in out
    assert "+def greet(name: str) -> str:" in out
    assert "⚙ bash $ python3 -m unittest -v test_hello" in out
    assert "done after 10 rounds" in out and "tokens:" in out
    assert f"The refactored project is in {workspace.resolve()}" in out
    assert "Traceback" not in done.stderr


async def test_the_server_appends_the_reminder_after_the_tool_results(tmp_path: Path) -> None:
    console = Console(file=io.StringIO(), width=100)
    outcome = await run_demo(console, tmp_path / "demo", accept=True, stdin=io.StringIO())
    assert outcome.exit_code == 0, console.file.getvalue()  # type: ignore[attr-defined]
    assert_refactored(outcome.workspace)
    requests = outcome.requests
    assert [r.status for r in requests] == [200] * 10  # every step served, none rejected
    reminded = []
    for index, request in enumerate(requests):
        last = request.body["messages"][-1]
        blocks: list[dict[str, Any]] = last["content"] if isinstance(last["content"], list) else []
        texts = [i for i, b in enumerate(blocks) if b["type"] == "text" and REMINDER in b["text"]]
        if not texts:
            continue
        reminded.append(index)
        results = [i for i, b in enumerate(blocks) if b["type"] == "tool_result"]
        assert results and max(results) < min(texts), blocks  # after every tool_result
    # Rounds 4, 5 and 6 went without a todo call; their results carry the reminder.
    assert reminded == [4, 5, 6]
    # Earlier messages are never rewritten: the prefix the prompt cache holds stays valid.
    for before, after in itertools.pairwise(requests):
        old, new = plain(before.body["messages"]), plain(after.body["messages"])
        assert new[: len(old)] == old


async def test_the_compaction_demo_compacts_offline_and_keeps_the_plan(tmp_path: Path) -> None:
    from plansight.cli.demo import COMPACTION_RECORDING
    from plansight.engine.compaction.rules import HEADER_OPEN
    from plansight.plan.plan import parse_items, render

    console = Console(file=io.StringIO(), width=120)
    outcome = await run_demo(
        console,
        tmp_path / "demo",
        accept=True,
        stdin=io.StringIO(),
        recording_name=COMPACTION_RECORDING,
    )
    out = console.file.getvalue()  # type: ignore[attr-defined]
    assert outcome.exit_code == 0, out
    assert "context window 4,800 tokens" in out
    assert "⇣ compacted: ~" in out and "plan and scratchpad kept verbatim" in out
    requests = outcome.requests
    assert all(r.status == 200 for r in requests), [r.error for r in requests]
    summaries = [i for i, r in enumerate(requests) if r.body.get("tool_choice") == {"type": "none"}]
    # Once, as the README says: one summary request, one line, and the request made smaller.
    assert len(summaries) == 1, f"{len(summaries)} summary requests of {len(requests)}"
    shown = re.findall(r"⇣ compacted: ~([\d,]+) → ~([\d,]+) tokens", out)
    assert len(shown) == 1, out
    before, after_tokens = (int(n.replace(",", "")) for n in shown[0])
    assert after_tokens < before
    readme = (REPO / "README.md").read_text()
    assert "context window of 4,800 tokens" in readme and "compact the conversation once" in readme
    after = requests[summaries[0] + 1].body["messages"]
    header = after[0]["content"][0]["text"]
    assert header.startswith(HEADER_OPEN)
    assert "Review hello.py and its tests" in header
    # The plan and the scratchpad as they were when it compacted, verbatim: from the calls
    # summarized (the conversation before the last round) and the last round's, kept after.
    calls = [
        b
        for m in [*requests[summaries[0]].body["messages"], *after[1:]]
        if m["role"] == "assistant"
        for b in m["content"]
        if b["type"] == "tool_use"
    ]
    plan = [c["input"] for c in calls if c["name"] == "todo"][-1]
    notes = [c["input"]["content"] for c in calls if c["name"] == "write_scratchpad"]
    assert f"<plan>\n{render(parse_items(plan['items']))}\n</plan>" in header
    assert f"<scratchpad>\n{notes[-1] if notes else '(empty)'}\n</scratchpad>" in header
    source = (outcome.workspace / "hello.py").read_text()
    assert '    """Return the greeting in capitals, repeated `times` times."""' in source
    assert "The reviewed project is in" in out


def plain(value: Any) -> Any:
    """A request's messages without their cache_control marks (they move each round)."""
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


def test_the_packaged_demo_project_is_fixtures_hello() -> None:
    fixture = {p.name: p.read_text() for p in (REPO / "fixtures" / "hello").iterdir()}
    assert project_files() == fixture


def test_the_recording_applies_to_the_demo_project(tmp_path: Path) -> None:
    """Each edit's old_text occurs exactly once when it runs (the recording is blind)."""
    recording = load_json("hello_refactor.json")
    Script.from_dict(recording)  # a valid recording
    files = project_files()
    tools: list[str] = []
    for step in recording["steps"]:
        for block in step["content"]:
            if block["type"] != "tool_use":
                continue
            tools.append(block["name"])
            if block["name"] == "edit_file":
                edit = block["input"]
                assert files[edit["path"]].count(edit["old_text"]) == 1, edit
                files[edit["path"]] = files[edit["path"]].replace(
                    edit["old_text"], edit["new_text"]
                )
    assert tools[:3] == ["todo", "read_file", "write_scratchpad"]
    assert tools.count("todo") == 4
    workspace = prepare_workspace(tmp_path / "result")
    (workspace / "hello.py").write_text(files["hello.py"])
    assert_refactored(workspace)


def test_demo_refuses_a_folder_that_is_not_empty(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    done = subprocess.run(
        [sys.executable, "-m", "plansight", "demo", "--workspace", str(tmp_path), "--yes"],
        env=offline_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 1
    # The message is wrapped at the terminal's width, which a long path pushes anywhere.
    assert "not an empty folder" in " ".join(done.stderr.split())  # an error: on stderr
    assert (tmp_path / "notes.txt").read_text() == "mine"
    assert not (tmp_path / "hello.py").exists()


def test_the_plan_demo_revises_then_approves_and_runs_the_approved_plan(tmp_path: Path) -> None:
    workspace = tmp_path / "demo"
    done = run_demo_command(tmp_path, workspace, "--plan")
    out = done.stdout
    assert done.returncode == 0, out + done.stderr
    assert "plan first, demo, recorded model, auto-accept" in out.splitlines()[0]
    # Two reviews: the first plan, revised with the recorded feedback, then the second, approved.
    assert out.count("plan proposed for your approval") == 2
    assert "› revise: Skip the docstrings: the names say enough." in out
    assert "› approve  (the demo's recorded answer)" in out
    assert "[ ] #2: Add docstrings to the module and its functions" in out
    assert "[x] #3: Run the tests" in out and "done after 15 rounds" in out
    assert "Traceback" not in done.stderr
    # The approved plan is what ran: type hints and a main guard, no docstrings.
    source = (workspace / "hello.py").read_text()
    assert "def greet(name: str) -> str:" in source
    assert 'if __name__ == "__main__":\n    main()\n' in source
    assert '"""' not in source
    tests = subprocess.run(
        [sys.executable, "-m", "unittest", "-q"], cwd=workspace, capture_output=True, text=True
    )
    assert tests.returncode == 0 and tests.stdout == ""


async def test_the_plan_demo_model_reads_the_feedback_and_the_approval(tmp_path: Path) -> None:
    from plansight.cli.demo import PLAN_RECORDING
    from plansight.engine.planmode import PLAN_MODE_TEXT

    console = Console(file=io.StringIO(), width=120)
    outcome = await run_demo(
        console, tmp_path / "demo", accept=True, stdin=io.StringIO(), recording_name=PLAN_RECORDING
    )
    assert outcome.exit_code == 0, console.file.getvalue()  # type: ignore[attr-defined]
    requests = outcome.requests
    assert [r.status for r in requests] == [200] * len(load_json(PLAN_RECORDING)["steps"])
    first = requests[0].body["messages"][0]["content"]
    assert [b["text"] for b in first if b["type"] == "text"][1] == PLAN_MODE_TEXT

    def results(index: int) -> list[str]:
        last = requests[index].body["messages"][-1]["content"]
        return [b["content"] for b in last if b["type"] == "tool_result"]

    # submit_plan is step 5 (its result in request 6), then step 7 (request 8).
    assert results(5)[0].startswith("The user wants changes to your plan before approving it.")
    assert "Skip the docstrings" in results(5)[0]
    assert results(7)[0].startswith("The user approved your plan:")
    # One tool list for every request: the cached prefix holds through plan and act.
    assert all(r.body["tools"] == requests[0].body["tools"] for r in requests)
