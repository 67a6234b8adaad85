"""lsp/forwarding.py: the session's events as the notifications an editor receives."""

from __future__ import annotations

import asyncio
from typing import Any

from plansight.engine.events import (
    FilesChanged,
    PlanChanged,
    ReminderCleared,
    ScratchpadChanged,
    TextDelta,
    ToolInputDelta,
)
from plansight.lsp.forwarding import EventForwarder, send_state
from plansight.plan.plan import Plan

Sent = list[tuple[str, Any]]


def forwarder(*, tool_input: bool = False) -> tuple[EventForwarder, Sent]:
    sent: Sent = []
    return EventForwarder(
        lambda method, payload: sent.append((method, payload)), tool_input=tool_input
    ), sent


async def test_text_that_arrives_together_goes_out_as_one_delta() -> None:
    forward, sent = forwarder()
    for chunk in ("Hel", "lo", "!"):
        forward(TextDelta(chunk))
    assert sent == []  # sent on the event loop's next turn
    await asyncio.sleep(0)
    assert sent == [("plansight/event", {"type": "textDelta", "text": "Hello!"})]


async def test_pending_text_goes_out_before_the_next_event_keeping_the_order() -> None:
    forward, sent = forwarder()
    forward(TextDelta("Looking at "))
    forward(TextDelta("app.py"))
    forward(FilesChanged(("app.py",)))
    assert sent == [
        ("plansight/event", {"type": "textDelta", "text": "Looking at app.py"}),
        ("plansight/event", {"type": "filesChanged", "paths": ["app.py"]}),
    ]
    await asyncio.sleep(0)  # the scheduled flush finds nothing left to send
    assert len(sent) == 2


async def test_text_of_two_model_turns_goes_out_as_two_deltas_each_with_its_turn() -> None:
    forward, sent = forwarder()
    for chunk, turn in (("Plan", 1), ("ned.", 1), ("The plan ", 2), ("waits.", 2)):
        forward(TextDelta(chunk, turn))
    await asyncio.sleep(0)
    assert sent == [
        ("plansight/event", {"type": "textDelta", "text": "Planned.", "turn": 1}),
        ("plansight/event", {"type": "textDelta", "text": "The plan waits.", "turn": 2}),
    ]


def test_plan_and_scratchpad_changes_are_their_own_notifications() -> None:
    forward, sent = forwarder()
    plan = Plan()
    state = plan.update_from_user([{"id": "1", "text": "Add hints", "status": "pending"}])
    forward(PlanChanged(state))
    forward(ScratchpadChanged("notes"))
    assert sent == [
        ("plansight/todos", state.to_wire()),
        ("plansight/scratchpad", {"content": "notes"}),
    ]


def test_tool_input_deltas_go_only_to_a_client_that_asked_for_them() -> None:
    delta = ToolInputDelta("t1", "todo", '{"it')
    quiet, quiet_sent = forwarder(tool_input=False)
    quiet(delta)
    assert quiet_sent == []
    asked, asked_sent = forwarder(tool_input=True)
    asked(delta)
    assert asked_sent == [
        (
            "plansight/event",
            {"type": "toolInputDelta", "id": "t1", "name": "todo", "partialJson": '{"it'},
        )
    ]


def test_events_for_the_servers_own_listeners_are_not_sent() -> None:
    forward, sent = forwarder()
    forward(ReminderCleared())
    assert sent == []


def test_a_loaded_state_is_sent_as_the_plan_and_the_scratchpad() -> None:
    sent: Sent = []
    state = Plan().update_from_user([{"id": "1", "text": "Keep me", "status": "in_progress"}])
    send_state(lambda method, payload: sent.append((method, payload)), state, "my notes")
    assert sent == [
        ("plansight/todos", state.to_wire()),
        ("plansight/scratchpad", {"content": "my notes"}),
    ]
