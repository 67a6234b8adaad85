"""Neovim as a second, independent LSP client: it gets the plan and the reminder diagnostic,
and approves a plan through `window/showMessageRequest` (it has no reviewPlan of its own)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from plansight.fakeapi import FakeMessagesAPI
from plansight.fakeapi import text_reply as text
from plansight.fakeapi import tool_reply as tool

from conftest import FIXTURES

pytestmark = pytest.mark.skipif(
    shutil.which("nvim") is None and not os.environ.get("CI"),
    reason="nvim is not installed (CI installs it; .ci/run fails without it)",
)


def plan(status: str) -> dict[str, Any]:
    return {"items": [{"id": "1", "text": "Read hello.py", "status": status}]}


def run_neovim(workspace: Path, api: FakeMessagesAPI, tmp_path: Path, *, plan: bool) -> Any:
    """Run fixtures/neovim/client.lua headless against the server: what it saw (JSON)."""
    out = tmp_path / "nvim.json"
    env = {
        **os.environ,
        **({"PLANSIGHT_NVIM_PLAN": "1"} if plan else {}),
        "ANTHROPIC_BASE_URL": api.base_url,
        "ANTHROPIC_API_KEY": "test-key",
        "PLANSIGHT_NVIM_OUT": str(out),
        "PLANSIGHT_PYTHON": sys.executable,
        "PLANSIGHT_STORAGE": str(tmp_path / "state"),
        "HOME": str(tmp_path),
    }
    subprocess.run(
        ["nvim", "--headless", "--clean", "-u", str(FIXTURES / "neovim" / "client.lua")],
        cwd=workspace,
        env=env,
        timeout=60,
        check=True,
        stdin=subprocess.DEVNULL,
        capture_output=True,
    )
    return json.loads(out.read_text())


def test_neovim_approves_a_plan_through_show_message_request(
    hello_workspace: Path, fake_api: FakeMessagesAPI, tmp_path: Path
) -> None:
    items = [{"id": "1", "text": "Add type hints", "status": "pending"}]
    done = [{"id": "1", "text": "Add type hints", "status": "completed"}]
    fake_api.push(
        tool("todo", {"items": items}),
        tool("submit_plan", {"summary": "Type hints for greet and shout."}),
        tool("todo", {"items": done}),
        text("Approved and done."),
    )
    seen = run_neovim(hello_workspace, fake_api, tmp_path, plan=True)
    assert seen["messages"] == [
        {
            "message": "Plansight proposes a plan: Type hints for greet and shout.\n\n"
            "[ ] #1: Add type hints\n(0/1 completed)",
            "actions": ["Approve", "Cancel"],
        }
    ]
    assert seen["result"]["status"] == "done", seen["result"]
    assert seen["result"]["text"] == "Approved and done."
    # The model heard the approval: the run went on in act mode.
    approval = fake_api.bodies[2]["messages"][-1]["content"][0]
    assert approval["type"] == "tool_result" and "is_error" not in approval
    assert approval["content"].startswith("The user approved your plan:")
    assert seen["todos"][-1]["completed"] == 1


def test_neovim_receives_the_plan_and_the_reminder_diagnostic(
    hello_workspace: Path, fake_api: FakeMessagesAPI, tmp_path: Path
) -> None:
    fake_api.push(
        tool("todo", plan("in_progress")),
        tool("read_file", {"path": "hello.py", "offset": 5, "limit": 1}),
        tool("read_scratchpad", {}),
        tool("read_scratchpad", {}),
        tool("todo", plan("completed")),
        text("Done."),
    )
    seen = run_neovim(hello_workspace, fake_api, tmp_path, plan=False)
    assert seen["result"]["status"] == "done", seen["result"]
    assert seen["todos"][0]["rendered"] == "[>] #1: Read hello.py\n(0/1 completed)"
    assert seen["todos"][-1]["completed"] == 1
    assert "reminder" in seen["events"] and seen["events"][-1] == "runFinished"
    reminder = seen["diagnostics"][0]
    assert reminder["source"] == "plansight" and reminder["code"] == "plan-reminder"
    assert reminder["lnum"] == 4  # the line the agent last read (offset 5 → 0-based 4)
    assert "3 rounds" in reminder["message"]
