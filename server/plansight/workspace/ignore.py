"""Enough of .gitignore matching to keep ignored paths out of change reports.

Supports comments, blank lines, `!` negation, trailing `/` (directories only), anchored
patterns (a leading or inner `/`), `*`, `?`, `[...]` and `**`. Files of nested folders apply
below their folder, as git does.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path, PurePosixPath


@dataclass(frozen=True)
class Rule:
    regex: re.Pattern[str]
    negated: bool
    dir_only: bool


def _translate(pattern: str) -> str:
    out = ""
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if pattern.startswith("**/", i):
            out += "(?:.*/)?"
            i += 3
        elif pattern.startswith("/**", i) and i + 3 == len(pattern):
            out += "/.*"
            i += 3
        elif pattern.startswith("**", i):
            out += ".*"
            i += 2
        elif c == "*":
            out += "[^/]*"
            i += 1
        elif c == "?":
            out += "[^/]"
            i += 1
        elif c == "[":
            end = pattern.find("]", i + 1)
            if end == -1:
                out += re.escape(c)
                i += 1
            else:
                body = pattern[i + 1 : end].replace("\\", "\\\\")
                if body.startswith("!"):
                    body = "^" + body[1:]
                out += f"[{body}]"
                i = end + 1
        else:
            out += re.escape(c)
            i += 1
    return out


def parse_rules(text: str) -> list[Rule]:
    rules: list[Rule] = []
    for raw in text.splitlines():
        line = raw.rstrip()
        if not line or line.startswith("#"):
            continue
        negated = line.startswith("!")
        if negated:
            line = line[1:]
        dir_only = line.endswith("/")
        line = line.rstrip("/")
        if not line:
            continue
        anchored = "/" in line
        line = line.lstrip("/")
        body = _translate(line)
        regex = f"^{body}$" if anchored else f"^(?:.*/)?{body}$"
        rules.append(Rule(re.compile(regex), negated, dir_only))
    return rules


class GitIgnore:
    """Answers whether a path inside `root` is ignored by the .gitignore files above it."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._rules = lru_cache(maxsize=1024)(self._load)

    def _load(self, folder: tuple[str, ...]) -> tuple[Rule, ...]:
        try:
            text = self.root.joinpath(*folder, ".gitignore").read_text(errors="replace")
        except OSError:
            return ()
        return tuple(parse_rules(text))

    def invalidate(self) -> None:
        self._rules.cache_clear()

    def ignored(self, path: Path, is_dir: bool = False) -> bool:
        try:
            relative = PurePosixPath(path.relative_to(self.root).as_posix())
        except ValueError:
            return True
        parts = relative.parts
        # A path is ignored when any of its ancestors is (git never looks inside).
        for depth in range(1, len(parts) + 1):
            prefix = parts[:depth]
            prefix_is_dir = depth < len(parts) or is_dir
            if self._matches(prefix, prefix_is_dir):
                return True
        return False

    def ignored_entry(self, parts: tuple[str, ...], is_dir: bool) -> bool:
        """`ignored` for a walk, which asks only about entries of folders it kept."""
        return self._matches(parts, is_dir)

    def _matches(self, parts: tuple[str, ...], is_dir: bool) -> bool:
        ignored = False
        for level in range(len(parts)):
            below = "/".join(parts[level:])
            for rule in self._rules(parts[:level]):
                if rule.dir_only and not is_dir:
                    continue
                if rule.regex.match(below):
                    ignored = not rule.negated
        return ignored
