"""Plan review with comments: the user's comments on a proposal, what the model says it
addressed, and what changed between two proposals.

The server computes here, once, what every client shows beside a new proposal (the changes
since the proposal the user last saw, each with the comments that asked for it, and the
comments still open), so that the terminal, ACP and VS Code show the same. What the user
answered is checked here too: a comment on an item the plan does not have, or an empty one, is
refused with a message naming it, before anything of the answer is applied.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from plansight.plan.plan import PlanError, TodoItem, TodoState

MAX_COMMENTS = 50  # in one answer: a review is read by the model, not a thread
MAX_COMMENT_CHARS = 4000

ChangeKind = Literal["added", "removed", "reworded", "restatused"]  # names.PLAN_CHANGE_KINDS


@dataclass(frozen=True)
class PlanComment:
    """A comment on a proposal: on an item (`todo_id`), on a quoted span of the plan's text
    (`quote`), or on the plan as a whole (neither)."""

    id: str
    text: str
    todo_id: str | None = None
    quote: str | None = None

    def to_wire(self) -> dict[str, Any]:
        wire: dict[str, Any] = {"id": self.id}
        if self.todo_id is not None:
            wire["todoId"] = self.todo_id
        if self.quote is not None:
            wire["quote"] = self.quote
        wire["text"] = self.text
        return wire

    def anchor(self, items: Sequence[TodoItem]) -> str | None:
        """The id of the item this comment is on: its `todo_id`, else the first item whose
        text holds its quote (None: a comment on the plan as a whole)."""
        if self.todo_id is not None:
            return self.todo_id
        if self.quote:
            return next((i.id for i in items if self.quote in i.text), None)
        return None

    def label(self, items: Sequence[TodoItem]) -> str:
        """Where the comment is, in words for the model."""
        on = self.anchor(items)
        texts = {item.id: item.text for item in items}
        if on is not None and on in texts:
            where = f"on #{on} ({texts[on]})"
        elif self.todo_id is not None:
            where = f"on #{self.todo_id}"
        else:
            where = "on the plan as a whole"
        if self.quote:
            where += f', quoting "{self.quote}"'
        return where


@dataclass(frozen=True)
class Addressed:
    """A comment the model says its new proposal addresses, and how (`submit_plan`)."""

    comment_id: str
    how: str

    def to_wire(self) -> dict[str, str]:
        return {"commentId": self.comment_id, "how": self.how}


@dataclass(frozen=True)
class PlanChange:
    """One difference between the proposal the user last saw and the new one."""

    kind: ChangeKind
    todo_id: str
    text: str  # the item's text now (removed: its text before)
    before: str | None = None  # reworded: the text before; restatused: the status before
    after: str | None = None  # restatused: the status now
    comment_ids: tuple[str, ...] = ()  # the addressed comments on this item

    def to_wire(self) -> dict[str, Any]:
        wire: dict[str, Any] = {"kind": self.kind, "todoId": self.todo_id, "text": self.text}
        if self.before is not None:
            wire["before"] = self.before
        if self.after is not None:
            wire["after"] = self.after
        wire["commentIds"] = list(self.comment_ids)
        return wire


@dataclass(frozen=True)
class ReviewContext:
    """A proposal's review beside the one before it: the `reviewPlan` request's `previous`,
    `addressed`, `openComments` and `changes`, computed once for every client."""

    previous: tuple[TodoItem, ...]
    addressed: tuple[Addressed, ...]
    addressed_comments: tuple[PlanComment, ...]  # the comments `addressed` names
    open_comments: tuple[PlanComment, ...]
    changes: tuple[PlanChange, ...]

    def to_wire(self) -> dict[str, Any]:
        return {
            "previous": {"items": [item.to_wire() for item in self.previous]},
            "addressed": [a.to_wire() for a in self.addressed],
            "openComments": [c.to_wire() for c in self.open_comments],
            "changes": [c.to_wire() for c in self.changes],
            # An extension: the addressed comments themselves, so that a client shows each
            # change beside the comment's words, not only its id.
            "addressedComments": [c.to_wire() for c in self.addressed_comments],
        }


@dataclass
class ReviewMemory:
    """One session's memory of its plan review between two proposals: the items the user last
    saw and answered, the comments they made that are still open, and what the model said it
    addressed since. Forgotten when a plan is approved or a review cancelled."""

    previous: tuple[TodoItem, ...] | None = None
    open_comments: list[PlanComment] = field(default_factory=list)
    addressed: list[Addressed] = field(default_factory=list)

    def forget(self) -> None:
        self.previous = None
        self.open_comments = []
        self.addressed = []

    def revised(self, seen: TodoState, comments: Sequence[PlanComment]) -> None:
        """The user asked for a revision of `seen` with `comments`: they stay open until the
        model says it addressed them."""
        self.previous = seen.items
        known = {c.id for c in self.open_comments}
        self.open_comments = [
            *self.open_comments,
            *(c for c in comments if c.id not in known),
        ]
        self.addressed = []

    def take_addressed(self, addressed: Sequence[Addressed]) -> None:
        """The model's new proposal says it addressed these (checked by `parse_addressed`)."""
        self.addressed = list(addressed)

    def still_open(self) -> list[PlanComment]:
        done = {a.comment_id for a in self.addressed}
        return [c for c in self.open_comments if c.id not in done]

    def context(self, now: TodoState) -> ReviewContext | None:
        """What the next review shows beside the proposal `now` (None when the user saw no
        proposal before this one)."""
        if self.previous is None:
            return None
        addressed_ids = {a.comment_id for a in self.addressed}
        addressed = tuple(c for c in self.open_comments if c.id in addressed_ids)
        return ReviewContext(
            previous=self.previous,
            addressed=tuple(self.addressed),
            addressed_comments=addressed,
            open_comments=tuple(self.still_open()),
            changes=tuple(changes(self.previous, now.items, addressed)),
        )

    def after_review(self) -> None:
        """A new answer came: what was addressed is no longer open."""
        self.open_comments = self.still_open()
        self.addressed = []


def changes(
    before: Sequence[TodoItem], after: Sequence[TodoItem], addressed: Sequence[PlanComment]
) -> list[PlanChange]:
    """What changed from `before` to `after`, item by item (by id), in the new plan's order
    with removed items last; each change lists the addressed comments on its item."""
    old = {item.id: item for item in before}
    new = {item.id: item for item in after}
    on: dict[str, list[str]] = {}
    for comment in addressed:
        anchor = comment.anchor(before) or comment.anchor(after)
        if anchor is not None:
            on.setdefault(anchor, []).append(comment.id)

    def ids(todo_id: str) -> tuple[str, ...]:
        return tuple(on.get(todo_id, ()))

    found: list[PlanChange] = []
    for item in after:
        was = old.get(item.id)
        if was is None:
            found.append(PlanChange("added", item.id, item.text, comment_ids=ids(item.id)))
            continue
        if was.text != item.text:
            found.append(
                PlanChange(
                    "reworded", item.id, item.text, before=was.text, comment_ids=ids(item.id)
                )
            )
        if was.status != item.status:
            found.append(
                PlanChange(
                    "restatused",
                    item.id,
                    item.text,
                    before=was.status,
                    after=item.status,
                    comment_ids=ids(item.id),
                )
            )
    for item in before:
        if item.id not in new:
            found.append(PlanChange("removed", item.id, item.text, comment_ids=ids(item.id)))
    return found


# The user's answer and the model's input, checked ----------------------------------------------


def parse_comments(raw: Any, items: Sequence[TodoItem]) -> list[PlanComment]:
    """The `comments` of a `reviewPlan` answer, checked against the plan they are on (`items`:
    the plan as the answer leaves it). Raises PlanError naming the comment and the rule."""
    if raw is None:
        return []
    if not isinstance(raw, list | tuple):
        raise PlanError("'comments' must be a list of {id, todoId?, quote?, text} objects.")
    if len(raw) > MAX_COMMENTS:
        raise PlanError(f"Too many comments: at most {MAX_COMMENTS}, got {len(raw)}.")
    known = {item.id for item in items}
    comments: list[PlanComment] = []
    seen: set[str] = set()
    for index, entry in enumerate(raw):
        entry = _mapping(entry)
        where = f"Comment {index + 1}"
        if entry is None:
            raise PlanError(f"{where}: must be an object with id and text.")
        comment_id = entry.get("id")
        if not isinstance(comment_id, str) or not comment_id.strip():
            raise PlanError(f"{where}: 'id' is required (a non-empty string).")
        comment_id = comment_id.strip()
        where = f"Comment {comment_id}"
        if comment_id in seen:
            raise PlanError(f"{where}: duplicate id; every comment id must be unique.")
        seen.add(comment_id)
        text = entry.get("text")
        if not isinstance(text, str) or not text.strip():
            raise PlanError(f"{where}: 'text' is required and must not be blank.")
        if len(text) > MAX_COMMENT_CHARS:
            raise PlanError(f"{where}: longer than {MAX_COMMENT_CHARS} characters.")
        todo_id = _optional_str(entry, "todoId", where)
        if todo_id is not None and todo_id not in known:
            raise PlanError(f"{where}: the plan has no item #{todo_id}.")
        quote = _optional_str(entry, "quote", where)
        comments.append(PlanComment(comment_id, text.strip(), todo_id, quote))
    return comments


def parse_addressed(raw: Any, open_comments: Sequence[PlanComment]) -> list[Addressed]:
    """`submit_plan`'s `addressed`, checked against the comments still open. Raises PlanError
    (the tool answers it as an error result)."""
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise PlanError("'addressed' must be a list of {commentId, how} objects.")
    known = {c.id for c in open_comments}
    found: list[Addressed] = []
    for index, entry in enumerate(raw):
        if not isinstance(entry, dict):
            raise PlanError(f"addressed[{index}]: must be an object with commentId and how.")
        comment_id, how = entry.get("commentId"), entry.get("how")
        if not isinstance(comment_id, str) or not comment_id.strip():
            raise PlanError(f"addressed[{index}]: 'commentId' is required (a non-empty string).")
        if not isinstance(how, str) or not how.strip():
            raise PlanError(f"addressed[{index}]: 'how' is required and must not be blank.")
        comment_id = comment_id.strip()
        if comment_id not in known:
            listed = ", ".join(sorted(known)) or "none"
            raise PlanError(
                f"addressed[{index}]: no open comment has the id {comment_id!r} (open: {listed})."
            )
        if any(a.comment_id == comment_id for a in found):
            raise PlanError(f"addressed[{index}]: comment {comment_id} is listed twice.")
        found.append(Addressed(comment_id, how.strip()))
    return found


def with_comment_notes(
    items: Sequence[TodoItem], comments: Sequence[PlanComment]
) -> list[TodoItem]:
    """`items` with each comment on an item appended to that item's notes (approve with
    notes: they stay on their items)."""
    notes: dict[str, list[str]] = {}
    for comment in comments:
        anchor = comment.anchor(items)
        if anchor is not None:
            notes.setdefault(anchor, []).append(comment.text)
    return [
        replace(item, notes="\n".join([*([item.notes] if item.notes else []), *notes[item.id]]))
        if item.id in notes
        else item
        for item in items
    ]


def lenient_comments(raw: Any) -> tuple[PlanComment, ...]:
    """The comments of an answer that was refused, as far as they can be read: given back to
    the user with the next review so that none is lost."""
    if not isinstance(raw, list | tuple):
        return ()
    found: list[PlanComment] = []
    for index, entry in enumerate(raw):
        entry = _mapping(entry)
        if entry is None or not isinstance(entry.get("text"), str):
            continue
        raw_id, todo_id, quote = entry.get("id"), entry.get("todoId"), entry.get("quote")
        found.append(
            PlanComment(
                raw_id if isinstance(raw_id, str) and raw_id else f"c{index + 1}",
                entry["text"],
                todo_id if isinstance(todo_id, str) else None,
                quote if isinstance(quote, str) else None,
            )
        )
    return tuple(found)


def _mapping(entry: Any) -> Mapping[str, Any] | None:
    if isinstance(entry, Mapping):
        return entry
    if hasattr(entry, "_asdict"):  # pygls hands custom results over as namedtuples
        return dict(entry._asdict())
    return None


def _optional_str(entry: Mapping[str, Any], key: str, where: str) -> str | None:
    value = entry.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise PlanError(f"{where}: '{key}' must be a non-empty string when given.")
    return value.strip()
