"""The scratchpad a parallel run's workers share: each sees all of it and writes its own lines.

The team's notes are one text (CooperBench: a shared task list and a shared scratchpad are
what make a team beat one agent). A worker's `write_scratchpad` replaces its own lines only,
each prefixed with its item id (`#2: ...`), so siblings never overwrite each other's notes; what
the parent's scratchpad held when the workers started comes first, read-only to them.
"""

from __future__ import annotations

from collections.abc import Callable

from plansight.plan.scratchpad import Scratchpad


class SharedScratchpad:
    def __init__(self, preamble: str = "") -> None:
        self.preamble = preamble
        self._lines: dict[str, list[str]] = {}  # item id → its notes, in the order first written
        self.on_change: list[Callable[[str], None]] = []

    @property
    def content(self) -> str:
        parts = [self.preamble.rstrip("\n")] if self.preamble.strip() else []
        for todo_id, lines in self._lines.items():
            parts += [f"#{todo_id}: {line}" for line in lines]
        return "\n".join(parts)

    def write(self, todo_id: str, content: str) -> None:
        prefix = f"#{todo_id}: "
        # A worker that copied its own prefixed lines back does not get them prefixed twice.
        lines = [line.removeprefix(prefix) for line in content.splitlines() if line.strip()]
        # Lines the worker read from the preamble or a sibling and wrote back are not its own.
        others = set(self.content.splitlines()) - {
            prefix + line for line in self._lines.get(todo_id, [])
        }
        self._lines[todo_id] = [line for line in lines if line not in others]
        for listener in list(self.on_change):
            listener(self.content)

    def view(self, todo_id: str) -> Scratchpad:
        return WorkerScratchpad(self, todo_id)


class WorkerScratchpad(Scratchpad):
    """One worker's door to the shared scratchpad (what its session's tools use)."""

    def __init__(self, shared: SharedScratchpad, todo_id: str) -> None:
        self._shared = shared
        self._todo_id = todo_id

    @property
    def content(self) -> str:
        return self._shared.content

    @content.setter
    def content(self, value: str) -> None:
        self._shared.write(self._todo_id, value)

    def write(self, content: str) -> None:
        self._shared.write(self._todo_id, content)

    def clear(self) -> None:
        self._shared.write(self._todo_id, "")
