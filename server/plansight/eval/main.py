"""What `plansight eval` does with its arguments: choose, run, report."""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import os
from pathlib import Path
from typing import TextIO

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
from rich.progress import Progress as Bar

from plansight.engine.pricing import Prices, list_prices
from plansight.eval import report
from plansight.eval.arms import DEFAULT_ARMS, DEFAULT_REMINDER_AFTER, select_arms
from plansight.eval.attempt import AttemptResult, AttemptSpec, Limits, Upstream
from plansight.eval.recordings import RecordingError, find_recordings
from plansight.eval.runner import Progress, live_attempts, replay_attempts, run_attempts
from plansight.eval.tasks import TaskError, default_tasks_dir, load_tasks

MISSING_EXTRAS = (
    "plansight eval needs pytest and Pillow: pip install 'plansight[eval]' "
    "(or pip install -e '.[dev]' in a clone)"
)


def _check_extras() -> str | None:
    try:
        import PIL  # noqa: F401
        import pytest  # noqa: F401
    except ImportError:
        return MISSING_EXTRAS
    return None


def run_eval(args: argparse.Namespace, stream: TextIO) -> int:
    console = Console(file=stream, highlight=False)

    def fail(message: str) -> int:
        console.print(f"[bold red]plansight eval:[/] {message}", soft_wrap=True)
        return 2

    if (problem := _check_extras()) is not None:
        return fail(problem)
    try:
        tasks = load_tasks(args.tasks_dir or default_tasks_dir(), args.tasks)
    except TaskError as err:
        return fail(str(err))
    if args.check_tasks:
        from plansight.eval.selfcheck import check_tasks

        def show(verdict: object) -> None:
            from plansight.eval.selfcheck import Verdict

            assert isinstance(verdict, Verdict)
            mark = "[green]ok[/]" if verdict.ok else "[bold red]WRONG[/]"
            # The checks' output and the fix's hint are text, not markup ([...] in them).
            console.print(f"{mark} {escape(verdict.describe())}", markup=True, highlight=False)

        verdicts = check_tasks(tasks, on_verdict=show)
        wrong = sum(not v.ok for v in verdicts)
        console.print(f"{len(verdicts) - wrong} of {len(verdicts)} verdicts as they must be")
        return 1 if wrong else 0
    if args.replay is not None and args.record is not None:
        return fail("--record keeps live attempts; a replay has none to keep")
    if args.replay is not None and args.model is not None:
        return fail("--model does not apply to a replay: the recordings name their model")
    reminder_after = getattr(args, "reminder_after", None)
    if args.replay is not None and reminder_after is not None:
        return fail(
            "--reminder-after does not apply to a replay: the recordings name their options"
        )
    reminder_after = reminder_after or DEFAULT_REMINDER_AFTER
    try:
        prices = Prices.parse(args.prices) if args.prices else None
    except ValueError as err:
        return fail(str(err))
    sandboxed = not getattr(args, "no_sandbox", False)
    if sandboxed:
        from plansight.workspace.sandbox import INSTALL_HINT, detect

        found = detect()
        if not found.available:
            return fail(
                f"attempts run their commands in a sandbox, and none can be made here: "
                f"{found.reason}. {INSTALL_HINT.split('; or set')[0]}; or pass --no-sandbox "
                "where a stray command can do no harm"
            )
    limits = Limits(
        max_rounds=args.max_rounds,
        max_cost=args.max_attempt_cost,
        max_seconds=args.max_attempt_seconds,
        sandbox=sandboxed,
    )
    try:
        arms = select_arms(args.arms, reminder_after) if args.arms else None
    except ValueError as err:
        return fail(str(err))
    try:
        if args.replay is not None:
            specs = replay_attempts(
                find_recordings(args.replay), tasks, arms, limits=limits, prices=prices
            )
        else:
            key = os.environ.get("ANTHROPIC_API_KEY") or None
            token = os.environ.get("ANTHROPIC_AUTH_TOKEN") or None
            if key is None and token is None:
                return fail(
                    "no ANTHROPIC_API_KEY: set it for a live run, or replay recordings "
                    "offline with --replay eval/recordings"
                )
            from plansight.engine.model import newest_sonnet

            model = args.model or os.environ.get("PLANSIGHT_MODEL") or newest_sonnet()
            prices = prices or list_prices(model)
            if prices is None and limits.max_cost is not None:
                return fail(
                    f"no list price known for {model}: pass --prices IN,OUT,CW,CR (USD per "
                    "million tokens) or --max-attempt-cost none"
                )
            upstream = Upstream(
                base_url=os.environ.get("ANTHROPIC_BASE_URL") or None,
                api_key=key,
                auth_token=token,
            )
            specs = live_attempts(
                tasks,
                arms or select_arms(list(DEFAULT_ARMS), reminder_after),
                args.repeat,
                model=model,
                upstream=upstream,
                limits=limits,
                prices=prices,
            )
    except (RecordingError, ValueError) as err:
        return fail(str(err))

    source = "replay" if args.replay is not None else "live"
    started = dt.datetime.now(dt.UTC)
    out = args.out or Path("eval-results") / f"{started:%Y%m%d-%H%M%S}-{source}"
    console.print(
        f"[bold]plansight eval[/] ({source}): {len(specs)} attempts, "
        f"{len({s.task.name for s in specs})} tasks, arms "
        f"{', '.join(dict.fromkeys(s.arm.name for s in specs))}, {args.parallel} at a time"
    )
    try:
        results, skipped = asyncio.run(_run(console, specs, args))
    except KeyboardInterrupt:
        console.print("[bold]Interrupted: no report.[/]")
        return 130
    if not results:
        console.print("[bold red]No attempt finished; no report.[/]")
        return 1
    summary = report.summarize(
        results,
        date=started.isoformat(timespec="seconds"),
        limits=limits,
        prices=prices if prices is not None else specs[0].prices,
        skipped=skipped,
    )
    paths = report.write(out, summary)
    report.write_attempts(out, results)
    for arm, figures in summary["perArm"].items():
        rate = figures["completion"]
        console.print(
            f"  {arm}: {figures['passed']}/{figures['attempts']} passed "
            f"({100 * rate['estimate']:.0f} %, 95 % interval {100 * rate['low']:.0f}–"
            f"{100 * rate['high']:.0f} %)"
        )
    if summary["notice"]:
        console.print(f"[bold]{summary['notice']}.[/]")
    console.print(
        f"Report: {paths['markdown']} (and report.json, completion.png; each attempt's checks "
        "and conversation in attempts/)",
        soft_wrap=True,
    )
    if args.record is not None:
        console.print(f"Recordings: {args.record}")
    if all(r.status == "error" for r in results):
        console.print("[bold red]Every attempt ended on an error: this measures nothing.[/]")
        return 1
    return 0


async def _run(
    console: Console, specs: list[AttemptSpec], args: argparse.Namespace
) -> tuple[list[AttemptResult], int]:
    columns = (
        TextColumn("attempts"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("· {task.fields[running]} running · ${task.fields[cost]:.2f} so far"),
        TimeElapsedColumn(),
    )
    with Bar(*columns, console=console, transient=False) as bar:
        job = bar.add_task("attempts", total=len(specs), running=0, cost=0.0)

        def on_progress(progress: Progress) -> None:
            bar.update(
                job,
                completed=progress.done + progress.skipped,
                running=progress.running,
                cost=progress.cost,
            )

        def on_result(result: AttemptResult) -> None:
            mark = "[green]passed[/]" if result.passed else "[red]failed[/]"
            cost = "" if result.cost is None else f", ${result.cost:.3f}"
            line = (
                f"{result.task} / {result.arm} #{result.index}: {mark} ({result.stopped_by}, "
                f"{result.rounds} rounds{cost}, {result.seconds:.0f} s)"
            )
            if result.error:
                line += f"\n  [dim]{escape(result.error[:300])}[/]"
            bar.console.print(line, soft_wrap=True)

        return await run_attempts(
            specs,
            parallel=args.parallel,
            budget=args.budget,
            record_dir=args.record,
            on_progress=on_progress,
            on_result=on_result,
        )
