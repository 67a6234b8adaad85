"""Items' `after` dependencies (protocol version 4): kept, sent, and checked like every rule."""

from __future__ import annotations

import pytest

from plansight.plan.plan import Plan, PlanError, TodoState


def item(item_id: str, after: list[str] | None = None) -> dict[str, object]:
    raw: dict[str, object] = {"id": item_id, "text": f"step {item_id}", "status": "pending"}
    if after is not None:
        raw["after"] = after
    return raw


def test_after_is_kept_sent_and_stored() -> None:
    plan = Plan()
    state = plan.update_from_user([item("1"), item("2"), item("3", ["1", 2])])  # type: ignore[list-item]
    assert state.items[2].after == ("1", "2")
    assert state.to_wire()["items"][2]["after"] == ["1", "2"]
    assert "after" not in state.to_wire()["items"][0]
    stored = TodoState.items_of_record(state.to_record())
    assert stored[2].after == ("1", "2")


@pytest.mark.parametrize(
    ("items", "rule"),
    [
        ([item("1", ["9"])], "names #9, no item of the plan"),
        ([item("1", ["1"])], "names the item itself"),
        (
            [item("1", ["2"]), item("2", ["3"]), item("3", ["1"])],
            "form a cycle (#1 → #2 → #3 → #1)",
        ),
        ([item("1", "2")], "'after' must be a list of item ids"),  # type: ignore[arg-type]
    ],
)
def test_unknown_ids_and_cycles_are_refused_naming_the_rule(
    items: list[dict[str, object]], rule: str
) -> None:
    plan = Plan()
    before = plan.state
    with pytest.raises(PlanError, match=rule.replace("(", r"\(").replace(")", r"\)")):
        plan.update_from_model(items)
    assert plan.state == before
