"""plan/planfile.py: the plan file's form, read back, and the per-item merge of a stale save.
The property: any plan → file → parse gives the same plan (ids, texts, statuses, notes, order,
scratchpad, version)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from plansight.plan.plan import STATUSES, Plan, parse_items
from plansight.plan.planfile import (
    PlanFileError,
    format_plan_file,
    merge_items,
    normalize_notes,
    normalize_scratchpad,
    one_line,
    parse_plan_file,
)

_WORDS = st.text(
    alphabet=st.characters(blacklist_categories=("Cs", "Cc")) | st.sampled_from(" #-[]*.`<>"),
    min_size=1,
    max_size=30,
).filter(lambda s: s.strip() != "")
_IDS = st.one_of(
    st.integers(min_value=1, max_value=999).map(str),
    st.text(alphabet="abcdefghij_-", min_size=1, max_size=6),
)
_NOTES = st.lists(st.one_of(st.just(""), _WORDS), max_size=4).map(lambda lines: "\n".join(lines))


@st.composite
def plans(draw: st.DrawFn) -> list[dict[str, str]]:
    ids = draw(st.lists(_IDS, unique=True, max_size=20))
    statuses = [draw(st.sampled_from(STATUSES)) for _ in ids]
    if statuses.count("in_progress") > 1:
        first = statuses.index("in_progress")
        statuses = [
            s if s != "in_progress" or i == first else "pending" for i, s in enumerate(statuses)
        ]
    return [
        {"id": item_id, "text": draw(_WORDS), "status": status, "notes": draw(_NOTES)}
        for item_id, status in zip(ids, statuses, strict=True)
    ]


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(plans(), st.one_of(st.just(""), st.text(max_size=80)), st.integers(0, 10_000), _WORDS)
def test_a_plan_survives_its_file(
    raw: list[dict[str, str]], scratchpad: str, version: int, title: str
) -> None:
    plan = Plan()
    state = plan.update_from_user(raw)  # the plan's own rules, as every plan obeys them
    items = [item.to_wire() for item in state.items]
    text = format_plan_file(title, "abc123def456", version, items, scratchpad)
    read = parse_plan_file(text, known_ids=[i["id"] for i in items])
    assert read.version == version and read.session == "abc123def456"
    assert [(i["id"], i["text"], i["status"], i["notes"]) for i in read.items] == [
        (i.id, one_line(i.text), i.status, i.notes) for i in state.items
    ]
    # Normalized as the file keeps it: its edges' blank lines and trailing spaces aside.
    assert read.scratchpad == normalize_scratchpad(scratchpad)
    # And read back as an edit, it changes nothing.
    assert parse_items(read.items) is not None
    assert format_plan_file(title, "abc123def456", version, read.items, read.scratchpad) == text


def test_the_exact_form() -> None:
    text = format_plan_file(
        "Fix the bug",
        "0123abcd",
        7,
        [
            {"id": "1", "text": "Read", "status": "completed"},
            {"id": "2", "text": "Fix", "status": "in_progress", "notes": "API stays\n\nsee #12"},
            {"id": "3", "text": "Drop", "status": "cancelled"},
            {"id": "4", "text": "Ship", "status": "failed"},
            {"id": "5", "text": "Tell", "status": "pending"},
        ],
        "free *Markdown*",
    )
    assert text == (
        "# Fix the bug\n"
        "<!-- plansight: session 0123abcd, version 7 -->\n"
        "\n"
        "- [x] 1. Read\n"
        "- [~] 2. Fix\n"
        "  API stays\n"
        "\n"
        "  see #12\n"
        "- [-] 3. Drop\n"
        "- [!] 4. Ship\n"
        "- [ ] 5. Tell\n"
        "\n"
        "## Scratchpad\n"
        "free *Markdown*\n"
    )


@pytest.mark.parametrize(
    ("body", "line", "why"),
    [
        ("- [ ] 1. a\nplain words\n", 4, "is not an item"),
        ("- [ ] 1. a\n- [?] 2. b\n", 4, "unknown status"),
        ("- [~] 1. a\n- [~] 2. b\n", 4, "two items in progress"),
        ("".join(f"- [ ] {n}. x\n" for n in range(1, 22)), 23, "more than 20"),
        ("- [ ] 1. a\n- [ ] 1. b\n", 4, "used twice"),
    ],
)
def test_an_unreadable_file_names_its_line(body: str, line: int, why: str) -> None:
    text = f"# T\n<!-- plansight: session s, version 1 -->\n\n{body}\n## Scratchpad\n"
    with pytest.raises(PlanFileError) as raised:
        parse_plan_file(text)
    assert raised.value.line == line and why in raised.value.reason


def test_new_items_get_the_lowest_unused_id_and_the_scratchpad_is_free() -> None:
    text = "- [ ] Write docs\n- [x] 2. Done\n- [ ] Another\n\n## Scratchpad\n- [ ] not an item\n"
    read = parse_plan_file(text, known_ids=["3"])
    assert [i["id"] for i in read.items] == ["1", "2", "4"]
    assert read.scratchpad == "- [ ] not an item" and read.version is None


def test_notes_are_normalized() -> None:
    assert normalize_notes("\n    a\n      b  \n\n") == "a\n  b"


def test_the_merge_takes_each_side_and_the_users_on_both() -> None:
    base = [
        {"id": "1", "text": "a", "status": "pending"},
        {"id": "2", "text": "b", "status": "pending"},
        {"id": "3", "text": "c", "status": "pending"},
    ]
    mine = [
        {"id": "1", "text": "a", "status": "completed"},  # changed here
        {"id": "2", "text": "b, model", "status": "pending"},  # changed on both
        {"id": "3", "text": "c", "status": "pending"},
        {"id": "5", "text": "model's new", "status": "pending"},
    ]
    theirs = [
        {"id": "1", "text": "a", "status": "pending"},
        {"id": "2", "text": "b, user", "status": "pending"},
        {"id": "4", "text": "user's new", "status": "pending"},
        # 3 removed by the user
    ]
    merged = merge_items(base, mine, theirs)
    assert [(i["id"], i["text"], i["status"]) for i in merged.items] == [
        ("1", "a", "completed"),
        ("2", "b, user", "pending"),
        ("4", "user's new", "pending"),
        ("5", "model's new", "pending"),
    ]
    assert merged.conflicts == ["2"]
