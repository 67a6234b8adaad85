"""The session's approval policy (session/approvals.py) through `plansight acp`: the options the
language server honours are honoured here too (`autoApprove.sandboxedCommands`,
`autoApprove.mcp`), since the policy is the session's and no longer each front door's; and an
"always" answer the client gives holds for its kind (the agent reports it, the session keeps
it). Driven with the ACP SDK's own client side (acp_harness.py) against the fake Messages API.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from acp import text_block
from acp.schema import McpServerStdio

from plansight.fakeapi import FakeMessagesAPI
from plansight.fakeapi.script import text_reply, tool_reply
from plansight.workspace.sandbox import detect

from acp_harness import EditorClient, acp_agent
from conftest import PATIENCE
from mcp_support import TIME_SERVER

pytestmark = pytest.mark.timeout(120)


def user_config(tmp_path: Path, config: dict[str, Any]) -> None:
    """The user's own `$XDG_CONFIG_HOME/plansight/config.json` (acp_harness.py's config home)."""
    path = tmp_path / "config" / "plansight" / "config.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(config))


def tool_results(body: dict[str, Any]) -> list[dict[str, Any]]:
    last = body["messages"][-1]
    return [b for b in last["content"] if isinstance(b, dict) and b.get("type") == "tool_result"]


async def run_once(
    api: FakeMessagesAPI,
    root: Path,
    home: Path,
    editor: EditorClient,
    *,
    servers: list[Any] | None = None,
    env: dict[str, str] | None = None,
) -> str:
    async with acp_agent(api, root, home, client=editor, env=env) as (conn, _):
        session = await asyncio.wait_for(
            conn.new_session(cwd=str(root), mcp_servers=servers or []), PATIENCE
        )
        response = await asyncio.wait_for(
            conn.prompt(session_id=session.session_id, prompt=[text_block("Go")]), PATIENCE
        )
    return str(response.stop_reason)


def path_without_bwrap(tmp_path: Path) -> str:
    folder = tmp_path / "bin"
    folder.mkdir()
    for name in ("git", "rg", "touch"):
        found = shutil.which(name)
        if found:
            (folder / name).symlink_to(found)
    return f"{folder}:{Path(sys.executable).parent}"


@pytest.mark.skipif(not detect().available, reason="no sandbox can be made here")
async def test_sandboxed_commands_run_unasked_with_the_option_and_others_are_still_asked(
    hello_workspace: Path, fake_api: FakeMessagesAPI, tmp_path: Path
) -> None:
    user_config(tmp_path, {"autoApprove": {"sandboxedCommands": True}})
    fake_api.push(tool_reply("bash", {"command": "touch sandboxed.txt"}), text_reply("Done."))
    editor = EditorClient(hello_workspace)  # it would hold any request: none may come
    assert await run_once(fake_api, hello_workspace, tmp_path, editor) == "end_turn"
    assert editor.permissions == []
    assert (hello_workspace / "sandboxed.txt").exists()
    # Shown as a call that went ahead: in progress, then completed.
    [call] = [u for u in editor.of("tool_call") if u["kind"] == "execute"]
    updates = [u for u in editor.of("tool_call_update") if u["toolCallId"] == call["toolCallId"]]
    statuses = [u.get("status") for u in updates]
    assert statuses[0] == "in_progress" and statuses[-1] == "completed"

    # Without a sandbox the option covers nothing: the command is asked (and rejected here).
    fake_api.reset()
    fake_api.push(tool_reply("bash", {"command": "touch plain.txt"}), text_reply("Not run."))
    asked = EditorClient(hello_workspace, answers=["reject_once"])
    env = {"PATH": path_without_bwrap(tmp_path), "XDG_STATE_HOME": str(tmp_path / "state2")}
    assert await run_once(fake_api, hello_workspace, tmp_path, asked, env=env) == "end_turn"
    assert len(asked.permissions) == 1
    assert not (hello_workspace / "plain.txt").exists()


async def test_auto_approve_mcp_runs_the_editors_server_tools_unasked(
    hello_workspace: Path, fake_api: FakeMessagesAPI, tmp_path: Path
) -> None:
    user_config(tmp_path, {"autoApprove": {"mcp": True}})
    server = McpServerStdio(
        name="time", command=str(TIME_SERVER), args=["--local-timezone", "UTC"], env=[]
    )
    fake_api.push(
        tool_reply("mcp__time__get_current_time", {"timezone": "Asia/Tokyo"}), text_reply("OK")
    )
    editor = EditorClient(hello_workspace)
    stop = await run_once(fake_api, hello_workspace, tmp_path, editor, servers=[server])
    assert stop == "end_turn"
    assert editor.permissions == []
    [answer] = tool_results(fake_api.bodies[1])
    assert not answer.get("is_error") and "Asia/Tokyo" in str(answer["content"])


async def test_without_the_option_an_mcp_call_is_asked_and_always_reject_holds_for_that_tool(
    hello_workspace: Path, fake_api: FakeMessagesAPI, tmp_path: Path
) -> None:
    server = McpServerStdio(
        name="time", command=str(TIME_SERVER), args=["--local-timezone", "UTC"], env=[]
    )
    fake_api.push(
        tool_reply("mcp__time__get_current_time", {"timezone": "UTC"}),
        tool_reply("mcp__time__get_current_time", {"timezone": "Europe/Paris"}),
        text_reply("Neither ran."),
    )
    editor = EditorClient(hello_workspace, answers=["reject_always"])
    stop = await run_once(fake_api, hello_workspace, tmp_path, editor, servers=[server])
    assert stop == "end_turn"
    assert len(editor.permissions) == 1  # the second call was rejected by the "always"
    for body in fake_api.bodies[1:3]:
        [denied] = tool_results(body)
        assert denied["is_error"] is True and "denied" in str(denied["content"])
