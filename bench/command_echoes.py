"""What telling a command's own changes apart costs: the two workspace scans around a command.

A 5,000-file workspace (plus 250 ignored files under build/). Each round runs the session's
recorder (`workspace.echoes.CommandEchoes`) around a "command" that rewrites three files: the
scan before it, which the command waits for, and the scan after it with the difference judged,
which the run waits for before it ends (the model's next request does not). One scan alone is
timed too, for reference.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from pathlib import Path

from bench.table import Row, p50_p90
from bench.workspaces import large_tree
from plansight.tools.context import NoRecorder
from plansight.workspace.echoes import CommandEchoes, Echoes
from plansight.workspace.scan import WorkspaceFilter, scan

FILES = 5_000
ROUNDS = 15


async def run() -> list[Row]:
    with tempfile.TemporaryDirectory(prefix="plansight-bench-echoes-") as tmp:
        root = Path(tmp)
        await asyncio.to_thread(large_tree, root, FILES)
        judged: list[str] = []
        echoes = Echoes(root, lambda own, others: judged.extend(own))
        recorder = CommandEchoes(echoes, NoRecorder())
        recorder.watched = True
        befores: list[float] = []
        afters: list[float] = []
        singles: list[float] = []
        for n in range(ROUNDS):
            started = time.perf_counter()
            scan(root, WorkspaceFilter(root), folders=True)
            singles.append(time.perf_counter() - started)

            started = time.perf_counter()
            await recorder.before_command()
            befores.append(time.perf_counter() - started)
            for i in range(3):
                path = root / "pkg_00" / f"sub_{i:04d}" / f"file_{i * 100:06d}.txt"
                path.write_text(f"changed in round {n}\n")
            recorder.command_ran("rewrite three files")
            started = time.perf_counter()
            await recorder.settled()
            afters.append(time.perf_counter() - started)
        assert len(judged) == 3 * ROUNDS, judged
    note = f"{ROUNDS} rounds, {FILES:,}-file workspace"
    return [
        Row("command-echoes", "scan before a command (it waits)", p50_p90(befores), note=note),
        Row("command-echoes", "scan after it, judged (the run's end waits)", p50_p90(afters)),
        Row("command-echoes", "one scan alone (reference)", p50_p90(singles)),
    ]
