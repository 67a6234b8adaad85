"""The project's instructions for agents: the workspace's AGENTS.md (the cross-tool convention),
or its CLAUDE.md (Claude Code's) where there is no AGENTS.md.

They are the repository's text, not the user's: untrusted input. They go into the prompt said
to be that (engine/prompt.py) and never change a setting. A protected one (by its name, or a
link's target: an AGENTS.md linked to `.env`) or one outside the workspace is not read.

What is read is bounded: at most `MAX_BYTES` of all files together (what is cut is said, to
the model and to the user). The root's file is read once per session start (the system prompt
it goes into is the cached prefix of every request); a folder's own file, for the files below
it, is read when the model first touches such a file (tools/files.py adds it to that result).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from plansight.workspace.access import Workspace, WorkspaceError

log = logging.getLogger(__name__)

NAMES = ("AGENTS.md", "CLAUDE.md")  # the first found in a folder is read
MAX_BYTES = 32 * 1024  # of all instructions together, root and folders


@dataclass(frozen=True)
class Instructions:
    """One file of instructions: its path (relative), its text (cut to fit) and how many
    bytes of it were left out."""

    path: str
    text: str
    size: int
    cut: int = 0

    def to_wire(self) -> dict[str, object]:
        return {"path": self.path, "bytes": self.size, "cut": self.cut}


def read_instructions(workspace: Workspace, folder: str, budget: int) -> Instructions | None:
    """The instructions of `folder` (relative, "" for the root): its AGENTS.md, else its
    CLAUDE.md, at most `budget` bytes of it; None where there is none, or none readable."""
    for name in NAMES:
        relative = f"{folder}/{name}" if folder else name
        try:
            # Refuses a path outside the workspace, and a protected one, by its name or by a
            # link's target (AGENTS.md -> .env): those are never read.
            target = workspace.resolve_shareable(relative)
        except WorkspaceError:
            if (workspace.root / relative).is_symlink():
                log.info("%s is not read: it leads outside the workspace or to a secret", relative)
            continue
        if not target.path.is_file():
            continue
        try:
            with open(target.path, "rb") as f:
                data = f.read(max(budget, 0) + 1)
                size = len(data) + len(f.read())
        except OSError as err:
            log.info("%s could not be read (%s)", relative, err)
            continue
        kept = data[: max(budget, 0)]
        text = kept.decode("utf-8", errors="ignore")  # a character cut in two is left out
        return Instructions(relative, text, size, size - len(kept))
    return None


def root_instructions(workspace: Workspace) -> Instructions | None:
    return read_instructions(workspace, "", MAX_BYTES)


class FolderInstructions:
    """The instructions of the workspace's subfolders, each handed over once a session: when
    the model first reads or changes a file below a folder that has its own, nearest first,
    within what the root's left of `MAX_BYTES`."""

    def __init__(self, workspace: Workspace, used: int = 0) -> None:
        self.workspace = workspace
        self.used = used  # bytes of instructions given so far (the root's included)
        self._seen: set[str] = set()  # folders already looked at
        self.given: list[Instructions] = []

    def for_file(self, relative: str) -> list[Instructions]:
        """The instructions not given yet of the folders above `relative` (a file's path,
        relative), nearest first."""
        parts = relative.split("/")[:-1]
        found: list[Instructions] = []
        for depth in range(len(parts), 0, -1):
            folder = "/".join(parts[:depth])
            if folder in self._seen:
                continue
            self._seen.add(folder)
            read = read_instructions(self.workspace, folder, MAX_BYTES - self.used)
            if read is not None:
                self.used += len(read.text.encode())
                found.append(read)
        self.given += found
        return found
