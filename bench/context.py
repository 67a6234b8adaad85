"""Context growth over a 40-round session with tool outputs of realistic size.

Plansight's server runs 39 tool rounds and a final answer against the fake: reads of a
5,000-line file (whole pages of 2,000 lines), greps with hundreds of matches, listings and
small reads, in turn. The bytes of each request body the fake received show how the
conversation grows: the caps on tool output (read_file 2,000 lines / 100 kB, grep 200 lines /
30 kB, list_files 500 files / 30 kB) bound each round's increment, so the size grows linearly.
The fake's turnaround per round is printed too: how the harness's own per-round work grows
with the conversation.
"""

from __future__ import annotations

import itertools
import tempfile
from pathlib import Path
from typing import Any

from bench.cache_share import share
from bench.editor import Editor
from bench.fakeproc import FakeAPIProcess
from bench.table import Row, ms, percentile
from bench.workspaces import big_file, small_project
from plansight.engine.model import newest_sonnet
from plansight.fakeapi import ScriptStep, reply, text_reply
from plansight.tools.files import READ_MAX_BYTES

ROUNDS = 40
BOUND = 1.5  # a round may add at most this many times read_file's byte cap


def round_step(index: int) -> ScriptStep:
    kind = index % 4
    tool: tuple[str, dict[str, Any]]
    if kind == 0:
        tool = ("read_file", {"path": "src/big.py"})
    elif kind == 1:
        tool = ("grep", {"pattern": "return"})
    elif kind == 2:
        tool = ("read_file", {"path": "src/big.py", "offset": 2001})
    else:
        tool = ("read_file", {"path": f"src/mod_{index % 20:02d}.py"})
    return reply(f"Step {index}: looking further.", [tool])


def script() -> list[ScriptStep]:
    steps = [round_step(i) for i in range(ROUNDS - 1)]
    steps.append(text_reply("I have read what I needed."))
    return steps


async def run() -> list[Row]:
    with tempfile.TemporaryDirectory(prefix="plansight-bench-context-") as tmp:
        root = Path(tmp) / "ws"
        small_project(root, files=20, lines=60)
        big_file(root / "src" / "big.py", 5000)
        with FakeAPIProcess(script()) as fake:
            editor = await Editor.start(
                root,
                base_url=fake.base_url,
                storage=Path(tmp) / "st",
                init_options={"model": newest_sonnet(), "maxRounds": ROUNDS},
            )
            try:
                result = await editor.run("Study src/big.py and its callers.", timeout=600)
            finally:
                await editor.stop()
            records = fake.records()
            turnaround = fake.turnaround_times()
    if result["status"] != "done" or len(records) != ROUNDS:
        raise RuntimeError(f"context session ended {result} after {len(records)} requests")
    sizes = [r.body_bytes for r in records]
    increments = [b - a for a, b in itertools.pairwise(sizes)]
    half = len(increments) // 2
    first_half = sum(increments[:half]) / half
    second_half = sum(increments[half:]) / (len(increments) - half)
    steadiness = second_half / first_half
    bounded = max(increments) <= BOUND * READ_MAX_BYTES
    linear = 0.75 <= steadiness <= 1.25
    cache, _, _, _ = share(records)
    early = percentile(turnaround[1:6], 50)
    late = percentile(turnaround[-6:-1], 50)
    kb = 1000
    return [
        Row(
            "context",
            f"request body, rounds 1 / {ROUNDS // 2} / {ROUNDS}",
            " / ".join(f"{sizes[i] / kb:,.0f} kB" for i in (0, ROUNDS // 2 - 1, ROUNDS - 1)),
            note=f"cache-read share over rounds 2..{ROUNDS}: {cache:.1%}",
        ),
        Row(
            "context",
            "per-round growth, min / max increment",
            f"{min(increments) / kb:.1f} / {max(increments) / kb:.1f} kB",
            goal=f"max ≤ {BOUND:g} × read_file cap ({READ_MAX_BYTES / kb:.0f} kB)",
            met=bounded,
        ),
        Row(
            "context",
            "mean increment, 2nd half / 1st half",
            f"{steadiness:.2f}",
            goal="0.75..1.25 (linear)",
            met=linear,
            note=f"{first_half / kb:.1f} kB then {second_half / kb:.1f} kB a round",
        ),
        Row(
            "context",
            "harness turnaround, rounds 2-6 / last 5 (reference)",
            f"p50 {ms(early)} / {ms(late)}",
            note=f"the per-round work that grows with a {sizes[-1] / 1e6:.1f} MB conversation",
        ),
    ]
