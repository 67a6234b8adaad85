"""The plan as a file (protocol version 4), through the real server and real files.

- Plan change → file on disk: a `plansight/editPlan` of a 10-item plan (one item reworded each
  time), from the request to the plan file on disk holding the new version (the bench polls
  the file every millisecond). Goal: at most 200 ms at the median (the contract's "within
  200 ms"); the server waits `DEBOUNCE` (20 ms) to write a burst of changes once.
- User save → `todos`: the file saved with one item reworded (a plain write, as an editor's
  save), to the `plansight/todos` notification carrying it (the watcher's report, the read,
  the parse, the edit, the notification).
- What a change costs: the server's CPU per plan change (the edit, its notification, the
  file's format and atomic write), and the file's size.
"""

from __future__ import annotations

import asyncio
import re
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.editor import Editor, proc_cpu_seconds
from bench.table import Row, ms, percentile
from bench.workspaces import small_project
from plansight.plan.planfile import format_plan_file
from plansight.workspace.atomic import write_atomic

ITEMS = 10
CHANGES = 30
SAVES = 20
GOAL = 0.2


def items(n: int) -> list[dict[str, Any]]:
    return [
        {
            "id": str(i),
            "text": f"Step {i} of the work, round {n if i == 1 else 0}",
            "status": "completed" if i < 4 else "in_progress" if i == 4 else "pending",
            **({"notes": "Acceptance: the tests pass.\nSee docs/plan.md."} if i == 2 else {}),
        }
        for i in range(1, ITEMS + 1)
    ]


def read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return ""


async def until(predicate: Any, timeout: float = 30.0) -> float:
    """Poll every millisecond; the perf_counter time it first held."""
    deadline = time.perf_counter() + timeout
    while not predicate():
        if time.perf_counter() > deadline:
            raise TimeoutError("the plan file did not change in time")
        await asyncio.sleep(0.001)
    return time.perf_counter()


async def measure(tmp: Path) -> tuple[list[float], list[float], float, int]:
    root = tmp / "ws"
    small_project(root)
    editor = await Editor.start(root, base_url=None, storage=tmp / "state")
    to_disk: list[float] = []
    to_todos: list[float] = []
    try:
        await editor.request("plansight/editPlan", {"items": items(0)})
        folder = root / ".plansight" / "plans"
        await until(lambda: folder.is_dir() and any(folder.glob("*.md")))
        [path] = list(folder.glob("*.md"))
        cpu = proc_cpu_seconds(editor.pid)
        for n in range(1, CHANGES + 1):
            start = time.perf_counter()
            state = await editor.request("plansight/editPlan", {"items": items(n)})
            marker = f"version {state['version']} -->"
            to_disk.append(await until(lambda m=marker: m in read(path)) - start)  # type: ignore[misc]
        cpu = (proc_cpu_seconds(editor.pid) - cpu) / CHANGES
        size = path.stat().st_size
        for n in range(SAVES):
            text = read(path)
            wanted = f"reworded by the user {n}"
            seen = len(editor.inbox.items)
            start = time.perf_counter()
            with open(path, "w", encoding="utf-8") as out:
                out.write(re.sub(r"(?m)^- \[x\] 3\. .*$", f"- [x] 3. {wanted}", text))

            def heard(since: int = seen, wanted: str = wanted) -> list[Any]:
                return [
                    i
                    for i in editor.inbox.items[since:]
                    if i.method == "plansight/todos"
                    and any(wanted in item["text"] for item in i.params["items"])
                ]

            try:
                await editor.inbox.wait_for(lambda: bool(heard()), 30)
            except TimeoutError:
                raise TimeoutError(
                    f"no todos for the save: {read(path)!r} {editor.stderr_tail(1500)}"
                ) from None
            to_todos.append(heard()[0].at - start)
            # The server's rewrite (the new version) before the next save.
            after = f"version {heard()[0].params['version']} -->"
            await until(lambda a=after: a in read(path))  # type: ignore[misc]
    finally:
        await editor.stop()
    return to_disk, to_todos, cpu, size


def file_cost(folder: Path, rounds: int = 500) -> float:
    """The plan file's own CPU per change, in this process: the format and the atomic write."""
    wire = items(0)
    start = time.process_time()
    for n in range(rounds):
        text = format_plan_file("Plan", "0123456789ab", n, wire, "notes")
        write_atomic(folder / "plan.md", text.encode(), mode=0o644)
    return (time.process_time() - start) / rounds


async def run() -> list[Row]:
    with tempfile.TemporaryDirectory(prefix="plansight-bench-planfile-") as tmp:
        to_disk, to_todos, cpu, size = await measure(Path(tmp))
        own = file_cost(Path(tmp))
    p50 = percentile(to_disk, 50)
    note = f"{ITEMS}-item plan, {CHANGES} changes, {SAVES} saves; file {size} bytes"
    return [
        Row(
            "plan_file",
            "plan change → file on disk",
            f"p50 {ms(p50)}, p90 {ms(percentile(to_disk, 90))}",
            f"p50 ≤ {ms(GOAL)}",
            p50 <= GOAL,
            note,
        ),
        Row(
            "plan_file",
            "user save → todos notification",
            f"p50 {ms(percentile(to_todos, 50))}, p90 {ms(percentile(to_todos, 90))}",
            note=note,
        ),
        Row("plan_file", "server CPU per plan change (edit, notify, write)", ms(cpu), note=note),
        Row("plan_file", "of which the file: format + atomic write", ms(own), note=note),
    ]
