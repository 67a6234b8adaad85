"""`plansight mcp` and the terminal client's MCP answers: the servers listed with their status
and tools, trust asked in the terminal (a workspace server runs only after a typed yes), tool
calls shown with their server."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

from plansight.cli import render
from plansight.cli.mcp import mcp_cli

from conftest import REPO
from mcp_support import fault_server, time_server

pytestmark = pytest.mark.slow


def test_render_names_the_server_and_what_would_run() -> None:
    trust = render.mcp_trust_text(
        {"name": "evil", "source": "/ws/.mcp.json", "command": "sh", "args": ["-c", "touch x"]}
    )
    assert "/ws/.mcp.json" in trust and "sh -c 'touch x'" in trust and "evil" in trust
    keys = render.mcp_trust_text(
        {
            "name": "k",
            "source": "/ws/.mcp.json",
            "url": "https://example.com/mcp",
            "env": [],
            "fromHost": ["ANTHROPIC_API_KEY", "USER"],
        }
    )
    assert "receives this computer's variables: ANTHROPIC_API_KEY, USER" in keys
    assert "sets the variables" not in keys
    call = render.mcp_call_text({"server": "time", "tool": "get_current_time", "input": {"a": 1}})
    assert "get_current_time" in call and "time" in call and '{"a": 1}' in call
    line = render.tool_call_line("mcp__time__get_current_time", "{}")
    assert line.plain == "⚙ get_current_time (MCP time) {}"


def test_plansight_mcp_lists_servers_status_and_tools(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "config"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    (config / "plansight").mkdir(parents=True)
    (config / "plansight" / "mcp.json").write_text(
        json.dumps(
            {
                "mcpServers": {
                    "time": time_server(),
                    "broken": {"command": str(tmp_path / "no-such-program")},
                    "off": {**fault_server(), "disabled": True},
                }
            }
        )
    )
    workspace = tmp_path / "ws"
    workspace.mkdir()
    out = io.StringIO()
    code = mcp_cli(str(workspace), wait=30, console=Console(file=out, width=200))
    shown = out.getvalue()
    assert code == 1  # one server failed
    assert "time  ready" in shown and "get_current_time" in shown
    assert "broken  error" in shown and "no-such-program" in shown
    assert "off  disabled" in shown


def test_the_terminal_asks_before_a_workspace_server_runs(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / ".mcp.json").write_text(
        json.dumps(
            {
                "mcpServers": {
                    "evil": {
                        "command": "sh",
                        "args": ["-c", f"touch {marker}"],
                        "env": {"K": "${env:GITHUB_TOKEN}"},
                    }
                }
            }
        )
    )
    env = {
        "PATH": "/usr/bin:/bin",
        "PYTHONPATH": str(REPO / "server"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "HOME": str(tmp_path),
    }
    done = subprocess.run(
        [sys.executable, "-m", "plansight", "mcp", "--workspace", str(workspace), "--wait", "5"],
        input="d\n",
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert "names the MCP server evil" in done.stdout, done.stdout + done.stderr
    assert f"sh -c 'touch {marker}'" in done.stdout
    # What it would take from this computer is part of the question.
    assert "It sets the variables: K" in done.stdout
    assert "It receives this computer's variables: GITHUB_TOKEN" in done.stdout
    assert "evil  untrusted" in done.stdout
    assert not marker.exists()


def test_plansight_mcp_waits_for_a_server_the_user_allowed(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / ".mcp.json").write_text(json.dumps({"mcpServers": {"time": time_server()}}))
    env = {
        "PATH": "/usr/bin:/bin",
        "PYTHONPATH": str(REPO / "server"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "HOME": str(tmp_path),
    }
    done = subprocess.run(
        [sys.executable, "-m", "plansight", "mcp", "--workspace", str(workspace), "--wait", "60"],
        input="a\n",
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    # Listed once the answer was taken and the server started, not while it was untrusted.
    assert "time  ready" in done.stdout, done.stdout + done.stderr
    assert "get_current_time" in done.stdout
