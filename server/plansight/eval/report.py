"""The report: completion per arm with its interval, what planning cost beside it, the
differences (with the attempts a 10-point difference needs at their rates), the figures per
task and per attempt.

`summarize` turns attempt results into one JSON-ready dict; `markdown` renders it; `write`
puts `report.json`, `report.md` and `completion.png` in a folder. A report is either live or
replayed, never both: `summarize` refuses a mix. A replay's report says so first.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from itertools import combinations
from pathlib import Path
from statistics import mean
from typing import Any

from plansight.engine.pricing import Prices
from plansight.eval.arms import ARMS
from plansight.eval.attempt import AttemptResult, Limits
from plansight.eval.stats import Interval, attempts_for_points, newcombe, wilson

REPLAY_NOTICE = "Replay, not a measurement"
INTERVAL_METHOD = "Wilson score interval, 95 %"
DIFFERENCE_METHOD = "Newcombe's hybrid score interval (method 10 of Newcombe 1998), 95 %"
TOKEN_KEYS = ("inputTokens", "outputTokens", "cacheReadInputTokens", "cacheCreationInputTokens")
POWER_NOTE = (
    "attempts per arm for a two-sided test at alpha 0.05 to find a 10-point difference with "
    "power 0.8, at the two arms' pooled completion (plansight.eval.stats.attempts_for_points)"
)


class MixedSourcesError(ValueError):
    """Live and replayed attempts in one report."""


def _rate(results: Sequence[AttemptResult]) -> Interval:
    return wilson(sum(r.passed for r in results), len(results))


def _figures(results: Sequence[AttemptResult]) -> dict[str, Any]:
    costs = [r.cost for r in results if r.cost is not None]
    tokens = {key: [r.usage.to_wire()[key] for r in results] for key in TOKEN_KEYS}
    return {
        "attempts": len(results),
        "passed": sum(r.passed for r in results),
        "completion": _rate(results).to_wire(),
        "meanRounds": mean(r.rounds for r in results),
        "meanTokens": {key: mean(values) for key, values in tokens.items()},
        "totalTokens": {key: sum(values) for key, values in tokens.items()},
        "meanCostUsd": mean(costs) if len(costs) == len(results) else None,
        "totalCostUsd": sum(costs) if len(costs) == len(results) else None,
        "meanSeconds": mean(r.seconds for r in results),
        "stoppedBy": _counts(r.stopped_by for r in results),
        "toolsOffered": sorted({name for r in results for name in r.tools_offered}),
        "meanReminders": mean(r.reminders for r in results),
        **_plan_cost(results),
    }


def _plan_cost(results: Sequence[AttemptResult]) -> dict[str, Any]:
    """What planning cost over these attempts (per attempt in `results[].toolCalls` and the
    fields beside it)."""
    calls = sum(sum(r.tool_calls.values()) for r in results)
    todo = sum(r.todo_calls for r in results)
    planned = [r for r in results if r.plan_closed is not None]
    return {
        "todoCalls": todo,
        "toolCalls": calls,
        "todoShare": todo / calls if calls else 0.0,
        "meanTodoCalls": mean(r.todo_calls for r in results),
        "meanTodoTokens": {
            "inputTokens": mean(r.todo_tokens.input_tokens for r in results),
            "outputTokens": mean(r.todo_tokens.output_tokens for r in results),
        },
        "meanGateRefusals": mean(r.gate_refusals for r in results),
        "meanPlanItems": mean(r.plan_items for r in results),
        "meanPlanRewrites": mean(r.plan_rewrites for r in results),
        "plansClosed": sum(bool(r.plan_closed) for r in planned),
        "withPlan": len(planned),
    }


def _counts(values: Any) -> dict[str, int]:
    counts: dict[str, int] = {}
    for value in values:
        counts[value] = counts.get(value, 0) + 1
    return dict(sorted(counts.items()))


def summarize(
    results: Sequence[AttemptResult],
    *,
    date: str,
    limits: Limits,
    prices: Prices | None,
    skipped: int = 0,
) -> dict[str, Any]:
    """Everything the report says, as one JSON-ready dict."""
    if not results:
        raise ValueError("no attempt finished: nothing to report")
    sources = {r.source for r in results}
    if len(sources) > 1:
        raise MixedSourcesError("a report is either live or replayed, never both")
    source = sources.pop()
    rank = {name: i for i, name in enumerate(ARMS)}  # plan, noplan, planmode, then others
    arms = sorted(dict.fromkeys(r.arm for r in results), key=lambda a: (rank.get(a, len(rank)), a))
    tasks = list(dict.fromkeys(r.task for r in results))
    per_arm = {arm: _figures([r for r in results if r.arm == arm]) for arm in arms}
    differences = []
    for a, b in combinations(arms, 2):
        ra = [r for r in results if r.arm == a]
        rb = [r for r in results if r.arm == b]
        passed_a, passed_b = sum(r.passed for r in ra), sum(r.passed for r in rb)
        interval = newcombe(passed_a, len(ra), passed_b, len(rb))
        pooled = (passed_a + passed_b) / (len(ra) + len(rb))
        differences.append(
            {
                "a": a,
                "b": b,
                **interval.to_wire(),
                "pooledCompletion": pooled,
                "attemptsFor10Points": attempts_for_points(pooled),
            }
        )
    per_task = []
    for task in tasks:
        for arm in arms:
            chosen = [r for r in results if r.task == task and r.arm == arm]
            if chosen:
                per_task.append({"task": task, "arm": arm, **_figures(chosen)})
    return {
        "kind": "plansight-eval-report",
        "version": 1,
        "source": source,
        "notice": REPLAY_NOTICE if source == "replay" else None,
        "models": sorted({r.model for r in results}),
        "date": date,
        "attempts": len(results),
        "notStarted": skipped,
        "arms": arms,
        "armOptions": {arm: next(r.arm_options for r in results if r.arm == arm) for arm in arms},
        "tasks": tasks,
        "limits": {
            "maxRounds": limits.max_rounds,
            "maxCostUsd": limits.max_cost,
            "maxSeconds": limits.max_seconds,
        },
        "prices": None if prices is None else prices.describe(),
        "intervalMethod": INTERVAL_METHOD,
        "differenceMethod": DIFFERENCE_METHOD,
        "powerMethod": POWER_NOTE,
        "perArm": per_arm,
        "differences": differences,
        "perTaskArm": per_task,
        "results": [r.to_wire() for r in results],
    }


def _pct(value: float) -> str:
    return f"{100 * value:.0f} %"


def _interval(wire: dict[str, float]) -> str:
    return f"{_pct(wire['low'])} – {_pct(wire['high'])}"


def _cost(value: float | None) -> str:
    return "–" if value is None else f"${value:.3f}"


def _signed(value: float) -> str:
    return f"{100 * value:+.0f} pts"


def markdown(summary: dict[str, Any]) -> str:
    lines: list[str] = []
    replay = summary["source"] == "replay"
    if replay:
        lines += [
            f"> **{REPLAY_NOTICE}.** These attempts replay recorded model answers through the",
            "> real server, tools and checks. They test the kit and measure nothing: not a model,",
            "> not what planning costs (the recorded answers are hand-written or a past run's).",
            "",
        ]
    lines += ["# Plansight eval: does planning help?", ""]
    per_arm = summary["perArm"]
    repeats = sorted({row["attempts"] for row in summary["perTaskArm"]})
    each = str(repeats[0]) if len(repeats) == 1 else f"{repeats[0]}–{repeats[-1]}"
    lines += [
        f"- Source: **{summary['source']}**" + (" (recordings)" if replay else ""),
        f"- Model: {', '.join(summary['models'])}",
        f"- Date: {summary['date']}",
        f"- Attempts: {summary['attempts']} ({len(summary['tasks'])} tasks × "
        f"{len(summary['arms'])} arms × {each} each)"
        + (f"; {summary['notStarted']} not started (budget)" if summary["notStarted"] else ""),
        f"- Limits per attempt: {summary['limits']['maxRounds']} rounds, "
        + (
            f"${summary['limits']['maxCostUsd']:g} estimated"
            if summary["limits"]["maxCostUsd"] is not None
            else "no cost limit"
        )
        + f", {summary['limits']['maxSeconds']:g} s",
        "- Cost: an estimate from the token counts and "
        + (summary["prices"] if summary["prices"] else "no known list price"),
        "",
    ]
    errors = [r for r in summary["results"] if r["status"] == "error"]
    if errors:
        lines += [
            f"**{len(errors)} of {summary['attempts']} attempts ended on an error** (the API's or "
            "the server's; listed below). Their files were judged like any others.",
            "",
        ]
    lines += [
        "## Completion per arm",
        "",
        "| arm | passed | completion | 95 % interval (Wilson) | mean rounds | mean cost (est.) "
        "| mean wall time |",
        "|---|---|---|---|---|---|---|",
    ]
    for arm, figures in per_arm.items():
        lines.append(
            f"| {arm} | {figures['passed']}/{figures['attempts']} "
            f"| {_pct(figures['completion']['estimate'])} | {_interval(figures['completion'])} "
            f"| {figures['meanRounds']:.1f} | {_cost(figures['meanCostUsd'])} "
            f"| {figures['meanSeconds']:.0f} s |"
        )
    lines += ["", "What the model was given and heard, per arm:", ""]
    for arm, figures in per_arm.items():
        tools = ", ".join(figures["toolsOffered"]) or "none seen"
        options = summary["armOptions"].get(arm) or {}
        shown = json.dumps(options, separators=(", ", ": ")) if options else "none (as shipped)"
        lines.append(
            f"- {arm}: tools {tools}; {figures['meanReminders']:.1f} plan reminders per attempt; "
            f"initializationOptions {shown}" + (" in plan mode" if arm == "planmode" else "")
        )
    lines += [
        "",
        "## What planning cost, beside completion",
        "",
        "Means per attempt. todo calls: their count and share of all tool calls; todo tokens: "
        'the input and output tokens attributed to those calls (eval/README.md, "What '
        "planning costs\"); rewrites: changes of an item's text; closed: attempts whose final "
        "plan had no open item, of those with a plan.",
        "",
        "| arm | completion | todo calls (share) | todo tokens in / out | reminders "
        "| gate refusals | plan items | rewrites | closed |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for arm, figures in per_arm.items():
        lines.append(
            f"| {arm} | {_pct(figures['completion']['estimate'])} | " + _cost_cells(figures)
        )
    if summary["differences"]:
        lines += [
            "",
            "## Difference between arms",
            "",
            f"Method: {summary['differenceMethod']}. An interval that contains 0 does not show "
            "a difference.",
            "",
            f"Attempts for 10 points: {summary['powerMethod']}.",
            "",
            "| comparison | difference in completion | 95 % interval | attempts for 10 points |",
            "|---|---|---|---|",
        ]
        for diff in summary["differences"]:
            lines.append(
                f"| {diff['a']} − {diff['b']} | {_signed(diff['estimate'])} "
                f"| {_signed(diff['low'])} to {_signed(diff['high'])} "
                f"| {diff['attemptsFor10Points']} per arm (at {_pct(diff['pooledCompletion'])}) |"
            )
    lines += [
        "",
        "![Completion per arm with 95 % intervals](completion.png)",
        "",
        "## Per task and arm",
        "",
        "Means per attempt.",
        "",
        "| task | arm | passed | rounds | input | output | cache read | cache write "
        "| cost (est.) | wall time |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in summary["perTaskArm"]:
        tokens = row["meanTokens"]
        lines.append(
            f"| {row['task']} | {row['arm']} | {row['passed']}/{row['attempts']} "
            f"| {row['meanRounds']:.1f} | {tokens['inputTokens']:.0f} "
            f"| {tokens['outputTokens']:.0f} | {tokens['cacheReadInputTokens']:.0f} "
            f"| {tokens['cacheCreationInputTokens']:.0f} | {_cost(row['meanCostUsd'])} "
            f"| {row['meanSeconds']:.0f} s |"
        )
    lines += [
        "",
        "## What planning cost, per attempt",
        "",
        "| task | arm | # | passed | todo calls (share) | todo tokens in / out | reminders "
        "| gate refusals | plan items | rewrites | closed |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in summary["results"]:
        lines.append(
            f"| {r['task']} | {r['arm']} | {r['index']} | {'yes' if r['passed'] else 'no'} | "
            + _attempt_cost_cells(r)
        )
    unusual = [r for r in summary["results"] if r["stoppedBy"] != "done" or r["error"]]
    if unusual:
        lines += ["", "## Attempts that did not end on their own", ""]
        for r in unusual:
            why = f" ({r['error']})" if r["error"] else ""
            verdict = "passed" if r["passed"] else "failed"
            name = f"{r['task']} / {r['arm']} #{r['index']}"
            lines.append(f"- {name}: {r['stoppedBy']}{why}; {verdict}")
    failed = [r for r in summary["results"] if not r["passed"]]
    if failed:
        lines += ["", "## Failed checks", ""]
        for r in failed:
            names = ", ".join(r["checks"]["failures"]) or "no check ran"
            lines.append(f"- {r['task']} / {r['arm']} #{r['index']}: {names}")
    lines += [
        "",
        "## How to read this",
        "",
        "- An attempt passes when every check of its task passes on the files it left; the "
        "checks run after the attempt, outside its folder. Stopping at a limit is not a "
        "failure by itself: the files decide.",
        "- The intervals treat attempts as independent trials; the tasks are a fixed set of "
        "small refactors, so the rates describe this set, not coding in general.",
        "- Costs are estimates from token counts and list prices, not invoices.",
        "- A difference whose interval contains 0 shows none; the last column says how many "
        'attempts per arm a 10-point difference needs at these rates (eval/README.md, "Reading '
        'a difference").',
        "",
    ]
    return "\n".join(lines)


def _closed(closed: int, with_plan: int) -> str:
    return f"{closed}/{with_plan}" if with_plan else "no plan"


def _cost_cells(figures: dict[str, Any]) -> str:
    tokens = figures["meanTodoTokens"]
    return (
        f"{figures['meanTodoCalls']:.1f} ({_pct(figures['todoShare'])}) "
        f"| {tokens['inputTokens']:.0f} / {tokens['outputTokens']:.0f} "
        f"| {figures['meanReminders']:.1f} | {figures['meanGateRefusals']:.1f} "
        f"| {figures['meanPlanItems']:.1f} | {figures['meanPlanRewrites']:.1f} "
        f"| {_closed(figures['plansClosed'], figures['withPlan'])} |"
    )


def _attempt_cost_cells(r: dict[str, Any]) -> str:
    tokens = r["todoTokens"]
    closed = {True: "yes", False: "no", None: "no plan"}[r["planClosed"]]
    return (
        f"{r['todoCalls']} ({_pct(r['todoShare'])}) "
        f"| {tokens['inputTokens']:.0f} / {tokens['outputTokens']:.0f} "
        f"| {r['reminders']} | {r['gateRefusals']} | {r['planItems']} | {r['planRewrites']} "
        f"| {closed} |"
    )


def write_attempts(folder: Path, results: Sequence[AttemptResult]) -> Path:
    """Each attempt's details beside the report, for reading why it failed:
    `attempts/<task>/<arm>-<n>/` with `result.json`, `checks.txt` (the checks' output) and
    `conversation.jsonl` (the session as the server stored it)."""
    root = folder / "attempts"
    for r in results:
        target = root / r.task / f"{r.arm}-{r.index}"
        target.mkdir(parents=True, exist_ok=True)
        details = {**r.to_wire(), "text": r.text}
        (target / "result.json").write_text(json.dumps(details, indent=1) + "\n", encoding="utf-8")
        (target / "checks.txt").write_text(r.check.output, encoding="utf-8")
        if r.conversation:
            (target / "conversation.jsonl").write_text(r.conversation, encoding="utf-8")
    return root


def write(folder: Path, summary: dict[str, Any]) -> dict[str, Path]:
    """report.json, report.md and completion.png in `folder`."""
    from plansight.eval.chart import completion_chart

    folder.mkdir(parents=True, exist_ok=True)
    paths = {
        "json": folder / "report.json",
        "markdown": folder / "report.md",
        "chart": folder / "completion.png",
    }
    paths["json"].write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
    paths["markdown"].write_text(markdown(summary), encoding="utf-8")
    completion_chart(summary, paths["chart"])
    return paths
