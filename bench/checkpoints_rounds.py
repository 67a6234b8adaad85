"""Do checkpoints delay the model's next request? Rounds with checkpoints on and off.

Two servers over the same kind of 20,000-file workspace (bench/checkpoints.py's tree), one
with checkpoints on and one with the `checkpoints` option false, each driven over stdio by the
bench's editor against its own fake Messages API. Each session is 20 rounds: 19 that change a
file (a `write_file`, or a `bash` command), then a final answer. Sessions run A B A B …
(a warm-up of each first, once the server with checkpoints has taken its first snapshot of the
tree). The figure is the fake's turnaround: from the end of one answer to the arrival of the
next request, which holds the tool's run and whatever of a checkpoint the round waits for.

A snapshot runs in the background while the model answers; a tool waits only for those still
to read what it changes. So with answers streamed over a realistic time (paced; a real model
takes longer still) the round should cost what it costs without checkpoints, and with answers
at once (instant) each tool waits for the snapshot of the round before: the worst case.
"""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path
from typing import Any

from bench.checkpoints import distinct_tree
from bench.editor import Editor
from bench.fakeproc import FakeAPIProcess
from bench.table import Row, ms, p50_p90, percentile
from plansight.engine.model import newest_sonnet
from plansight.fakeapi import ScriptStep, text_reply, tool_reply

FILES = 20_000
ROUNDS = 20
REPETITIONS = 4
GOAL_EXTRA = 0.010  # seconds a round may take longer with checkpoints on (p50)


PACED = 0.025  # seconds between streamed events: a tool call streams in about 0.15 s


def edit_script(session: int, delay: float) -> list[ScriptStep]:
    steps: list[ScriptStep] = [
        tool_reply(
            "write_file",
            {"path": f"out/s{session}_{i}_{delay}.txt", "content": f"{i}\n"},
            chunk_delay=delay,
        )
        for i in range(ROUNDS - 1)
    ]
    return [*steps, text_reply("Done.")]


def command_script(session: int, delay: float) -> list[ScriptStep]:
    steps: list[ScriptStep] = [
        tool_reply(
            "bash", {"command": f"echo {i} > out/c{session}_{i}_{delay}.txt"}, chunk_delay=delay
        )
        for i in range(ROUNDS - 1)
    ]
    return [*steps, text_reply("Done.")]


def rounds_of(times: list[float], sessions: int) -> list[float]:
    """The turnarounds inside sessions (not the bench's pause between two), warm-up dropped."""
    per = ROUNDS - 1
    inside = [t for i, t in enumerate(times) if (i + 1) % ROUNDS != 0]
    if len(inside) != sessions * per:
        raise RuntimeError(f"expected {sessions * per} turnarounds, got {len(inside)}")
    return inside[per:]


async def measure(tmp: Path) -> list[Row]:
    model = newest_sonnet()
    roots = {name: tmp / name / "ws" for name in ("on", "off")}
    for root in roots.values():
        root.mkdir(parents=True)
        await asyncio.to_thread(distinct_tree, root, FILES)
        (root / "out").mkdir()
    options: dict[str, dict[str, Any]] = {
        "on": {"checkpoints": True},
        "off": {"checkpoints": False},
    }
    results: dict[tuple[str, float, str], list[float]] = {}
    cases = [
        (kind, script, delay)
        for kind, script in (("edit", edit_script), ("command", command_script))
        for delay in (0.0, PACED)
    ]
    for kind, script, delay in cases:
        fakes = {name: FakeAPIProcess() for name in roots}
        editors: dict[str, Editor] = {}
        try:
            for name, root in roots.items():
                editors[name] = await Editor.start(
                    root,
                    base_url=fakes[name].base_url,
                    storage=tmp / name / f"storage-{kind}-{delay}",
                    init_options={
                        "model": model,
                        "autoApprove": {"edits": True, "commands": True},
                        **options[name],
                    },
                )
            # The first snapshot of the tree (a second or so) is taken before measuring.
            await editors["on"].request("plansight/checkpoints", {})
            sessions = REPETITIONS + 1
            for session in range(sessions):
                for name in roots:
                    fakes[name].push(*script(session, delay))
                    result = await editors[name].run(f"{kind} session {session}")
                    if result["status"] != "done":
                        raise RuntimeError(f"{name}: the run ended {result}")
                    await asyncio.sleep(0.05)
            for name in roots:
                results[(kind, delay, name)] = rounds_of(fakes[name].turnaround_times(), sessions)
            taken = await editors["on"].request("plansight/checkpoints", {})
            wanted = "edit" if kind == "edit" else "command"
            count = sum(1 for c in taken["checkpoints"] if c["kind"] == wanted)
            if count < sessions * (ROUNDS - 1):
                raise RuntimeError(f"only {count} {wanted} checkpoints were taken")
        finally:
            for editor in editors.values():
                await editor.stop()
            for fake in fakes.values():
                fake.close()

    rows: list[Row] = []
    whats = {"edit": "a written edit", "command": "a command that wrote a file"}
    for kind, _, delay in cases:
        on, off = results[(kind, delay, "on")], results[(kind, delay, "off")]
        extra = percentile(on, 50) - percentile(off, 50)
        paced = delay > 0
        waits = (
            "an edit waits only for snapshots of its own file"
            if kind == "edit"
            else "the next command waits for the last one's scan"
        )
        pacing = (
            "answers streamed over ~0.15 s (a real model takes longer)"
            if paced
            else f"answers at once, the worst case: {waits}"
        )
        rows.append(
            Row(
                "checkpoints",
                f"round with {whats[kind]}, {'paced' if paced else 'instant'} answers: on / off",
                f"{p50_p90(on)} / {p50_p90(off)}",
                f"p50 +{ms(GOAL_EXTRA)} at most" if paced else "",
                extra <= GOAL_EXTRA if paced else None,
                f"p50 {'+' if extra >= 0 else '−'}{ms(abs(extra))} with checkpoints; {pacing}; "
                f"{len(on)} rounds each, {FILES:,} files, interleaved",
            )
        )
    return rows


async def run() -> list[Row]:
    with tempfile.TemporaryDirectory(prefix="plansight-bench-checkpoint-rounds-") as tmp:
        return await measure(Path(tmp))
