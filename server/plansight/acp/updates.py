"""What of Plansight each ACP `session/update` carries: pure functions from the engine's events
(and the stored history's payloads) to the updates, no I/O.

- text → `agent_message_chunk`, thinking → `agent_thought_chunk`; a text chunk carries the
  `messageId` of its run and model turn (`textDelta.turn`), so a client starts a new message
  where a later turn's text begins instead of running it on from the earlier one's; and, for
  the clients that ignore `messageId` (CodeCompanion.nvim), a later turn's text begins with a
  blank line in the text itself (`TurnText`);
- the plan → `plan`, the whole plan at every change: `content` the item's text, `priority`
  always `medium` (Plansight has none), `status` pending / in_progress / completed; ACP has no
  cancelled or failed entry, so a `cancelled` item is `completed` and a `failed` one `pending`,
  their content starting `[cancelled] ` / `[failed] `;
- each tool call → `tool_call` (`pending`) with its kind, a title in words, its locations (the
  absolute path and line), as each tool declares them next to its schema (tools/registry.py
  `Tool.kind`, `title`, `locations`; an MCP tool's kind is `other`), and the raw input, then
  `tool_call_update`s: `in_progress` as it runs, an edit's `diff` (the whole document before
  and after), and `completed` / `failed` with the
  result as content (a completed edit keeps its diff; the plan's `todo` call shows the whole
  plan as a Markdown checklist, for the clients that render no `plan` update); a call the
  run's end cut off (cancelled, an error) ends `failed`, its content saying why;
- the plan reminder → a `tool_call` of kind `think` titled `Plan reminder`, completed at once;
- a run's result → the prompt's `stopReason`.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from acp import (
    plan_entry,
    start_tool_call,
    text_block,
    tool_content,
    tool_diff_content,
    update_agent_message_text,
    update_agent_thought_text,
    update_plan,
    update_tool_call,
    update_user_message_text,
)
from acp.schema import (
    AgentMessageChunk,
    AgentPlanUpdate,
    AgentThoughtChunk,
    AvailableCommandsUpdate,
    ConfigOptionUpdate,
    ContentToolCallContent,
    CurrentModeUpdate,
    FileEditToolCallContent,
    SessionInfoUpdate,
    TerminalToolCallContent,
    ToolCallLocation,
    ToolCallProgress,
    ToolCallStart,
    UsageUpdate,
    UserMessageChunk,
)

from plansight.acp.errors import run_error
from plansight.engine.events import (
    Event,
    PlanChanged,
    Reminder,
    RunResult,
    TextDelta,
    ThinkingDelta,
    ToolCall,
    ToolResult,
)
from plansight.engine.hooks import EditProposal
from plansight.mcp.tools import MCP_KIND, title_of_name
from plansight.plan.plan import TodoState
from plansight.plan.review import ReviewContext
from plansight.plan.text import review_changes_lines
from plansight.tools.registry import ToolDisplay, ToolKind, ToolPlace, ToolRegistry

Update = (
    AgentMessageChunk
    | AgentThoughtChunk
    | AgentPlanUpdate
    | ToolCallStart
    | ToolCallProgress
    | UserMessageChunk
    | CurrentModeUpdate
    | AvailableCommandsUpdate
    | UsageUpdate
    | SessionInfoUpdate
    | ConfigOptionUpdate
)
Content = ContentToolCallContent | FileEditToolCallContent | TerminalToolCallContent
StopReason = Literal["end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled"]

REMINDER_TITLE = "Plan reminder"

# ----- the plan ---------------------------------------------------------------------------------


def plan_update(state: TodoState) -> AgentPlanUpdate:
    """The whole plan as ACP shows it (its entries have no ids: the order is the plan's)."""
    entries = []
    for item in state.items:
        if item.status == "cancelled":
            entries.append(plan_entry(f"[cancelled] {item.text}", status="completed"))
        elif item.status == "failed":
            entries.append(plan_entry(f"[failed] {item.text}", status="pending"))
        else:
            entries.append(plan_entry(item.text, status=item.status))
    return update_plan(entries)


# The plan file's item markers (PROTOCOL.md version 4, "The plan as a file in the workspace").
CHECKLIST_MARKERS: Mapping[str, str] = {
    "pending": "[ ]",
    "in_progress": "[~]",
    "completed": "[x]",
    "cancelled": "[-]",
    "failed": "[!]",
}


def plan_checklist(state: TodoState) -> str:
    """The plan as the plan file's item lines, a Markdown checklist: `- [ ] 1. Item text`."""
    if not state.items:
        return "The plan has no items."
    return "\n".join(
        f"- {CHECKLIST_MARKERS.get(item.status, '[ ]')} {item.id}. {item.text}"
        for item in state.items
    )


def proposed_plan(state: TodoState, summary: str, context: ReviewContext | None = None) -> str:
    """The plan put to the user's approval (`submit_plan`), as Markdown; beside the proposal
    the user saw before, what changed (each change with the comment that asked for it) and
    the comments still open."""
    said = summary.strip()
    text = "**Proposed plan**\n\n" + (f"{said}\n\n" if said else "") + plan_checklist(state)
    if context is not None:
        text += "\n\n" + plan_changes(context)
    return text


def plan_changes(context: ReviewContext) -> str:
    """What changed since the proposal the user saw, and the open comments, as Markdown (the
    same lines as the terminal prints: `review_changes_lines`)."""
    return "\n".join(review_changes_lines(context.to_wire()))


# ----- tool calls -------------------------------------------------------------------------------


def call_display(
    tools: ToolRegistry, name: str, tool_input: Mapping[str, Any], summary: str | None = None
) -> ToolDisplay:
    """How the call is shown: as its tool declares it next to its schema (tools/registry.py);
    a tool not offered now (a past run's MCP tool, after a restart) by its name."""
    shown = tools.display(name, dict(tool_input), summary)
    if shown is not None:
        return shown
    mcp_title = title_of_name(name, summary)
    if mcp_title is not None:
        return ToolDisplay(MCP_KIND, mcp_title, [], asks=True)
    return ToolDisplay("other", f"{name} {summary}" if summary else name, [], asks=False)


def tool_kind(tools: ToolRegistry, name: str) -> ToolKind:
    return call_display(tools, name, {}).kind


def tool_title(
    tools: ToolRegistry, name: str, tool_input: Mapping[str, Any], summary: str | None = None
) -> str:
    """What the call does, in words."""
    return call_display(tools, name, tool_input, summary).title


def tool_locations(root: Path, places: Sequence[ToolPlace]) -> list[ToolCallLocation]:
    """Where the call reads or writes, as an absolute path (and line where it has one)."""
    return [
        ToolCallLocation(
            path=place.path if Path(place.path).is_absolute() else str(root / place.path),
            line=place.line,
        )
        for place in places
    ]


def tool_started(root: Path, tools: ToolRegistry, call: ToolCall) -> ToolCallStart:
    shown = call_display(tools, call.name, call.input, call.summary)
    return start_tool_call(
        call.id,
        shown.title,
        kind=shown.kind,
        status="pending",
        locations=tool_locations(root, shown.places) or None,
        raw_input=call.input,
    )


def tool_running(tool_call_id: str) -> ToolCallProgress:
    return update_tool_call(tool_call_id, status="in_progress")


def tool_finished(
    result: ToolResult, output: str | None = None, kept: Sequence[Content] = ()
) -> ToolCallProgress:
    """The call's end; `output` the whole result the model read, else the one-line summary.
    An update's content replaces the call's: `kept` is what it showed before and keeps (a
    completed edit's diff), the result's text after it."""
    text = output if output is not None else result.summary
    content: list[Content] = [*kept, *([tool_content(text_block(text))] if text else [])]
    return update_tool_call(
        result.id,
        status="failed" if result.is_error else "completed",
        content=content or None,
    )


def tool_cut_off(
    tool_call_id: str, why: str, kind: ToolKind | None = None, title: str | None = None
) -> ToolCallProgress:
    """A call the run's end cut off: it never finished, and says so. It repeats the call's
    kind and title: a client may take this update for a new call (CodeCompanion.nvim, whose
    Stop forgets the cancelled turn's calls, showed it in the next turn as "Other: Tool
    call")."""
    return update_tool_call(
        tool_call_id,
        title=title,
        kind=kind,
        status="failed",
        content=[tool_content(text_block(why))],
    )


def cut_off_reason(status: str) -> str:
    if status == "cancelled":
        return "Cancelled with the run: this call did not finish."
    return "Stopped: the run ended before this call finished."


def first_changed_line(old: str, new: str) -> int:
    """The 1-based line where `new` first differs from `old`."""
    for number, (before, after) in enumerate(
        zip(old.splitlines(), new.splitlines(), strict=False), start=1
    ):
        if before != after:
            return number
    return min(len(old.splitlines()), len(new.splitlines())) + 1


def edit_diff(tool_call_id: str, proposal: EditProposal) -> ToolCallProgress:
    """An edit's content: the whole document before and after (as `reviewEdit` shows it)."""
    return update_tool_call(
        tool_call_id,
        content=[
            tool_diff_content(
                str(proposal.path),
                proposal.new_text,
                proposal.old_text if proposal.old_text else None,
            )
        ],
        locations=[
            ToolCallLocation(
                path=str(proposal.path),
                line=first_changed_line(proposal.old_text, proposal.new_text),
            )
        ],
    )


def reminder_call(reminder_text: str, call_id: str | None = None) -> ToolCallStart:
    return start_tool_call(
        call_id or f"plansight-reminder-{uuid.uuid4().hex[:12]}",
        REMINDER_TITLE,
        kind="think",
        status="completed",
        content=[tool_content(text_block(_untagged(reminder_text)))],
    )


def _untagged(text: str) -> str:
    """The reminder as a person reads it: without the `<reminder>` tags the model reads it in
    (CodeCompanion.nvim showed "Plan reminder — <reminder>Update your todos.</reminder>")."""
    found = re.fullmatch(r"\s*<(\w[\w-]*)>(.*)</\1>\s*", text, re.DOTALL)
    return found[2].strip() if found else text


# ----- events and results -----------------------------------------------------------------------


class TurnText:
    """A run's text as ACP carries it: a later model turn's text begins with a blank line, so
    that a client ignoring `messageId` does not run two turns' text together."""

    def __init__(self) -> None:
        self._turn: object = None
        self._ending = ""  # the last two characters of the text so far

    def __call__(self, text: str, turn: object) -> str:
        if self._ending and turn != self._turn:
            gap = "" if self._ending.endswith("\n\n") or text.startswith("\n\n") else "\n\n"
            if gap and (self._ending.endswith("\n") or text.startswith("\n")):
                gap = "\n"
            text = gap + text
        self._turn = turn
        self._ending = (self._ending + text)[-2:]
        return text


def new_run_id() -> str:
    """A run's own part of its text's `messageId`s (`message_chunk`), unique to the run."""
    return f"plansight-{uuid.uuid4().hex[:12]}"


def message_chunk(text: str, run_id: str, turn: object) -> AgentMessageChunk:
    """The model's text as an `agent_message_chunk`; with its turn (an int), the chunk's
    `messageId` names the run (`run_id`, unique) and the turn: a changed id is a new message."""
    if not isinstance(turn, int):
        return update_agent_message_text(text)
    return AgentMessageChunk(
        session_update="agent_message_chunk",
        content=text_block(text),
        message_id=f"{run_id}-{turn}",
    )


def event_updates(root: Path, tools: ToolRegistry, event: Event, run_id: str = "") -> list[Update]:
    """The updates an engine event makes, in order (none for the events ACP has no place for).
    Tool calls that ask the user get `in_progress` once allowed (permissions.py), not here.
    `run_id`: unique to the run, for the `messageId`s of its text."""
    if isinstance(event, TextDelta):
        return [message_chunk(event.text, run_id, event.turn)] if event.text else []
    if isinstance(event, ThinkingDelta):
        return [update_agent_thought_text(event.text)] if event.text else []
    if isinstance(event, PlanChanged):
        return [plan_update(event.state)]
    if isinstance(event, ToolCall):
        started: list[Update] = [tool_started(root, tools, event)]
        if not call_display(tools, event.name, event.input).asks:
            started.append(tool_running(event.id))
        return started
    if isinstance(event, ToolResult):
        return [tool_finished(event)]
    if isinstance(event, Reminder):
        return [reminder_call(event.text)]
    return []


def stop_reason(result: RunResult, max_rounds: int) -> StopReason | None:
    """The prompt's `stopReason`; None for an error (answered as a JSON-RPC error)."""
    if result.status == "done":
        return "end_turn"
    if result.status == "cancelled":
        return "cancelled"
    if result.status == "refused":
        return "refusal"
    if result.status == "limit":
        return "max_turn_requests" if result.rounds >= max_rounds else "max_tokens"
    return None


# ----- the stored history -----------------------------------------------------------------------


def replayed(
    root: Path, tools: ToolRegistry, runs: Iterable[Mapping[str, Any]], plan: TodoState
) -> list[Update]:
    """A stored session as updates (`session/load`): the runs since the session began (the last
    one that started a new session), each its prompt, messages, thoughts, tool calls and
    reminders, then the plan as it is now."""
    updates: list[Update] = []
    for run in since_session(runs):
        updates.extend(_run_updates(root, tools, run))
    updates.append(plan_update(plan))
    return updates


def since_session(runs: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The runs since the session began: from the last one that started a new session."""
    kept = list(runs)
    for index in range(len(kept) - 1, -1, -1):
        if kept[index].get("newSession") is True:
            return kept[index:]
    return kept


def session_prompts(runs: Iterable[Mapping[str, Any]]) -> list[str]:
    """The prompts of the runs since the session began, oldest first."""
    found = []
    for run in since_session(runs):
        events = run.get("events") or []
        first = events[0] if events and isinstance(events[0], Mapping) else {}
        if first.get("type") == "runStarted" and isinstance(first.get("prompt"), str):
            found.append(first["prompt"])
    return found


def _run_updates(root: Path, tools: ToolRegistry, run: Mapping[str, Any]) -> list[Update]:
    updates: list[Update] = []
    run_id = new_run_id()  # for its text's messageIds
    turn_text = TurnText()
    open_calls: dict[str, tuple[ToolKind, str]] = {}  # id → kind, title
    status = ""  # how the run ended, where its end was kept
    events: Sequence[Any] = run.get("events") or []
    for event in events:
        if not isinstance(event, Mapping):
            continue
        kind = event.get("type")
        if kind == "runStarted" and isinstance(event.get("prompt"), str):
            updates.append(update_user_message_text(event["prompt"]))
        elif kind == "textDelta" and isinstance(event.get("text"), str) and event["text"]:
            turn = event.get("turn")
            updates.append(message_chunk(turn_text(event["text"], turn), run_id, turn))
        elif kind == "thinkingDelta" and isinstance(event.get("text"), str) and event["text"]:
            updates.append(update_agent_thought_text(event["text"]))
        elif kind == "toolCall" and isinstance(event.get("id"), str):
            raw = event.get("input")
            call = ToolCall(
                event["id"],
                str(event.get("name", "")),
                dict(raw) if isinstance(raw, Mapping) else {},
                event.get("summary") if isinstance(event.get("summary"), str) else None,
            )
            updates.append(tool_started(root, tools, call))
            shown = call_display(tools, call.name, call.input, call.summary)
            open_calls[call.id] = (shown.kind, shown.title)
        elif kind == "toolResult" and isinstance(event.get("id"), str):
            result = ToolResult(
                event["id"],
                str(event.get("name", "")),
                event.get("isError") is True,
                str(event.get("summary", "")),
            )
            updates.append(tool_finished(result))
            open_calls.pop(result.id, None)
        elif kind == "reminder" and isinstance(event.get("text"), str):
            updates.append(reminder_call(event["text"]))
        elif kind == "runFinished" and isinstance(event.get("result"), Mapping):
            status = str(event["result"].get("status", ""))
            error = event["result"].get("error")
            if status == "error" and isinstance(error, str) and error:
                # Live, the prompt's answer was this error; replayed, the run would show nothing
                # (CodeCompanion.nvim ran its prompt on into the next one's).
                said = str(run_error(error))
                updates.append(message_chunk(turn_text(said, "error"), run_id, None))
    # A call the run's end cut off (cancelled, the server killed) never finished.
    why = cut_off_reason(status)
    updates.extend(tool_cut_off(call_id, why, *named) for call_id, named in open_calls.items())
    return updates
