"""The Plansight wire protocol, version 2: names, error codes, options and payload mapping.

The one place the wire's names live. The language server (`plansight.lsp`) and the terminal
client (`plansight.cli`) both use it. It imports nothing of the engine, so a client that uses
it loads none of it (a test checks); engine objects reach the wire through `event_payload` and
`wire_value`, which read dataclasses generically.

docs/protocol.md describes the protocol; its reference tables are generated from the specs
below (`python -m plansight.protocol docs/protocol.md` rewrites them; a test keeps them
current). A feature that lands marks its methods and events `built=True` here.
"""

from __future__ import annotations

import dataclasses
import math
import re
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

PROTOCOL_VERSION = 2

# Methods ------------------------------------------------------------------------------------

# Client → server requests
RUN = "plansight/run"
STATE = "plansight/state"
EDIT_PLAN = "plansight/editPlan"
RESET = "plansight/reset"
COMPACT = "plansight/compact"
CHECKPOINTS = "plansight/checkpoints"
RESTORE = "plansight/restore"
HISTORY = "plansight/history"
# Extensions of this server (optional for clients): what a client's Changes view needs.
CHANGES = "plansight/changes"
CHECKPOINT_FILE = "plansight/checkpointFile"
# Server → client notifications
TODOS = "plansight/todos"
SCRATCHPAD = "plansight/scratchpad"
EVENT = "plansight/event"
# Server → client requests
REVIEW_EDIT = "plansight/reviewEdit"
APPROVE_COMMAND = "plansight/approveCommand"
REVIEW_PLAN = "plansight/reviewPlan"
ASK_USER = "plansight/askUser"

Direction = Literal["client→server", "server→client"]
Kind = Literal["request", "notification"]


@dataclass(frozen=True)
class MethodSpec:
    name: str
    direction: Direction
    kind: Kind
    params: str  # the payload's shape, as docs/protocol.md shows it
    result: str  # "" for a notification
    since: int  # the protocol version that added it
    built: bool  # whether this server implements it yet


METHODS: tuple[MethodSpec, ...] = (
    MethodSpec(
        RUN,
        "client→server",
        "request",
        "{ prompt, newSession?, mode?, todoId? }",
        "RunResult",
        1,
        True,
    ),
    MethodSpec(STATE, "client→server", "request", "{}", "{ todos, scratchpad, running }", 1, True),
    MethodSpec(EDIT_PLAN, "client→server", "request", "{ items, version? }", "TodoState", 1, True),
    MethodSpec(RESET, "client→server", "request", "{}", "null", 1, True),
    MethodSpec(COMPACT, "client→server", "request", "{}", "{ beforeTokens, afterTokens }", 2, True),
    MethodSpec(CHECKPOINTS, "client→server", "request", "{}", "{ checkpoints }", 2, True),
    MethodSpec(
        RESTORE,
        "client→server",
        "request",
        "{ checkpoint?, todoId?, paths?, conversation?, force?, dryRun? }",
        "{ restored, skipped }",
        2,
        True,
    ),
    MethodSpec(HISTORY, "client→server", "request", "{ limit? }", "{ runs }", 2, True),
    MethodSpec(
        CHANGES,
        "client→server",
        "request",
        "{}",
        "{ steps: [{ todoId, files: [{ path, before?, change }] }] }",
        0,
        True,
    ),
    MethodSpec(
        CHECKPOINT_FILE,
        "client→server",
        "request",
        "{ checkpoint, path }",
        "{ exists, text?, binary? }",
        0,
        True,
    ),
    MethodSpec(TODOS, "server→client", "notification", "TodoState", "", 1, True),
    MethodSpec(SCRATCHPAD, "server→client", "notification", "{ content }", "", 1, True),
    MethodSpec(EVENT, "server→client", "notification", "{ type, ... }", "", 1, True),
    MethodSpec(
        REVIEW_EDIT,
        "server→client",
        "request",
        "{ id, uri, oldText, newText, description, todoId? }",
        "{ accepted, feedback?, newText? }",
        1,
        True,
    ),
    MethodSpec(
        APPROVE_COMMAND,
        "server→client",
        "request",
        "{ command, cwd }",
        "{ approved, feedback? }",
        1,
        True,
    ),
    MethodSpec(
        REVIEW_PLAN,
        "server→client",
        "request",
        "{ todos, summary, scratchpad, problem? }",
        '{ decision: "approve" | "revise" | "cancel", feedback?, items? }',
        2,
        True,
    ),
    MethodSpec(
        ASK_USER,
        "server→client",
        "request",
        "{ question, options?, multiSelect? }",
        "{ answer?, answers?, dismissed? }",
        2,
        True,
    ),
)

CANCEL_REQUEST = "$/cancelRequest"  # LSP's own; the server sends it for requests a cancel withdrew

# Error codes --------------------------------------------------------------------------------

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602  # a plan that breaks a rule, a bad parameter
INTERNAL_ERROR = -32603
SERVER_NOT_INITIALIZED = -32002
REQUEST_FAILED = -32803  # a run in progress, a stale plan version, checkpoints off
REQUEST_CANCELLED = -32800  # a cancelled run, when answered with an error

ERROR_CODES: Mapping[str, int] = {
    "PARSE_ERROR": PARSE_ERROR,
    "INVALID_REQUEST": INVALID_REQUEST,
    "METHOD_NOT_FOUND": METHOD_NOT_FOUND,
    "INVALID_PARAMS": INVALID_PARAMS,
    "INTERNAL_ERROR": INTERNAL_ERROR,
    "SERVER_NOT_INITIALIZED": SERVER_NOT_INITIALIZED,
    "REQUEST_FAILED": REQUEST_FAILED,
    "REQUEST_CANCELLED": REQUEST_CANCELLED,
}

# Values -------------------------------------------------------------------------------------

TODO_STATUSES = ("pending", "in_progress", "completed", "cancelled", "failed")
RUN_STATUSES = ("done", "cancelled", "error", "limit", "refused")
PLAN_SOURCES = ("model", "user", "restore")
RUN_MODES = ("act", "plan")
PLAN_DECISIONS = ("approve", "revise", "cancel")
COMPACTION_STRATEGIES = ("clearToolResults", "summary")
MAX_TODO_ITEMS = 20

# The plan as text: `TodoState.rendered`, and what a terminal user edits -----------------------

TODO_MARKERS: Mapping[str, str] = {
    "pending": "[ ]",
    "in_progress": "[>]",
    "completed": "[x]",
    "cancelled": "[-]",
    "failed": "[!]",
}
_STATUS_OF_MARKER = {marker[1]: status for status, marker in TODO_MARKERS.items()}
_ITEM_LINE = re.compile(r"\[(?P<mark>.)\]\s*(?:#(?P<id>[^\s:]+)\s*:)?\s*(?P<text>.*)")
_COUNT_LINE = re.compile(r"\(\d+/\d+ completed\)")
PLAN_TEXT_HELP = """\
# The plan, one item a line: `[ ] #1: text`. Save and quit the editor when you are done.
# [ ] pending   [>] in progress   [x] completed   [-] cancelled   [!] failed
# Reorder, add or remove lines; a new item may leave out its id (`[ ] text`).
# Lines starting with # are ignored.
"""


class PlanTextError(ValueError):
    """Plan text that cannot be read; the message names the line and what is wrong."""


def plan_text(items: Any) -> str:
    """Plan items (wire dicts) as the lines `[ ] #1: text` that `TodoState.rendered` shows."""
    lines = []
    for item in items or []:
        marker = TODO_MARKERS.get(str(field_of(item, "status")), "[ ]")
        lines.append(f"{marker} #{field_of(item, 'id')}: {field_of(item, 'text')}")
    return "\n".join(lines) + ("\n" if lines else "")


def parse_plan_text(text: str, reserved: Iterable[str] = ()) -> list[dict[str, str]]:
    """The items of plan text, in order (`{id, text, status}`): the lines `plan_text` writes,
    `rendered`'s count line, blank lines and `#` comments skipped. An item without an id gets
    the next number that neither the text nor `reserved` (the ids of the plan that was edited:
    a removed item's id is not given to a new one) uses. The plan's rules (at most 20 items,
    one in progress) are the server's to check; this reads the text only, and raises
    PlanTextError naming the line."""
    parsed: list[tuple[int, str | None, str, str]] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#") or _COUNT_LINE.fullmatch(line):
            continue
        match = _ITEM_LINE.fullmatch(line)
        if match is None:
            raise PlanTextError(
                f"line {number}: {_quoted(line)} is not an item; write it as `[ ] #1: text`."
            )
        status = _STATUS_OF_MARKER.get(match["mark"])
        if status is None:
            raise PlanTextError(
                f"line {number}: unknown marker [{match['mark']}]; use one of "
                + " ".join(TODO_MARKERS.values())
                + "."
            )
        item_text = match["text"].strip()
        if match["id"] is None and item_text.startswith("#"):
            raise PlanTextError(f"line {number}: write the id as `#1: text`, with its colon.")
        if not item_text:
            raise PlanTextError(f"line {number}: the item has no text.")
        parsed.append((number, match["id"], item_text, status))
    used = {item_id for _, item_id, _, _ in parsed if item_id} | set(reserved)
    items: list[dict[str, str]] = []
    seen: set[str] = set()
    next_number = 1
    for number, item_id, item_text, status in parsed:
        if item_id is None:
            while str(next_number) in used:
                next_number += 1
            item_id = str(next_number)
            used.add(item_id)
        if item_id in seen:
            raise PlanTextError(f"line {number}: #{item_id} is used twice; ids must differ.")
        seen.add(item_id)
        items.append({"id": item_id, "text": item_text, "status": status})
    return items


def _quoted(line: str) -> str:
    return repr(line if len(line) <= 40 else line[:37] + "...")


# Events (`plansight/event` types) -----------------------------------------------------------


@dataclass(frozen=True)
class EventSpec:
    type: str
    fields: str  # the payload's fields besides `type`, as docs/protocol.md shows them
    since: int  # 0: an extension of this server, in no version of the contract
    built: bool


EVENTS: tuple[EventSpec, ...] = (
    EventSpec("runStarted", "prompt, mode?, todoId?", 1, True),
    EventSpec("textDelta", "text", 1, True),
    EventSpec("toolCall", "id, name, input", 1, True),
    EventSpec("toolResult", "id, name, isError, summary", 1, True),
    EventSpec("reminder", "text, level, rounds", 1, True),
    EventSpec("filesChanged", "paths", 1, True),
    EventSpec("runFinished", "result: RunResult", 1, True),
    EventSpec("compacted", "beforeTokens, afterTokens, strategy", 2, True),
    EventSpec("thinkingDelta", "text", 2, True),
    EventSpec("checkpoint", "checkpoint: Checkpoint", 2, True),
    EventSpec("toolInputDelta", "id, name, partialJson", 0, True),
    EventSpec("editReviewed", "id, path, description, outcome, todoId?, feedback?", 0, True),
    EventSpec("planDraft", "items", 0, True),
)
EVENT_TYPES = frozenset(spec.type for spec in EVENTS)

# Capabilities -------------------------------------------------------------------------------

# What a client may set true in `capabilities.experimental.plansight`.
CLIENT_CAPABILITIES = ("reviewEdit", "approveCommand", "reviewPlan", "askUser", "toolInputDelta")


def server_capability() -> dict[str, Any]:
    """The server's `capabilities.experimental.plansight`."""
    return {"version": PROTOCOL_VERSION}


def client_offers(experimental: Any, name: str) -> bool:
    """Whether a client's `capabilities.experimental` sets `plansight.<name>` to true."""
    plansight = field_of(to_plain(experimental), "plansight")
    return isinstance(plansight, dict) and plansight.get(name) is True


# Payloads -----------------------------------------------------------------------------------


def field_of(params: Any, name: str, default: Any = None) -> Any:
    """A field of pygls's namedtuple params, a plain dict, or an lsprotocol object."""
    if params is None:
        return default
    if isinstance(params, dict):
        return params.get(name, default)
    return getattr(params, name, default)


def to_plain(value: Any) -> Any:
    """pygls's nested namedtuples (how custom params arrive) as dicts and lists again."""
    if isinstance(value, tuple) and hasattr(value, "_asdict"):
        return {k: to_plain(v) for k, v in value._asdict().items()}
    if isinstance(value, list | tuple):
        return [to_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: to_plain(v) for k, v in value.items()}
    return value


# A dataclass field with this metadata stays off the wire (a reminder's location, say).
LOCAL: Mapping[str, bool] = {"wire": False}


def camel_case(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def wire_value(value: Any) -> Any:
    """A value as it goes on the wire: `to_wire()` where a value has one, dataclasses as dicts
    with camelCase keys (fields that are None or `LOCAL` left out), tuples as lists. Keys of
    plain dicts are kept: they are payloads already (a tool's input)."""
    to_wire = getattr(value, "to_wire", None)
    if callable(to_wire):
        return to_wire()
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            camel_case(f.name): wire_value(item)
            for f in dataclasses.fields(value)
            if f.metadata.get("wire", True) and (item := getattr(value, f.name)) is not None
        }
    if isinstance(value, list | tuple):
        return [wire_value(item) for item in value]
    if isinstance(value, dict):
        return {key: wire_value(item) for key, item in value.items()}
    return value


def event_payload(event: Any) -> dict[str, Any] | None:
    """The `plansight/event` params of an engine event, or None if it is not sent as one.

    An event is a dataclass whose `type` field is its wire name; its other fields become the
    payload's (camelCase), `type` first.
    """
    kind = getattr(event, "type", None)
    if kind not in EVENT_TYPES or not dataclasses.is_dataclass(event):
        return None
    payload = wire_value(event)
    return {"type": kind, **{k: v for k, v in payload.items() if k != "type"}}


# Initialization options ---------------------------------------------------------------------


@dataclass(frozen=True)
class Thinking:
    """`thinking: {}` turns extended thinking on; None leaves the budget to the server."""

    budget_tokens: int | None = None


@dataclass(frozen=True)
class InitOptions:
    """`initializationOptions`, read and checked. A value that breaks its rule is ignored (the
    default applies) and described in `problems`, which the server logs for the user."""

    model: str | None = None
    max_rounds: int | None = None
    storage_dir: str | None = None
    auto_approve_edits: bool = False
    auto_approve_commands: bool = False
    context_window: int | None = None  # tokens; None: what the Models API says, else 200000
    compact_at: float | None = None  # share of the window; None: 0.8
    thinking: Thinking | None = None  # None: no extended thinking
    checkpoints: bool = True
    planning: bool = True  # an extension: False for no plan tools, reminders or done gate
    problems: tuple[str, ...] = field(default=(), compare=False)

    @classmethod
    def parse(cls, raw: Any) -> InitOptions:
        raw = to_plain(raw)
        if raw is None:
            return cls()
        if not isinstance(raw, dict):
            return cls(problems=(f"initializationOptions must be an object, not {_shown(raw)}",))
        problems: list[str] = []
        top = _OptionReader(raw, "", problems)
        auto = _OptionReader(top.object("autoApprove") or {}, "autoApprove.", problems)
        thinking = top.object("thinking", nullable=True)
        # Any budget below the API's minimum (0 included) is raised to it (PROTOCOL.md).
        budget = _OptionReader(thinking or {}, "thinking.", problems).whole(
            "budgetTokens", minimum=0
        )
        return cls(
            model=top.text("model"),
            max_rounds=top.whole("maxRounds"),
            storage_dir=top.text("storageDir"),
            auto_approve_edits=auto.flag("edits", False),
            auto_approve_commands=auto.flag("commands", False),
            context_window=top.whole("contextWindow"),
            compact_at=top.share("compactAt"),
            thinking=Thinking(budget) if thinking is not None else None,
            checkpoints=top.flag("checkpoints", True),
            planning=top.flag("planning", True),
            problems=tuple(problems),
        )


class _OptionReader:
    """Reads typed values from one options object, noting each value it has to ignore."""

    def __init__(self, raw: Mapping[str, Any], prefix: str, problems: list[str]) -> None:
        self.raw = raw
        self.prefix = prefix
        self.problems = problems

    def _ignore(self, key: str, rule: str) -> None:
        self.problems.append(
            f"initializationOptions.{self.prefix}{key} {rule}, not {_shown(self.raw[key])}; "
            "the default applies"
        )

    def text(self, key: str) -> str | None:
        value = self.raw.get(key)
        if value is None:
            return None
        if isinstance(value, str) and value.strip():
            return value
        self._ignore(key, "must be a non-empty string")
        return None

    def whole(self, key: str, *, minimum: int = 1) -> int | None:
        value = self.raw.get(key)
        if value is None:
            return None
        if isinstance(value, int) and not isinstance(value, bool) and value >= minimum:
            return value
        self._ignore(key, f"must be a whole number of at least {minimum}")
        return None

    def share(self, key: str) -> float | None:
        value = self.raw.get(key)
        if value is None:
            return None
        if isinstance(value, int | float) and not isinstance(value, bool):
            if math.isfinite(value) and 0 < value <= 1:
                return float(value)
        self._ignore(key, "must be a number above 0 and at most 1")
        return None

    def flag(self, key: str, default: bool) -> bool:
        value = self.raw.get(key)
        if value is None:
            return default
        if isinstance(value, bool):
            return value
        self._ignore(key, "must be true or false")
        return default

    def object(self, key: str, *, nullable: bool = False) -> dict[str, Any] | None:
        value = self.raw.get(key)
        if value is None:
            return None
        if isinstance(value, dict):
            return value
        self._ignore(key, "must be an object or null" if nullable else "must be an object")
        return None


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else f"{text[:57]}..."


# The reference part of docs/protocol.md -----------------------------------------------------

BEGIN_REFERENCE = "<!-- generated from plansight/protocol.py: python -m plansight.protocol -->"
END_REFERENCE = "<!-- end of the generated part -->"


def _version(since: int) -> str:
    return f"v{since}" if since else "extension"


def _code(text: str) -> str:
    """`text` as a code span in a table cell (a bare | would end the cell)."""
    return "`" + text.replace("|", "\\|") + "`"


def reference_markdown() -> str:
    """The tables of names, codes and values that docs/protocol.md shows, from the specs above."""
    built = {True: "yes", False: "not yet"}
    lines = [
        "| method | direction | kind | params | result | since | built |",
        "|---|---|---|---|---|---|---|",
        *(
            f"| `{m.name}` | {m.direction} | {m.kind} | {_code(m.params)} | "
            f"{_code(m.result) if m.result else '—'} | {_version(m.since)} | {built[m.built]} |"
            for m in METHODS
        ),
        "",
        "| `plansight/event` type | fields besides `type` | since | built |",
        "|---|---|---|---|",
        *(
            f"| `{e.type}` | {_code(e.fields)} | {_version(e.since)} | {built[e.built]} |"
            for e in EVENTS
        ),
        "",
        "| error code | name |",
        "|---|---|",
        *(f"| {code} | `{name}` |" for name, code in ERROR_CODES.items()),
        "",
        "| value | one of |",
        "|---|---|",
        *(
            f"| {what} | {', '.join(f'`{v}`' for v in values)} |"
            for what, values in (
                ("`TodoItem.status`", TODO_STATUSES),
                ("`RunResult.status`", RUN_STATUSES),
                ("`TodoState.source`", PLAN_SOURCES),
                ("`plansight/run` `mode`", RUN_MODES),
                ("`plansight/reviewPlan` `decision`", PLAN_DECISIONS),
                ("`compacted` `strategy`", COMPACTION_STRATEGIES),
                ("client capabilities (`experimental.plansight`)", CLIENT_CAPABILITIES),
            )
        ),
        "",
        f'The server announces `experimental.plansight = {{ "version": {PROTOCOL_VERSION} }}`; '
        f"a plan holds at most {MAX_TODO_ITEMS} items.",
    ]
    return "\n".join(lines)


def with_reference(document: str) -> str:
    """`document` with the text between the reference markers replaced by the current tables."""
    start = document.index(BEGIN_REFERENCE) + len(BEGIN_REFERENCE)
    end = document.index(END_REFERENCE, start)
    return f"{document[:start]}\n{reference_markdown()}\n{document[end:]}"


def main(argv: list[str]) -> int:
    """Print the reference tables, or rewrite them in the Markdown files given."""
    if not argv:
        print(reference_markdown())
        return 0
    for path in argv:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(with_reference(text))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
