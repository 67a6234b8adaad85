"""The rows every benchmark returns, percentiles, and the table they are printed as."""

from __future__ import annotations

import datetime
import math
import os
import platform
import sys
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Row:
    """One figure: what was measured, its value, the goal, and whether the goal is met.

    ``met`` is None for rows printed for reference only (no goal).
    """

    bench: str
    metric: str
    value: str
    goal: str = ""
    met: bool | None = None
    note: str = ""


def percentile(values: Sequence[float], pct: float) -> float:
    """The ``pct`` percentile (0-100) by linear interpolation between closest ranks."""
    if not values:
        return math.nan
    ordered = sorted(values)
    rank = (len(ordered) - 1) * pct / 100.0
    low = math.floor(rank)
    high = math.ceil(rank)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def ms(seconds: float) -> str:
    """Seconds as milliseconds with a precision that suits the size."""
    value = seconds * 1000.0
    if math.isnan(value):
        return "n/a"
    if abs(value) >= 100:
        return f"{value:.0f} ms"
    if abs(value) >= 10:
        return f"{value:.1f} ms"
    return f"{value:.2f} ms"


def p50_p90(seconds: Sequence[float]) -> str:
    return f"p50 {ms(percentile(seconds, 50))}, p90 {ms(percentile(seconds, 90))}"


def verdict(met: bool | None) -> str:
    if met is None:
        return ""
    return "met" if met else "MISSED"


def machine() -> str:
    """Date, cores, CPU model and Python version, for the header of a results table."""
    cpu = "unknown CPU"
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        with open("/proc/loadavg", encoding="utf-8") as handle:
            load = " ".join(handle.read().split()[:3])
    except OSError:
        load = "n/a"
    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    return (
        f"{now} · nproc {os.cpu_count()} · {cpu} · Python {platform.python_version()} "
        f"({sys.implementation.name}) · load average before the run {load}"
    )


_HEADERS = ("bench", "metric", "value", "goal", "verdict", "note")


def _cells(row: Row) -> tuple[str, ...]:
    return (row.bench, row.metric, row.value, row.goal, verdict(row.met), row.note)


def render_text(rows: Sequence[Row], title: str) -> str:
    """A plain-text table with aligned columns (the note column is not padded)."""
    table = [_HEADERS, *(_cells(row) for row in rows)]
    widths = [max(len(r[i]) for r in table) for i in range(len(_HEADERS) - 1)]
    lines = [title, ""]
    for index, cells in enumerate(table):
        padded = [cell.ljust(widths[i]) for i, cell in enumerate(cells[:-1])]
        lines.append("  ".join([*padded, cells[-1]]).rstrip())
        if index == 0:
            lines.append("  ".join("-" * w for w in widths) + "  " + "-" * 4)
    return "\n".join(lines)


def render_markdown(rows: Sequence[Row], title: str) -> str:
    """The same table in Markdown."""

    def escape(cell: str) -> str:
        return cell.replace("|", "\\|")

    lines = [title, "", "| " + " | ".join(_HEADERS) + " |", "|" + "---|" * len(_HEADERS)]
    for row in rows:
        cells = list(_cells(row))
        if row.met is False:
            cells[4] = "**MISSED**"
        lines.append("| " + " | ".join(escape(c) for c in cells) + " |")
    return "\n".join(lines)
