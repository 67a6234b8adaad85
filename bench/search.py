"""grep and list_files over a large tree, called through the tool registry as the agent does,
against running ``rg`` directly with the flags the tools pass it.

The tree: 50,000 small files in 500 folders plus an ignored ``build/`` folder (.gitignore) of
2,500 more. Each case runs tool and rg alternately (after a warm-up of each), and compares
medians.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from bench.table import Row, ms, percentile
from bench.workspaces import large_tree
from plansight.engine.events import EventBus
from plansight.engine.hooks import accept_all_edits, refuse_all_commands
from plansight.plan.plan import Plan
from plansight.plan.scratchpad import Scratchpad
from plansight.tools import default_tools
from plansight.tools.context import ToolContext
from plansight.tools.search import RG_FILES, RG_GREP, rg_executable
from plansight.workspace.access import Workspace

FILES = 50_000
REPEATS = 9
GOAL = 1.2

# What the tools pass rg: the same flags, so that the work is the same.
LIST = RG_FILES
GREP = RG_GREP


# A glob without "/" selects files by name through a file type of the tool's own: unlike
# --glob, which re-includes ignored files that match it, a type leaves .gitignore in force.
# That is what the tools pass rg, so the baseline does too; --glob (faster, as it skips the
# .gitignore checks, but not the same listing) is timed for reference.
PY_TYPE = ("--type-add", "plansightglob:*.py", "--type", "plansightglob")


@dataclass(frozen=True)
class Case:
    label: str
    tool: str
    tool_input: Mapping[str, Any]
    rg_args: tuple[str, ...]
    glob_args: tuple[str, ...] | None = None  # the same search with --glob, for reference


CASES = (
    Case(
        "list_files, whole tree",
        "list_files",
        MappingProxyType({}),
        (*LIST, "--", "."),
    ),
    Case(
        "list_files pattern '*.py'",
        "list_files",
        MappingProxyType({"pattern": "*.py"}),
        (*LIST, *PY_TYPE, "--", "."),
        (*LIST, "--glob", "*.py", "--", "."),
    ),
    Case(
        "grep rare match (3 files)",
        "grep",
        MappingProxyType({"pattern": "NEEDLE_42"}),
        (*GREP, "-e", "NEEDLE_42", "--", "."),
    ),
    Case(
        "grep common match (every file)",
        "grep",
        MappingProxyType({"pattern": "^import os"}),
        (*GREP, "-e", "^import os", "--", "."),
    ),
    Case(
        "grep rare match, glob '*.py'",
        "grep",
        MappingProxyType({"pattern": "NEEDLE_42", "glob": "*.py"}),
        (*GREP, *PY_TYPE, "-e", "NEEDLE_42", "--", "."),
        (*GREP, "--glob", "*.py", "-e", "NEEDLE_42", "--", "."),
    ),
)


async def time_rg(args: Sequence[str], cwd: Path) -> float:
    start = time.perf_counter()
    proc = await asyncio.create_subprocess_exec(
        rg_executable(),
        *args,
        cwd=cwd,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    await proc.communicate()
    return time.perf_counter() - start


async def run() -> list[Row]:
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="plansight-bench-search-") as tmp:
        root = Path(tmp)
        written = await asyncio.to_thread(large_tree, root, FILES)
        registry = default_tools()
        ctx = ToolContext(
            plan=Plan(),
            scratchpad=Scratchpad(),
            workspace=Workspace(root),
            review=accept_all_edits,
            approve=refuse_all_commands,
            events=EventBus(),
        )

        async def time_tool(case: Case) -> float:
            start = time.perf_counter()
            outcome = await registry.call(ctx, case.tool, dict(case.tool_input))
            elapsed = time.perf_counter() - start
            if outcome.is_error:
                raise RuntimeError(f"{case.label}: {outcome.content[:200]}")
            return elapsed

        for case in CASES:
            await time_tool(case)
            await time_rg(case.rg_args, root)
            tool_times: list[float] = []
            rg_times: list[float] = []
            glob_times: list[float] = []
            for _ in range(REPEATS):
                tool_times.append(await time_tool(case))
                rg_times.append(await time_rg(case.rg_args, root))
                if case.glob_args is not None:
                    glob_times.append(await time_rg(case.glob_args, root))
            ratio = percentile(tool_times, 50) / percentile(rg_times, 50)
            extra = f"; rg --glob {ms(percentile(glob_times, 50))}" if glob_times else ""
            rows.append(
                Row(
                    "search",
                    f"{case.label}: tool / rg",
                    f"{ratio:.2f}×",
                    goal=f"≤ {GOAL:.1f}×",
                    met=ratio <= GOAL,
                    note=(
                        f"p50 tool {ms(percentile(tool_times, 50))}, "
                        f"rg {ms(percentile(rg_times, 50))}{extra}; {written:,} files"
                    ),
                )
            )
    return rows
