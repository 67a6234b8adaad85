"""What the recommended changes would gain (opt-in: ``python -m bench --only whatif``).

The overhead benchmark's session (19 small read_file rounds and an answer) and the paced plan
rounds, run interleaved against: Plansight as it is; Plansight with its changes emulated
(``bench.whatif_server``: no storage writes, no toolInputDelta notifications, raw streaming),
one after another; and the simple streaming loop. Each figure is the fake's turnaround p50 and
its ratio to the simple loop's.
"""

from __future__ import annotations

import itertools
import sys
import tempfile
from pathlib import Path
from types import MappingProxyType

import anthropic

from bench import overhead, plan_latency
from bench.editor import Editor
from bench.fakeproc import FakeAPIProcess
from bench.table import Row, ms, p50_p90, percentile
from bench.workspaces import small_project
from plansight.model import newest_sonnet

REPETITIONS = 6  # after a warm-up
PLAN_ROUNDS = 10
# By path: the server runs in the workspace, where the bench package cannot be imported.
COMMAND = (sys.executable, str(Path(__file__).with_name("whatif_server.py")))
VARIANTS = MappingProxyType(
    {
        "as it is": MappingProxyType({}),
        "storage off the round": MappingProxyType({"WHATIF_NO_STORE": "1"}),
        "+ no toolInputDelta": MappingProxyType({"WHATIF_NO_STORE": "1", "WHATIF_NO_DELTA": "1"}),
        "+ create(stream=True)": MappingProxyType(
            {"WHATIF_NO_STORE": "1", "WHATIF_NO_DELTA": "1", "WHATIF_RAW_STREAM": "1"}
        ),
    }
)


async def run() -> list[Row]:
    model = newest_sonnet()
    per = overhead.ROUNDS - 1
    block = overhead.ROUNDS + PLAN_ROUNDS + 1  # requests per repetition of a variant
    with tempfile.TemporaryDirectory(prefix="plansight-bench-whatif-") as tmp:
        root = Path(tmp) / "ws"
        script = overhead.session_script(small_project(root, files=overhead.ROUNDS))
        fakes = {name: FakeAPIProcess() for name in [*VARIANTS, "stream"]}
        editors: dict[str, Editor] = {}
        client = anthropic.AsyncAnthropic(base_url=fakes["stream"].base_url, api_key="bench")
        plan: dict[str, list[float]] = {name: [] for name in VARIANTS}
        try:
            for i, (name, env) in enumerate(VARIANTS.items()):
                editors[name] = await Editor.start(
                    root,
                    base_url=fakes[name].base_url,
                    storage=Path(tmp) / f"st{i}",
                    init_options={"model": model},
                    env=dict(env),
                    command=COMMAND,
                )
            for repetition in range(REPETITIONS + 1):
                for name, editor in editors.items():
                    fakes[name].push(*script)
                    result = await editor.run(overhead.PROMPT)
                    if result["status"] != "done":
                        raise RuntimeError(f"{name}: run ended {result}")
                fakes["stream"].push(*script)
                await overhead.simple_loop(client, root, model, stream=True)
                for name, editor in editors.items():
                    latencies, _ = await plan_latency.timed_run(
                        editor, fakes[name], PLAN_ROUNDS, plan_latency.PACED_DELAY
                    )
                    if repetition:
                        plan[name] += latencies
            turnaround: dict[str, list[float]] = {}
            for name, fake in fakes.items():
                records = fake.records()
                size = overhead.ROUNDS if name == "stream" else block
                turnaround[name] = [
                    nxt.received_at - prev.finished_at
                    for i, (prev, nxt) in enumerate(itertools.pairwise(records))
                    if i >= size and i % size < per and prev.finished_at is not None
                ]
        finally:
            await client.close()
            for editor in editors.values():
                await editor.stop()
            for fake in fakes.values():
                fake.close()
    base = percentile(turnaround["stream"], 50)
    rows = [
        Row(
            "whatif",
            f"{name}: turnaround / stream loop",
            f"{percentile(turnaround[name], 50) / base:.2f}×",
            note=(
                f"turnaround {p50_p90(turnaround[name])}; paced plan latency "
                f"p50 {ms(percentile(plan[name], 50))}"
            ),
        )
        for name in VARIANTS
    ]
    rows.append(
        Row("whatif", "simple loop, messages.stream", p50_p90(turnaround["stream"]), note="1.00×")
    )
    return rows
