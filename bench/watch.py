"""Outside changes noticed, and what the watcher costs while nothing happens.

A 20,000-file workspace (plus 1,000 ignored files under build/). After ``initialized`` the bench
waits until the watcher reports a probe file, then, one at a time, rewrites an existing file
from the bench's own process (another process than the server) and times the write → the
``filesChanged`` event received by the editor. Then the server idles for 5 s and its CPU time
(all threads, from /proc/<pid>/task/*/schedstat; /proc/<pid>/stat's 10 ms ticks as a fallback)
over that window is its idle cost.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from pathlib import Path

from bench.editor import Editor, proc_cpu_ns, proc_cpu_seconds
from bench.table import Row, ms, p50_p90, percentile
from bench.workspaces import large_tree

FILES = 20_000
WRITES = 12
GOAL_LATENCY = 0.150
GOAL_IDLE = 0.01
IDLE = 5.0
PAUSE = 0.3  # between writes, so that each is its own batch


def changed(editor: Editor, rel: str, after: float) -> float | None:
    for item in editor.inbox.events("filesChanged"):
        if item.at >= after and rel in item.params.get("paths", []):
            return item.at
    return None


async def wait_until_watching(editor: Editor, root: Path, timeout: float = 30.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    probe = 0
    while loop.time() < deadline:
        rel = f"probe_{probe}.txt"
        started = time.perf_counter()
        (root / rel).write_text("probe\n")
        for _ in range(25):
            await asyncio.sleep(0.02)
            if changed(editor, rel, started) is not None:
                return
        probe += 1
    raise TimeoutError("the watcher never reported a change")


async def run() -> list[Row]:
    with tempfile.TemporaryDirectory(prefix="plansight-bench-watch-") as tmp:
        root = Path(tmp) / "ws"
        root.mkdir()
        await asyncio.to_thread(large_tree, root, FILES)
        editor = await Editor.start(root, base_url=None, storage=Path(tmp) / "st")
        try:
            await wait_until_watching(editor, root)
            latencies: list[float] = []
            for i in range(WRITES):
                index = 1 + i * (FILES // WRITES)
                folder = f"pkg_{index // 100 // 50:02d}/sub_{index // 100:04d}"
                suffix = ".py" if index % 4 else ".txt"
                rel = f"{folder}/file_{index:06d}{suffix}"
                path = root / rel
                text = path.read_text()
                await asyncio.sleep(PAUSE)
                started = time.perf_counter()
                with open(path, "w", encoding="utf-8") as handle:
                    handle.write(text + f"# changed {i}\n")
                while (at := changed(editor, rel, started)) is None:
                    if time.perf_counter() - started > 5:
                        raise TimeoutError(f"no filesChanged for {rel}")
                    await asyncio.sleep(0.001)
                latencies.append(at - started)
            await asyncio.sleep(1.0)
            cpu_before = proc_cpu_seconds(editor.pid)
            ns_before = proc_cpu_ns(editor.pid)
            wall_before = time.perf_counter()
            await asyncio.sleep(IDLE)
            wall = time.perf_counter() - wall_before
            ns_after = proc_cpu_ns(editor.pid)
            if ns_before is not None and ns_after is not None:
                idle = (ns_after - ns_before) / 1e9 / wall
                source = "summed over threads from /proc/<pid>/task/*/schedstat"
            else:
                idle = (proc_cpu_seconds(editor.pid) - cpu_before) / wall
                source = "utime + stime from /proc/<pid>/stat (10 ms ticks)"
        finally:
            await editor.stop()
    p50 = percentile(latencies, 50)
    return [
        Row(
            "watch",
            "outside write → filesChanged",
            p50_p90(latencies),
            goal=f"p50 ≤ {ms(GOAL_LATENCY)}",
            met=p50 <= GOAL_LATENCY,
            note=f"{len(latencies)} writes, {FILES:,}-file workspace",
        ),
        Row(
            "watch",
            f"server CPU while idle ({IDLE:.0f} s)",
            f"{idle:.2%} of a core",
            goal=f"< {GOAL_IDLE:.0%}",
            met=idle < GOAL_IDLE,
            note=source,
        ),
    ]
