"""What the sandbox costs a command: the bash tool running `true`, sandboxed and not.

A workspace of 2,000 files with a few protected ones (each command's sandbox looks for them and
hides them). Rounds alternate between the two, so that a busy moment of the machine weighs on
both alike. The goal: at most 30 ms more per command at the median (PROTOCOL.md, version 3).
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path

from bench.table import Row, ms, p50_p90
from bench.workspaces import large_tree
from plansight.engine.events import EventBus
from plansight.engine.hooks import accept_all_edits, approve_all_commands
from plansight.plan.plan import Plan
from plansight.plan.scratchpad import Scratchpad
from plansight.tools import default_tools
from plansight.tools.context import ToolContext
from plansight.workspace.access import Workspace
from plansight.workspace.sandbox import CommandSandbox, SandboxOptions

FILES = 2_000
ROUNDS = 40
GOAL = 0.030  # seconds more per command, at the median


def _context(root: Path, enabled: bool) -> ToolContext:
    workspace = Workspace(root)
    return ToolContext(
        plan=Plan(),
        scratchpad=Scratchpad(),
        workspace=workspace,
        review=accept_all_edits,
        approve=approve_all_commands,
        events=EventBus(),
        sandbox=CommandSandbox(
            root, SandboxOptions(enabled=enabled), protected=workspace.protected
        ),
    )


async def run() -> list[Row]:
    tools = default_tools()
    with tempfile.TemporaryDirectory(prefix="plansight-bench-sandbox-") as tmp:
        root = Path(tmp)
        large_tree(root, FILES)
        (root / ".env").write_text("API_KEY=bench\n")
        (root / "certs").mkdir()
        (root / "certs" / "server.pem").write_text("bench\n")
        sandboxed, plain = _context(root, True), _context(root, False)
        if sandboxed.sandbox is None or not sandboxed.sandbox.availability().available:
            reason = sandboxed.sandbox.availability().reason if sandboxed.sandbox else ""
            return [Row("sandbox", "per-command cost", "n/a", note=f"no sandbox here: {reason}")]
        with_sandbox: list[float] = []
        without: list[float] = []
        for _ in range(3):  # warm up both (imports, the first bwrap start)
            await tools.call(sandboxed, "bash", {"command": "true"})
            await tools.call(plain, "bash", {"command": "true"})
        for _ in range(ROUNDS):
            for ctx, into in ((sandboxed, with_sandbox), (plain, without)):
                started = time.perf_counter()
                outcome = await tools.call(ctx, "bash", {"command": "true"})
                into.append(time.perf_counter() - started)
                assert not outcome.is_error, outcome.content
    extra = statistics.median(with_sandbox) - statistics.median(without)
    note = f"{ROUNDS} rounds, `true` through the bash tool, {FILES:,}-file workspace"
    return [
        Row(
            "sandbox",
            "per-command cost of the sandbox (median, with - without)",
            ms(extra),
            goal=f"≤ {ms(GOAL)}",
            met=extra <= GOAL,
            note=note,
        ),
        Row("sandbox", "a command with the sandbox", p50_p90(with_sandbox)),
        Row("sandbox", "a command without it", p50_p90(without)),
    ]
