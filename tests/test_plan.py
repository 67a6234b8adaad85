"""The plan's rules, rendering, versions and retries."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from plansight.plan.plan import STATUSES, Plan, PlanError, StalePlanError, render
from plansight.plan.text import free_id, parse_plan_text


def items(*specs: tuple[str, str, str]) -> list[dict[str, Any]]:
    return [{"id": i, "text": t, "status": s} for i, t, s in specs]


def test_rendered_plan_uses_the_s03_markers_and_a_count_line() -> None:
    plan = Plan()
    update = plan.update_from_model(
        items(
            ("1", "Add type hints", "completed"),
            ("2", "Add docstrings", "in_progress"),
            ("3", "Add a main guard", "pending"),
            ("4", "Rewrite in Rust", "cancelled"),
            ("5", "Run mypy", "failed"),
        )
    )
    assert update.state.rendered == (
        "[x] #1: Add type hints\n"
        "[>] #2: Add docstrings\n"
        "[ ] #3: Add a main guard\n"
        "[-] #4: Rewrite in Rust\n"
        "[!] #5: Run mypy\n"
        "(1/5 completed)"
    )
    wire = update.state.to_wire()
    assert wire["completed"] == 1 and wire["total"] == 5 and wire["source"] == "model"
    assert wire["items"][1] == {"id": "2", "text": "Add docstrings", "status": "in_progress"}


def test_empty_plan_renders_as_no_todos() -> None:
    assert render([]) == "No todos."


def test_the_wire_state_says_what_clients_show() -> None:
    plan = Plan()
    state = plan.update_from_model(
        items(
            ("1", "Add type hints", "completed"),
            ("2", "Add docstrings", "in_progress"),
            ("4", "Rewrite in Rust", "cancelled"),
            ("5", "Run mypy", "failed"),
            ("6", "Ship", "pending"),
        )
    ).state
    wire = state.to_wire()
    # Done: no more work needed (completed or cancelled); a failed item is still open.
    assert wire["counts"] == {
        "total": 5,
        "completed": 1,
        "cancelled": 1,
        "failed": 1,
        "pending": 1,
        "inProgress": 1,
        "done": 2,
        "open": 3,
    }
    assert wire["current"] == {"id": "2", "text": "Add docstrings"}
    assert wire["next"] == {"id": "5", "text": "Run mypy"}  # the first not yet started
    assert wire["nextId"] == "3"  # the lowest number no item uses
    # The version 1 fields stay as they were.
    assert (wire["completed"], wire["total"]) == (1, 5)
    idle = plan.update_from_user(items(("1", "Add type hints", "completed"))).to_wire()
    assert (idle["current"], idle["next"], idle["nextId"]) == (None, None, "2")
    assert idle["counts"]["done"] == 1 and idle["counts"]["open"] == 0
    empty = plan.clear().to_wire()
    assert empty["counts"]["total"] == 0 and (empty["current"], empty["nextId"]) == (None, "1")


def test_clearing_an_empty_plan_is_no_new_version() -> None:
    """Seen in VS Code: a fresh window's first Add Item (version 0) refused with "The plan
    changed (now version 1 ...)", as loading the session at start cleared the empty plan."""
    plan = Plan()
    assert plan.clear().version == 0
    added = plan.update_from_user(items(("1", "Add a docstring", "pending")), version=0)
    assert added.version == 1
    assert plan.clear().version == 2  # clearing items is a change


def test_a_new_item_gets_the_same_id_from_the_plan_and_from_plan_text() -> None:
    plan = Plan()
    state = plan.update_from_model(items(("1", "a", "completed"), ("3", "b", "pending")))
    added = parse_plan_text(
        "[x] #1: a\n[ ] #3: b\n[ ] c\n", reserved=[i.id for i in state.state.items]
    )
    assert added[-1]["id"] == state.state.to_wire()["nextId"] == free_id({"1", "3"}) == "2"
    # An id removed in the same edit is not given to the new item.
    replaced = parse_plan_text("[x] #1: a\n[ ] c\n", reserved=["1", "2", "3"])
    assert replaced[-1]["id"] == "4"


@pytest.mark.parametrize(
    ("payload", "rule"),
    [
        (items(*[(str(i), "x", "pending") for i in range(21)]), "at most 20"),
        (items(("1", "  ", "pending")), "must not be blank"),
        ([{"id": "1", "status": "pending"}], "'text' is required"),
        (items(("1", "a", "pending"), ("1", "b", "pending")), "duplicate id"),
        (items(("1", "a", "done")), "invalid status 'done'"),
        (items(("1", "a", "in_progress"), ("2", "b", "in_progress")), "Only one item"),
        ([{"text": "a", "status": "pending"}], "'id' is required"),
        ("not a list", "must be a list"),
        ([42], "must be an object"),
    ],
)
def test_each_rule_rejects_and_names_itself_and_changes_nothing(payload: Any, rule: str) -> None:
    plan = Plan()
    plan.update_from_model(items(("1", "keep me", "in_progress")))
    before = plan.state
    with pytest.raises(PlanError, match=rule):
        plan.update_from_model(payload)
    assert plan.state == before
    assert plan.model_updates == 1


def test_every_accepted_change_raises_the_version() -> None:
    plan = Plan()
    v1 = plan.update_from_model(items(("1", "a", "pending"))).state.version
    v2 = plan.update_from_model(items(("1", "a", "in_progress"))).state.version
    v3 = plan.update_from_user(items(("1", "a", "completed")), version=v2).version
    assert v1 < v2 < v3


def test_a_user_edit_on_a_stale_version_is_refused() -> None:
    plan = Plan()
    old = plan.update_from_model(items(("1", "a", "pending"))).state.version
    plan.update_from_model(items(("1", "a", "in_progress")))
    with pytest.raises(StalePlanError, match="version"):
        plan.update_from_user(items(("1", "mine", "pending")), version=old)
    assert plan.state.items[0].text == "a"


def test_user_edits_follow_the_same_rules() -> None:
    plan = Plan()
    with pytest.raises(PlanError, match="Only one item"):
        plan.update_from_user(items(("1", "a", "in_progress"), ("2", "b", "in_progress")))
    state = plan.update_from_user(items(("1", "a", "pending")))
    assert state.source == "user"
    assert plan.model_updates == 0  # a user edit does not count as the model's update


def test_third_retry_of_a_failed_item_is_reported() -> None:
    plan = Plan()
    plan.update_from_model(items(("1", "flaky", "in_progress")))
    for attempt in range(1, 4):
        plan.update_from_model(items(("1", "flaky", "failed")))
        update = plan.update_from_model(items(("1", "flaky", "in_progress")))
        assert update.state.items[0].retries == attempt
        assert bool(update.retry_exhausted) == (attempt == 3)
    assert update.state.to_wire()["items"][0]["retries"] == 3


def test_integer_ids_are_accepted_as_strings() -> None:
    plan = Plan()
    state = plan.update_from_model([{"id": 1, "text": "a", "status": "pending"}]).state
    assert state.items[0].id == "1"


# Property tests ---------------------------------------------------------------------------

json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 30),
    st.text(max_size=6),
    st.sampled_from([*STATUSES, "done", ""]),
)
raw_item = st.one_of(
    st.fixed_dictionaries(
        {
            "id": st.one_of(st.sampled_from(["1", "2", "3", "4", " "]), json_scalars),
            "text": st.one_of(st.text(max_size=8), json_scalars),
            "status": st.one_of(st.sampled_from(STATUSES), json_scalars),
        }
    ),
    json_scalars,
)
raw_plan = st.one_of(st.lists(raw_item, max_size=24), json_scalars)


def assert_invariants(plan: Plan) -> None:
    state = plan.state
    assert len(state.items) <= 20
    assert len({i.id for i in state.items}) == len(state.items)
    assert all(i.text.strip() for i in state.items)
    assert all(i.status in STATUSES for i in state.items)
    assert sum(i.status == "in_progress" for i in state.items) <= 1
    assert (
        state.rendered.endswith(f"({state.completed}/{state.total} completed)") or not state.items
    )
    counts = state.to_wire()["counts"]
    assert counts["done"] + counts["open"] == counts["total"] == len(state.items)


@settings(max_examples=300, deadline=None)
@given(st.lists(raw_plan, min_size=1, max_size=6))
def test_random_payloads_never_break_the_rules(payloads: list[Any]) -> None:
    plan = Plan()
    for payload in payloads:
        before = plan.state
        try:
            update = plan.update_from_model(payload)
        except PlanError:
            assert plan.state == before  # a rejected call changes nothing
        else:
            assert update.state.version == before.version + 1
        assert_invariants(plan)


def test_a_plan_keeps_its_id_while_worked_on_and_a_new_plan_gets_another() -> None:
    plan = Plan()
    assert plan.state.to_wire()["planId"] == ""
    first = plan.update_from_model(items(("1", "Add type hints", "in_progress"))).state.plan_id
    assert first
    progressed = plan.update_from_model(
        items(("1", "Add type hints", "completed"), ("2", "Add docstrings", "pending"))
    )
    reworded = plan.update_from_user(items(("1", "Add the type hints", "completed")))
    assert progressed.state.plan_id == reworded.plan_id == first  # the same plan, worked on
    # Over the finished plan the model writes other work that reuses id 1: a new plan.
    second = plan.update_from_model(items(("1", "Add a license", "in_progress"))).state
    assert second.plan_id and second.plan_id != first
    assert second.to_record()["planId"] == second.plan_id
    # Cleared, the next items are a new plan again; a stored plan comes back with its id.
    plan.clear()
    third = plan.update_from_user(items(("1", "Add a license", "pending"))).plan_id
    assert third not in ("", first, second.plan_id)
    assert Plan().reinstate([], 3, "").plan_id == ""
    restored = Plan().reinstate(plan.state.items and list(plan.state.items), 4, third)
    assert restored.plan_id == third
