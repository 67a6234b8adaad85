"""Which workspace paths are control files: files that steer tools run outside the agent's
reach (git, editors, Plansight itself, direnv), so that a command or a cloned repository that
changed one would move the boundary from inside it (PROTOCOL.md, version 4).

`CONTROL_PATTERNS` (gitignore syntax, so a name without a slash matches at any depth) and the
user's `protect.control` patterns say which; `ControlPaths` answers for one workspace through
the one gitignore-rules implementation (`workspace.ignore.PathRules`). Who asks: the sandbox
(control files read-only to commands).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from plansight.workspace.ignore import PathRules, PatternList

CONTROL_PATTERNS = (
    ".git",
    ".gitmodules",
    ".plansightignore",
    ".plansight/",
    ".mcp.json",
    ".vscode/",
    ".idea/",
    ".zed/",
    ".devcontainer/",
    ".envrc",
)
# The root's control paths that a command must not create where they are absent: the sandbox
# puts an empty read-only folder there, for the files too (git lists no empty folder, so
# `git status` and `git add -A` go on as before; an empty file would be listed, and a
# `/dev/null` there makes `git add -A` fail).
ROOT_CONTROL_ABSENT = (
    ".git",
    ".plansight",
    ".vscode",
    ".idea",
    ".zed",
    ".devcontainer",
    ".gitmodules",
    ".plansightignore",
    ".mcp.json",
    ".envrc",
)
# What stays writable in a `.git` folder so that `git add`/`git commit` work: everything but
# these, which git reads as configuration or runs (read-only, made so where absent too).
GIT_READ_ONLY = ("config", "hooks", "info", "commondir", "config.worktree")
GIT_READ_ONLY_ABSENT_FOLDERS = ("hooks", "info")
GIT_MODULE_READ_ONLY = ("config", "hooks")
# Files git reads as configuration that no placeholder can stand for (an empty or unreadable
# one makes git fail): made by a command, they are removed as it ends.
GIT_SWEPT = ("commondir", "config.worktree")


class ControlPaths:
    """The control-file rules of one workspace: the defaults and the user's `extra`."""

    def __init__(self, root: Path, extra: tuple[str, ...] = ()) -> None:
        self.root = Path(os.path.realpath(root))
        self.extra = tuple(extra)
        self._rules = PathRules(
            self.root,
            files=[
                PatternList("Plansight's control files", CONTROL_PATTERNS),
                PatternList("initializationOptions.protect.control", extra),
            ],
        )

    def matches(self, relative: str, is_dir: bool = False) -> bool:
        """Whether the workspace path `relative` ("/"-separated) is a control file (or lies
        in a control folder)."""
        clean = relative.strip("/")
        return clean not in ("", ".") and self._rules.matches(clean, is_dir)

    def matcher(self) -> Callable[[str, bool], bool]:
        """Whether an entry is itself a control file or folder (its folders not asked: a
        walk that stops at a control folder asks them first). The defaults are plain names,
        so most entries are answered by their name alone (a walk asks thousands)."""
        self._rules.refresh()
        rules = self._rules if self.extra else None

        def control(relative: str, is_dir: bool) -> bool:
            name = relative.rpartition("/")[2]
            if name in _NAMES or (is_dir and name in _FOLDER_NAMES):
                return True
            return rules is not None and rules.matches_entry(
                tuple(p for p in relative.split("/") if p), is_dir
            )

        return control


_NAMES = frozenset(p for p in CONTROL_PATTERNS if not p.endswith("/"))
_FOLDER_NAMES = frozenset(p.rstrip("/") for p in CONTROL_PATTERNS if p.endswith("/"))
