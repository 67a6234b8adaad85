"""One registry of the model's tools: each tool's schema sits next to its handler, and next to
the functions that say in one line what a call does (`summarize_input`, for the `toolCall` event)
and what its result was (`summarize`, for `toolResult`), and next to how a client shows a call
(`display`: its kind, a title in words and the places it reads or writes, which ACP's tool calls
carry; whether it waits for the user's permission)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any, Literal, Protocol

from plansight.engine.conversation import Block
from plansight.protocol.names import INPUT_SUMMARY_CHARS, one_line, plain_input_summary
from plansight.tools.context import ToolContext
from plansight.tools.errors import ToolError
from plansight.tools.names import given_path

log = logging.getLogger(__name__)

# The most any tool result shows of an output (a listing, matches, a command's output, a diff).
OUTPUT_MAX_BYTES = 30_000
# The most a result's one-line summary (what clients show of it) holds.
SUMMARY_CHARS = 200

# A handler answers its result's text, or a whole outcome: content blocks (an MCP tool's
# images), or an error result it words itself.
Handler = Callable[[ToolContext, dict[str, Any]], Awaitable["str | ToolOutcome"]]
# The line clients show for a successful result, from its content (default: the first line).
Summarizer = Callable[[str], str]
# The line clients show for a call, from its input as the model sent it (not yet checked), e.g.
# `src/app.py:10-39` for read_file (the clients show the tool's name beside it); default: the
# input as compact JSON (`plain_input_summary`).
InputSummarizer = Callable[[dict[str, Any]], str]


# What sort of call it is, in the words editors use for tool calls (ACP's `ToolKind`).
ToolKind = Literal[
    "read", "edit", "delete", "move", "search", "execute", "think", "fetch", "switch_mode", "other"
]


@dataclass(frozen=True)
class ToolPlace:
    """A file a call reads or writes: its path as the model gave it (relative to the workspace
    root, or absolute) and, where it has one, the line (1-based)."""

    path: str
    line: int | None = None


# A call's title in words, from its input as the model sent it and its one-line summary.
Titler = Callable[[dict[str, Any], str | None], str]
# The files a call reads or writes, from its input as the model sent it.
Locator = Callable[[dict[str, Any]], list[ToolPlace]]


@dataclass(frozen=True)
class ToolDisplay:
    """How a client shows one call (`ToolRegistry.display`)."""

    kind: ToolKind
    title: str
    places: list[ToolPlace]
    asks: bool  # it waits for the user's permission (it runs once allowed)


class ToolPreview(Protocol):
    """Shows one call of a tool while its input streams, before the call is complete."""

    def update(self, partial_json: str) -> None:
        """Called with the input JSON as streamed so far, after every chunk."""


# Makes the preview of one call; whatever it remembers between chunks lives in it.
PreviewFactory = Callable[["ToolContext"], ToolPreview]


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    input_schema: dict[str, Any]
    handler: Handler
    preview: PreviewFactory | None = None
    summarize: Summarizer | None = None
    summarize_input: InputSummarizer | None = None
    # Results that compaction never clears: they hold the plan and the notes the model keeps.
    keeps_results: bool = False
    # It writes files or runs commands: refused while a plan awaits approval (plan mode).
    changes_workspace: bool = False
    # It exists for the plan (todo, submit_plan): not offered in a session without planning.
    for_planning: bool = False
    # How clients show a call (ACP's tool calls): its kind, its title (default: the name and
    # the input's summary), the files it reads or writes, and whether it asks the user first.
    kind: ToolKind = "other"
    title: Titler | None = None
    locations: Locator | None = None
    asks: bool = False

    def definition(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "description": self.description,
            "input_schema": self.input_schema,
        }


@dataclass(frozen=True)
class ToolOutcome:
    content: str | list[Block]  # a tool_result's content: text, or blocks (text and images)
    is_error: bool

    @property
    def text(self) -> str:
        """The content's text (its text blocks joined, for content blocks)."""
        if isinstance(self.content, str):
            return self.content
        return "\n".join(b["text"] for b in self.content if b.get("type") == "text")


def first_line(content: str) -> str:
    stripped = content.strip()
    return stripped.splitlines()[0] if stripped else ""


class PreviewStream:
    """The input of one streaming tool call, gathered chunk by chunk and shown to its preview."""

    def __init__(self, name: str, preview: ToolPreview) -> None:
        self._name = name
        self._preview = preview
        self._parts: list[str] = []

    def feed(self, chunk: str) -> None:
        self._parts.append(chunk)
        try:
            self._preview.update("".join(self._parts))
        except Exception:
            # A preview is a courtesy: its bug must not cost the run.
            log.exception("preview of %s failed", self._name)


class ToolRegistry:
    """The session's own tools, plus the tools of the current run (`set_run_tools`: the MCP
    servers' tools, fixed as each run starts so that the cached prompt prefix holds)."""

    def __init__(self, tools: Iterable[Tool]) -> None:
        self._base: dict[str, Tool] = {}
        for tool in tools:
            if tool.name in self._base:
                raise ValueError(f"duplicate tool {tool.name!r}")
            self._base[tool.name] = tool
        self._tools = dict(self._base)

    def set_run_tools(self, tools: Iterable[Tool]) -> None:
        """The tools offered beside the session's own from now on (replacing the last run's)."""
        merged = dict(self._base)
        for tool in tools:
            if tool.name in merged:
                raise ValueError(f"duplicate tool {tool.name!r}")
            merged[tool.name] = tool
        self._tools = merged

    def definitions(self) -> list[dict[str, Any]]:
        return [tool.definition() for tool in self._tools.values()]

    def keeps_results(self, name: str) -> bool:
        """Whether compaction must keep this tool's results (an unknown tool's: no)."""
        tool = self._tools.get(name)
        return tool is not None and tool.keeps_results

    def preview_stream(self, ctx: ToolContext, name: str) -> PreviewStream | None:
        """Where to feed a call's input as it streams, if its tool shows a preview (todo)."""
        tool = self._tools.get(name)
        if tool is None or tool.preview is None:
            return None
        return PreviewStream(name, tool.preview(ctx))

    def summary(self, name: str, outcome: ToolOutcome) -> str:
        """One line for clients: the tool's own summary of a success, else the first line."""
        tool = self._tools.get(name)
        line = first_line(outcome.text)
        if tool is not None and tool.summarize is not None and not outcome.is_error:
            try:
                line = tool.summarize(outcome.text)
            except Exception:
                # A summary is a courtesy: its bug must not cost the run.
                log.exception("summary of %s failed", name)
        return line[:SUMMARY_CHARS]

    def input_summary(self, name: str, tool_input: Any) -> str:
        """One line for clients saying what a call does: its tool's own summary of the input,
        else (an unknown tool, one without a summarizer, input that is not an object) the input
        as compact JSON."""
        tool = self._tools.get(name)
        if tool is not None and tool.summarize_input is not None and isinstance(tool_input, dict):
            try:
                return one_line(tool.summarize_input(tool_input))
            except Exception:
                # A summary is a courtesy: its bug must not cost the run.
                log.exception("input summary of %s failed", name)
        return plain_input_summary(tool_input)

    def display(
        self, name: str, tool_input: dict[str, Any], summary: str | None = None
    ) -> ToolDisplay | None:
        """How a client shows a call of `name` (None: no such tool now, such as a past run's
        MCP tool after a restart)."""
        tool = self._tools.get(name)
        if tool is None:
            return None
        title = f"{name} {summary}" if summary else name
        places: list[ToolPlace] = []
        try:
            if tool.title is not None:
                title = tool.title(tool_input, summary)
            if tool.locations is not None:
                places = tool.locations(tool_input)
        except Exception:
            # A title is a courtesy: its bug must not cost the run.
            log.exception("display of %s failed", name)
        return ToolDisplay(tool.kind, title, places, tool.asks)

    async def call(self, ctx: ToolContext, name: str, tool_input: Any) -> ToolOutcome:
        """The tool's outcome, with every known secret value withheld (workspace/secretvalues.py):
        the one place every tool result passes, the built-in tools' and MCP servers' alike, before
        it becomes a tool_result, a `toolResult` event and history."""
        outcome = await self._call(ctx, name, tool_input)
        secrets = ctx.secrets
        if secrets is None:
            return outcome
        tool = self._tools.get(name)
        if tool is None or tool.changes_workspace or name not in self._base:
            # A command or an MCP server may have written a protected file anywhere.
            secrets.mark_changed()
        # A walk of the workspace in a thread; a stat of each known file (microseconds) here,
        # as a thread's round trip would cost more than the stats.
        redactor = (
            await asyncio.to_thread(secrets.redactor) if secrets.walk_due else secrets.redactor()
        )
        if not redactor:
            return outcome
        if isinstance(outcome.content, str):
            return replace(outcome, content=redactor.redact(outcome.content))
        return replace(outcome, content=redactor.redact_blocks(outcome.content))

    async def _call(self, ctx: ToolContext, name: str, tool_input: Any) -> ToolOutcome:
        tool = self._tools.get(name)
        if tool is None:
            known = ", ".join(self._tools)
            return ToolOutcome(f"Unknown tool {name!r}. Available tools: {known}.", True)
        if not isinstance(tool_input, dict):
            return ToolOutcome(f"{name}: the input must be a JSON object.", True)
        refusal = ctx.run.refusal(name, tool.changes_workspace)
        if refusal is not None:
            return ToolOutcome(refusal, True)
        try:
            result = await tool.handler(ctx, tool_input)
        except ToolError as err:
            return ToolOutcome(str(err), True)
        except Exception:
            # A bug, not the model's fault: log it loudly, but keep the conversation valid.
            log.exception("tool %s failed unexpectedly", name)
            return ToolOutcome(
                f"{name} failed with an internal error (logged for the developers).", True
            )
        return result if isinstance(result, ToolOutcome) else ToolOutcome(result, False)


def text_of(tool_input: dict[str, Any], key: str) -> str:
    """A field of unchecked input as a summary shows it: the string, else ""."""
    value = tool_input.get(key)
    return value if isinstance(value, str) else ""


def line_of(tool_input: dict[str, Any], key: str, limit: int = INPUT_SUMMARY_CHARS) -> str:
    """A text field of unchecked input on one line, cut to `limit` characters."""
    return one_line(text_of(tool_input, key), limit)


def line_number_of(tool_input: dict[str, Any], key: str) -> int | None:
    """A line number (1 or more) of unchecked input as a summary shows it, else None."""
    value = tool_input.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float) or int(value) != value:
        return None
    return int(value) if value >= 1 else None


def path_place(tool_input: dict[str, Any], line: int | None = None) -> list[ToolPlace]:
    """The call's `path` (a name the model saw quoted is the file), if it gave one."""
    path = given_path(text_of(tool_input, "path"))
    return [ToolPlace(path, line)] if path else []


def require_str(tool_input: dict[str, Any], key: str, *, allow_empty: bool = True) -> str:
    value = tool_input.get(key)
    if not isinstance(value, str):
        raise ToolError(f"'{key}' is required and must be a string.")
    if not allow_empty and not value.strip():
        raise ToolError(f"'{key}' must not be empty.")
    return value


def optional_str(tool_input: dict[str, Any], key: str) -> str | None:
    value = tool_input.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise ToolError(f"'{key}' must be a string.")
    return value


def optional_int(tool_input: dict[str, Any], key: str, *, minimum: int) -> int | None:
    value = tool_input.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or int(value) != value:
        raise ToolError(f"'{key}' must be a whole number.")
    if value < minimum:
        raise ToolError(f"'{key}' must be at least {minimum}.")
    return int(value)
