"""Plan items run in parallel (protocol version 4), through the real server and the fake API.

- Worker start on a 20,000-file workspace: from `plansight/runParallel` to the worker's first
  request at the model (its copy checked out of the checkpoint repository, its session built,
  its secrets scanned); the median of the starts after the first (goal ≤ 1 s).
- Two workers' wall time against the same two items run one after the other (focused runs),
  with the fake answering each request after 2 s, as a real model takes about that long a
  round; each item is three rounds (a write, the todo update, the summary).
- Memory per worker: the server's RSS while two workers run, above its RSS before they start,
  halved (sampled every 50 ms; the peak counts).

Run alone: `python -m bench --only parallel`.
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.editor import Editor, proc_rss_mib
from bench.table import Row, ms
from bench.workspaces import large_tree, small_project
from plansight.fakeapi import FakeMessagesAPI, ScriptStep
from plansight.fakeapi import text_reply as text
from plansight.fakeapi import tool_reply as tool

FILES = 20_000
STARTS = 6
LATENCY = 2.0
START_GOAL = 1.0


def item(n: int) -> dict[str, str]:
    return {"id": str(n), "text": f"Write notes file number {n}", "status": "pending"}


def steps(n: int, items: list[dict[str, str]]) -> list[ScriptStep]:
    done = [{**i, "status": "completed" if i["id"] == str(n) else i["status"]} for i in items]
    return [
        tool("write_file", {"path": f"notes_{n}.txt", "content": f"notes {n}\n"}),
        tool("todo", {"items": done}),
        text(f"Wrote notes_{n}.txt."),
    ]


def finished(editor: Editor, todo_id: str) -> bool:
    return any(e.params.get("todoId") == todo_id for e in editor.inbox.events("workerFinished"))


async def worker_starts(tmp: Path) -> list[float]:
    root = tmp / "big"
    root.mkdir()
    large_tree(root, FILES)
    items = [item(n) for n in range(1, STARTS + 1)]
    api = FakeMessagesAPI(
        conversations={i["text"]: [text("Nothing to do."), text("Done.")] for i in items}
    )
    api.start()
    editor = await Editor.start(root, base_url=api.base_url, storage=tmp / "state-big")
    starts: list[float] = []
    try:
        await editor.request("plansight/editPlan", {"items": items})
        for entry in items:
            before = len(api.message_requests)
            t0 = time.perf_counter()
            await editor.request("plansight/runParallel", {"todoIds": [entry["id"]]})
            await editor.inbox.wait_for(lambda b=before: len(api.message_requests) > b, 600)
            starts.append(api.message_requests[before].received_at - t0)
            await editor.inbox.wait_for(lambda e=entry: finished(editor, e["id"]), 600)
    finally:
        await editor.stop()
        api.stop()
    return starts


async def wall_times(tmp: Path) -> tuple[float, float, float]:
    root = tmp / "small"
    root.mkdir()
    small_project(root)
    items = [item(1), item(2)]
    api = FakeMessagesAPI(latency=LATENCY)
    api.start()
    editor = await Editor.start(root, base_url=api.base_url, storage=tmp / "state-small")
    try:
        await editor.request("plansight/editPlan", {"items": items})
        # One after the other: two focused runs of the same items in the same session.
        for n in (1, 2):
            api.push(*steps(n, items))
        t0 = time.perf_counter()
        for n in (1, 2):
            result = await editor.request(
                "plansight/run", {"prompt": f"Do item {n}.", "todoId": str(n)}
            )
            assert result["status"] == "done", result
        sequential = time.perf_counter() - t0
        await editor.request("plansight/editPlan", {"items": items})  # both pending again
        for n in (1, 2):
            api.push_conversation(items[n - 1]["text"], *steps(n, items))
        idle = proc_rss_mib(editor.pid)
        peak = idle
        t0 = time.perf_counter()
        await editor.request("plansight/runParallel", {"todoIds": ["1", "2"]})
        while not (finished(editor, "1") and finished(editor, "2")):
            peak = max(peak, proc_rss_mib(editor.pid))
            await asyncio.sleep(0.05)
            if time.perf_counter() - t0 > 600:
                raise TimeoutError("the workers did not finish")
        parallel = time.perf_counter() - t0
    finally:
        await editor.stop()
        api.stop()
    return sequential, parallel, (peak - idle) / 2


async def run() -> list[Row]:
    with tempfile.TemporaryDirectory(prefix="plansight-bench-parallel-", dir="/var/tmp") as tmp:
        starts = await worker_starts(Path(tmp))
        sequential, parallel, per_worker = await wall_times(Path(tmp))
    later = starts[1:]
    median = statistics.median(later)
    detail: dict[str, Any] = {"first": round(starts[0], 3), "later": [round(s, 3) for s in later]}
    return [
        Row(
            "parallel",
            f"worker start, {FILES:,}-file workspace (median after the first)",
            ms(median),
            f"≤ {ms(START_GOAL)}",
            median <= START_GOAL,
            str(detail),
        ),
        Row(
            "parallel",
            f"two items, 3 rounds each, fake latency {LATENCY:g} s a round",
            f"parallel {parallel:.1f} s, one after the other {sequential:.1f} s",
            note=f"{sequential / parallel:.2f}x",
        ),
        Row("parallel", "memory per worker (server RSS, peak above idle)", f"{per_worker:.1f} MiB"),
    ]
