"""Pure rendering helpers: protocol payloads (plain dicts) in, rich `Text` or `str` out.

Nothing here prints or keeps state, so the terminal UI and the tests share one rendering.
All text goes through `Text` objects, never console markup: a plan line such as
`[x] #1: Add type hints` must not be read as a markup tag.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Any

from rich.text import Text

from plansight.plan.text import TODO_MARKERS

MARKS: Mapping[str, str] = TODO_MARKERS
STATUS_STYLES: Mapping[str, str] = MappingProxyType(
    {
        "pending": "",
        "in_progress": "bold yellow",
        "completed": "green",
        "cancelled": "dim strike",
        "failed": "bold red",
    }
)
RESULT_STYLES: Mapping[str, str] = MappingProxyType(
    {
        "done": "bold green",
        "cancelled": "bold yellow",
        "error": "bold red",
        "limit": "bold red",
        "refused": "bold red",
    }
)
EXIT_CODES: Mapping[str, int] = MappingProxyType(
    {"done": 0, "cancelled": 130, "error": 1, "limit": 1, "refused": 1}
)
STRATEGY_WORDS: Mapping[str, str] = MappingProxyType(
    {
        "clearToolResults": "old tool results cleared",
        "summary": "earlier turns summarized",
    }
)
MAX_DETAIL = 100


def exit_code(status: str) -> int:
    """0 for done, 130 for cancelled, 1 for error, limit and anything unknown."""
    return EXIT_CODES.get(status, 1)


def shorten(text: str, limit: int = MAX_DETAIL) -> str:
    """One line of at most `limit` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


# Plan -------------------------------------------------------------------------------------


def plan_items(state: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    items = state.get("items")
    return [i for i in items if isinstance(i, Mapping)] if isinstance(items, list) else []


def plan_counts(state: Mapping[str, Any]) -> tuple[int, int]:
    items = plan_items(state)
    completed = state.get("completed")
    total = state.get("total")
    if not isinstance(completed, int):
        completed = sum(1 for i in items if i.get("status") == "completed")
    if not isinstance(total, int):
        total = len(items)
    return completed, total


def plan_text(state: Mapping[str, Any]) -> Text:
    """The plan as `TodoState.rendered` shows it, each line styled by its status."""
    items = plan_items(state)
    if not items:
        rendered = state.get("rendered")
        return Text(rendered if isinstance(rendered, str) and rendered else "(no plan yet)")
    text = Text()
    for item in items:
        status = str(item.get("status", "pending"))
        mark = MARKS.get(status, "[?]")
        text.append(
            f"{mark} #{item.get('id', '?')}: {item.get('text', '')}\n",
            style=STATUS_STYLES.get(status, ""),
        )
    completed, total = plan_counts(state)
    text.append(f"({completed}/{total} completed)", style="dim")
    return text


def progress_line(state: Mapping[str, Any] | None) -> str:
    """`2/5 · Add docstrings`: the count of completed items and the item in progress."""
    if state is None or not plan_items(state):
        return "planning"
    completed, total = plan_counts(state)
    current = next((i for i in plan_items(state) if i.get("status") == "in_progress"), None)
    counts = f"{completed}/{total}"
    return f"{counts} · {current.get('text', '')}" if current is not None else counts


def activity_text(activity: str, elapsed: float) -> Text:
    """`waiting for the model… 3 s`: the seconds only once there is a second to show."""
    text = Text(activity + "…", style="blue")
    if elapsed >= 1:
        text.append(f" {int(elapsed)} s", style="dim")
    return text


# Tools ------------------------------------------------------------------------------------


def running_text(name: str, tool_input: Mapping[str, Any]) -> str:
    """The activity while a tool runs: `running bash $ make test`."""
    detail = tool_detail(name, tool_input)
    return f"running {name}" + (f" {shorten(detail, 60)}" if detail else "")


def tool_call_line(name: str, tool_input: Mapping[str, Any]) -> Text:
    """One line per tool call: `⚙ read_file hello.py`, `⚙ bash $ make test`."""
    detail = tool_detail(name, tool_input)
    text = Text("⚙ ", style="cyan")
    text.append(name, style="bold cyan")
    if detail:
        text.append(" " + detail, style="cyan")
    return text


def tool_detail(name: str, tool_input: Mapping[str, Any]) -> str:
    def field(key: str) -> str:
        value = tool_input.get(key)
        return value if isinstance(value, str) else ""

    if name == "bash":
        return "$ " + shorten(field("command"))
    if name in ("read_file", "write_file", "edit_file"):
        detail = field("path")
        offset, limit = tool_input.get("offset"), tool_input.get("limit")
        if isinstance(offset, int) or isinstance(limit, int):
            detail += f" (lines {offset or 1}{'+' + str(limit) if limit else '…'})"
        return detail
    if name == "todo":
        items = tool_input.get("items")
        return f"({len(items)} items)" if isinstance(items, list) else ""
    if name == "write_scratchpad":
        return f"({len(field('content'))} characters)"
    if name == "submit_plan":
        return "(asks you to approve the plan)"
    if name == "ask_user":
        return shorten(field("question"))
    if name in ("grep", "list_files"):
        parts = [field("pattern"), field("path"), field("glob")]
        return shorten(" ".join(part for part in parts if part))
    return shorten(", ".join(f"{k}={v!r}" for k, v in tool_input.items()))


# A command's summary ends with its exit status (`… · exit code 1`, `… · killed by SIGKILL`).
FAILED_COMMAND = re.compile(r"(^|· )(exit code -?[1-9]\d*|killed by \S+)$")


def tool_result_line(name: str, is_error: bool, summary: str) -> Text:
    """`  ✓ summary`, `  ✗ summary` (errors in red), `  ! summary` (a command that failed)."""
    if name == "todo" and not is_error:
        summary = "plan updated"
    if is_error:
        text = Text("  ✗ ", style="bold red")
        text.append(shorten(summary) or f"{name} failed", style="red")
    elif FAILED_COMMAND.search(summary):
        # It ran, and its result is the model's to read, but the user should see it failed.
        text = Text("  ! ", style="bold yellow")
        text.append(shorten(summary), style="yellow")
    else:
        text = Text("  ✓ ", style="green")
        text.append(shorten(summary) or "ok", style="dim")
    return text


# Diffs ------------------------------------------------------------------------------------


def unified_diff(old_text: str, new_text: str, path: str, context: int = 3) -> str:
    """A unified diff of two whole documents (`old_text` empty for a new file)."""
    lines = difflib.unified_diff(
        old_text.splitlines(keepends=True),
        new_text.splitlines(keepends=True),
        fromfile="/dev/null" if not old_text else f"a/{path}",
        tofile=f"b/{path}",
        n=context,
    )
    out: list[str] = []
    for line in lines:
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)


def snippet_diff(old_text: str, new_text: str) -> str:
    """The lines an `edit_file` call replaces (`-`) and writes (`+`), with one line of context."""
    lines = difflib.unified_diff(old_text.splitlines(), new_text.splitlines(), n=1, lineterm="")
    return "\n".join(line for line in lines if not line.startswith(("---", "+++", "@@")))


def diff_text(diff: str) -> Text:
    """A unified diff coloured as terminals do: additions green, removals red, hunks cyan."""
    text = Text()
    lines = diff.splitlines()
    for number, line in enumerate(lines):
        if line.startswith(("+++", "---")):
            style = "bold"
        elif line.startswith("@@"):
            style = "cyan"
        elif line.startswith("+"):
            style = "green"
        elif line.startswith("-"):
            style = "red"
        else:
            style = ""
        text.append(line + ("\n" if number < len(lines) - 1 else ""), style=style)
    if not lines:
        text.append("(no change)", style="dim")
    return text


def diff_stats(diff: str) -> tuple[int, int]:
    """Lines added and removed by a unified diff."""
    added = removed = 0
    for line in diff.splitlines():
        if line.startswith("+") and not line.startswith("+++"):
            added += 1
        elif line.startswith("-") and not line.startswith("---"):
            removed += 1
    return added, removed


# Events and results -----------------------------------------------------------------------


REMINDER_TAGS = re.compile(r"</?reminder>")


def reminder_words(text: str) -> str:
    """The reminder as the user reads it: the model's `<reminder>` tags taken off."""
    return " ".join(REMINDER_TAGS.sub(" ", text).split())


def reminder_line(text: str, level: int, rounds: int | None) -> Text:
    line = Text("⚠ reminder", style="bold yellow")
    if rounds:
        line.append(f" after {rounds} rounds without a plan update", style="yellow")
    words = shorten(reminder_words(text), 160)
    line.append(f": {words}", style="yellow" if level <= 1 else "bold red")
    return line


def files_changed_line(paths: Iterable[str]) -> Text:
    listed = sorted(paths)
    shown = ", ".join(listed[:8]) + (f" and {len(listed) - 8} more" if len(listed) > 8 else "")
    return Text(f"↻ files changed: {shown}", style="magenta")


def compacted_line(before: Any, after: Any, strategy: Any) -> Text:
    """`⇣ compacted: ~181,204 → ~23,950 tokens (old tool results cleared); plan and
    scratchpad kept verbatim`."""
    line = Text("⇣ compacted", style="bold cyan")
    if isinstance(before, int) and isinstance(after, int):
        line.append(f": ~{before:,} → ~{after:,} tokens", style="cyan")
    words = STRATEGY_WORDS.get(str(strategy), str(strategy))
    line.append(f" ({words}); plan and scratchpad kept verbatim", style="cyan")
    return line


def usage_line(usage: Mapping[str, Any]) -> str:
    """`tokens: input 24,704 (21,245 cached, 3,459 newly cached) · output 1,318`.

    The input is what the requests' prompts cost in all: `inputTokens` is only the part
    neither read from nor written to the cache, so the cached parts are added to it.
    """

    def number(key: str) -> int:
        value = usage.get(key)
        return value if isinstance(value, int) and not isinstance(value, bool) else 0

    cached, written = number("cacheReadInputTokens"), number("cacheCreationInputTokens")
    parts = [f"{cached:,} cached"] if cached else []
    if written:
        parts.append(f"{written:,} newly cached")
    detail = f" ({', '.join(parts)})" if parts else ""
    total = number("inputTokens") + cached + written
    return f"tokens: input {total:,}{detail} · output {number('outputTokens'):,}"


def result_text(result: Mapping[str, Any], *, include_text: bool) -> Text:
    """`done after 9 rounds`, then the error and (optionally) the final text."""
    status = str(result.get("status", "error"))
    rounds = result.get("rounds")
    line = Text(status, style=RESULT_STYLES.get(status, "bold"))
    if isinstance(rounds, int) and rounds > 0:
        line.append(f" after {rounds} round{'s' if rounds != 1 else ''}")
    error = result.get("error")
    error = error.strip() if isinstance(error, str) else ""
    if error:
        line.append("\nerror: ", style="bold red")
        line.append(error, style="red")
    body = result.get("text")
    body = body.strip() if isinstance(body, str) else ""
    # The text of a failed run usually restates its error ("The model API failed: <error>"):
    # say it once.
    if include_text and body and not (error and error in body):
        line.append("\n" + body)
    return line
