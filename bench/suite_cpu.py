"""``python -m bench suite-cpu [PYTEST ARGS ...]``: where the test suite's CPU time goes.

The suite is CPU-bound on a small machine, so its wall time is its CPU time over the cores
it gets. This runs ``python -m pytest -q`` with the given arguments (default: the Makefile's
``-n auto --dist worksteal``) and accounts for the CPU of every Python process the run
starts: a ``sitecustomize`` put first on ``PYTHONPATH`` records, as each process ends (at
exit or at ``os._exit``, as ``plansight lsp`` ends), what it was, the CPU it used itself, and
whether it imported the ``anthropic`` SDK. The run's whole CPU is the bench's children's
(every process waited for); what no Python process recorded is the rest: git, node (the ACP
client, the MCP reference server), bwrap, rg, tmux's clients, and the Python processes that
cannot record: those killed with ``kill -9``, those started with ``-I`` (which ignores
``PYTHONPATH``), and the eval kit's checks, which run pytest in an environment of their own
without ``PYTHONPATH`` (eval/checks.py), with whatever they start.

The last line is the floor the suite's other work sets: the CPU of everything but the
servers (``plansight lsp`` and ``plansight acp``), over the machine's cores, is the wall time
the suite would still need if no test started a server at all.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

DEFAULT_ARGS = ("-n", "auto", "--dist", "worksteal", "-p", "no:cacheprovider")
LOG_VARIABLE = "PLANSIGHT_BENCH_CPU_LOG"

# Run in every Python process of the run (site imports it at start-up). Its own cost is a
# few imports; it writes one JSON line when the process ends.
SITECUSTOMIZE = f'''
import atexit, json, os, resource, sys

def _plansight_bench_record():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    argv = sys.argv
    name = os.path.basename(argv[0]) if argv else ""
    if name in ("plansight", "__main__.py") and "plansight" in argv[0] and len(argv) > 1:
        kind = "plansight " + argv[1]
    elif "xdist.remote" in sys.modules:
        kind = "pytest worker"
    elif "pytest" in sys.modules:
        kind = "pytest run by a test" if os.environ.get("PYTEST_XDIST_WORKER") or os.environ.get(
            "PYTEST_CURRENT_TEST") else "pytest (main)"
    else:
        kind = "other Python"
    line = json.dumps([kind, usage.ru_utime + usage.ru_stime, "anthropic" in sys.modules])
    with open(os.environ["{LOG_VARIABLE}"], "a") as log:
        log.write(line + "\\n")

if os.environ.get("{LOG_VARIABLE}") and not getattr(os, "_plansight_bench", False):
    os._plansight_bench = True
    atexit.register(_plansight_bench_record)
    _exit = os._exit

    def _recorded_exit(code):
        _plansight_bench_record()
        _exit(code)

    os._exit = _recorded_exit
'''

SERVERS = ("plansight lsp", "plansight acp")


@dataclass(frozen=True)
class Kind:
    name: str
    processes: int
    cpu: float
    with_sdk: int  # how many imported the anthropic SDK


def tally(lines: Iterable[str]) -> list[Kind]:
    """The records by kind, the costliest first; every other plansight command is one kind."""
    processes: Counter[str] = Counter()
    cpu: Counter[str] = Counter()
    sdk: Counter[str] = Counter()
    for line in lines:
        kind, seconds, imported = json.loads(line)
        if kind.startswith("plansight ") and kind not in SERVERS:
            kind = "plansight (the terminal client, demo, eval …)"
        processes[kind] += 1
        cpu[kind] += seconds
        sdk[kind] += bool(imported)
    kinds = [Kind(k, processes[k], cpu[k], sdk[k]) for k in processes]
    return sorted(kinds, key=lambda k: -k.cpu)


def report(kinds: Sequence[Kind], total_cpu: float, wall: float, cores: int) -> str:
    recorded = sum(k.cpu for k in kinds)
    servers = sum(k.cpu for k in kinds if k.name in SERVERS)
    rows = [f"{'kind':<48} {'procs':>6} {'CPU':>9} {'per proc':>9} {'with SDK':>9}"]
    for k in kinds:
        rows.append(
            f"{k.name:<48} {k.processes:>6} {k.cpu:>8.1f}s {k.cpu / k.processes:>8.2f}s "
            f"{k.with_sdk:>9}"
        )
    rows.append(
        f"{'the rest (git, node, bwrap, eval checks, killed)':<48} {'':>6} "
        f"{total_cpu - recorded:>8.1f}s"
    )
    rows.append(
        f"whole run: {wall:.1f} s wall, {total_cpu:.1f} s CPU on {cores} cores "
        f"({total_cpu / wall:.2f} cores busy on average)"
    )
    rows.append(
        f"without any server: {total_cpu - servers:.1f} s CPU, so at least "
        f"{(total_cpu - servers) / cores:.1f} s wall on {cores} cores"
    )
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv) or list(DEFAULT_ARGS)
    with tempfile.TemporaryDirectory(prefix="plansight-suite-cpu-") as scratch:
        site = Path(scratch) / "site"
        site.mkdir()
        (site / "sitecustomize.py").write_text(SITECUSTOMIZE)
        log = Path(scratch) / "processes.jsonl"
        log.touch()
        env = dict(os.environ, **{LOG_VARIABLE: str(log)})
        env["PYTHONPATH"] = os.pathsep.join(
            p for p in (str(site), os.environ.get("PYTHONPATH", "")) if p
        )
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        began = time.monotonic()
        code = subprocess.call([sys.executable, "-m", "pytest", "-q", *args], env=env)
        wall = time.monotonic() - began
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        total = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
        kinds = tally(log.read_text().splitlines())
    print(report(kinds, total, wall, os.cpu_count() or 1))
    return code
