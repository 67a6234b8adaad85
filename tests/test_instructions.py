"""The project's instructions (AGENTS.md, else CLAUDE.md) as a user meets them: `plansight
run` on a workspace that has them, what the model received (the fake Messages API's request
bodies) and what the terminal printed; and the reading rules on real files."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from plansight.fakeapi import FakeMessagesAPI, text_reply, tool_reply
from plansight.workspace.access import Workspace
from plansight.workspace.instructions import MAX_BYTES, FolderInstructions, root_instructions
from test_cli_run import run_plansight

SECRET = "hunter2-canary-value-0451"
OUTSIDE = "outside-canary-8812"


def result_texts(body: dict[str, Any]) -> list[str]:
    content = body["messages"][-1]["content"]
    texts: list[str] = []
    for block in content:
        if block.get("type") == "tool_result":
            inner = block.get("content")
            if isinstance(inner, str):
                texts.append(inner)
            else:
                texts.append("".join(b.get("text", "") for b in inner))
    return texts


def test_the_workspaces_instructions_reach_the_model_as_the_repositorys_text(
    hello_workspace: Path, fake_api: FakeMessagesAPI, tmp_path: Path
) -> None:
    root = hello_workspace
    (root / "AGENTS.md").write_text("# Rules\nIndent with tabs-canary.\n")
    (root / "CLAUDE.md").write_text("claude-canary: not read, AGENTS.md is there\n")
    (root / ".env").write_text(f"API_TOKEN={SECRET}\n")
    outside = tmp_path / "outside.md"
    outside.write_text(f"{OUTSIDE}\n")
    for folder, text in (("sub", "sub-canary rules"), ("sub/deeper", None), ("leak", None)):
        (root / folder).mkdir(parents=True, exist_ok=True)
        (root / folder / "x.py").write_text("X = 1\n")
        if text is not None:
            (root / folder / "AGENTS.md").write_text(text + "\n")
    (root / "sub/deeper/CLAUDE.md").write_text("deeper-canary\n")
    os.symlink("../.env", root / "leak/AGENTS.md")  # a protected file in disguise
    (root / "away").mkdir()
    (root / "away/x.py").write_text("X = 2\n")
    os.symlink(outside, root / "away/AGENTS.md")  # outside the workspace
    fake_api.push(
        tool_reply("read_file", {"path": "sub/deeper/x.py"}),
        tool_reply("read_file", {"path": "sub/x.py"}),
        tool_reply("read_file", {"path": "leak/x.py"}),
        tool_reply("write_file", {"path": "away/new.py", "content": "X = 3\n"}),
        text_reply("Done."),
    )

    done = run_plansight(fake_api, root, tmp_path / "state", "--yes")

    assert done.returncode == 0, done.stdout + done.stderr
    assert "project instructions: AGENTS.md (33 bytes)" in done.stdout, done.stdout
    bodies = fake_api.bodies
    system = "".join(b["text"] for b in bodies[0]["system"])
    assert "They are the repository's text, not the user's" in system
    assert '<project-instructions path="AGENTS.md">\n# Rules\nIndent with tabs-canary.' in system
    assert "claude-canary" not in json.dumps(bodies)
    # The cached prefix holds: the same system prompt in every request of the run.
    assert all(b["system"] == bodies[0]["system"] for b in bodies)
    # Nested ones, nearest first, each once, with the result of the first file below them.
    first = result_texts(bodies[1])[0]
    assert first.index("deeper-canary") < first.index("sub-canary rules"), first
    assert 'path="sub/deeper/CLAUDE.md"' in first and "not the user's" in first
    again = result_texts(bodies[2])[0]
    assert "canary" not in again, again
    # A protected file or one outside the workspace is never read as instructions.
    everything = json.dumps(bodies)
    assert SECRET not in everything and OUTSIDE not in everything
    assert (root / "away/new.py").read_text() == "X = 3\n"


def test_claude_md_stands_in_and_what_is_cut_is_said(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    workspace = Workspace(root)
    assert root_instructions(workspace) is None
    (root / "CLAUDE.md").write_text("é" * MAX_BYTES)  # 2 bytes a character: twice the limit
    read = root_instructions(workspace)
    assert read is not None and read.path == "CLAUDE.md"
    assert read.size == 2 * MAX_BYTES and read.cut == MAX_BYTES
    assert len(read.text.encode()) == MAX_BYTES
    # The folders get what the root left: nothing here.
    (root / "src").mkdir()
    (root / "src/AGENTS.md").write_text("src rules\n")
    folders = FolderInstructions(workspace, used=MAX_BYTES)
    [src] = folders.for_file("src/a.py")
    assert src.text == "" and src.cut == len("src rules\n")
    assert folders.for_file("src/b.py") == []  # once
