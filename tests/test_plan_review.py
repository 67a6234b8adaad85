"""The plan review's rules (plan/review.py): comments checked, changes between two proposals,
notes kept on items, and what a session remembers between two reviews."""

from __future__ import annotations

from typing import get_args

import pytest

from plansight.plan.plan import Plan, PlanError, TodoItem
from plansight.plan.review import (
    Addressed,
    ChangeKind,
    PlanComment,
    ReviewMemory,
    changes,
    parse_addressed,
    parse_comments,
    with_comment_notes,
)
from plansight.plan.text import parse_plan_review_text, review_changes_lines
from plansight.protocol.names import PLAN_CHANGE_KINDS

A = TodoItem("1", "Add type hints", "pending")
B = TodoItem("2", "Add docstrings", "pending")


def test_change_kinds_are_the_wire_s() -> None:
    assert get_args(ChangeKind) == PLAN_CHANGE_KINDS


def test_changes_by_id_in_new_order_removed_last_with_the_addressed_comments() -> None:
    after = [
        TodoItem("3", "Add a test", "pending"),
        TodoItem("1", "Add type hints everywhere", "completed"),
    ]
    on_b = PlanComment("c1", "drop it", todo_id="2")
    on_a = PlanComment("c2", "all of them", quote="type hints")
    found = [c.to_wire() for c in changes([A, B], after, [on_b, on_a])]
    assert found == [
        {"kind": "added", "todoId": "3", "text": "Add a test", "commentIds": []},
        {
            "kind": "reworded",
            "todoId": "1",
            "text": "Add type hints everywhere",
            "before": "Add type hints",
            "commentIds": ["c2"],
        },
        {
            "kind": "restatused",
            "todoId": "1",
            "text": "Add type hints everywhere",
            "before": "pending",
            "after": "completed",
            "commentIds": ["c2"],
        },
        {"kind": "removed", "todoId": "2", "text": "Add docstrings", "commentIds": ["c1"]},
    ]


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("x", "'comments' must be a list"),
        ([{"text": "t"}], "Comment 1: 'id' is required"),
        ([{"id": "c1", "text": ""}], "Comment c1: 'text' is required"),
        ([{"id": "c1", "todoId": "7", "text": "t"}], "Comment c1: the plan has no item #7."),
        ([{"id": "c1", "text": "t"}, {"id": "c1", "text": "u"}], "Comment c1: duplicate id"),
        ([{"id": "c1", "quote": "", "text": "t"}], "'quote' must be a non-empty string"),
    ],
)
def test_bad_comments_are_refused_naming_them(raw: object, message: str) -> None:
    with pytest.raises(PlanError, match=message.replace("(", r"\(").replace("?", r"\?")):
        parse_comments(raw, [A, B])


def test_addressed_must_name_open_comments_once_with_how() -> None:
    open_ = [PlanComment("c1", "t", "1")]
    assert parse_addressed([{"commentId": "c1", "how": " done "}], open_) == [
        Addressed("c1", "done")
    ]
    for raw, message in [
        ([{"commentId": "c2", "how": "x"}], "no open comment has the id 'c2' \\(open: c1\\)"),
        ([{"commentId": "c1", "how": ""}], "'how' is required"),
        ([{"commentId": "c1", "how": "a"}, {"commentId": "c1", "how": "b"}], "listed twice"),
        ({"commentId": "c1"}, "must be a list"),
    ]:
        with pytest.raises(PlanError, match=message):
            parse_addressed(raw, open_)


def test_comments_become_notes_on_their_items_and_model_todos_keep_them() -> None:
    noted = with_comment_notes(
        [A, B],
        [
            PlanComment("c1", "first", "2"),
            PlanComment("c2", "second", quote="docstrings"),
            PlanComment("c3", "general"),
        ],
    )
    assert [i.notes for i in noted] == ["", "first\nsecond"]
    plan = Plan()
    plan.update_from_user([i.to_wire() for i in noted])
    plan.update_from_model([{"id": "2", "text": "Add docstrings", "status": "completed"}])
    assert plan.state.items[0].notes == "first\nsecond"
    assert plan.state.to_wire()["items"][0]["notes"] == "first\nsecond"
    # A user's items that carry notes set them (an empty string clears them).
    plan.update_from_user([{"id": "2", "text": "Add docstrings", "status": "pending", "notes": ""}])
    assert plan.state.items[0].notes == ""


def test_memory_keeps_open_comments_until_addressed_and_forgets_on_approval() -> None:
    plan = Plan()
    seen = plan.update_from_user([A.to_wire(), B.to_wire()])
    memory = ReviewMemory()
    assert memory.context(seen) is None
    c1, c2 = PlanComment("c1", "t1", "1"), PlanComment("c2", "t2")
    memory.revised(seen, [c1, c2])
    memory.take_addressed([Addressed("c1", "how")])
    context = memory.context(seen)
    assert context is not None
    wire = context.to_wire()
    assert wire["openComments"] == [{"id": "c2", "text": "t2"}]
    assert wire["addressed"] == [{"commentId": "c1", "how": "how"}]
    assert wire["changes"] == []
    memory.after_review()
    memory.revised(seen, [])
    assert [c.id for c in memory.open_comments] == ["c2"]
    memory.forget()
    assert memory.context(seen) is None


def test_plan_text_comments_are_on_the_item_above_or_the_plan() -> None:
    text = "# help\n> on the plan\n[ ] #1: One\n  > on one\n>\n[ ] Two\n> on the new one\n"
    items, comments = parse_plan_review_text(text, reserved=["1"])
    assert [i["id"] for i in items] == ["1", "2"]
    assert comments == [
        {"text": "on the plan"},
        {"todoId": "1", "text": "on one"},
        {"todoId": "2", "text": "on the new one"},
    ]


def test_changes_lines_name_each_change_beside_its_comment() -> None:
    review = {
        "previous": {"items": []},
        "changes": [{"kind": "added", "todoId": "3", "text": "Test", "commentIds": ["c1"]}],
        "addressed": [{"commentId": "c1", "how": "Added it"}, {"commentId": "c2", "how": "Said"}],
        "addressedComments": [{"id": "c1", "text": "Add a test"}, {"id": "c2", "text": "Why?"}],
        "openComments": [{"id": "c3", "todoId": "1", "text": "Later"}],
    }
    assert review_changes_lines(review) == [
        "What changed since the proposal you saw:",
        "- added #3: Test",
        '  - your comment: "Add a test", addressed: Added it',
        '- your comment: "Why?", addressed: Said',
        "Open comments (not addressed yet):",
        "- #1: Later",
    ]
    assert review_changes_lines({"changes": []}) == []
