"""The run's work-done progress text (plansight.lsp.progress): what a client's status shows."""

from __future__ import annotations

from plansight.lsp.progress import progress_message, progress_percentage
from plansight.plan.plan import TodoItem, TodoState


def state(*statuses: str) -> TodoState:
    items = tuple(TodoItem(str(n), f"Step {n}", s) for n, s in enumerate(statuses, 1))  # type: ignore[arg-type]
    return TodoState(items, 1, "model")


def test_a_cancelled_item_counts_as_closed_and_is_named() -> None:
    finished = state("completed", "cancelled", "completed")
    assert progress_message(finished) == "3/3 (1 cancelled)"
    assert progress_percentage(finished) == 100


def test_the_item_in_progress_follows_the_count() -> None:
    assert progress_message(state("completed", "in_progress", "pending")) == "1/3 · Step 2"
    assert progress_percentage(state("completed", "in_progress", "pending")) == 33
    assert progress_message(state("failed", "pending")) == "0/2"


def test_no_plan_yet_is_planning() -> None:
    assert progress_message(state()) == "planning"
    assert progress_percentage(state()) == 0
