"""``python -m bench [--only cache,grep] [--markdown]``: run the benchmarks, print one table.

``python -m bench durations ...``: seconds per test file of a pytest run (bench/durations.py).
``python -m bench suite-cpu ...``: the CPU of a pytest run by kind of process (bench/suite_cpu.py).
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import sys
import time
import traceback
from collections.abc import Callable, Coroutine, Mapping
from types import MappingProxyType
from typing import Any

from bench.table import Row, machine, render_markdown, render_text

# name on the command line → module (each has `async def run() -> list[Row]`)
BENCHMARKS: Mapping[str, str] = MappingProxyType(
    {
        "overhead": "bench.overhead",
        "plan": "bench.plan_latency",
        "cache": "bench.cache_share",
        "search": "bench.search",
        "startup": "bench.startup",
        "watch": "bench.watch",
        "context": "bench.context",
        "long": "bench.long_session",
        "checkpoints": "bench.checkpoints",
        "checkpoint-rounds": "bench.checkpoints_rounds",
        "lifecycle": "bench.lifecycle",
        "command-echoes": "bench.command_echoes",
        "mcp": "bench.mcp_tools",
        "sandbox": "bench.sandbox",
        "acp": "bench.acp_latency",
        "redaction": "bench.redaction",
        "sessions": "bench.sessions",
        "plan_file": "bench.plan_file",
        "parallel": "bench.parallel",
    }
)
# Run only when named in --only (none at the moment: the whatif emulation served its purpose).
OPT_IN: Mapping[str, str] = MappingProxyType({})
ALIASES: Mapping[str, str] = MappingProxyType(
    {"grep": "search", "list_files": "search", "plan_latency": "plan"}
)


def selected(only: str | None) -> list[str]:
    if not only:
        return list(BENCHMARKS)
    names: list[str] = []
    for raw in only.split(","):
        name = ALIASES.get(raw.strip(), raw.strip())
        if name not in BENCHMARKS and name not in OPT_IN:
            known = ", ".join([*BENCHMARKS, *ALIASES, *OPT_IN])
            raise SystemExit(f"unknown benchmark {raw!r}; known: {known}")
        if name not in names:
            names.append(name)
    return names


def run_one(name: str) -> tuple[list[Row], float]:
    module = importlib.import_module({**BENCHMARKS, **OPT_IN}[name])
    bench_run: Callable[[], Coroutine[Any, Any, list[Row]]] = module.run
    started = time.perf_counter()
    try:
        rows = asyncio.run(bench_run())
    except Exception as exc:
        traceback.print_exc()
        rows = [Row(name, "benchmark failed", f"{type(exc).__name__}: {exc}"[:120], met=False)]
    return rows, time.perf_counter() - started


def main(argv: list[str] | None = None) -> int:
    given = sys.argv[1:] if argv is None else argv
    if given[:1] == ["durations"]:  # not a benchmark: the suite's time per test file
        from bench import durations

        return durations.main(given[1:])
    if given[:1] == ["suite-cpu"]:  # not a benchmark either: where the suite's CPU goes
        from bench import suite_cpu

        return suite_cpu.main(given[1:])
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument(
        "--only",
        help=f"comma-separated subset of: {', '.join(BENCHMARKS)} (grep = search)",
    )
    parser.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    args = parser.parse_args(argv)
    names = selected(args.only)
    header = machine()
    rows: list[Row] = []
    started = time.perf_counter()
    for name in names:
        print(f"running {name} ...", file=sys.stderr, flush=True)
        bench_rows, elapsed = run_one(name)
        print(f"  {name}: {elapsed:.1f} s", file=sys.stderr, flush=True)
        rows.extend(bench_rows)
    title = f"Plansight benchmarks — {header} — {time.perf_counter() - started:.0f} s"
    render = render_markdown if args.markdown else render_text
    print(render(rows, title))
    return 1 if any(row.met is False for row in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
