"""MCP over the language server: the option `mcpServers` and `autoApprove.mcp`, the editor's
`plansight/approveTool` and `plansight/approveMcpServer` (and their showMessageRequest
fallbacks), `plansight/mcp` and the `mcp` event, each MCP call a toolCall/toolResult event."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from plansight.fakeapi import FakeMessagesAPI
from plansight.fakeapi import text_reply as text
from plansight.fakeapi import tool_reply as tool

from conftest import wait_until
from lsp_harness import EditorHandle, start_editor
from mcp_support import fault_server, offered_tools, time_server, tool_results

pytestmark = pytest.mark.slow


def config_home(tmp_path: Path) -> dict[str, str]:
    """A user config folder of the test's own (no developer's mcp.json)."""
    return {"XDG_CONFIG_HOME": str(tmp_path / "xdg-config")}


async def servers_of(handle: EditorHandle) -> dict[str, dict[str, Any]]:
    answer = await handle.request("plansight/mcp", {})
    return {server["name"]: server for server in answer["servers"]}


async def until_status(handle: EditorHandle, name: str, wanted: str) -> None:
    async def reached() -> bool:
        found = (await servers_of(handle)).get(name)
        return found is not None and found["status"] == wanted

    await wait_until(reached, f"{name} {wanted}")


async def test_an_option_server_is_approved_per_call_through_approve_tool(
    hello_workspace: Path, fake_api: FakeMessagesAPI, tmp_path: Path
) -> None:
    handle = await start_editor(
        hello_workspace,
        fake_api,
        storage=tmp_path / "state",
        init_options={"mcpServers": {"time": time_server()}},
        approve_tool=lambda asked: {"approved": False, "feedback": "use UTC"},
        env=config_home(tmp_path),
    )
    try:
        await until_status(handle, "time", "ready")
        servers = await servers_of(handle)
        assert servers["time"]["source"] == "client"
        assert "get_current_time" in servers["time"]["tools"]
        # The mcp event told the editor as the server came up.
        mcp_events = [e for e in handle.recorder.events if e["type"] == "mcp"]
        assert [e["servers"][0]["status"] for e in mcp_events] == ["ready"]  # once per change
        assert mcp_events[0]["servers"][0]["tools"] == servers["time"]["tools"]

        fake_api.push(tool("mcp__time__get_current_time", {"timezone": "Asia/Tokyo"}), text("OK"))
        result = await handle.request("plansight/run", {"prompt": "Time in Tokyo?"})
        assert result["status"] == "done"
        assert handle.recorder.tool_approvals == [
            {"server": "time", "tool": "get_current_time", "input": {"timezone": "Asia/Tokyo"}}
        ]
        (denied,) = tool_results(fake_api.bodies[1])
        assert denied["is_error"] is True and "use UTC" in denied["content"]
        calls = [e for e in handle.recorder.events if e["type"] in ("toolCall", "toolResult")]
        assert [(e["type"], e["name"]) for e in calls] == [
            ("toolCall", "mcp__time__get_current_time"),
            ("toolResult", "mcp__time__get_current_time"),
        ]
        assert calls[1]["isError"] is True
    finally:
        await handle.stop()


async def test_auto_approve_mcp_runs_calls_without_asking(
    hello_workspace: Path, fake_api: FakeMessagesAPI, tmp_path: Path
) -> None:
    handle = await start_editor(
        hello_workspace,
        fake_api,
        storage=tmp_path / "state",
        init_options={"mcpServers": {"time": time_server()}, "autoApprove": {"mcp": True}},
        approve_tool=lambda asked: {"approved": False},
        env=config_home(tmp_path),
    )
    try:
        fake_api.push(tool("mcp__time__get_current_time", {"timezone": "UTC"}), text("OK"))
        await handle.request("plansight/run", {"prompt": "Time?"})
        assert handle.recorder.tool_approvals == []
        (answer,) = tool_results(fake_api.bodies[1])
        assert not answer.get("is_error") and "UTC" in answer["content"]
        assert "mcp__time__get_current_time" in offered_tools(fake_api.bodies[0])
    finally:
        await handle.stop()


async def test_a_workspace_server_is_started_only_once_the_editor_trusts_it(
    hello_workspace: Path, fake_api: FakeMessagesAPI, tmp_path: Path
) -> None:
    marker = tmp_path / "ran"
    (hello_workspace / ".mcp.json").write_text(
        json.dumps(
            {
                "mcpServers": {
                    "evil": {"command": "sh", "args": ["-c", f"touch {marker}"]},
                    "local": fault_server(),
                }
            }
        )
    )

    def trust(asked: dict[str, Any]) -> dict[str, Any]:
        return {"approved": asked["name"] == "local"}

    handle = await start_editor(
        hello_workspace,
        fake_api,
        storage=tmp_path / "state",
        approve_mcp_server=trust,
        env=config_home(tmp_path),
    )
    try:
        await until_status(handle, "local", "ready")
        asked = {a["name"]: a for a in handle.recorder.server_trusts}
        assert asked["evil"] == {
            "name": "evil",
            "source": str(hello_workspace / ".mcp.json"),
            "command": "sh",
            "args": ["-c", f"touch {marker}"],
            "env": [],
            "fromHost": [],
        }
        assert (await servers_of(handle))["evil"]["status"] == "untrusted"
        assert not marker.exists()
    finally:
        await handle.stop()
    assert not marker.exists()


async def test_the_fallbacks_ask_allow_or_deny_and_no_answer_denies(
    hello_workspace: Path, fake_api: FakeMessagesAPI, tmp_path: Path
) -> None:
    marker = tmp_path / "ran"
    (hello_workspace / ".vscode").mkdir()
    (hello_workspace / ".vscode" / "mcp.json").write_text(
        json.dumps(
            {
                "inputs": [{"id": "token", "type": "promptString"}],
                "servers": {
                    "evil": {"type": "stdio", "command": "sh", "args": ["-c", f"touch {marker}"]},
                    "time": {"type": "stdio", **time_server()},
                },
            }
        )
    )

    def answer(shown: dict[str, Any]) -> str | None:
        if "evil" in shown["message"]:
            return None  # no answer: deny
        return "Allow"

    handle = await start_editor(
        hello_workspace,
        fake_api,
        storage=tmp_path / "state",
        show_message=answer,
        env=config_home(tmp_path),
    )
    try:
        await until_status(handle, "time", "ready")
        fake_api.push(tool("mcp__time__get_current_time", {"timezone": "UTC"}), text("OK"))
        await handle.request("plansight/run", {"prompt": "Time?"})
        messages = [m for m in handle.recorder.messages]
        trust = next(m for m in messages if "evil" in m["message"])
        assert trust["actions"] == ["Allow", "Deny"]
        assert f"sh -c 'touch {marker}'" in trust["message"]  # the command it would run
        call = next(m for m in messages if "get_current_time" in m["message"])
        assert call["actions"] == ["Allow", "Deny"]
        assert not tool_results(fake_api.bodies[1])[0].get("is_error")
        assert (await servers_of(handle))["evil"]["status"] == "untrusted"
        # VS Code's inputs are a warning the user can read in the log.
        logged = " ".join(m.message for m in handle.client.log_messages)
        assert "inputs" in logged
    finally:
        await handle.stop()
    assert not marker.exists()


async def test_a_malformed_mcp_json_is_a_warning_and_the_session_works(
    hello_workspace: Path, fake_api: FakeMessagesAPI, tmp_path: Path
) -> None:
    (hello_workspace / ".mcp.json").write_text('{\n  "mcpServers": {\n    "x": oops\n  }\n}\n')
    handle = await start_editor(
        hello_workspace, fake_api, storage=tmp_path / "state", env=config_home(tmp_path)
    )
    try:
        fake_api.push(text("Fine."))
        result = await handle.request("plansight/run", {"prompt": "Hello"})
        assert result["status"] == "done"
        logged = [m.message for m in handle.client.log_messages]
        assert any(".mcp.json:3" in m and "not valid JSON" in m for m in logged), logged
        assert await servers_of(handle) == {}
    finally:
        await handle.stop()
