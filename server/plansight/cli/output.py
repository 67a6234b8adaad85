"""`plansight run --output-format json|stream-json`: the run for a script, as JSON on stdout.

Everything a person reads (the streamed text, the tool calls, the reviews and their
questions) goes to stderr instead, as `--output-format text` would show it, so a script reads
stdout alone and a person watching still sees the run. The shapes are in docs/terminal.md:

- `stream-json`: one JSON object per line, as things happen: each `plansight/event` as the
  server sent it (its `type` and fields), `{"type": "plan", "plan": ...}` when the plan
  changes, and last `{"type": "result", ...}` (the `json` object below with its `type`).
- `json`: one object at the end: `status`, `result` (the run's text), `plan`, `filesChanged`
  (paths the agent's accepted edits wrote), `usage`, `costUsd` (the session's cost so far, as the
  server's last `usage` event said it; null where the model's price is not known), `error`.
"""

from __future__ import annotations

import json
from typing import IO, Any

from rich.console import Console

from plansight.cli.ui import EDIT_TOOLS, TerminalUI

FORMATS = ("text", "json", "stream-json")


class ScriptOutput(TerminalUI):
    """A `TerminalUI` on stderr that also writes the run as JSON to `out`."""

    def __init__(self, form: str, out: IO[str], errors: Console, **options: Any) -> None:
        super().__init__(errors, **options)
        self.form = form
        self.out = out
        self._edits: dict[str, str] = {}  # an edit's call id → its path, until its result
        self.files_changed: set[str] = set()
        self.cost_usd: float | None = None  # the last `usage` event's: the server computes it

    def _line(self, value: dict[str, Any]) -> None:
        # ensure_ascii: the bytes are plain ASCII whatever the model wrote (no escape reaches
        # a terminal that shows the stream as is).
        self.out.write(json.dumps(value, ensure_ascii=True) + "\n")
        self.out.flush()

    def on_event(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        if kind == "toolCall" and event.get("name") in EDIT_TOOLS:
            tool_input = event.get("input")
            path = tool_input.get("path") if isinstance(tool_input, dict) else None
            if isinstance(path, str):
                self._edits[str(event.get("id"))] = path
        elif kind == "usage":
            cost = event.get("costUsd")
            self.cost_usd = cost if isinstance(cost, int | float) else None
        elif kind == "toolResult":
            path = self._edits.pop(str(event.get("id")), None)
            if path is not None and event.get("isError") is not True:
                self.files_changed.add(path)
        if self.form == "stream-json":
            self._line(event)
        super().on_event(event)

    def on_todos(self, state: dict[str, Any]) -> None:
        if self.form == "stream-json":
            self._line({"type": "plan", "plan": state})
        super().on_todos(state)

    def summary(self, result: dict[str, Any], error: str | None) -> dict[str, Any]:
        return {
            "status": str(result.get("status", "error")),
            "result": str(result.get("text", "")),
            "plan": self.plan,
            "filesChanged": sorted(self.files_changed),
            "usage": result.get("usage"),
            "costUsd": self.cost_usd,
            "error": error if error is not None else result.get("error"),
        }

    def result(
        self, result: dict[str, Any], error: str | None = None, hint: str | None = None
    ) -> None:
        summary = self.summary(result, error)
        self._line(summary if self.form == "json" else {"type": "result", **summary})
        super().result(result, error, hint)
