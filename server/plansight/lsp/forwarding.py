"""Engine events → the editor: `plansight/todos`, `plansight/scratchpad` and `plansight/event`.

Text chunks that arrive together go out as one `textDelta` (sent on the next turn of the event
loop, or before any other event, so the order is kept). `toolInputDelta` is sent only to a
client that asked for it: it costs a notification per streamed chunk.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from plansight.engine.events import Event, PlanChanged, ScratchpadChanged, TextDelta, ToolInputDelta
from plansight.plan.plan import TodoState
from plansight.protocol.names import EVENT, SCRATCHPAD, TODOS, event_payload

Notify = Callable[[str, Any], None]


class EventForwarder:
    """A listener of the session's events that notifies the client."""

    def __init__(self, notify: Notify, *, tool_input: bool) -> None:
        self.notify = notify
        self.tool_input = tool_input
        self._pending_text: list[str] = []

    def __call__(self, event: Event) -> None:
        if isinstance(event, TextDelta):
            if not self._pending_text:
                asyncio.get_running_loop().call_soon(self.flush)
            self._pending_text.append(event.text)
            return
        self.flush()
        if isinstance(event, PlanChanged):
            self.notify(TODOS, event.state.to_wire())
        elif isinstance(event, ScratchpadChanged):
            self.notify(SCRATCHPAD, {"content": event.content})
        elif isinstance(event, ToolInputDelta) and not self.tool_input:
            return
        elif (payload := event_payload(event)) is not None:
            self.notify(EVENT, payload)

    def send_state(self, state: TodoState, scratchpad: str) -> None:
        """The plan and scratchpad as they are (a restored session), outside any event."""
        self.notify(TODOS, state.to_wire())
        self.notify(SCRATCHPAD, {"content": scratchpad})

    def flush(self) -> None:
        if self._pending_text:
            text = "".join(self._pending_text)
            self._pending_text.clear()
            self.notify(EVENT, event_payload(TextDelta(text)))
