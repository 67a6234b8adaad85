"""The plan as text: the lines `[ ] #1: text` that `TodoState.rendered` shows and that a
terminal user edits in `$EDITOR`. Engine-free, like the protocol names it uses."""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping
from typing import Any

from plansight.protocol.names import field_of

TODO_MARKERS: Mapping[str, str] = {
    "pending": "[ ]",
    "in_progress": "[>]",
    "completed": "[x]",
    "cancelled": "[-]",
    "failed": "[!]",
}
_STATUS_OF_MARKER = {marker[1]: status for status, marker in TODO_MARKERS.items()}
_ITEM_LINE = re.compile(r"\[(?P<mark>.)\]\s*(?:#(?P<id>[^\s:]+)\s*:)?\s*(?P<text>.*)")
_COUNT_LINE = re.compile(r"\(\d+/\d+ completed\)")
PLAN_TEXT_HELP = """\
# The plan, one item a line: `[ ] #1: text`. Save and quit the editor when you are done.
# [ ] pending   [>] in progress   [x] completed   [-] cancelled   [!] failed
# Reorder, add or remove lines; a new item may leave out its id (`[ ] text`).
# A line `> text` under an item is your comment on it (before any item: on the whole plan).
# Lines starting with # are ignored.
"""


class PlanTextError(ValueError):
    """Plan text that cannot be read; the message names the line and what is wrong."""


def plan_text(items: Any) -> str:
    """Plan items (wire dicts) as the lines `[ ] #1: text` that `TodoState.rendered` shows."""
    lines = []
    for item in items or []:
        marker = TODO_MARKERS.get(str(field_of(item, "status")), "[ ]")
        lines.append(f"{marker} #{field_of(item, 'id')}: {field_of(item, 'text')}")
    return "\n".join(lines) + ("\n" if lines else "")


def free_id(used: Collection[str]) -> str:
    """The id a new item gets: the lowest number (1, 2, ...) that no id in `used` is. The one
    rule for new ids: the server's `TodoState.nextId` (`used`: the plan's ids) and plan text
    (`used`: the text's ids and those of the plan that was edited) both follow it."""
    number = 1
    while str(number) in used:
        number += 1
    return str(number)


def parse_plan_text(text: str, reserved: Iterable[str] = ()) -> list[dict[str, str]]:
    """The items of plan text, in order (`{id, text, status}`): the lines `plan_text` writes,
    `rendered`'s count line, blank lines and `#` comments skipped. An item without an id gets
    the lowest number that neither the text nor `reserved` (the ids of the plan that was
    edited: a removed item's id is not given to a new one) uses (`free_id`). The plan's rules
    (at most 20 items, one in progress) are the server's to check; this reads the text only,
    and raises PlanTextError naming the line."""
    parsed: list[tuple[int, str | None, str, str]] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#") or _COUNT_LINE.fullmatch(line):
            continue
        match = _ITEM_LINE.fullmatch(line)
        if match is None:
            raise PlanTextError(
                f"line {number}: {_quoted(line)} is not an item; write it as `[ ] #1: text`."
            )
        status = _STATUS_OF_MARKER.get(match["mark"])
        if status is None:
            raise PlanTextError(
                f"line {number}: unknown marker [{match['mark']}]; use one of "
                + " ".join(TODO_MARKERS.values())
                + "."
            )
        item_text = match["text"].strip()
        if match["id"] is None and item_text.startswith("#"):
            raise PlanTextError(f"line {number}: write the id as `#1: text`, with its colon.")
        if not item_text:
            raise PlanTextError(f"line {number}: the item has no text.")
        parsed.append((number, match["id"], item_text, status))
    used = {item_id for _, item_id, _, _ in parsed if item_id} | set(reserved)
    items: list[dict[str, str]] = []
    seen: set[str] = set()
    for number, item_id, item_text, status in parsed:
        if item_id is None:
            item_id = free_id(used)
            used.add(item_id)
        if item_id in seen:
            raise PlanTextError(f"line {number}: #{item_id} is used twice; ids must differ.")
        seen.add(item_id)
        items.append({"id": item_id, "text": item_text, "status": status})
    return items


def parse_plan_review_text(
    text: str, reserved: Iterable[str] = ()
) -> tuple[list[dict[str, str]], list[dict[str, str]]]:
    """The items of plan text (as `parse_plan_text`) and the user's comments in it: a line
    `> text` is a comment on the item above it (`{todoId, text}`), or on the whole plan before
    any item (`{text}`). Comment ids are the caller's to give. PlanTextError as
    `parse_plan_text`'s."""
    kept: list[str] = []
    found: list[tuple[int, str]] = []  # (items above the comment, its text)
    above = 0
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith(">"):
            said = line[1:].strip()
            if said:
                found.append((above, said))
            kept.append("")  # the line numbers of errors stay the user's
            continue
        if line and not line.startswith("#") and not _COUNT_LINE.fullmatch(line):
            above += 1
        kept.append(raw)
    items = parse_plan_text("\n".join(kept), reserved)
    comments = [
        {"todoId": items[count - 1]["id"], "text": said} if count else {"text": said}
        for count, said in found
    ]
    return items, comments


def _quoted(line: str) -> str:
    return repr(line if len(line) <= 40 else line[:37] + "...")


def change_line(change: Any) -> str:
    """One of a `reviewPlan` request's `changes` (a wire dict) in words."""
    kind, todo_id = field_of(change, "kind"), field_of(change, "todoId")
    text, before = field_of(change, "text"), field_of(change, "before")
    if kind == "reworded":
        return f'reworded #{todo_id}: "{before}" -> "{text}"'
    if kind == "restatused":
        return f"#{todo_id} {text}: {before} -> {field_of(change, 'after')}"
    return f"{kind} #{todo_id}: {text}"


def review_changes_lines(review: Any) -> list[str]:
    """A `reviewPlan` request's `changes` (each beside the comment that asked for it and the
    model's `how`) and `openComments`, as lines of text (Markdown bullets); [] for a first
    proposal. The terminal prints them and an ACP editor's approval shows them."""
    changes = field_of(review, "changes")
    if field_of(review, "previous") is None or not isinstance(changes, list | tuple):
        return []
    words = {
        str(field_of(c, "id")): str(field_of(c, "text"))
        for c in field_of(review, "addressedComments") or []
    }
    how = {
        str(field_of(a, "commentId")): str(field_of(a, "how"))
        for a in field_of(review, "addressed") or []
    }
    lines = ["What changed since the proposal you saw:"]
    beside: set[str] = set()
    for change in changes:
        lines.append(f"- {change_line(change)}")
        for comment_id in field_of(change, "commentIds") or []:
            beside.add(str(comment_id))
            lines.append(f"  - your comment: {_said(words, how, str(comment_id))}")
    if not changes:
        lines.append("- no item changed")
    for comment_id in how:
        if comment_id not in beside:
            lines.append(f"- your comment: {_said(words, how, comment_id)}")
    open_comments = field_of(review, "openComments") or []
    if open_comments:
        lines.append("Open comments (not addressed yet):")
        for comment in open_comments:
            on = field_of(comment, "todoId")
            lines.append(f"- {'#' + str(on) + ': ' if on else ''}{field_of(comment, 'text')}")
    return lines


def _said(words: Mapping[str, str], how: Mapping[str, str], comment_id: str) -> str:
    said = f'"{words.get(comment_id, comment_id)}"'
    return f"{said}, addressed: {how[comment_id]}" if comment_id in how else said
