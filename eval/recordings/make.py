"""Write the hand-written recordings in this folder: `python eval/recordings/make.py`.

No API key was at hand to record real attempts, so these sessions were written by hand, in the
fake Messages API's script format, to test the kit end to end offline (CI replays them through
the real server, tools and checks). Their `eval.origin` is "hand-written"; they measure
nothing. Three tasks, both arms each:

- rename-function: plan (forgets its plan for three rounds, so the reminder fires, and ends
  with an item open, so the done gate fires), noplan and planmode (plans without changing
  anything, submits, and carries out the approved plan), all correct;
- cli-flag: plan, correct; noplan, WRONG: it counts whitespace-only lines as text and writes
  a test that misses it, then says it is done. The checks must fail it;
- fix-failing-tests: plan and noplan, both correct, each fixing the bugs its own way;
- the arms that take planning apart, on rename-function: `noreminder` and `remind2` answer as
  the plan arm's recording does (the same answers draw one reminder in `plan`, none in
  `noreminder`, three in `remind2`, whose reminder comes after two quiet rounds), and `nogate`
  ends its turn with the last item still in progress and is let go: no done gate, the final
  plan left open.

Token usage is left to the fake's prompt-cache simulation. Run this again after changing one of
these tasks (a recording names the digest of the task it was made for).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "server"))

from plansight.eval.arms import arm_named  # noqa: E402
from plansight.eval.recordings import task_digest  # noqa: E402
from plansight.eval.tasks import default_tasks_dir, load_task  # noqa: E402

MODEL = "claude-sonnet-5-5"  # the model a real recording would name; the fake echoes it
Block = dict[str, Any]


def text(value: str) -> Block:
    return {"type": "text", "text": value}


def call(name: str, **tool_input: Any) -> Block:
    return {"type": "tool_use", "name": name, "input": tool_input}


def read(*paths: str) -> list[Block]:
    return [call("read_file", path=path) for path in paths]


def edit(path: str, old: str, new: str) -> Block:
    return call("edit_file", path=path, old_text=old, new_text=new)


def todo(*items: tuple[str, str]) -> Block:
    return call(
        "todo",
        items=[{"id": str(i), "text": t, "status": s} for i, (t, s) in enumerate(items, 1)],
    )


def plan_states(texts: list[str], done: int, current: bool = True) -> Block:
    """The plan with the first `done` items completed and the next one in progress."""
    items = []
    for i, item in enumerate(texts):
        status = "completed" if i < done else "pending"
        if i == done and current:
            status = "in_progress"
        items.append((item, status))
    return todo(*items)


def turn(*blocks: Block | list[Block]) -> dict[str, Any]:
    content: list[Block] = []
    for block in blocks:
        content.extend(block if isinstance(block, list) else [block])
    return {"content": content}


def finish(message: str) -> dict[str, Any]:
    return {"content": [text(message)]}


# rename-function ---------------------------------------------------------------------------

RENAME_PLAN = [
    "Rename the definition in ledger/money.py",
    "Update the export in ledger/__init__.py",
    "Update the call sites in entries.py, report.py and invoice.py",
    "Update the tests and the README",
    "Run the tests",
]

RENAME_EDITS = {
    "money": edit("ledger/money.py", 'def fmt(cents, symbol="$"):', 'def format_money(cents, symbol="$"):'),
    "init": edit(
        "ledger/__init__.py",
        'from ledger.money import fmt, parse_amount\n\n__all__ = ["fmt", "parse_amount"]',
        'from ledger.money import format_money, parse_amount\n\n__all__ = ["format_money", "parse_amount"]',
    ),
    "entries_import": edit(
        "ledger/entries.py",
        "from ledger.money import fmt, parse_amount",
        "from ledger.money import format_money, parse_amount",
    ),
    "entries_call": edit(
        "ledger/entries.py", "{fmt(self.cents):>12}", "{format_money(self.cents):>12}"
    ),
    "report_month": edit("ledger/report.py", "{money.fmt(cents):>12}", "{money.format_money(cents):>12}"),
    "report_balance": edit(
        "ledger/report.py",
        "{money.fmt(sum(e.cents for e in entries))}",
        "{money.format_money(sum(e.cents for e in entries))}",
    ),
    # Unlike the reference solution, this drops the alias as well.
    "invoice_import": edit(
        "ledger/invoice.py",
        "from ledger.money import fmt as money_text",
        "from ledger.money import format_money",
    ),
    "invoice_line": edit(
        "ledger/invoice.py",
        "{money_text(line_total, symbol):>12}",
        "{format_money(line_total, symbol):>12}",
    ),
    "invoice_total": edit(
        "ledger/invoice.py", "{money_text(total, symbol):>12}", "{format_money(total, symbol):>12}"
    ),
    "tests": call(
        "write_file",
        path="tests/test_money.py",
        content=(
            "from ledger import format_money, parse_amount\n"
            "from ledger.invoice import invoice\n\n\n"
            "def test_parse_amount():\n"
            '    assert parse_amount("12.30") == 1230\n'
            '    assert parse_amount("-4") == -400\n'
            '    assert parse_amount("1,000.5") == 100050\n\n\n'
            "def test_format_money():\n"
            '    assert format_money(123456) == "$1,234.56"\n'
            '    assert format_money(-500) == "-$5.00"\n'
            '    assert format_money(7, "£") == "£0.07"\n\n\n'
            "def test_invoice_total():\n"
            '    text = invoice("Ada", [("tea", 2, 350), ("cake", 1, 425)])\n'
            '    assert text.splitlines()[-1].endswith("€11.25")\n'
        ),
    ),
    "readme": edit(
        "README.md",
        '`fmt(1230)` formats them (`$12.30`; pass a symbol for other currencies: `fmt(1230, "€")`).',
        "`format_money(1230)` formats them (`$12.30`; pass a symbol for other currencies:\n"
        '`format_money(1230, "€")`).',
    ),
}
RENAME_FILES = (
    "ledger/money.py",
    "ledger/__init__.py",
    "ledger/entries.py",
    "ledger/report.py",
    "ledger/invoice.py",
    "tests/test_money.py",
    "README.md",
)


def rename_plan() -> list[dict[str, Any]]:
    e = RENAME_EDITS
    return [
        turn(text("I'll rename fmt to format_money in five steps."), plan_states(RENAME_PLAN, 0)),
        turn(text("First, every file that mentions fmt."), read(*RENAME_FILES)),
        turn(text("The definition first."), e["money"]),
        turn(plan_states(RENAME_PLAN, 1), e["init"]),
        # Three rounds without touching the plan: the harness reminds us after the third.
        turn(text("Now the call sites."), e["entries_import"], e["entries_call"]),
        turn(e["report_month"], e["report_balance"]),
        turn(e["invoice_import"], e["invoice_line"], e["invoice_total"]),
        turn(text("Right, the plan."), plan_states(RENAME_PLAN, 3)),
        turn(e["tests"], e["readme"]),
        turn(plan_states(RENAME_PLAN, 4), call("bash", command="python -m pytest -q")),
        # Ends its turn with item 5 still in progress: the done gate sends it back once.
        finish("fmt is now format_money everywhere, and the tests pass."),
        turn(plan_states(RENAME_PLAN, 5, current=False)),
        finish(
            "Done: format_money is defined in ledger/money.py and used by ledger/__init__.py, "
            "entries.py, report.py and invoice.py (which no longer aliases it), the tests and "
            "the README. All tests pass."
        ),
    ]


def rename_nogate() -> list[dict[str, Any]]:
    """As `rename_plan` up to its first answer: with no done gate, that answer ends the run,
    the last item still in progress."""
    steps = rename_plan()
    first_answer = next(i for i, step in enumerate(steps) if "tool_use" not in str(step))
    return steps[: first_answer + 1]


def rename_noplan() -> list[dict[str, Any]]:
    e = RENAME_EDITS
    return [
        turn(text("Let me find every use of fmt."), call("grep", pattern=r"\bfmt\b")),
        turn(read(*RENAME_FILES)),
        turn(e["money"], e["init"]),
        turn(e["entries_import"], e["entries_call"]),
        turn(e["report_month"], e["report_balance"]),
        turn(e["invoice_import"], e["invoice_line"], e["invoice_total"]),
        turn(e["tests"], e["readme"]),
        turn(call("grep", pattern=r"\bfmt\b"), call("bash", command="python -m pytest -q")),
        finish("Renamed fmt to format_money in the package, the tests and the README; no use "
               "of the old name is left and the tests pass."),
    ]


def rename_planmode() -> list[dict[str, Any]]:
    """Plan mode: reads and plans, changes nothing, submits; approved, it carries the plan out."""
    e = RENAME_EDITS
    return [
        turn(text("Plan mode: first I read what uses fmt."), read(*RENAME_FILES)),
        turn(
            call(
                "write_scratchpad",
                content="fmt is defined in ledger/money.py, exported by __init__, called in "
                "entries.py and report.py, aliased in invoice.py, used by the tests and README.",
            ),
            plan_states(RENAME_PLAN, 0, current=False),
        ),
        turn(call("submit_plan", summary="Rename fmt to format_money in five steps, then test.")),
        turn(plan_states(RENAME_PLAN, 0), e["money"], e["init"]),
        turn(
            plan_states(RENAME_PLAN, 2),
            e["entries_import"],
            e["entries_call"],
            e["report_month"],
            e["report_balance"],
            e["invoice_import"],
            e["invoice_line"],
            e["invoice_total"],
        ),
        turn(plan_states(RENAME_PLAN, 3), e["tests"], e["readme"]),
        turn(plan_states(RENAME_PLAN, 4), call("bash", command="python -m pytest -q")),
        turn(plan_states(RENAME_PLAN, 5, current=False)),
        finish("The approved plan is done: fmt is format_money everywhere and the tests pass."),
    ]


# cli-flag ----------------------------------------------------------------------------------

FLAG_PLAN = [
    "Add ignore_blank to count_lines and count_file",
    "Add the --ignore-blank option and pass it through",
    "Document the flag in the README",
    "Add tests for the core and the command line",
    "Run the tests",
]

CORE_RIGHT = '''"""Counting lines."""


def count_lines(text, ignore_blank=False):
    """The number of lines in text; a last line without a newline counts too.

    ignore_blank: skip lines that are empty or hold only whitespace.
    """
    return sum(1 for line in text.splitlines() if not ignore_blank or line.strip())


def count_file(path, ignore_blank=False):
    with open(path, encoding="utf-8") as handle:
        return count_lines(handle.read(), ignore_blank)
'''

# Wrong: a line of spaces is not empty, so it is still counted.
CORE_WRONG = CORE_RIGHT.replace("or line.strip())", "or line)")

FLAG_OPTION = edit(
    "linecount/cli.py",
    '    parser.add_argument("files", nargs="+", metavar="FILE", help="files to count")\n',
    '    parser.add_argument("files", nargs="+", metavar="FILE", help="files to count")\n'
    '    parser.add_argument(\n'
    '        "--ignore-blank", action="store_true", help="skip blank (whitespace-only) lines"\n'
    "    )\n",
)
FLAG_PASS = edit(
    "linecount/cli.py",
    "        count = count_file(path)",
    "        count = count_file(path, ignore_blank=args.ignore_blank)",
)
FLAG_README = edit(
    "README.md",
    "    python -m linecount FILE...\n",
    "    python -m linecount [--ignore-blank] FILE...\n\n"
    "`--ignore-blank` leaves out lines that are empty or contain only whitespace.\n",
)
FLAG_TESTS_RIGHT = '''

def test_ignore_blank_in_the_core():
    assert count_lines("a\\n\\n \\t \\nb") == 4
    assert count_lines("a\\n\\n \\t \\nb", ignore_blank=True) == 2


def test_ignore_blank_on_the_command_line(tmp_path, capsys):
    path = tmp_path / "gaps.txt"
    path.write_text("x\\n\\n   \\ny\\n")
    assert main(["--ignore-blank", str(path)]) == 0
    assert capsys.readouterr().out.split() == ["2", str(path)]
'''
# Misses the bug: no whitespace-only line in it.
FLAG_TESTS_WRONG = '''

def test_ignore_blank(tmp_path, capsys):
    assert count_lines("a\\n\\nb", ignore_blank=True) == 2
    path = tmp_path / "gaps.txt"
    path.write_text("x\\n\\ny\\n")
    assert main(["--ignore-blank", str(path)]) == 0
    assert capsys.readouterr().out.split() == ["2", str(path)]
'''
FLAG_TESTS_ANCHOR = '    assert lines == [f"      1 {one}", f"      3 {two}", "      4 total"]\n'
FLAG_FILES = ("linecount/core.py", "linecount/cli.py", "README.md", "tests/test_linecount.py")


def flag_plan() -> list[dict[str, Any]]:
    return [
        turn(text("Plan for the new flag:"), plan_states(FLAG_PLAN, 0)),
        turn(read(*FLAG_FILES)),
        turn(call("write_file", path="linecount/core.py", content=CORE_RIGHT)),
        turn(plan_states(FLAG_PLAN, 1), FLAG_OPTION, FLAG_PASS),
        turn(plan_states(FLAG_PLAN, 2), FLAG_README),
        turn(
            plan_states(FLAG_PLAN, 3),
            edit("tests/test_linecount.py", FLAG_TESTS_ANCHOR, FLAG_TESTS_ANCHOR + FLAG_TESTS_RIGHT),
        ),
        turn(plan_states(FLAG_PLAN, 4), call("bash", command="python -m pytest -q")),
        turn(call("bash", command="python -m linecount --help")),
        turn(plan_states(FLAG_PLAN, 5, current=False)),
        finish("--ignore-blank is in: count_lines/count_file take ignore_blank=False, the CLI "
               "option passes it on, --help and the README describe it, and two new tests "
               "cover the core and the command line. All tests pass."),
    ]


def flag_noplan_wrong() -> list[dict[str, Any]]:
    return [
        turn(text("Let me look at the code."), read(*FLAG_FILES)),
        turn(call("write_file", path="linecount/core.py", content=CORE_WRONG)),
        turn(FLAG_OPTION, FLAG_PASS),
        turn(FLAG_README),
        turn(edit("tests/test_linecount.py", FLAG_TESTS_ANCHOR, FLAG_TESTS_ANCHOR + FLAG_TESTS_WRONG)),
        turn(call("bash", command="python -m pytest -q")),
        finish("Added --ignore-blank (core, CLI, help, README) with a test; the tests pass."),
    ]


# fix-failing-tests -------------------------------------------------------------------------

FIX_PLAN = [
    "Run the tests and read the failures",
    "Fix parse_amount (thousands separators)",
    "Fix the overdraft check in withdraw",
    "Fix the years compounded",
    "Fix the statement's order",
    "Run the whole suite",
]
FIX_FILES = ("bank/amounts.py", "bank/accounts.py", "bank/interest.py", "bank/statement.py")
FIX_AMOUNTS = edit(
    "bank/amounts.py",
    '    cleaned = text.strip().lstrip("$")\n',
    '    cleaned = text.strip().lstrip("$").replace(",", "")\n',
)
FIX_ACCOUNTS = edit(
    "bank/accounts.py",
    "        if amount > self.balance + amount:",
    "        if amount > self.balance:",
)
FIX_INTEREST = edit("bank/interest.py", "    for _ in range(years - 1):", "    for _ in range(years):")
FIX_STATEMENT = edit(
    "bank/statement.py",
    "sorted(history, key=lambda item: item[0], reverse=True)",
    "sorted(history, key=lambda item: item[0])",
)


def fix_plan() -> list[dict[str, Any]]:
    return [
        turn(plan_states(FIX_PLAN, 0), call("bash", command="python -m pytest -q")),
        turn(text("Four failures in four modules. Reading them."), read(*FIX_FILES)),
        turn(plan_states(FIX_PLAN, 1), FIX_AMOUNTS),
        turn(plan_states(FIX_PLAN, 2), FIX_ACCOUNTS),
        turn(plan_states(FIX_PLAN, 3), FIX_INTEREST),
        turn(plan_states(FIX_PLAN, 4), FIX_STATEMENT),
        turn(plan_states(FIX_PLAN, 5), call("bash", command="python -m pytest -q")),
        turn(plan_states(FIX_PLAN, 6, current=False)),
        finish("Fixed four bugs: thousands separators in parse_amount, the overdraft check, "
               "the number of years compounded and the statement's date order. All 9 tests "
               "pass; the tests are unchanged."),
    ]


def fix_noplan() -> list[dict[str, Any]]:
    # Its own fixes: a different, equally correct solution.
    amounts = edit(
        "bank/amounts.py",
        '    cleaned = text.strip().lstrip("$")\n',
        '    cleaned = "".join(text.split()).lstrip("$").replace(",", "")\n',
    )
    accounts = edit(
        "bank/accounts.py",
        "        if amount > self.balance + amount:",
        "        if self.balance - amount < 0:",
    )
    statement = edit(
        "bank/statement.py",
        "sorted(history, key=lambda item: item[0], reverse=True)",
        "sorted(history)",
    )
    return [
        turn(call("bash", command="python -m pytest -q")),
        turn(read(*FIX_FILES)),
        turn(amounts, accounts),
        turn(FIX_INTEREST, statement),
        turn(call("bash", command="python -m pytest -q")),
        finish("All four failures came from bugs in the code; fixed them, and the suite passes."),
    ]


SESSIONS = {
    ("rename-function", "plan"): rename_plan,
    ("rename-function", "noplan"): rename_noplan,
    ("rename-function", "planmode"): rename_planmode,
    ("cli-flag", "plan"): flag_plan,
    ("cli-flag", "noplan"): flag_noplan_wrong,
    ("fix-failing-tests", "plan"): fix_plan,
    ("fix-failing-tests", "noplan"): fix_noplan,
    ("rename-function", "noreminder"): rename_plan,
    ("rename-function", "nogate"): rename_nogate,
    ("rename-function", "remind2"): rename_plan,
}


def options_of(arm: str) -> dict[str, Any]:
    """The initialization options of the arm (the replay sends them again)."""
    found = arm_named(arm)
    assert found is not None, f"no arm {arm!r}"
    return dict(found.options)


def main() -> None:
    for (name, arm), session in SESSIONS.items():
        task = load_task(default_tasks_dir() / name)
        data = {
            "eval": {
                "task": name,
                "arm": arm,
                "index": 1,
                "model": MODEL,
                "recordedAt": "2026-12-01T00:00:00+00:00",
                "origin": "hand-written",
                "taskDigest": task_digest(task),
                "options": options_of(arm),
            },
            "prompt": task.prompt,
            "steps": session(),
        }
        path = HERE / name / f"{arm}-1.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        print(path.relative_to(HERE))


if __name__ == "__main__":
    main()
