"""Checkpoints on a 20,000-file workspace: the first snapshot, later ones, a step's restore.

The tree: 20,000 Python-like files of distinct content (as real code is: identical files would
let git store one blob for many and flatter the first snapshot) in 200 folders, plus a
.gitignore'd ``build/`` folder of 1,000 more. The store is Plansight's own
(`plansight.checkpoints`), on the machine's git.

- first snapshot: a fresh store over the tree (every file hashed and stored), 3 times.
- later snapshot: one file edited, then a snapshot, as after each written edit (p50 over 40).
- unchanged snapshot: a command that changed nothing (`only_if_changed`), p50 over 40.
- command snapshot: 50 files rewritten, one created, one deleted.
- step restore: a step edits 2 files and runs a command that creates, modifies and deletes one
  each; `restore(todoId)` puts them back (p50 over 15), checkpoint before and after included.
- what helps: the later snapshot in stores that differ by one setting (untracked cache off,
  index version 2, split index off), side by side; the first snapshot with a loose object per file
  instead of a pack, and without the malloc tuning of git's environment.
"""

from __future__ import annotations

import asyncio
import os
import random
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from bench.table import Row, ms, p50_p90, percentile
from bench.workspaces import python_module
from plansight.checkpoints import CheckpointStore, RestoreRequest
from plansight.checkpoints import git as git_module
from plansight.checkpoints import repository as repository_module

FILES = 20_000
PER_DIR = 100
ROUNDS = 40
RESTORES = 15
GOAL_FIRST = 3.0
GOAL_LATER = 0.150
GOAL_RESTORE = 0.300


def distinct_tree(root: Path, files: int = FILES) -> list[str]:
    """`files` files of distinct content in folders of PER_DIR, and an ignored build/."""
    rng = random.Random(7)
    bodies = [python_module(i, 24, rng) for i in range(64)]
    (root / ".gitignore").write_text("build/\n*.log\n")
    paths: list[str] = []
    for i in range(files):
        folder = f"pkg_{i // PER_DIR // 50:02d}/sub_{i // PER_DIR:04d}"
        if i % PER_DIR == 0:
            (root / folder).mkdir(parents=True, exist_ok=True)
        rel = f"{folder}/file_{i:06d}.py"
        (root / rel).write_text(bodies[i % 64] + f"UNIQUE = {i}\n")
        paths.append(rel)
    (root / "build").mkdir()
    for i in range(files // 20):
        (root / "build" / f"gen_{i:05d}.py").write_text(f"GEN = {i}\n")
    return paths


def timed(action: Callable[[], object]) -> float:
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def git_config(store: CheckpointStore, key: str, value: str) -> None:
    subprocess.run(
        ["git", "config", "--file", str(store.git_dir / "config"), key, value], check=True
    )


def later_snapshots(
    store: CheckpointStore, root: Path, paths: list[str], rounds: int
) -> list[float]:
    rng = random.Random(11)
    times: list[float] = []
    for i in range(rounds):
        rel = rng.choice(paths)
        path = root / rel
        path.write_text(path.read_text() + f"# edit {i}\n")
        times.append(
            timed(lambda r=rel: store.snapshot("edit", f"Edited {r}", todo_id="1", agent=[r]))
        )
    return times


# name → (config changed, the update-index option that rewrites the index accordingly)
VARIANTS = {
    "as shipped": ((), "--index-version=4"),
    "untracked cache off": ((("core.untrackedCache", "false"),), "--no-untracked-cache"),
    "no status.showUntrackedFiles": (
        (("status.showUntrackedFiles", "normal"),),
        "--index-version=4",
    ),
    "index v2": ((("index.version", "2"),), "--index-version=2"),
    "split index off": ((("core.splitIndex", "false"),), "--no-split-index"),
}


def what_helps(tmp: Path, root: Path, paths: list[str]) -> Row:
    """The later snapshot in stores that differ by one setting, side by side (A B C D A B…):
    each round edits one file and every store snapshots it, in a rotating order."""
    stores: dict[str, CheckpointStore] = {}
    for index, (name, (settings, option)) in enumerate(VARIANTS.items()):
        store = CheckpointStore(tmp / f"variant{index}", root)
        store.open()
        for key, value in settings:
            git_config(store, key, value)
        store.snapshot("runStart", "Run started")
        subprocess.run(  # rewrite the index with the setting in force
            ["git", "update-index", option],
            env={
                "PATH": os.environ["PATH"],
                "GIT_DIR": str(store.git_dir),
                "GIT_WORK_TREE": str(root),
                "HOME": str(tmp),
            },
            cwd=root,
            check=True,
        )
        store.snapshot("outside", "settle")
        stores[name] = store
    times: dict[str, list[float]] = {name: [] for name in stores}
    rng = random.Random(17)
    names = list(stores)
    for i in range(ROUNDS):
        rel = rng.choice(paths)
        (root / rel).write_text((root / rel).read_text() + f"# variant round {i}\n")
        for name in names[i % len(names) :] + names[: i % len(names)]:
            store = stores[name]
            times[name].append(timed(lambda s=store, r=rel: s.snapshot("edit", r, agent=[r])))
    for store in stores.values():
        store.close()
    medians = {name: percentile(values, 50) for name, values in times.items()}
    return Row(
        "checkpoints",
        "what helps: snapshot after an edit, side by side (reference)",
        " / ".join(f"{name} {ms(value)}" for name, value in medians.items()),
        note=f"p50 of {ROUNDS} each, one setting changed per store",
    )


def first_snapshot_variants(tmp: Path, root: Path, shipped: float, shipped_size: int) -> Row:
    """The first snapshot with one loose object per file instead of a pack, and without the
    malloc tuning of git's environment (each once: the differences are large)."""
    results: list[str] = []
    for name, module, attribute, value in (
        ("loose objects", repository_module, "BULK_FILES", 1 << 30),
        ("no malloc tuning", git_module, "MALLOC_TUNING", ""),
    ):
        shutil.rmtree(tmp / "cp", ignore_errors=True)
        saved = getattr(module, attribute)
        setattr(module, attribute, value)
        try:
            store = CheckpointStore(tmp / "cp", root)
            store.open()
            took = timed(lambda s=store: s.snapshot("runStart", "Run started"))
            size = store.storage_bytes()
            store.close()
        finally:
            setattr(module, attribute, saved)
        results.append(f"{name} {ms(took)} ({size / 1e6:.1f} MB)")
    return Row(
        "checkpoints",
        "what helps: first snapshot, variants (reference)",
        " / ".join(results),
        note=f"as shipped: {ms(shipped)} ({shipped_size / 1e6:.1f} MB, one pack file)",
    )


def measure(tmp: Path) -> list[Row]:
    root = tmp / "ws"
    root.mkdir()
    paths = distinct_tree(root)
    rows: list[Row] = []

    firsts: list[float] = []
    for attempt in range(3):
        shutil.rmtree(tmp / "cp", ignore_errors=True)
        store = CheckpointStore(tmp / "cp", root)
        store.open()
        firsts.append(timed(lambda s=store: s.snapshot("runStart", "Run started")))
        if attempt < 2:
            store.close()
    first_p50 = percentile(firsts, 50)
    size = store.storage_bytes()
    rows.append(
        Row(
            "checkpoints",
            f"first snapshot, {FILES:,} files (p50 of 3)",
            ms(first_p50),
            f"≤ {GOAL_FIRST:.0f} s",
            first_p50 <= GOAL_FIRST,
            f"runs {', '.join(ms(t) for t in firsts)}; repository {size / 1e6:.1f} MB "
            f"for a {sum((root / p).stat().st_size for p in paths) / 1e6:.1f} MB tree",
        )
    )

    later = later_snapshots(store, root, paths, ROUNDS)
    later_p50 = percentile(later, 50)
    rows.append(
        Row(
            "checkpoints",
            "snapshot after an edit (one file changed)",
            p50_p90(later),
            f"p50 ≤ {ms(GOAL_LATER)}",
            later_p50 <= GOAL_LATER,
            f"{ROUNDS} snapshots",
        )
    )
    unchanged = [
        timed(lambda: store.snapshot("command", "ls", agent_all=True, only_if_changed=True))
        for _ in range(ROUNDS)
    ]
    rows.append(
        Row(
            "checkpoints",
            "snapshot after a command that changed nothing",
            p50_p90(unchanged),
            note="one git status; no checkpoint is made",
        )
    )

    rng = random.Random(13)
    command: list[float] = []
    for i in range(10):
        for rel in rng.sample(paths, 50):
            (root / rel).write_text((root / rel).read_text() + f"# command {i}\n")
        (root / f"made_{i}.py").write_text(f"MADE = {i}\n")
        if i:
            (root / f"made_{i - 1}.py").unlink()
        command.append(timed(lambda: store.snapshot("command", "sed", agent_all=True)))
    rows.append(
        Row(
            "checkpoints",
            "snapshot after a command (50 changed, 1 new, 1 deleted)",
            p50_p90(command),
            note="10 commands",
        )
    )

    restores: list[float] = []
    for i in range(RESTORES):
        todo = f"s{i}"
        store.snapshot("itemStart", f"#{todo} started", todo_id=todo)
        a, b, c = rng.sample(paths[: -RESTORES - 1], 3)
        for rel in (a, b):
            (root / rel).write_text((root / rel).read_text() + f"# step {i}\n")
            store.snapshot("edit", f"Edited {rel}", todo_id=todo, agent=[rel])
        (root / f"step_{i}.py").write_text("created\n")
        (root / c).write_text("modified by a command\n")
        (root / paths[-1 - i]).unlink()
        store.snapshot("command", "python gen.py", todo_id=todo, agent_all=True)
        started = time.perf_counter()
        result = store.restore(RestoreRequest(todo_id=todo))
        restores.append(time.perf_counter() - started)
        assert len(result.restored) == 5 and not result.skipped, result
    restore_p50 = percentile(restores, 50)
    rows.append(
        Row(
            "checkpoints",
            "restore of a step (5 files: 2 edits; a command made, changed, deleted one each)",
            p50_p90(restores),
            f"p50 ≤ {ms(GOAL_RESTORE)}",
            restore_p50 <= GOAL_RESTORE,
            f"{RESTORES} restores; each takes a checkpoint before and after",
        )
    )

    store.close()
    rows.append(what_helps(tmp, root, paths))

    rows.append(first_snapshot_variants(tmp, root, first_p50, size))
    return rows


async def run() -> list[Row]:
    with tempfile.TemporaryDirectory(prefix="plansight-bench-checkpoints-") as tmp:
        return await asyncio.to_thread(measure, Path(tmp))
