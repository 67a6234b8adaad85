"""The event bus (engine/events.py): listeners hear every event in the order they subscribed,
those subscribed with `last=True` after all others, a failing listener is logged and the
others still hear the event; and the run's result and usage as they go on the wire."""

from __future__ import annotations

import logging

import pytest

from plansight.engine.events import (
    Event,
    EventBus,
    FilesChanged,
    RunResult,
    TextDelta,
    ToolResult,
    Usage,
)
from plansight.protocol.names import event_payload


def test_listeners_hear_each_event_in_the_order_they_subscribed() -> None:
    bus = EventBus()
    heard: list[str] = []
    bus.subscribe(lambda e: heard.append(f"a:{e.type}"))
    bus.subscribe(lambda e: heard.append(f"b:{e.type}"))
    bus.emit(TextDelta("hi"))
    bus.emit(FilesChanged(("x.py",)))
    assert heard == ["a:textDelta", "b:textDelta", "a:filesChanged", "b:filesChanged"]


def test_last_listeners_run_after_all_others_even_ones_subscribed_later() -> None:
    bus = EventBus()
    heard: list[str] = []
    bus.subscribe(lambda e: heard.append("storage"), last=True)
    bus.subscribe(lambda e: heard.append("editor"))
    bus.subscribe(lambda e: heard.append("second last"), last=True)
    bus.subscribe(lambda e: heard.append("tests"))
    bus.emit(TextDelta("x"))
    assert heard == ["editor", "tests", "storage", "second last"]


def test_unsubscribing_stops_only_that_listener() -> None:
    bus = EventBus()
    heard: list[str] = []
    stop_a = bus.subscribe(lambda e: heard.append("a"))
    stop_last = bus.subscribe(lambda e: heard.append("last"), last=True)
    bus.subscribe(lambda e: heard.append("b"))
    stop_a()
    bus.emit(TextDelta("x"))
    assert heard == ["b", "last"]
    stop_last()
    bus.emit(TextDelta("y"))
    assert heard == ["b", "last", "b"]


def test_a_listener_that_unsubscribes_while_hearing_an_event_costs_the_others_nothing() -> None:
    """The listeners of an event are the ones subscribed when it was emitted."""
    bus = EventBus()
    heard: list[str] = []

    def once(event: Event) -> None:
        heard.append("once")
        stop_once()

    stop_once = bus.subscribe(once)
    bus.subscribe(lambda e: heard.append("after"))
    bus.emit(TextDelta("x"))
    bus.emit(TextDelta("y"))
    assert heard == ["once", "after", "after"]


def test_a_failing_listener_is_logged_and_the_others_still_hear_the_event(
    caplog: pytest.LogCaptureFixture,
) -> None:
    bus = EventBus()
    heard: list[str] = []

    def broken(event: Event) -> None:
        raise RuntimeError("listener bug")

    bus.subscribe(broken)
    bus.subscribe(lambda e: heard.append("next"))
    bus.subscribe(broken, last=True)
    bus.subscribe(lambda e: heard.append("last"), last=True)
    with caplog.at_level(logging.ERROR, logger="plansight.engine.events"):
        bus.emit(FilesChanged(("a.py",)))
    assert heard == ["next", "last"]
    failures = [r for r in caplog.records if r.name == "plansight.engine.events"]
    assert len(failures) == 2
    assert all("filesChanged" in r.getMessage() for r in failures)
    assert all(r.exc_info is not None and "listener bug" in str(r.exc_info[1]) for r in failures)


def test_an_error_that_is_no_exception_is_not_swallowed() -> None:
    """Only Exception is a listener's bug; KeyboardInterrupt and the like go on up."""
    bus = EventBus()

    def interrupted(event: Event) -> None:
        raise KeyboardInterrupt

    bus.subscribe(interrupted)
    with pytest.raises(KeyboardInterrupt):
        bus.emit(TextDelta("x"))


def test_usage_adds_up_and_goes_on_the_wire_in_camel_case() -> None:
    total = Usage()
    total.add(Usage(10, 2, 3, 4))
    total.add(Usage(1, 1, 1, 1))
    assert total == Usage(11, 3, 4, 5)
    assert total.to_wire() == {
        "inputTokens": 11,
        "outputTokens": 3,
        "cacheReadInputTokens": 4,
        "cacheCreationInputTokens": 5,
        "totalInputTokens": 20,
    }


def test_a_run_result_names_its_error_only_when_it_has_one() -> None:
    done = RunResult("done", "Hello.", 2, Usage(5, 1))
    assert done.to_wire() == {
        "status": "done",
        "text": "Hello.",
        "rounds": 2,
        "usage": Usage(5, 1).to_wire(),
    }
    failed = RunResult("error", "", 1, error="the API is down")
    assert failed.to_wire()["error"] == "the API is down"
    assert failed.to_wire()["usage"] == Usage().to_wire()


def test_a_tool_results_whole_output_stays_in_the_server() -> None:
    # Listeners in the server (ACP) read `output`; the wire and the history get the summary.
    event = ToolResult("t1", "bash", False, "ran 3 tests", output="3 passed\n" * 1000)
    payload = event_payload(event)
    assert payload == {
        "type": "toolResult",
        "id": "t1",
        "name": "bash",
        "isError": False,
        "summary": "ran 3 tests",
    }
