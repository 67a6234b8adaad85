"""ACP's `/parallel` command, through `plansight acp` and the fake API: workers on two plan
items, each one's end told as agent text, then each changed file put to the user as the
permission request every edit gets, and written only once allowed."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from acp import text_block

from plansight.fakeapi import FakeMessagesAPI, text_reply, tool_reply
from plansight.workspace.sandbox import detect

from acp_harness import EditorClient, acp_agent
from conftest import PATIENCE

pytestmark = pytest.mark.skipif(not detect().available, reason="no sandbox can be made here")

PLAN = [
    {"id": "1", "text": "Write the first notes file", "status": "pending"},
    {"id": "2", "text": "Write the second notes file", "status": "pending"},
]


def worker(todo_id: str, name: str) -> list[object]:
    done = [{**i, "status": "completed" if i["id"] == todo_id else i["status"]} for i in PLAN]
    return [
        tool_reply("write_file", {"path": name, "content": f"notes of #{todo_id}\n"}),
        tool_reply("todo", {"items": done}),
        text_reply(f"Wrote {name}."),
    ]


async def test_parallel_runs_workers_and_takes_their_files_in_through_permissions(
    hello_workspace: Path, tmp_path: Path
) -> None:
    api = FakeMessagesAPI(
        [tool_reply("todo", {"items": PLAN}), text_reply("Planned."), text_reply("Planned.")],
        conversations={
            PLAN[0]["text"]: worker("1", "one.txt"),
            PLAN[1]["text"]: worker("2", "two.txt"),
        },
    )
    api.start()
    try:
        # The user allows the first file and rejects the second.
        editor = EditorClient(hello_workspace, answers=["allow_once", "reject_once"])
        async with acp_agent(api, hello_workspace, tmp_path, client=editor) as (conn, _):
            session = await asyncio.wait_for(
                conn.new_session(cwd=str(hello_workspace), mcp_servers=[]), PATIENCE
            )
            sid = session.session_id
            await asyncio.wait_for(
                conn.prompt(session_id=sid, prompt=[text_block("Plan")]), PATIENCE
            )
            response = await asyncio.wait_for(
                conn.prompt(session_id=sid, prompt=[text_block("/parallel 1 2")]), PATIENCE
            )
            assert response.stop_reason == "end_turn"
            said = editor.text()
            assert "Worker #1 completed: one.txt +1 -0." in said
            assert "Worker #2 completed: two.txt +1 -0." in said
            assert len(editor.permissions) == 2
            assert (hello_workspace / "one.txt").read_text() == "notes of #1\n"
            assert not (hello_workspace / "two.txt").exists()  # rejected: never written
            assert "Took in #2's changes: 1 rejected." in said
    finally:
        api.stop()
