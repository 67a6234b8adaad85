"""`plansight mcp`: the workspace's MCP servers from the terminal: each server's status, its
source, its tools and its error. It starts `plansight lsp` on the workspace (no API key needed:
nothing asks the model), answers the trust questions for the workspace's servers in the
terminal (only a typed yes starts one; a trust given is remembered for the workspace),
waits until no server is still starting (at most `--wait` seconds), prints `plansight/mcp`'s
answer and shuts the server down. Exit codes: 0 when every server that should run is ready,
1 when one failed or the server could not be asked.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.text import Text

from plansight.cli import render
from plansight.cli.echo import echo
from plansight.protocol.names import MCP

DEFAULT_WAIT = 35.0  # a little past the default startupTimeout


async def _statuses(workspace: Path, console: Console, wait: float) -> list[dict[str, Any]] | None:
    from pygls.exceptions import JsonRpcException

    from plansight.cli.client import ClientOptions, PlansightClient, ServerExited
    from plansight.cli.ui import TerminalUI

    ui = TerminalUI(console, live=False)
    client = PlansightClient(ClientOptions(workspace=workspace), ui)
    try:
        await client.start()
        deadline = time.monotonic() + wait
        while True:
            answer = await client.request(MCP, {})
            servers = [s for s in answer.get("servers", []) if isinstance(s, dict)]
            # An untrusted server is still to be decided until its question was answered (it
            # comes after `initialized`, maybe after the first answer here), and one allowed
            # until the server has taken the answer.
            pending = [
                s
                for s in servers
                if s.get("status") == "starting"
                or (
                    s.get("status") == "untrusted"
                    and client.trust_answered.get(str(s.get("name"))) is not False
                )
            ]
            if time.monotonic() > deadline or not pending:
                return servers
            await asyncio.sleep(0.2)
    except JsonRpcException as err:
        echo(console, Text(f"plansight: {err.message}", style="bold red"))
    except (ServerExited, OSError) as err:
        echo(console, Text(f"plansight: the language server failed: {err}", style="bold red"))
    finally:
        await client.close()
    return None


def mcp_cli(workspace: str, wait: float = DEFAULT_WAIT, console: Console | None = None) -> int:
    console = console or Console(highlight=False)
    root = Path(workspace).expanduser()
    if not root.is_dir():
        echo(console, Text(f"plansight: no such folder: {root}", style="bold red"))
        return 1
    servers = asyncio.run(_statuses(root, console, wait))
    if servers is None:
        return 1
    echo(console, Text(f"MCP servers of {root.resolve()}:", style="bold"))
    for line in render.mcp_server_lines(servers):
        echo(console, line)
    return 1 if any(s.get("status") == "error" for s in servers) else 0
