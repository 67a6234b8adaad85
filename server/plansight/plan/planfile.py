"""The plan as a Markdown file (protocol version 4): its exact form, written and read back.

Pure functions, no files: `format_plan_file` gives the text the server writes for a plan and
scratchpad, `parse_plan_file` reads a text a user saved (any editor, any person) back into
items, notes and scratchpad, or raises PlanFileError naming the line; `merge_items` merges an
edit saved against an older version of the plan with the plan as it is now, item by item.
Where the file lives and when it is written or read is session/planfiles.py's business.

The form (the contract's):

    # <session title>
    <!-- plansight: session <id>, version <n> -->

    - [ ] 1. Item text
    - [~] 2. The item in progress
      Lines indented under an item are its notes.

    ## Scratchpad
    (free Markdown)
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from plansight.plan.text import free_id

MAX_ITEMS = 20  # the plan's own rule (plan/plan.py), checked here to point at the line
FILE_MARKERS: Mapping[str, str] = {
    "pending": " ",
    "in_progress": "~",
    "completed": "x",
    "cancelled": "-",
    "failed": "!",
}
_STATUS_OF = {mark: status for status, mark in FILE_MARKERS.items()} | {"X": "completed"}
SCRATCHPAD_HEADING = "## Scratchpad"
NOTE_INDENT = "  "
_HEADER = re.compile(
    r"<!--\s*plansight:\s*session\s+(?P<session>\S+?),\s*version\s+(?P<v>\d+)\s*-->"
)
# `- [ ] 1. text`; the number (and its dot) may be left out by a user adding an item.
_ITEM = re.compile(r"[-*+]\s+\[(?P<mark>.)\]\s*(?:(?P<id>[^\s.]+)\.\s+)?(?P<text>.*)")
_NUMBER = re.compile(r"\d+")


class PlanFileError(ValueError):
    """A plan file that cannot be read as a plan: `line` (0-based) and why."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(f"line {line + 1}: {message}")
        self.line = line
        self.reason = message


@dataclass(frozen=True)
class PlanFile:
    """What a plan file says: its items (`{id, text, status, notes}` dicts, as editPlan takes
    them), its scratchpad, the version it was written from (None: no header), and the line
    of each item (0-based, for diagnostics)."""

    items: list[dict[str, str]]
    scratchpad: str
    version: int | None = None
    session: str | None = None
    lines: dict[str, int] = field(default_factory=dict)


def normalize_notes(notes: str) -> str:
    """Notes as the plan keeps them: no common indent, no trailing spaces, no blank lines at
    either end (what a file's note lines can say, so that a plan survives the file)."""
    lines = [line.rstrip() for line in textwrap.dedent(notes.replace("\t", "    ")).splitlines()]
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines)


def normalize_scratchpad(text: str) -> str:
    """The scratchpad as its section keeps it: LF line ends, no blank lines at either end."""
    return text.replace("\r\n", "\n").replace("\r", "\n").strip("\n")


def one_line(text: str) -> str:
    """An item's text on its one line."""
    return " ".join(text.split())


def format_plan_file(
    title: str,
    session_id: str,
    version: int,
    items: Iterable[Mapping[str, Any]],
    scratchpad: str,
) -> str:
    """The plan file's text for a plan (`items`: wire items, `notes` optional)."""
    lines = [
        f"# {one_line(title) or 'Plan'}",
        f"<!-- plansight: session {session_id}, version {version} -->",
        "",
    ]
    listed = False
    for item in items:
        listed = True
        mark = FILE_MARKERS.get(str(item.get("status")), " ")
        lines.append(f"- [{mark}] {item['id']}. {one_line(str(item['text']))}")
        notes = normalize_notes(str(item.get("notes") or ""))
        lines.extend(NOTE_INDENT + line if line else "" for line in notes.splitlines())
    if listed:
        lines.append("")
    lines.append(SCRATCHPAD_HEADING)
    body = normalize_scratchpad(scratchpad)
    if body:
        lines.append(body)
    return "\n".join(lines) + "\n"


def parse_plan_file(text: str, known_ids: Iterable[str] = ()) -> PlanFile:
    """Read a plan file (see the module's docstring); PlanFileError names the first line that
    is no title, header, item, note or blank line in the items part, the 21st item, or the
    second in progress. `known_ids`: the plan's ids, so that an id that is no number
    (`- [ ] setup. text`) is still read as one; an item without an id gets the lowest number
    neither the file nor `known_ids` uses."""
    known = set(known_ids)
    source = text.replace("\r\n", "\n").replace("\r", "\n").lstrip("\ufeff").split("\n")
    version: int | None = None
    session: str | None = None
    # (line, id or None, text, status, note lines)
    parsed: list[tuple[int, str | None, str, str, list[str]]] = []
    scratch_at: int | None = None
    titled = False
    for number, raw in enumerate(source):
        stripped = raw.strip()
        if stripped == SCRATCHPAD_HEADING:
            scratch_at = number
            break
        if not stripped:
            if parsed:
                parsed[-1][4].append("")
            continue
        if raw[:1] in (" ", "\t") and parsed:
            parsed[-1][4].append(raw)
            continue
        header = _HEADER.fullmatch(stripped)
        if header is not None and not parsed:
            version, session = int(header["v"]), header["session"]
            continue
        if stripped.startswith("# ") and not titled and not parsed:
            titled = True
            continue
        match = _ITEM.fullmatch(stripped)
        if match is None:
            raise PlanFileError(
                number,
                f"{_quoted(stripped)} is not an item, a note or a blank line; write an item as "
                "`- [ ] 1. text` and its notes indented under it.",
            )
        status = _STATUS_OF.get(match["mark"])
        if status is None:
            raise PlanFileError(
                number, f"unknown status [{match['mark']}]; use [ ] [~] [x] [-] or [!]."
            )
        item_id, item_text = match["id"], match["text"].strip()
        if item_id is not None and not _NUMBER.fullmatch(item_id) and item_id not in known:
            item_id, item_text = None, f"{item_id}. {item_text}".strip()
        if not item_text:
            raise PlanFileError(number, "the item has no text.")
        if len(parsed) == MAX_ITEMS:
            raise PlanFileError(number, f"more than {MAX_ITEMS} items; a plan has at most 20.")
        if status == "in_progress":
            earlier = next((p for p in parsed if p[3] == "in_progress"), None)
            if earlier is not None:
                raise PlanFileError(
                    number,
                    f"two items in progress (this one and line {earlier[0] + 1}); mark one [~].",
                )
        parsed.append((number, item_id, item_text, status, []))
    used = {p[1] for p in parsed if p[1] is not None} | known
    items: list[dict[str, str]] = []
    lines: dict[str, int] = {}
    for number, item_id, item_text, status, notes in parsed:
        if item_id is None:
            item_id = free_id(used)
            used.add(item_id)
        if item_id in lines:
            raise PlanFileError(number, f"id {item_id} is used twice; ids must differ.")
        lines[item_id] = number
        items.append(
            {
                "id": item_id,
                "text": item_text,
                "status": status,
                "notes": normalize_notes("\n".join(notes)),
            }
        )
    scratchpad = ""
    if scratch_at is not None:
        scratchpad = "\n".join(source[scratch_at + 1 :]).strip("\n")
    return PlanFile(items, scratchpad, version, session, lines)


@dataclass(frozen=True)
class Merged:
    """A stale save merged: the items, and the ids changed on both sides (the user's kept)."""

    items: list[dict[str, str]]
    conflicts: list[str]


def merge_items(
    base: Sequence[Mapping[str, Any]],
    mine: Sequence[Mapping[str, Any]],
    theirs: Sequence[Mapping[str, Any]],
) -> Merged:
    """Merge per item: `base` the plan the user's file was written from, `mine` the plan now,
    `theirs` the user's file. An item changed (added, removed, edited) on one side only takes
    that side; changed on both, the user's wins and is named in `conflicts`. The order is the
    user's where they reordered, else the plan's now; items only one side has keep their
    place after the item before them."""
    b = {str(i["id"]): _key(i) for i in base}
    m = {str(i["id"]): dict(i) for i in mine}
    t = {str(i["id"]): dict(i) for i in theirs}
    result: dict[str, dict[str, Any] | None] = {}
    conflicts: list[str] = []
    gone = [i for i in b if i not in m and i not in t]
    for item_id in [*m, *(i for i in t if i not in m), *gone]:
        was, now, saved = b.get(item_id), m.get(item_id), t.get(item_id)
        now_key = _key(now) if now is not None else None
        saved_key = _key(saved) if saved is not None else None
        if saved_key == was:
            result[item_id] = now  # the user left it: the plan's now
        elif now_key == was or now_key == saved_key:
            result[item_id] = saved  # only the user changed it
        else:
            result[item_id] = saved
            conflicts.append(item_id)
    common = [i for i in (str(x["id"]) for x in theirs) if i in b]
    reordered = common != [i for i in (str(x["id"]) for x in base) if i in t]
    primary = [str(x["id"]) for x in (theirs if reordered else mine)]
    secondary = [str(x["id"]) for x in (mine if reordered else theirs)]
    order = list(primary)
    for index, item_id in enumerate(secondary):
        if item_id in order:
            continue
        before = secondary[index - 1] if index else None
        order.insert(order.index(before) + 1 if before in order else 0, item_id)
    items = [dict(entry) for i in order if (entry := result.get(i)) is not None]
    for entry in items:
        entry.setdefault("notes", "")
    return Merged(items, conflicts)


def _key(item: Mapping[str, Any]) -> tuple[str, str, str]:
    return (
        str(item["text"]).strip(),
        str(item["status"]),
        normalize_notes(str(item.get("notes") or "")),
    )


def _quoted(line: str) -> str:
    return repr(line if len(line) <= 40 else line[:37] + "...")
