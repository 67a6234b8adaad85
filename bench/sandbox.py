"""What the sandbox costs a command: the bash tool running `true`, sandboxed and not.

A workspace of 2,000 files with a few protected ones, a git repository and a `node_modules/`
of 3,000 files in 600 folders (with its `.bin/` links and a `.env` of its own): each command's
sandbox walks all of it (protected files in ignored folders are hidden too, version 4), makes
the control files read-only and hides the host's sockets. Rounds alternate between the two, so
that a busy moment of the machine weighs on both alike. The goal: at most 30 ms more per
command at the median (PROTOCOL.md, versions 3 and 4). Also measured: the walk alone, first
(every folder listed) and then as each command has it (a stat per folder).
"""

from __future__ import annotations

import resource
import statistics
import subprocess
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
PACKAGES = 200  # node_modules/<package>/{lib,dist}/: 15 files each, 3,000 in all
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
        _repository_and_dependencies(root)
        sandboxed, plain = _context(root, True), _context(root, False)
        if sandboxed.sandbox is None or not sandboxed.sandbox.availability().available:
            reason = sandboxed.sandbox.availability().reason if sandboxed.sandbox else ""
            return [Row("sandbox", "per-command cost", "n/a", note=f"no sandbox here: {reason}")]
        with_sandbox: list[float] = []
        without: list[float] = []
        cpu: dict[bool, float] = {True: 0.0, False: 0.0}
        for _ in range(3):  # warm up both (imports, the first bwrap start)
            await tools.call(sandboxed, "bash", {"command": "true"})
            await tools.call(plain, "bash", {"command": "true"})
        for _ in range(ROUNDS):
            for ctx, into in ((sandboxed, with_sandbox), (plain, without)):
                started, used = time.perf_counter(), _cpu()
                outcome = await tools.call(ctx, "bash", {"command": "true"})
                into.append(time.perf_counter() - started)
                cpu[ctx is sandboxed] += _cpu() - used
                assert not outcome.is_error, outcome.content
        first, walks = _walks(root)
    extra = statistics.median(with_sandbox) - statistics.median(without)
    note = (
        f"{ROUNDS} rounds, `true` through the bash tool, {FILES:,}-file workspace "
        f"+ {PACKAGES * 15:,}-file node_modules"
    )
    return [
        Row(
            "sandbox",
            "per-command cost of the sandbox (median, with - without)",
            ms(extra),
            goal=f"≤ {ms(GOAL)}",
            met=extra <= GOAL,
            note=note,
        ),
        Row(
            "sandbox",
            "CPU per command of the sandbox (mean, with - without; server and bwrap)",
            ms((cpu[True] - cpu[False]) / ROUNDS),
            note="what a busy machine does not change: CPU time, not wall time",
        ),
        Row("sandbox", "a command with the sandbox", p50_p90(with_sandbox)),
        Row("sandbox", "a command without it", p50_p90(without)),
        Row(
            "sandbox",
            "the sandbox's walk of the workspace, first / then",
            f"{ms(first)}, {p50_p90(walks)}",
        ),
    ]


def _repository_and_dependencies(root: Path) -> None:
    """A git repository, and packages as npm lays them out: nested folders of small files,
    `.bin/` links to some."""
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    top = root / "node_modules"
    (top / ".bin").mkdir(parents=True)
    for n in range(PACKAGES):
        package = top / f"package-{n:03d}"
        for folder, count in (("lib", 8), ("dist", 5)):
            (package / folder).mkdir(parents=True)
            for i in range(count):
                (package / folder / f"m{i}.js").write_text("module.exports = 1;\n")
        (package / "package.json").write_text('{"name": "p"}\n')
        (package / "README.md").write_text("readme\n")
        if n % 10 == 0:
            (top / ".bin" / f"tool-{n}").symlink_to(package / "lib" / "m0.js")
    (top / "package-000" / ".env").write_text("NPM_TOKEN=bench\n")


def _cpu() -> float:
    """CPU seconds used so far by this process and its ended children (bwrap, bash)."""
    me, children = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return me.ru_utime + me.ru_stime + children.ru_utime + children.ru_stime


def _walks(root: Path) -> tuple[float, list[float]]:
    """The protected-file and control-file walk alone: a first one, and then as a command's."""
    fresh = CommandSandbox(root)
    matcher = fresh.control.matcher()
    started = time.perf_counter()
    fresh.protected.survey(matcher)
    first = time.perf_counter() - started
    walks = []
    for _ in range(ROUNDS):
        started = time.perf_counter()
        fresh.protected.survey(matcher)
        walks.append(time.perf_counter() - started)
    return first, walks
