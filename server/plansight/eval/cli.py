"""`plansight eval`: the command line of the evaluation kit.

`add_eval_command` declares the subcommand (cheap: nothing heavy is imported until it runs);
`eval_cli` runs it. Live by default (needs ANTHROPIC_API_KEY); `--replay DIR` replays
recordings offline; `--check-tasks` checks the tasks themselves.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

EPILOG = """\
Live: ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN) and optionally ANTHROPIC_BASE_URL, as for
`plansight run`. Every attempt works in a fresh temporary copy of its task's project, with its
edits and commands approved automatically there, the commands in the sandbox (bubblewrap; the
copy writable, no network; --no-sandbox to do without); the checks run afterwards, outside it.
Offline: `plansight eval --replay eval/recordings` replays recordings (its report says
"replay, not a measurement"). Exit codes: 0 report written, 1 no attempt finished or every
attempt ended on an error (with --check-tasks: a task's verdict wrong), 2 usage error,
130 interrupted.
"""


def _names(text: str) -> list[str]:
    return [name.strip() for name in text.split(",") if name.strip()]


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def _money(text: str) -> float | None:
    if text.lower() in ("none", "off"):
        return None
    value = float(text)
    if value <= 0:
        raise argparse.ArgumentTypeError("must be above 0 (or 'none')")
    return value


def add_eval_command(commands: Any) -> argparse.ArgumentParser:
    """Add `eval` to the `plansight` subcommands (an argparse subparsers object)."""
    parser: argparse.ArgumentParser = commands.add_parser(
        "eval",
        help="measure what planning is worth on multi-step tasks (see eval/README.md)",
        description=(
            "Run the agent on the evaluation tasks with planning on, off, in plan mode or\n"
            "taken apart (no reminders, no done gate, another reminder cadence), judge every\n"
            "attempt by the task's hidden checks, and report completion per arm with 95 %\n"
            "intervals, what the plan cost beside it, tokens, estimated cost and time."
        ),
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--tasks", type=_names, default=None, metavar="A,B", help="tasks to run (default: all)"
    )
    parser.add_argument(
        "--arms",
        type=_names,
        default=None,
        metavar="A,B",
        help="arms to compare: plan, noplan, planmode (the default), noreminder, nogate, "
        "remind<N> (plan with the reminder after N quiet rounds); see eval/README.md",
    )
    parser.add_argument(
        "--reminder-after",
        type=_positive,
        default=None,
        metavar="N",
        help="the arms that remind do so after N rounds without a plan update (the server's "
        "reminderAfter; default: 3)",
    )
    parser.add_argument(
        "--repeat", type=_positive, default=1, metavar="N", help="attempts per task and arm"
    )
    parser.add_argument(
        "--model", default=None, metavar="MODEL", help="the model (default: the server's)"
    )
    parser.add_argument(
        "--parallel", type=_positive, default=2, metavar="K", help="attempts at once (default: 2)"
    )
    parser.add_argument(
        "--max-rounds", type=_positive, default=40, metavar="R", help="round limit per attempt"
    )
    parser.add_argument(
        "--max-attempt-cost",
        type=_money,
        default=2.0,
        metavar="USD",
        help="stop an attempt past this estimated cost (default: 2; 'none' for no limit)",
    )
    parser.add_argument(
        "--max-attempt-seconds",
        type=float,
        default=1800.0,
        metavar="S",
        help="stop an attempt after this wall time (default: 1800)",
    )
    parser.add_argument(
        "--budget",
        type=_money,
        default=None,
        metavar="USD",
        help="start no new attempt once this much (estimated) is spent",
    )
    parser.add_argument(
        "--prices",
        default=None,
        metavar="IN,OUT,CW,CR",
        help="USD per million tokens: input, output, cache write, cache read (default: list "
        "prices of known models)",
    )
    parser.add_argument(
        "--record", type=Path, default=None, metavar="DIR", help="keep every live attempt here"
    )
    parser.add_argument(
        "--replay",
        type=Path,
        default=None,
        metavar="DIR",
        help="replay the recordings in DIR offline instead of calling a model",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        metavar="DIR",
        help="where the report goes (default: eval-results/<date>-<live|replay>)",
    )
    parser.add_argument(
        "--tasks-dir", type=Path, default=None, metavar="DIR", help="default: eval/tasks"
    )
    parser.add_argument(
        "--no-sandbox",
        action="store_true",
        help="run the attempts' commands without the sandbox (bubblewrap), where a stray "
        "command can do no harm",
    )
    parser.add_argument(
        "--check-tasks",
        action="store_true",
        help="check the tasks instead: each solution passes, each project and half-done "
        "solution fails",
    )
    return parser


def eval_cli(args: argparse.Namespace) -> int:
    from plansight.eval.main import run_eval

    return run_eval(args, sys.stderr)
