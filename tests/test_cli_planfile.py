"""`plansight run --yes` and the plan file: the model's todo call gives the file's exact text,
and the terminal shows where the file is, once."""

from __future__ import annotations

import re
from pathlib import Path

from plansight.fakeapi import FakeMessagesAPI, text_reply, tool_reply
from plansight.session.planfiles import slug_of
from test_cli_run import PROMPT, run_plansight

PLAN = {
    "items": [
        {"id": "1", "text": "Read hello.py", "status": "completed"},
        {"id": "2", "text": "Add type hints", "status": "in_progress", "notes": "Keep names."},
    ]
}


def test_run_writes_the_plan_file_and_shows_its_path_once(
    fake_api: FakeMessagesAPI, hello_workspace: Path, tmp_path: Path
) -> None:
    done = dict(PLAN, items=[{**i, "status": "completed"} for i in PLAN["items"]])
    fake_api.push(
        tool_reply("todo", PLAN),
        tool_reply("todo", done),
        tool_reply("write_scratchpad", {"content": "greet is public."}),
        text_reply("Done."),
    )
    result = run_plansight(fake_api, hello_workspace, tmp_path / "state", "--yes")
    assert result.returncode == 0, result.stderr
    [path] = list((hello_workspace / ".plansight" / "plans").glob("*.md"))
    text = path.read_text()
    header = re.search(r"session (\w+), version (\d+)", text)
    assert header is not None
    sid, version = header.groups()
    assert path.name == f"{slug_of(PROMPT)}-{sid[:4]}.md"
    assert text == (
        f"# {PROMPT}\n"
        f"<!-- plansight: session {sid}, version {version} -->\n"
        "\n"
        "- [x] 1. Read hello.py\n"
        "- [x] 2. Add type hints\n"
        "  Keep names.\n"
        "\n"
        "## Scratchpad\n"
        "greet is public.\n"
    )
    relative = str(path.relative_to(hello_workspace))
    assert result.stdout.count(f"plan file: {relative}") == 1, result.stdout
