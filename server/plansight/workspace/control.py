"""Which workspace paths are control files: files that steer the user's tools, not the project.

A control file changes what runs or what is trusted the next time the user (or their editor,
git, direnv, a dev container) acts in the workspace: git's hooks and config, the editor's
settings and tasks, `.envrc`, the MCP servers of `.mcp.json`, Plansight's own
`.plansightignore` and `.plansight/`. The model may read them (unless they are also protected
secrets, workspace/secrets.py), but a change to one is always the user's decision: the file
tools put it to the user even with auto-approval on, and refuse it where nobody answers; and
nothing at all under `.git` is written by the file tools. The sandbox keeps them read-only for
commands.

The set is `CONTROL_PATTERNS` plus the user's `protect.control` patterns (user-level only: a
workspace file never widens or narrows it), in gitignore syntax through the one rules
implementation (`workspace.ignore.PathRules`); a pattern without a slash matches at any depth,
so a nested repository's `.git` or a sub-project's `.vscode/` count too. A `!` line among the
user's patterns may carve an exception out of the user's own earlier lines only: the defaults
always hold (they are a separate list, asked first).

Knows nothing of tools, reviews or sandboxes: `ControlFiles.is_control(relative)` and
`is_git_internal(relative)` answer for a path; `ControlFiles.present()` lists the control
paths that exist now (what a sandbox binds read-only).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from plansight.workspace.ignore import PathRules, PatternList

CONTROL_PATTERNS = (
    ".git",  # a folder, or a file (`gitdir: ...`) of a worktree or submodule; all under it
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
GIT = ".git"
# For the sandbox (workspace/sandbox.py). The root's control paths that a command must not
# create where they are absent: the sandbox puts an empty read-only folder there, for the files
# too (git lists no empty folder, so `git status` and `git add -A` go on as before; an empty
# file would be listed, and a `/dev/null` there makes `git add -A` fail).
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
# Folders `present` does not enter (dependencies and caches, as the secrets' own search):
# a control file inside them steers nothing the user runs from the workspace.
_NOT_SEARCHED = frozenset({GIT, "node_modules", ".venv", "venv", "__pycache__"})
CONTROL_MESSAGE = (
    "{path} is a control file (it steers the user's tools: git, the editor, Plansight); the "
    "user decides every change to it."
)
GIT_MESSAGE = (
    "{path} is inside a git folder ({git}): its hooks and config run code on the user's next "
    "git command, so the file tools never write there, whatever the user's settings. Use git "
    "commands (bash) for what git should change, or tell the user what to change."
)


def is_git_internal(relative: str) -> bool:
    """Whether the workspace path `relative` ("/"-separated) is a `.git` entry or anything
    under one, at any depth. Compared without regard to case: a case-insensitive file system
    (macOS, Windows) gives `.GIT/config` to git as `.git/config`."""
    return git_folder_of(relative) is not None


def git_folder_of(relative: str) -> str | None:
    """The `.git` part of `relative` ("sub/.git"), or None when it has none."""
    parts = [part for part in relative.split("/") if part]
    for depth, part in enumerate(parts):
        if part.casefold() == GIT:
            return "/".join(parts[: depth + 1])
    return None


class ControlFiles:
    """The control-file rules of one workspace (see the module's docstring)."""

    def __init__(self, root: Path, extra: Sequence[str] = ()) -> None:
        self.root = Path(os.path.realpath(root))
        self.extra = tuple(extra)
        self._defaults = PathRules(
            self.root, files=[PatternList("Plansight's control files", CONTROL_PATTERNS)]
        )
        self._user = PathRules(self.root, files=[PatternList("protect.control", self.extra)])

    def patterns(self) -> list[str]:
        """Every pattern, the defaults first (for another tool's rules, a sandbox's)."""
        return [*CONTROL_PATTERNS, *self.extra]

    def is_control(self, relative: str, is_dir: bool = False) -> bool:
        """Whether the workspace path `relative` ("/"-separated) is a control file or lies in
        a control folder."""
        clean = relative.strip("/")
        if clean in ("", "."):
            return False
        if is_git_internal(clean):
            return True
        # Also without regard to case: on a case-insensitive file system `.VSCode/` is the
        # folder VS Code reads.
        return any(
            self._defaults.matches(name, is_dir)
            or (bool(self.extra) and self._user.matches(name, is_dir))
            for name in {clean, clean.casefold()}
        )

    def matcher(self) -> Callable[[str, bool], bool]:
        """Whether an entry is itself a control file or folder (its folders not asked: a walk
        that stops at a control folder asks them first), for a walk that asks thousands (the
        sandbox's survey). The defaults are plain names, so most entries are answered by their
        name alone; the same answers as `is_control`."""
        self._user.refresh()
        user = self._user if self.extra else None

        def control(relative: str, is_dir: bool) -> bool:
            name = relative.rpartition("/")[2].casefold()
            if name in _NAMES or (is_dir and name in _FOLDER_NAMES):
                return True
            parts = tuple(p for p in relative.split("/") if p)
            return user is not None and (
                user.matches_entry(parts, is_dir)
                or user.matches_entry(tuple(p.casefold() for p in parts), is_dir)
            )

        return control

    def message(self, relative: str) -> str:
        """Why a change to `relative` is the user's to decide, in words for the model."""
        git = git_folder_of(relative)
        if git is not None:
            return GIT_MESSAGE.format(path=relative, git=git)
        return CONTROL_MESSAGE.format(path=relative)

    def present(self) -> Iterator[tuple[Path, bool]]:
        """The control files and folders that exist now (absolute, and whether a folder),
        outermost only; links are listed as they are, never followed."""
        yield from self._walk(self.root, "")

    def _walk(self, folder: Path, prefix: str) -> Iterator[tuple[Path, bool]]:
        try:
            entries = list(os.scandir(folder))
        except OSError:
            return
        for entry in entries:
            relative = prefix + entry.name
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                continue
            if self.is_control(relative, is_dir):
                yield Path(entry.path), is_dir
            elif is_dir and entry.name not in _NOT_SEARCHED:
                yield from self._walk(Path(entry.path), relative + "/")


_NAMES = frozenset(p for p in CONTROL_PATTERNS if not p.endswith("/"))
_FOLDER_NAMES = frozenset(p.rstrip("/") for p in CONTROL_PATTERNS if p.endswith("/"))
