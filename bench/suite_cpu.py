"""``python -m bench suite-cpu [PYTEST ARGS ...]``: where the test suite's CPU time goes.

The suite is CPU-bound on a small machine, so its wall time is its CPU time over the cores
it gets. This runs ``python -m pytest -q`` with the given arguments (default: the Makefile's
``-n auto --dist worksteal``) and accounts for the CPU of every Python process the run
starts: a line in a ``.pth`` file, put in this Python environment's site-packages for the
run (and taken away after it), records, as each process of the environment ends (at exit or
at ``os._exit``, as ``plansight lsp`` ends), what it was, the CPU it used itself, and whether
it imported the ``anthropic`` SDK. The run's whole CPU is the bench's children's (every
process waited for); what no Python process recorded is the rest: git, node (the ACP client,
the MCP reference server), bwrap, rg, tmux's clients, and the Python processes killed with
``kill -9``.

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
import sysconfig
import tempfile
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

DEFAULT_ARGS = ("-n", "auto", "--dist", "worksteal", "-p", "no:cacheprovider")

# One line of a `.pth` file, which site runs in every process of this Python's environment
# (whatever the environment variables, `-I` included). Its own cost is a few imports; it
# writes one JSON line when the process ends, if the run's log is named in its environment.
HOOK = "import os; os.environ.get('%(log)s') and exec(%(code)r, {})"
HOOK_CODE = """
import atexit, json, os, resource, sys

def _plansight_bench_record():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    argv = sys.argv
    if argv and "plansight" in argv[0] and len(argv) > 1:
        kind = "plansight " + argv[1]
    elif argv[:1] == ["-c"] and argv[1:2] in (["lsp"], ["acp"]):
        kind = "plansight " + argv[1]  # the eval kit starts its own package's server so
    elif "pytest" in sys.modules and argv[:1] == ["-c"]:
        kind = "pytest worker"  # xdist's, started by execnet
    elif "pytest" in sys.modules:
        main = os.getppid() == int(os.environ.get("%(parent)s", "0"))
        kind = "pytest (main)" if main else "pytest run by a test (the eval's checks)"
    else:
        kind = "other Python"
    line = json.dumps([kind, usage.ru_utime + usage.ru_stime, "anthropic" in sys.modules])
    with open(os.environ["%(log)s"], "a") as log:
        log.write(line + "\\n")

if not getattr(os, "_plansight_bench", False):  # (site may read the file twice: lib64)
    os._plansight_bench = True
    atexit.register(_plansight_bench_record)
    _exit = os._exit

    def _recorded_exit(code):
        _plansight_bench_record()
        _exit(code)

    os._exit = _recorded_exit
"""
LOG_VARIABLE = "BENCH_SUITE_CPU_LOG"  # no PLANSIGHT_ prefix: the eval's checks drop those
PARENT_VARIABLE = "BENCH_SUITE_CPU_PARENT"
PTH_NAME = "plansight_bench_suite_cpu.pth"


def hook_line() -> str:
    names = {"log": LOG_VARIABLE, "parent": PARENT_VARIABLE}
    return HOOK % {"log": LOG_VARIABLE, "code": HOOK_CODE % names} + "\n"


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
        f"{'the rest (git, node, bwrap, killed processes)':<48} {'':>6} "
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
    # In the environment's site-packages for the run, and taken away after it.
    pth = Path(sysconfig.get_paths()["purelib"]) / PTH_NAME
    with tempfile.TemporaryDirectory(prefix="plansight-suite-cpu-") as scratch:
        log = Path(scratch) / "processes.jsonl"
        log.touch()
        env = dict(os.environ, **{LOG_VARIABLE: str(log), PARENT_VARIABLE: str(os.getpid())})
        pth.write_text(hook_line())
        try:
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            began = time.monotonic()
            code = subprocess.call([sys.executable, "-m", "pytest", "-q", *args], env=env)
            wall = time.monotonic() - began
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
        finally:
            pth.unlink(missing_ok=True)
        total = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
        kinds = tally(log.read_text().splitlines())
    print(report(kinds, total, wall, os.cpu_count() or 1))
    return code
