"""Engine events → the editor: `plansight/todos`, `plansight/scratchpad` and `plansight/event`.

Text chunks of one model turn that arrive together go out as one `textDelta` with that turn
(sent on the next turn of the event loop, or before any other event or another turn's text, so
the order is kept and two turns' text is never one delta). `toolInputDelta` is sent only to a
client that asked for it: it costs a notification per streamed chunk. `setup` subscribes
the forwarder to a session's events; `send_state` tells a client the plan and scratchpad as
they are (a stored session, loaded, or another session opened). Every notification carries
the `sessionId` of the session it is about (protocol version 4: the engine holds one of the
workspace's sessions at a time, and its events are that one's).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from plansight.engine.events import (
    Event,
    PlanChanged,
    ScratchpadChanged,
    TextDelta,
    ToolInputDelta,
    TurnUsage,
)
from plansight.engine.spend import Spend
from plansight.plan.plan import TodoState
from plansight.protocol.names import EVENT, SCRATCHPAD, TODOS, client_offers, event_payload

if TYPE_CHECKING:
    from pygls.lsp.server import LanguageServer

    from plansight.session.session import Session

Notify = Callable[[str, Any], None]
SessionOf = Callable[[], str | None]
PlanFileOf = Callable[[], str | None]  # the loaded session's plan file, relative (v4)


def setup(
    server: LanguageServer,
    session: Session,
    session_id: SessionOf,
    plan_file: PlanFileOf = lambda: None,
) -> EventForwarder:
    """Forward `session`'s events to `server`'s client, from now on; `session_id`: the
    session whose state the engine holds (its events are that one's)."""
    caps = server.client_capabilities
    forwarder = EventForwarder(
        server.protocol.notify,
        tool_input=caps is not None and client_offers(caps.experimental, "toolInputDelta"),
        session_id=session_id,
        plan_file=plan_file,
    )
    session.events.subscribe(forwarder)
    return forwarder


def with_session(payload: dict[str, Any], session_id: str | None) -> dict[str, Any]:
    return payload if session_id is None else {**payload, "sessionId": session_id}


def send_state(
    notify: Notify, state: TodoState, scratchpad: str, session_id: str | None = None
) -> None:
    """The plan and scratchpad as they are (a stored session, loaded), outside any event."""
    notify(TODOS, with_session(state.to_wire(), session_id))
    notify(SCRATCHPAD, with_session({"content": scratchpad}, session_id))


class EventForwarder:
    """A listener of the session's events that notifies the client."""

    def __init__(
        self,
        notify: Notify,
        *,
        tool_input: bool,
        session_id: SessionOf = lambda: None,
        plan_file: PlanFileOf = lambda: None,
    ) -> None:
        self._notify = notify
        self.session_id = session_id
        self.plan_file = plan_file
        self.tool_input = tool_input
        self._pending_text: list[str] = []
        self._pending_turn: int | None = None
        # The cost of each session's model turns so far on this server (the `usage` event's
        # `costUsd`): per session, as Claude Code's /cost is, so a new session starts at 0.
        self.spends: dict[str | None, Spend] = {}

    def __call__(self, event: Event) -> None:
        if isinstance(event, TextDelta):
            if self._pending_text and event.turn != self._pending_turn:
                self.flush()
            self._pending_turn = event.turn
            if not self._pending_text:
                asyncio.get_running_loop().call_soon(self.flush)
            self._pending_text.append(event.text)
            return
        self.flush()
        if isinstance(event, PlanChanged):
            todos = event.state.to_wire()
            # An optional field of ours: where the plan file is (none without plan files).
            if (path := self.plan_file()) is not None:
                todos["planFile"] = path
            self.notify(TODOS, todos)
        elif isinstance(event, ScratchpadChanged):
            self.notify(SCRATCHPAD, {"content": event.content})
        elif isinstance(event, ToolInputDelta) and not self.tool_input:
            return
        elif isinstance(event, TurnUsage):
            spend = self.spends.setdefault(self.session_id(), Spend())
            self.notify(EVENT, event_payload(spend.update(event)))
        elif (payload := event_payload(event)) is not None:
            self.notify(EVENT, payload)

    def notify(self, method: str, payload: Any) -> None:
        self._notify(method, with_session(payload, self.session_id()))

    def flush(self) -> None:
        if self._pending_text:
            text = "".join(self._pending_text)
            self._pending_text.clear()
            self.notify(EVENT, event_payload(TextDelta(text, self._pending_turn)))
