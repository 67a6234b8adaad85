"""One session, whichever front door drives it: the same scripted run (a plan, an edit, a new
file, a command) through the language server (pytest-lsp, lsp_harness.py) and through
`plansight acp` (the ACP SDK's client side, acp_harness.py), with the same options
(`autoApprove` edits and commands) on two copies of one fixture workspace. What the model
received, what was written and what the history keeps are the same, once the places and times
that differ by nature (the copies' folders, the clock, generated ids) are put aside.
"""

from __future__ import annotations

import asyncio
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from acp import text_block

from plansight.fakeapi import FakeMessagesAPI
from plansight.fakeapi.script import text_reply, tool_reply

from acp_harness import EditorClient, acp_agent
from conftest import FIXTURES, PATIENCE
from lsp_harness import start_editor, tree_of

pytestmark = pytest.mark.timeout(180)

MODEL = "claude-sonnet-5-5"
OPTIONS = {"autoApprove": {"edits": True, "commands": True}}
PROMPT = "Say hello to Plansight, note it, and count the files."
PLAN = [
    {"id": "1", "text": "Greet Plansight by default", "status": "in_progress"},
    {"id": "2", "text": "Write a note", "status": "pending"},
]


def script(api: FakeMessagesAPI) -> None:
    """The model's side, ids fixed so that both runs' requests match."""
    api.push(
        tool_reply("todo", {"items": PLAN}, text="Planning.", id="toolu_parity_1"),
        tool_reply("read_file", {"path": "hello.py"}, id="toolu_parity_2"),
        tool_reply(
            "edit_file",
            {"path": "hello.py", "old_text": '"world"', "new_text": '"Plansight"'},
            id="toolu_parity_3",
        ),
        tool_reply(
            "write_file",
            {"path": "NOTES.md", "content": "Greets Plansight.\n"},
            id="toolu_parity_4",
        ),
        # What the command saw of the workspace is in count.txt (one process: in `ls | wc -l >
        # count.txt` whether ls sees count.txt is a race between the pipeline's two sides).
        tool_reply("bash", {"command": "ls -A > count.txt"}, id="toolu_parity_5"),
        tool_reply(
            "todo",
            {"items": [{**item, "status": "completed"} for item in PLAN]},
            id="toolu_parity_6",
        ),
        text_reply("Done: it greets Plansight."),
    )


def copy_of_fixture(parent: Path) -> Path:
    """A copy of fixtures/hello under `parent`, its folder named as the other copy's."""
    target = parent / "hello"
    shutil.copytree(FIXTURES / "hello", target)
    return target


def normalised(value: Any, root: Path) -> Any:
    """`value` with the workspace's folder, times and generated ids put aside."""
    text = json.dumps(value, sort_keys=True).replace(str(root.resolve()), "<root>")
    text = text.replace(str(root), "<root>")
    text = re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z?", "<time>", text)
    text = re.sub(r'"(id|sessionId|planId|checkpoint|at)": "[^"]*"', r'"\1": "<id>"', text)
    text = re.sub(r'"(durationMs|elapsedMs|ms)": \d+(\.\d+)?', r'"\1": 0', text)
    return json.loads(text)


async def through_lsp(api: FakeMessagesAPI, home: Path) -> tuple[Path, list[Any], Any]:
    root = copy_of_fixture(home / "lsp")
    script(api)
    env = {"PLANSIGHT_MODEL": MODEL, "XDG_CONFIG_HOME": str(home / "lsp-config")}
    editor = await start_editor(
        root, api, storage=home / "lsp-state", init_options=OPTIONS, env=env
    )
    try:
        result = await editor.request("plansight/run", {"prompt": PROMPT})
        assert result["status"] == "done"
        history = await editor.request("plansight/history", {})
    finally:
        await editor.stop()
    return root, list(api.bodies), history


async def through_acp(api: FakeMessagesAPI, home: Path) -> tuple[Path, list[Any], Any]:
    root = copy_of_fixture(home / "acp")
    script(api)
    config = home / "config" / "plansight" / "config.json"
    config.parent.mkdir(parents=True)
    config.write_text(json.dumps(OPTIONS))
    editor = EditorClient(root)  # it would hold any permission request: none may come
    async with acp_agent(api, root, home, client=editor) as (conn, _):
        session = await asyncio.wait_for(conn.new_session(cwd=str(root), mcp_servers=[]), PATIENCE)
        response = await asyncio.wait_for(
            conn.prompt(session_id=session.session_id, prompt=[text_block(PROMPT)]), PATIENCE
        )
        assert str(response.stop_reason) == "end_turn"
    assert editor.permissions == []
    bodies = list(api.bodies)
    # The history as the language server answers it for the same storage (what VS Code shows).
    [folder] = {p.parents[2] for p in (home / "state").rglob("sessions/*/history.jsonl")}
    reader = await start_editor(root, None, storage=folder)
    try:
        history = await reader.request("plansight/history", {"sessionId": session.session_id})
    finally:
        await reader.stop()
    return root, bodies, history


async def test_lsp_and_acp_drive_one_session_alike(
    fake_api: FakeMessagesAPI, tmp_path: Path
) -> None:
    lsp_root, lsp_bodies, lsp_history = await through_lsp(fake_api, tmp_path)
    fake_api.reset()
    acp_root, acp_bodies, acp_history = await through_acp(fake_api, tmp_path)

    # What the model received: every request, whole.
    assert len(lsp_bodies) == len(acp_bodies) == 7
    assert normalised(acp_bodies, acp_root) == normalised(lsp_bodies, lsp_root)

    # What was written: the same files with the same bytes.
    written = tree_of(lsp_root)
    assert written == tree_of(acp_root), (written.get("count.txt"), tree_of(acp_root))
    assert b'"Plansight"' in written["hello.py"] and written["NOTES.md"] == b"Greets Plansight.\n"
    assert "count.txt" in written

    # What the history keeps: the same runs and events. The checkpoints are taken beside the
    # run (checkpoints/recorder.py), so where their events fall among the others is timing:
    # they are compared apart, in their own order.
    [lsp_run] = lsp_history["runs"]
    [acp_run] = acp_history["runs"]
    lsp_events, lsp_steps = split_checkpoints(normalised(lsp_run, lsp_root))
    acp_events, acp_steps = split_checkpoints(normalised(acp_run, acp_root))
    assert [e["type"] for e in acp_events] == [e["type"] for e in lsp_events]
    assert acp_events == lsp_events
    assert acp_steps == lsp_steps and lsp_steps
    assert {k: v for k, v in acp_run.items() if k != "events"}.keys() == {
        k for k in lsp_run if k != "events"
    }


def split_checkpoints(run: dict[str, Any]) -> tuple[list[Any], list[Any]]:
    events = run["events"]
    return (
        [e for e in events if e["type"] != "checkpoint"],
        [e for e in events if e["type"] == "checkpoint"],
    )
