"""Everything the engine reports while it works. Listeners (the LSP layer, tests) subscribe.

Each event's `type` is the name it carries on the wire in `plansight/event`; those that go
there become their payload field by field (`plansight.protocol.names.event_payload`: camelCase
names, fields marked `LOCAL` left out). The others are for listeners in the server.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from plansight.plan.plan import TodoState
from plansight.protocol.names import LOCAL

log = logging.getLogger(__name__)

RunStatus = Literal["done", "cancelled", "error", "limit", "refused"]


@dataclass
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_input_tokens: int = 0
    cache_creation_input_tokens: int = 0

    @property
    def total_input_tokens(self) -> int:
        """The whole input, as the API bills it: `input_tokens` is only the part neither read
        from nor written to the cache."""
        return self.input_tokens + self.cache_read_input_tokens + self.cache_creation_input_tokens

    def add(self, other: Usage) -> None:
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens
        self.cache_read_input_tokens += other.cache_read_input_tokens
        self.cache_creation_input_tokens += other.cache_creation_input_tokens

    def to_wire(self) -> dict[str, int]:
        return {
            "inputTokens": self.input_tokens,
            "outputTokens": self.output_tokens,
            "cacheReadInputTokens": self.cache_read_input_tokens,
            "cacheCreationInputTokens": self.cache_creation_input_tokens,
            # An optional field: the sum clients show, made here once.
            "totalInputTokens": self.total_input_tokens,
        }


@dataclass
class RunResult:
    status: RunStatus
    text: str
    rounds: int
    usage: Usage = field(default_factory=Usage)
    error: str | None = None

    def to_wire(self) -> dict[str, Any]:
        wire: dict[str, Any] = {
            "status": self.status,
            "text": self.text,
            "rounds": self.rounds,
            "usage": self.usage.to_wire(),
        }
        if self.error is not None:
            wire["error"] = self.error
        return wire


@dataclass(frozen=True)
class Location:
    """Where the agent last read or edited: a path relative to the root and 0-based lines."""

    path: str
    start_line: int
    end_line: int


@dataclass(frozen=True)
class RunStarted:
    prompt: str
    mode: str = "act"  # "plan": the run plans first (version 2)
    todo_id: str | None = None  # the plan item a focused run works on (version 2)
    type: str = "runStarted"


@dataclass(frozen=True)
class TextDelta:
    text: str
    # The run's model turn the text belongs to (every model request of the run counts, from
    # 1): a client starts a new paragraph where it changes. An optional field on the wire.
    turn: int | None = None
    type: str = "textDelta"


@dataclass(frozen=True)
class ThinkingDelta:
    """Text of the model's extended thinking as it streams (protocol v2)."""

    text: str
    type: str = "thinkingDelta"


@dataclass(frozen=True)
class Compacted:
    """The conversation was made smaller to fit the context window (protocol v2)."""

    before_tokens: int
    after_tokens: int
    strategy: Literal["clearToolResults", "summary"]
    # True: nothing could be made smaller (the sizes are equal, the conversation is as it was);
    # an optional field, so a client that does not know it still reads a valid event.
    unchanged: bool | None = None
    type: str = "compacted"


@dataclass(frozen=True)
class TurnUsage:
    """One model turn's usage, with the context window it fills and the model that answered,
    for listeners in the server (ACP's `usage_update`); not sent as a `plansight/event`."""

    usage: Usage
    context_window: int
    model: str
    # Estimated tokens of what the request held: `systemPrompt`, `conversation`, `toolResults`
    # (`compaction.rules.context_parts`), for `/context`.
    parts: dict[str, int] | None = None
    type: str = "turnUsage"


@dataclass(frozen=True)
class UsageReport:
    """After a model turn, what a status line shows (the `usage` event, an extension): the
    context the turn filled of the model's window, and the cost so far where the model's list
    price is known (`plansight.engine.spend` computes it)."""

    model: str
    context_used: int
    context_window: int
    usage: Usage  # the turn's
    cost_usd: float | None = None  # None (left off the wire): no list price for a model used
    parts: dict[str, int] | None = None  # what the request held, estimated (TurnUsage.parts)
    type: str = "usage"


@dataclass(frozen=True)
class ToolInputDelta:
    """Partial JSON of a tool call's input while it streams (not part of protocol v1)."""

    id: str
    name: str
    partial_json: str
    type: str = "toolInputDelta"


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    input: dict[str, Any]
    # One line saying what the call does, made by the tool's own summarizer (`Tool.
    # summarize_input`), so clients show it as it is; an optional field on the wire.
    summary: str | None = None
    type: str = "toolCall"


@dataclass(frozen=True)
class ToolResult:
    id: str
    name: str
    is_error: bool
    summary: str
    # The result's whole text, for listeners in the server (ACP shows a command's output in
    # its tool call); not sent, nor kept in the history: the summary is what clients show.
    output: str = field(default="", metadata=LOCAL)
    type: str = "toolResult"


@dataclass(frozen=True)
class Reminder:
    text: str
    level: int  # 1: 3-5 rounds without a plan update, 2: from 6, 3: from 9
    rounds: int
    location: Location | None = field(metadata=LOCAL)  # shown as a diagnostic, not sent
    type: str = "reminder"


@dataclass(frozen=True)
class ReminderCleared:
    """The plan was updated or the run ended: any visible reminder should go."""

    type: str = "reminderCleared"


@dataclass(frozen=True)
class FilesChanged:
    paths: tuple[str, ...]
    type: str = "filesChanged"


@dataclass(frozen=True)
class Retrying:
    """The model API failed in a way that is retried (rate limit, overload, server error,
    timeout, no connection): retry `attempt` of `of` starts in `delay_seconds`."""

    attempt: int
    of: int
    reason: str
    delay_seconds: float
    message: str
    type: str = "retrying"


@dataclass(frozen=True)
class RunFinished:
    result: RunResult
    type: str = "runFinished"


EditOutcome = Literal["accepted", "changed", "rejected", "cancelled"]


@dataclass(frozen=True)
class EditReviewed:
    """How a proposed edit was decided (an extension of the protocol): `changed` is accepted
    with the user's own text, `cancelled` a review the run's end withdrew. Clients show the
    edit under its plan item, also after a restart, from the history."""

    id: str
    path: str  # relative to the workspace root, with '/'
    description: str
    outcome: EditOutcome
    todo_id: str | None = None
    feedback: str | None = None
    plan_id: str | None = None  # the plan `todo_id` belongs to: not an earlier plan's item
    type: str = "editReviewed"


@dataclass(frozen=True)
class PlanChanged:
    state: TodoState
    type: str = "planChanged"


@dataclass(frozen=True)
class PlanDraft:
    """The items of a todo call still streaming: shown early, not yet validated or accepted."""

    items: tuple[dict[str, Any], ...]
    type: str = "planDraft"


@dataclass(frozen=True)
class ScratchpadChanged:
    content: str
    type: str = "scratchpadChanged"


class WireRecord(Protocol):
    """A record the engine passes on without knowing it (a checkpoint, checkpoints/manifest.py):
    it has a wire form."""

    def to_wire(self) -> dict[str, Any]: ...


@dataclass(frozen=True)
class CheckpointTaken:
    """A checkpoint of the workspace was taken (protocol v2). Emitted by the checkpoints, which
    sit above the engine: the checkpoint is carried as a record with a wire form."""

    checkpoint: WireRecord
    type: str = "checkpoint"


@dataclass(frozen=True)
class ConversationChanged:
    """The conversation gained a message: a good moment to save it. ``rewritten``: it was
    replaced as a whole (a compaction), so its stored copy must be rewritten, not extended."""

    rewritten: bool = False
    type: str = "conversationChanged"


@dataclass(frozen=True)
class McpChanged:
    """The MCP servers' status changed (protocol v3): each a `plansight.mcp.servers.ServerStatus`
    (typed loosely here: the engine knows nothing of MCP but that it is told)."""

    servers: tuple[Any, ...]
    type: str = "mcp"


@dataclass(frozen=True)
class SessionHistory:
    """A session's past runs (`plansight/history`'s `runs`), sent to a client that opened it
    (protocol version 4); a front door sends it, it never goes on the bus."""

    runs: tuple[Any, ...]
    session_id: str
    type: str = "history"


Event = (
    RunStarted
    | TextDelta
    | ThinkingDelta
    | Compacted
    | ToolInputDelta
    | TurnUsage
    | UsageReport
    | ToolCall
    | ToolResult
    | Reminder
    | ReminderCleared
    | FilesChanged
    | Retrying
    | RunFinished
    | EditReviewed
    | PlanChanged
    | PlanDraft
    | ScratchpadChanged
    | CheckpointTaken
    | ConversationChanged
    | McpChanged
    | SessionHistory
)

EventListener = Callable[[Event], None]


class EventBus:
    """Fans events out to listeners. A failing listener is a bug: logged, the others still run."""

    def __init__(self) -> None:
        self._listeners: list[EventListener] = []
        self._last: list[EventListener] = []

    def subscribe(self, listener: EventListener, *, last: bool = False) -> Callable[[], None]:
        """`last`: after every other listener (storage: the editor hears of a change first)."""
        group = self._last if last else self._listeners
        group.append(listener)
        return lambda: group.remove(listener)

    def emit(self, event: Event) -> None:
        for listener in [*self._listeners, *self._last]:
            try:
                listener(event)
            except Exception:
                log.exception("event listener failed on %s", event.type)
