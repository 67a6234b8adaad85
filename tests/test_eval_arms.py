"""The arms of the comparison (eval/arms.py): the same server, planning on, off or in plan
mode, and choosing them by name on the command line."""

from __future__ import annotations

import pytest

from plansight.eval.arms import ARMS, DEFAULT_ARMS, select_arms


def test_the_arms_differ_only_in_planning_and_mode() -> None:
    assert ARMS["plan"].options == {} and ARMS["plan"].mode == "act"
    assert ARMS["noplan"].options == {"planning": False} and ARMS["noplan"].mode == "act"
    assert ARMS["planmode"].options == {} and ARMS["planmode"].mode == "plan"
    assert DEFAULT_ARMS == ("plan", "noplan", "planmode")
    assert all(ARMS[name].unavailable is None for name in DEFAULT_ARMS)
    assert all(arm.name == name for name, arm in ARMS.items())


def test_arms_are_chosen_in_the_order_named_each_once() -> None:
    assert [a.name for a in select_arms(["noplan", "plan"])] == ["noplan", "plan"]
    assert [a.name for a in select_arms(["plan", "noplan", "plan"])] == ["plan", "noplan"]


@pytest.mark.parametrize(
    ("names", "message"),
    [
        (["plan", "bogus"], "unknown arm 'bogus'; arms: plan, noplan, planmode"),
        ([], "no arm given"),
    ],
)
def test_an_unknown_arm_or_none_is_refused(names: list[str], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        select_arms(names)
