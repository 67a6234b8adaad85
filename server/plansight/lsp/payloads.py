"""Typed payloads of the Plansight protocol: initialize options and events on the wire."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from plansight.events import (
    Event,
    FilesChanged,
    PlanDraft,
    Reminder,
    RunFinished,
    RunStarted,
    TextDelta,
    ToolCall,
    ToolInputDelta,
    ToolResult,
)

PROTOCOL_VERSION = 1
RUN = "plansight/run"
STATE = "plansight/state"
EDIT_PLAN = "plansight/editPlan"
RESET = "plansight/reset"
TODOS = "plansight/todos"
SCRATCHPAD = "plansight/scratchpad"
EVENT = "plansight/event"
REVIEW_EDIT = "plansight/reviewEdit"
APPROVE_COMMAND = "plansight/approveCommand"

REQUEST_FAILED = -32803
INVALID_PARAMS = -32602


def field_of(params: Any, name: str, default: Any = None) -> Any:
    """Read a field from pygls's namedtuple params or a plain dict."""
    if params is None:
        return default
    if isinstance(params, dict):
        return params.get(name, default)
    return getattr(params, name, default)


def to_plain(value: Any) -> Any:
    """Turn pygls's nested namedtuples back into dicts and lists."""
    if isinstance(value, tuple) and hasattr(value, "_asdict"):
        return {k: to_plain(v) for k, v in value._asdict().items()}
    if isinstance(value, list | tuple):
        return [to_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: to_plain(v) for k, v in value.items()}
    return value


@dataclass(frozen=True)
class InitOptions:
    model: str | None = None
    max_rounds: int | None = None
    storage_dir: str | None = None
    auto_approve_edits: bool = False
    auto_approve_commands: bool = False

    @classmethod
    def parse(cls, raw: Any) -> InitOptions:
        raw = to_plain(raw) if raw is not None else {}
        if not isinstance(raw, dict):
            return cls()
        auto_raw = raw.get("autoApprove")
        auto: dict[str, Any] = auto_raw if isinstance(auto_raw, dict) else {}
        max_rounds = raw.get("maxRounds")
        return cls(
            model=raw.get("model") if isinstance(raw.get("model"), str) else None,
            max_rounds=max_rounds if isinstance(max_rounds, int) and max_rounds > 0 else None,
            storage_dir=raw.get("storageDir") if isinstance(raw.get("storageDir"), str) else None,
            auto_approve_edits=bool(auto.get("edits", False)),
            auto_approve_commands=bool(auto.get("commands", False)),
        )

    def resolved_model(self) -> str | None:
        """Initialization options win over the environment."""
        return self.model or os.environ.get("PLANSIGHT_MODEL") or None


def event_payload(event: Event) -> dict[str, Any] | None:
    """The `plansight/event` params for an event, or None if it is not sent as one."""
    if isinstance(event, RunStarted):
        return {"type": event.type, "prompt": event.prompt}
    if isinstance(event, TextDelta):
        return {"type": event.type, "text": event.text}
    if isinstance(event, ToolInputDelta):
        return {
            "type": event.type,
            "id": event.id,
            "name": event.name,
            "partialJson": event.partial_json,
        }
    if isinstance(event, ToolCall):
        return {"type": event.type, "id": event.id, "name": event.name, "input": event.input}
    if isinstance(event, ToolResult):
        return {
            "type": event.type,
            "id": event.id,
            "name": event.name,
            "isError": event.is_error,
            "summary": event.summary,
        }
    if isinstance(event, Reminder):
        return {
            "type": event.type,
            "text": event.text,
            "level": event.level,
            "rounds": event.rounds,
        }
    if isinstance(event, PlanDraft):
        return {"type": event.type, "items": list(event.items)}
    if isinstance(event, FilesChanged):
        return {"type": event.type, "paths": list(event.paths)}
    if isinstance(event, RunFinished):
        return {"type": event.type, "result": event.result.to_wire()}
    return None
