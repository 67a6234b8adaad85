"""The prompt cost of MCP tools: a server with 20 tools (offered one by one) and one with 200
(deferred behind `mcp_search` and `mcp_call`). A session with the fault server of the tests
(fixtures/mcp/fault_server.py, the official SDK over stdio) runs once against the in-process
fake Messages API; the MCP tools' definitions in the request it received are counted with the
project's own size estimate (`engine/compaction/rules.estimate_tokens`). Also: how long the
server took to be ready, and one approved call's round trip.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.table import Row, ms
from bench.workspaces import small_project
from plansight.engine.compaction.rules import estimate_tokens
from plansight.engine.hooks import ToolApproval, ToolDecision
from plansight.engine.model import ModelSettings
from plansight.fakeapi import FakeMessagesAPI, text_reply, tool_reply
from plansight.session.session import Session
from plansight.session.settings import SessionSettings
from plansight.tools import default_tools

SERVER = Path(__file__).resolve().parent.parent / "fixtures" / "mcp" / "fault_server.py"
GOAL_TOKENS = 3000


async def _allow(request: ToolApproval) -> ToolDecision:
    return ToolDecision(True)


async def measure(tools: int) -> tuple[int, int, int, float, float, bool]:
    """(MCP definitions offered, their tokens, the tokens of all the tools one by one, seconds
    to ready, seconds of one call, deferred)."""
    base = {tool["name"] for tool in default_tools().definitions()}
    with tempfile.TemporaryDirectory(prefix="plansight-bench-mcp-") as tmp:
        root = Path(tmp) / "ws"
        small_project(root, files=3, lines=20)
        api = FakeMessagesAPI().start()
        try:
            servers = {
                "big": {
                    "command": sys.executable,
                    "args": [str(SERVER), "--bare", "--tools", str(tools)],
                }
            }
            session = Session(
                root,
                SessionSettings(
                    ModelSettings(model="claude-sonnet-5-5", api_key="k", base_url=api.base_url)
                ),
                approve_tool=_allow,
                mcp_servers=servers,
            )
            began = time.perf_counter()
            session.start(watch=False)
            await session.mcp.servers.until_up()
            ready = time.perf_counter() - began
            deferred = tools > 40
            call: tuple[str, dict[str, Any]] = (
                ("mcp_call", {"server": "big", "tool": "tool_001", "arguments": {"value": "x"}})
                if deferred
                else ("mcp__big__tool_001", {"value": "x"})
            )
            api.push(tool_reply(*call), text_reply("Done."))
            await session.run("Call tool 1")
            every = estimate_tokens(session.mcp.tools.definitions())
            await session.close()
            first, second = api.message_requests[:2]
            offered = [t for t in first.body["tools"] if t["name"] not in base]
            call_time = second.arrived_at - (first.finished_at or first.arrived_at)
            return len(offered), estimate_tokens(offered), every, ready, call_time, deferred
        finally:
            api.stop()


async def run() -> list[Row]:
    rows: list[Row] = []
    for tools in (20, 200):
        offered, tokens, every, ready, call, deferred = await measure(tools)
        how = f"{offered} definitions ({'mcp_search + mcp_call' if deferred else 'one per tool'})"
        if deferred:
            how += f"; one by one they would cost {every:,} tokens"
        rows.append(
            Row(
                "mcp",
                f"prompt cost of {tools} MCP tools",
                f"{tokens:,} tokens",
                f"< {GOAL_TOKENS:,} tokens" if tools == 200 else "",
                tokens < GOAL_TOKENS if tools == 200 else None,
                how,
            )
        )
        rows.append(
            Row("mcp", f"{tools}-tool server ready, then one call", f"{ms(ready)}, {ms(call)}")
        )
    return rows
