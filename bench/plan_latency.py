"""Plan latency: the model's todo call complete → ``plansight/todos`` received by the editor.

Part 1 (the goal): rounds that each call todo; the latency is the editor's receipt of
``plansight/todos`` minus the fake's ``finished_at`` of that answer (both
``time.perf_counter()``, the same clock across processes). The goal is judged with the input
deltas 20 ms apart, as a real model streams them (slower still): the client handles each delta
as it comes, and only the end of the call is left when it completes. At full speed the fake
writes the whole answer at once and every delta is handled after ``finished_at``: that figure
is printed too, as a worst case.

Part 2 (the stretch): the todo calls stream at a realistic pace (``chunk_delay``: the fake
sends the input JSON in 64-character deltas, about 16 tokens each, every 0.2 s: 80 tokens/s).
Two ways to show the plan before the call completes are timed against ``plansight/todos``:
the server's ``planDraft`` events (the items of a todo call still streaming), and, for
comparison, the editor parsing the ``toolInputDelta`` partial JSON itself.
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.editor import Editor, Received
from bench.fakeproc import FakeAPIProcess
from bench.table import Row, ms, p50_p90, percentile
from bench.workspaces import small_project
from plansight.engine.model import newest_sonnet
from plansight.fakeapi import ScriptStep, text_reply, tool_reply

ROUNDS = 20
RUNS = 2  # of each kind, after a warm-up run
GOAL = 0.005
PACED_DELAY = 0.02  # seconds between input deltas: the client keeps up, as with the real API
STREAM_ROUNDS = 3
CHUNK_DELAY = 0.2  # seconds per 64-character delta: about 80 tokens/s
PLAN_TEXTS = (
    "Read the configuration loader and list every setting it accepts",
    "Add type hints to the public functions of the loader module",
    "Write docstrings for the loader's public functions and classes",
    "Add a test for the missing-file case and for the malformed-file case",
    "Run the test suite and fix whatever fails after the changes",
    "Summarise the changes for the user, with anything left open",
)


def plan_input(round_index: int, rounds: int) -> dict[str, Any]:
    """The plan at a round: items completed one after another, the next one in progress."""
    done = len(PLAN_TEXTS) * round_index // max(rounds - 1, 1)
    items = []
    for i, text in enumerate(PLAN_TEXTS):
        if i < done:
            status = "completed"
        elif i == done:
            status = "in_progress"
        else:
            status = "pending"
        items.append({"id": str(i + 1), "text": text, "status": status})
    return {"items": items}


def script(rounds: int, chunk_delay: float = 0.0) -> list[ScriptStep]:
    steps: list[ScriptStep] = [
        tool_reply("todo", plan_input(r, rounds), chunk_delay=chunk_delay) for r in range(rounds)
    ]
    steps.append(text_reply("All done."))
    return steps


def complete_items(partial: str) -> int:
    """How many whole items the partial JSON of a todo call already holds."""
    start = partial.find("[")
    if start < 0:
        return 0
    decoder = json.JSONDecoder()
    pos, count = start + 1, 0
    while True:
        while pos < len(partial) and partial[pos] in " \t\r\n,":
            pos += 1
        if pos >= len(partial) or partial[pos] == "]":
            return count
        try:
            _, pos = decoder.raw_decode(partial, pos)
        except ValueError:
            return count
        count += 1


@dataclass
class PartialPlans:
    """Follows toolInputDelta events of todo calls: when a first item became parsable."""

    text: dict[str, str] = field(default_factory=dict)
    first_delta: dict[str, float] = field(default_factory=dict)
    first_item: dict[str, float] = field(default_factory=dict)
    drafts: list[Received] = field(default_factory=list)

    def __call__(self, item: Received) -> None:
        params = item.params
        if item.method != "plansight/event":
            return
        if params.get("type") == "planDraft":
            self.drafts.append(item)
            return
        if params.get("type") != "toolInputDelta":
            return
        if params.get("name") != "todo":
            return
        call = str(params["id"])
        self.first_delta.setdefault(call, item.at)
        self.text[call] = self.text.get(call, "") + str(params["partialJson"])
        if call not in self.first_item and complete_items(self.text[call]) >= 1:
            self.first_item[call] = item.at


def model_todos(editor: Editor) -> list[Received]:
    return [t for t in editor.inbox.todos() if t.params.get("source") == "model"]


async def timed_run(
    editor: Editor, fake: FakeAPIProcess, rounds: int, chunk_delay: float
) -> tuple[list[float], list[tuple[float, float, float]]]:
    """One run of ``rounds`` todo rounds. Returns the latencies, and for each round its
    answer's first byte, its end, and the editor's receipt of plansight/todos."""
    before = len(fake.records())
    seen = len(model_todos(editor))
    fake.push(*script(rounds, chunk_delay))
    result = await editor.run("Work through the plan.")
    if result["status"] != "done":
        raise RuntimeError(f"plan run ended {result}")
    await editor.inbox.wait_for(lambda: len(model_todos(editor)) >= seen + rounds, 5)
    records = fake.records()[before : before + rounds]
    todos = model_todos(editor)[seen : seen + rounds]
    latencies: list[float] = []
    rounds_seen: list[tuple[float, float, float]] = []
    for record, todo in zip(records, todos, strict=True):
        assert record.finished_at is not None and record.first_byte_at is not None
        latencies.append(todo.at - record.finished_at)
        rounds_seen.append((record.first_byte_at, record.finished_at, todo.at))
    return latencies, rounds_seen


async def run() -> list[Row]:
    model = newest_sonnet()
    with tempfile.TemporaryDirectory(prefix="plansight-bench-plan-") as tmp:
        root = Path(tmp) / "ws"
        small_project(root, files=2)
        with FakeAPIProcess() as fake:
            editor = await Editor.start(
                root,
                base_url=fake.base_url,
                storage=Path(tmp) / "st",
                init_options={"model": model},
                tool_input_deltas=True,
            )
            partial = PartialPlans()
            editor.inbox.listeners.append(partial)
            try:
                await timed_run(editor, fake, ROUNDS, 0.0)  # warm-up
                paced: list[float] = []
                burst: list[float] = []
                for _ in range(RUNS):
                    paced += (await timed_run(editor, fake, ROUNDS, PACED_DELAY))[0]
                    burst += (await timed_run(editor, fake, ROUNDS, 0.0))[0]
                _, realistic = await timed_run(editor, fake, STREAM_ROUNDS, CHUNK_DELAY)
            finally:
                await editor.stop()
    calls = list(partial.first_item)[-STREAM_ROUNDS:]
    earlier: list[float] = []
    draft_earlier: list[float] = []
    streaming: list[float] = []
    for (first_byte, finished, todo_at), call in zip(realistic, calls, strict=True):
        earlier.append(todo_at - partial.first_item[call])
        streaming.append(finished - first_byte)
        # The first draft of this call: after its answer started streaming.
        drafts = [d.at for d in partial.drafts if first_byte < d.at < todo_at]
        if drafts:
            draft_earlier.append(todo_at - drafts[0])
    p50 = percentile(paced, 50)
    return [
        Row(
            "plan",
            "todo call complete → plansight/todos (paced stream)",
            p50_p90(paced),
            goal=f"p50 ≤ {ms(GOAL)}",
            met=p50 <= GOAL,
            note=f"{len(paced)} todo rounds, input deltas {ms(PACED_DELAY)} apart",
        ),
        Row(
            "plan",
            "same, whole answer in one burst (reference)",
            p50_p90(burst),
            note="every delta of the call is handled after the fake's last byte",
        ),
        Row(
            "plan",
            "stretch: first planDraft event ahead of plansight/todos",
            f"p50 {ms(percentile(draft_earlier, 50))} earlier" if draft_earlier else "none sent",
            note=(
                f"todo call of {len(PLAN_TEXTS)} items streamed over p50 "
                f"{ms(percentile(streaming, 50))} at ~80 tokens/s"
            ),
        ),
        Row(
            "plan",
            "stretch: first item parsable from toolInputDelta, ahead of todos",
            f"p50 {ms(percentile(earlier, 50))} earlier",
            note="the editor parsing the partial JSON itself, for comparison",
        ),
    ]
