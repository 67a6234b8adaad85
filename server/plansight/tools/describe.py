"""Short, human descriptions of a proposed edit, for the user's review.

"Change 3 lines in greet()", "Add farewell() (6 lines)", "Remove 2 lines at line 14",
"New file (12 lines)". The clients show the file's name beside the description, so it is left
out. Where a change lies is said by the function or class around it when the indentation shows
one (any language whose definitions start with a keyword such as def, class, function, fn), else
by its line number.
"""

from __future__ import annotations

import difflib
import itertools
import re
from collections.abc import Sequence

# How far a description looks: beyond this, a change is described by its size alone.
_MAX_DIFF_LINES = 2000
_MAX_SCAN_UP = 2000

_DEFINITION = re.compile(
    r"\s*(?:(?:export|default|public|private|protected|internal|static|async|pub(?:\([^)]*\))?"
    r"|abstract|final|override|open|unsafe|extern|inline)\s+)*"
    r"(?P<kind>def|class|function|func|fn|interface|struct|enum|trait|impl|module|object|sub)"
    r"\s+(?P<name>[A-Za-z_$][\w$]*)"
)
_CALLABLE = frozenset({"def", "function", "func", "fn", "sub"})


def n_lines(n: int) -> str:
    """'1 line', '3 lines'."""
    return f"{n} line" if n == 1 else f"{n} lines"


def count_lines(text: str) -> int:
    """Lines of `text`, a last one without its newline counted."""
    if not text:
        return 0
    return text.count("\n") + (0 if text.endswith("\n") else 1)


def describe_new_file(text: str) -> str:
    return f"New file ({n_lines(count_lines(text))})"


def describe_change(before: str, after: str) -> str:
    """What changes from `before` to `after` (whole documents, as the model sees them)."""
    old, new = before.split("\n"), after.split("\n")
    # The common start and end first: cheap, and they leave little for the diff below.
    prefix = 0
    limit = min(len(old), len(new))
    while prefix < limit and old[prefix] == new[prefix]:
        prefix += 1
    suffix = 0
    while suffix < limit - prefix and old[-1 - suffix] == new[-1 - suffix]:
        suffix += 1
    old_mid, new_mid = old[prefix : len(old) - suffix], new[prefix : len(new) - suffix]
    if not old_mid and not new_mid:
        return "No change"
    if len(old_mid) > _MAX_DIFF_LINES or len(new_mid) > _MAX_DIFF_LINES:
        return f"Change lines {prefix + 1}-{prefix + len(old_mid)} (now {n_lines(len(new_mid))})"
    opcodes = difflib.SequenceMatcher(None, old_mid, new_mid, autojunk=False).get_opcodes()
    kept = itertools.chain(
        itertools.islice(old, prefix),
        itertools.islice(old, len(old) - suffix, None),
        (line for tag, i1, i2, _j1, _j2 in opcodes if tag == "equal" for line in old_mid[i1:i2]),
    )
    if before.strip() and after.strip() and not any(line.strip() for line in kept):
        return f"Rewrite the whole file ({n_lines(count_lines(after))}, was {count_lines(before)})"
    changed = added = removed = 0
    for tag, i1, i2, j1, j2 in opcodes:
        if tag == "replace":
            changed += min(i2 - i1, j2 - j1)
            added += max(0, (j2 - j1) - (i2 - i1))
            removed += max(0, (i2 - i1) - (j2 - j1))
        elif tag == "insert":
            added += j2 - j1
        elif tag == "delete":
            removed += i2 - i1
    # The first change: where it is said to be, and what its first line defines.
    _tag, i1, i2, j1, j2 = next(op for op in opcodes if op[0] != "equal")
    first = prefix + i1  # 0-based, in `old`
    places = _places(old, new, prefix, opcodes)
    if len(places) > 1:
        # Changes in several places: every function touched is named, not only the first.
        return _phrase(changed, added, removed) + " " + _listed(places)
    if not changed and not removed:
        return _describe_addition(old, new[prefix + j1 : prefix + j2], first, added)
    if not changed and not added:
        return _describe_removal(old, first, old[first : prefix + i2], removed)
    where = _where(old, first)
    phrase = _phrase(changed, added, removed)
    return phrase + (f" in {where}" if where else f" at line {first + 1}")


def _phrase(changed: int, added: int, removed: int) -> str:
    """'Change 2 lines', 'Change 1 line and add 1 line', 'Add 3 lines'."""
    parts = [f"change {n_lines(changed)}" if changed else ""]
    parts += [
        f"add {n_lines(added)}" if added else "",
        f"remove {n_lines(removed)}" if removed else "",
    ]
    said = [part for part in parts if part]
    phrase = said[0] if len(said) == 1 else ", ".join(said[:-1]) + " and " + said[-1]
    return phrase[0].upper() + phrase[1:]


# Places named in a description of changes in several places; beyond, "and N more places".
_MAX_PLACES = 4


def _places(
    old: list[str], new: list[str], prefix: int, opcodes: Sequence[tuple[str, int, int, int, int]]
) -> list[str]:
    """Where each change lies, in order, each place once: the definition around it (as the
    descriptions of one change name it), else its line ("line 14")."""
    places: list[str] = []
    for tag, i1, _i2, j1, j2 in opcodes:
        if tag == "equal":
            continue
        at = prefix + i1
        place: str | None
        if tag == "insert":
            start = next((line for line in new[prefix + j1 : prefix + j2] if line.strip()), "")
            container = _container(old, at - 1, _depth(start))
            place = _name(old, *container) if container is not None else None
        else:
            place = _where(old, at)
        said = place if place is not None else f"line {at + 1}"
        if said not in places:
            places.append(said)
    return places


def _listed(places: list[str]) -> str:
    """'in greet() and shout()', 'at line 1 and in shout()', 'in a(), b(), c(), d() and 2
    more places'."""
    shown = places[:_MAX_PLACES]
    more = [f"{len(places) - _MAX_PLACES} more places"] if len(places) > _MAX_PLACES else []
    if not any(p.startswith("line ") for p in shown):
        return "in " + _and(shown + more)
    return _and([("at " if p.startswith("line ") else "in ") + p for p in shown] + more)


def _and(words: list[str]) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def _describe_addition(old: list[str], block: list[str], at: int, count: int) -> str:
    """`count` lines added in all, the first ones (`block`) before old[at]."""
    start = next((line for line in block if line.strip()), "")
    container = _container(old, at - 1, _depth(start))
    defined = _DEFINITION.match(start)
    if defined is not None:
        return f"Add {_render(defined, container)} ({n_lines(count)})"
    if container is not None:
        return f"Add {n_lines(count)} to {_name(old, *container)}"
    return f"Add {n_lines(count)} after line {at}" if at > 0 else f"Add {n_lines(count)} at the top"


def _describe_removal(old: list[str], first: int, block: list[str], count: int) -> str:
    """`count` lines removed in all, the first ones (`block`) from old[first] on."""
    start = next((line for line in block if line.strip()), "")
    defined = _DEFINITION.match(start)
    if defined is not None:
        container = _container(old, first - 1, _depth(start))
        return f"Remove {_render(defined, container)} ({n_lines(count)})"
    where = _where(old, first)
    if where:
        return f"Remove {n_lines(count)} from {where}"
    return f"Remove line {first + 1}" if count == 1 else f"Remove lines {first + 1}-{first + count}"


def _depth(line: str) -> int:
    return len(line) - len(line.lstrip())


def _where(lines: list[str], index: int) -> str | None:
    """The definition that a change of lines[index] lies in, or is."""
    if index < len(lines):
        defined = _DEFINITION.match(lines[index])
        if defined is not None:
            return _render(defined, _container(lines, index - 1, _depth(lines[index])))
    # A blank line belongs where the next line with text does.
    text = next((line for line in lines[index : index + 50] if line.strip()), "")
    found = _container(lines, index, _depth(text))
    return _name(lines, *found) if found is not None else None


def _container(lines: list[str], index: int, indent: int) -> tuple[int, re.Match[str]] | None:
    """The definition at or above lines[index] that holds a line indented by `indent`."""
    for i in range(min(index, len(lines) - 1), max(-1, index - _MAX_SCAN_UP), -1):
        line = lines[i]
        if not line.strip():
            continue
        depth = _depth(line)
        if depth >= indent:
            continue
        defined = _DEFINITION.match(line)
        if defined is not None:
            return i, defined
        if depth == 0:
            return None  # a top-level statement: no definition around
        indent = depth  # out of a block (an if, a loop): keep climbing
    return None


def _name(lines: list[str], index: int, defined: re.Match[str]) -> str:
    return _render(defined, _container(lines, index - 1, _depth(lines[index])))


def _render(defined: re.Match[str], container: tuple[int, re.Match[str]] | None) -> str:
    """greet(), class Inventory, or Inventory.add() for a method."""
    kind, name = defined["kind"], defined["name"]
    if kind not in _CALLABLE:
        return f"{kind} {name}"
    if container is not None and container[1]["kind"] not in _CALLABLE:
        return f"{container[1]['name']}.{name}()"
    return f"{name}()"
