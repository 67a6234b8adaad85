"""The plan: a validated list of todo items, replaced whole by the model or the user.

Only the plan itself lives here: its rules, its rendering, its versions and retries, and the
facts about it that clients show (`TodoState.to_wire`: its counts, the item in progress, the
next one, the id a new item gets, which plan this is), computed here once so that every client
shows the same. A plan's `plan_id` stays while the plan is worked on and changes when a new plan
begins: the first items after an empty plan, or a model's plan that keeps none of the items
(the same id with the same text) of the one before, so that an item that reuses an earlier
plan's id is not taken for it (its edits and changes are its own).
Who must hear of a change (the model, the editor) and how a streaming call is previewed are not
its business.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from plansight.plan.planfile import merge_items, normalize_notes
from plansight.plan.text import TODO_MARKERS, free_id
from plansight.protocol.names import OPEN_STATUSES, plan_counts

Status = Literal["pending", "in_progress", "completed", "cancelled", "failed"]
Source = Literal["model", "user", "restore"]

STATUSES: tuple[Status, ...] = ("pending", "in_progress", "completed", "cancelled", "failed")
MARKERS = TODO_MARKERS  # the wire's: `rendered` is part of the protocol
MAX_ITEMS = 20
MAX_RETRIES = 3


class PlanError(ValueError):
    """A plan that breaks a rule. The message names the rule."""


class StalePlanError(PlanError):
    """A user edit based on an older version of the plan."""


@dataclass(frozen=True)
class TodoItem:
    id: str
    text: str
    status: Status
    retries: int = 0
    # Version 4: what the user (the plan file's indented lines, a client, an approved review
    # comment) or the model noted on the item: acceptance criteria, hints, links. Shown to the
    # model with the item.
    notes: str = ""
    after: tuple[str, ...] = ()  # version 4: the ids of the items this one waits for

    def to_wire(self) -> dict[str, Any]:
        wire: dict[str, Any] = {"id": self.id, "text": self.text, "status": self.status}
        if self.retries:
            wire["retries"] = self.retries
        if self.notes:
            wire["notes"] = self.notes
        if self.after:
            wire["after"] = list(self.after)
        return wire

    def reference(self) -> dict[str, str]:
        """`{id, text}`: how `TodoState.current` and `next` name an item."""
        return {"id": self.id, "text": self.text}

    @classmethod
    def from_record(cls, raw: Mapping[str, Any]) -> TodoItem:
        """An item as `TodoState.to_record` stored it (KeyError, TypeError or ValueError when
        it is malformed: a stored plan is trusted, not validated as a new one is)."""
        return cls(
            id=str(raw["id"]),
            text=str(raw["text"]),
            status=raw["status"],
            retries=int(raw.get("retries", 0)),
            notes=str(raw.get("notes") or ""),
            after=tuple(str(i) for i in raw.get("after", ())),
        )


@dataclass(frozen=True)
class TodoState:
    items: tuple[TodoItem, ...]
    version: int
    source: Source
    plan_id: str = ""  # which plan this is ("" while there is none); see the module's docstring

    @property
    def completed(self) -> int:
        return sum(1 for item in self.items if item.status == "completed")

    @property
    def total(self) -> int:
        return len(self.items)

    @property
    def counts(self) -> dict[str, int]:
        """Items by status, and how many are `done` (completed or cancelled) and `open`."""
        return plan_counts(item.status for item in self.items)

    @property
    def in_progress(self) -> TodoItem | None:
        return next((item for item in self.items if item.status == "in_progress"), None)

    @property
    def next_item(self) -> TodoItem | None:
        """The first item still to start: pending or failed (what comes after the current one,
        or instead of it when none is in progress)."""
        return next(
            (i for i in self.items if i.status in OPEN_STATUSES and i.status != "in_progress"),
            None,
        )

    @property
    def open_items(self) -> list[TodoItem]:
        return [item for item in self.items if item.status in OPEN_STATUSES]

    @property
    def next_id(self) -> str:
        """The id an item added to this plan gets: the lowest number no item uses."""
        return free_id({item.id for item in self.items})

    @property
    def rendered(self) -> str:
        return render(self.items)

    def to_wire(self) -> dict[str, Any]:
        current, following = self.in_progress, self.next_item
        return {
            "items": [item.to_wire() for item in self.items],
            "completed": self.completed,
            "total": self.total,
            "rendered": self.rendered,
            "source": self.source,
            "version": self.version,
            # Optional fields (the contract allows adding them): what clients show, computed
            # here so that they all show the same. `counts.done` is what "2/5" counts.
            "counts": self.counts,
            "current": current.reference() if current is not None else None,
            "next": following.reference() if following is not None else None,
            "nextId": self.next_id,
            # Edits and changes carry it too: an item lists what was done under it in this
            # plan, not under an earlier plan's item that had the same id.
            "planId": self.plan_id,
        }

    def to_record(self) -> dict[str, Any]:
        """The plan as it is stored (and kept with each checkpoint): items, version, plan id."""
        return {
            "items": [item.to_wire() for item in self.items],
            "version": self.version,
            "planId": self.plan_id,
        }

    @staticmethod
    def plan_id_of_record(record: Mapping[str, Any]) -> str:
        """The plan id a `to_record` stored ("" for a record from before plan ids)."""
        value = record.get("planId")
        return value if isinstance(value, str) else ""

    @staticmethod
    def items_of_record(record: Mapping[str, Any]) -> list[TodoItem]:
        """The items of a `to_record` (errors as `TodoItem.from_record`'s)."""
        return [TodoItem.from_record(raw) for raw in record.get("items", [])]


def render(items: tuple[TodoItem, ...] | list[TodoItem]) -> str:
    if not items:
        return "No todos."
    lines: list[str] = []
    for item in items:
        lines.append(f"{MARKERS[item.status]} #{item.id}: {item.text}")
        # The notes go to the model with their item, indented under it.
        lines.extend(f"    {line}" for line in item.notes.splitlines())
    done = sum(1 for item in items if item.status == "completed")
    lines.append(f"({done}/{len(items)} completed)")
    return "\n".join(lines)


def parse_items(raw: Any, keep: Mapping[str, TodoItem] | None = None) -> list[TodoItem]:
    """Validate a whole plan as sent by the model or the user; raise PlanError naming the rule.
    An item sent without `notes` keeps those of the item with its id in `keep` (the plan it
    replaces): a version 1-3 client, or a model that does not repeat them, loses nothing."""
    if not isinstance(raw, list | tuple):
        raise PlanError("'items' must be a list of {id, text, status} objects.")
    if len(raw) > MAX_ITEMS:
        raise PlanError(f"Too many items: at most {MAX_ITEMS} are allowed, got {len(raw)}.")
    items: list[TodoItem] = []
    seen: set[str] = set()
    for index, entry in enumerate(raw):
        position = f"Item {index + 1}"
        if not isinstance(entry, dict):
            raise PlanError(f"{position}: must be an object with id, text and status.")
        raw_id = entry.get("id")
        if isinstance(raw_id, bool) or not isinstance(raw_id, str | int) or not str(raw_id).strip():
            raise PlanError(f"{position}: 'id' is required (a non-empty string).")
        item_id = str(raw_id).strip()
        if item_id in seen:
            raise PlanError(f"Item #{item_id}: duplicate id; every id must be unique.")
        seen.add(item_id)
        text = entry.get("text")
        if not isinstance(text, str) or not text.strip():
            raise PlanError(f"Item #{item_id}: 'text' is required and must not be blank.")
        status = entry.get("status")
        if status not in STATUSES:
            allowed = ", ".join(STATUSES)
            raise PlanError(f"Item #{item_id}: invalid status {status!r}; use one of {allowed}.")
        notes = entry.get("notes")
        if notes is not None and not isinstance(notes, str):
            raise PlanError(f"Item #{item_id}: 'notes' must be a string.")
        if notes is None:
            kept = keep.get(item_id) if keep is not None else None
            notes = kept.notes if kept is not None else ""
        items.append(
            TodoItem(
                id=item_id,
                text=text.strip(),
                status=status,
                notes=normalize_notes(notes),
                after=_after(entry, item_id, keep),
            )
        )
    # Kept dependencies name only items still in the plan (one removed is no longer waited on).
    present = {item.id for item in items}
    items = [
        item
        if all(i in present for i in item.after) or "after" in raw[index]
        else replace(item, after=tuple(i for i in item.after if i in present))
        for index, item in enumerate(items)
    ]
    _check_dependencies(items)
    in_progress = [item.id for item in items if item.status == "in_progress"]
    if len(in_progress) > 1:
        ids = ", ".join(f"#{i}" for i in in_progress)
        raise PlanError(f"Only one item may be in_progress at a time ({ids} are).")
    return items


def _after(
    entry: dict[str, Any], item_id: str, keep: Mapping[str, TodoItem] | None
) -> tuple[str, ...]:
    """An item's `after` (optional): a list of other items' ids. An item sent without it keeps
    the dependencies its id has in `keep`: the plan file has no place for them, and a model
    need not repeat them."""
    raw = entry.get("after")
    if raw is None:
        kept = keep.get(item_id) if keep is not None else None
        return kept.after if kept is not None else ()
    if not isinstance(raw, list | tuple) or any(
        isinstance(i, bool) or not isinstance(i, str | int) or not str(i).strip() for i in raw
    ):
        raise PlanError(f"Item #{item_id}: 'after' must be a list of item ids.")
    return tuple(dict.fromkeys(str(i).strip() for i in raw))


def _check_dependencies(items: list[TodoItem]) -> None:
    """Every `after` names another item of the plan, and no item waits on itself through
    others (a cycle could never start)."""
    known = {item.id for item in items}
    waits = {item.id: item.after for item in items}
    for item in items:
        for dependency in waits[item.id]:
            if dependency == item.id:
                raise PlanError(f"Item #{item.id}: 'after' names the item itself.")
            if dependency not in known:
                raise PlanError(
                    f"Item #{item.id}: 'after' names #{dependency}, no item of the plan."
                )
    state: dict[str, int] = {}  # 1: on the path being walked, 2: known to end

    def walk(item_id: str, path: list[str]) -> None:
        if state.get(item_id) == 2:
            return
        if state.get(item_id) == 1:
            cycle = " → ".join(f"#{i}" for i in [*path[path.index(item_id) :], item_id])
            raise PlanError(f"The items' 'after' dependencies form a cycle ({cycle}).")
        state[item_id] = 1
        for dependency in waits[item_id]:
            walk(dependency, [*path, item_id])
        state[item_id] = 2

    for item in items:
        walk(item.id, [])


@dataclass
class PlanUpdate:
    state: TodoState
    retry_exhausted: list[TodoItem] = field(default_factory=list)


class Plan:
    """Holds the current plan; every accepted change raises the version."""

    def __init__(self) -> None:
        self._state = TodoState(items=(), version=0, source="model")
        self.model_updates = 0  # accepted todo calls; the reminder counter watches this
        # The plan before a user's save of the plan file that the model has not heard of yet
        # (None: none). A todo call made meanwhile (it streamed while the user saved) is
        # merged per item with that edit, so that the model's stale view never undoes it.
        self._model_saw: tuple[TodoItem, ...] | None = None
        # The last model update merged with a user's edit: the items both changed (the user's
        # kept); None: no merge.
        self.merged_with_user: list[str] | None = None

    @property
    def state(self) -> TodoState:
        return self._state

    def update_from_model(self, raw: Any) -> PlanUpdate:
        items = parse_items(raw, self._by_id())
        self.merged_with_user = None
        saw = self._model_saw
        if saw is not None and saw != self._state.items:
            merged = merge_items(
                [_wire(i) for i in saw],
                [_wire(i) for i in items],
                [_wire(i) for i in self._state.items],
            )
            items = parse_items(merged.items)
            self.merged_with_user = merged.conflicts
        update = self._replace(items, "model")
        self.model_updates += 1
        self._model_saw = None
        return update

    def model_saw_plan(self) -> None:
        """The model was shown the plan as it is now (a user's edit told at its turn)."""
        self._model_saw = None

    def update_from_file(self, raw: Any) -> TodoState:
        """The user's save of the plan file: as `update_from_user`, and a todo call the model
        makes before it hears of it is merged with it (`update_from_model`)."""
        before = self._state.items
        state = self.update_from_user(raw)
        if self._model_saw is None:
            self._model_saw = before
        return state

    def update_from_user(self, raw: Any, version: int | None = None) -> TodoState:
        if version is not None and version != self._state.version:
            raise StalePlanError(
                f"The plan changed (now version {self._state.version}, your edit was based on "
                f"version {version}); reload it and edit again."
            )
        return self._replace(parse_items(raw, self._by_id()), "user").state

    def _by_id(self) -> dict[str, TodoItem]:
        return {item.id: item for item in self._state.items}

    def reinstate(self, items: list[TodoItem], version: int, plan_id: str = "") -> TodoState:
        """Put back a plan kept earlier (the stored one, a checkpoint's): no rules checked, no
        retries counted; its source is "restore". A record from before plan ids gets one."""
        if items and not plan_id:
            plan_id = new_plan_id()
        self._model_saw = None  # another plan: nothing to merge a todo call with
        self._state = TodoState(
            items=tuple(items), version=version, source="restore", plan_id=plan_id if items else ""
        )
        return self._state

    def go_back_to(self, before: TodoState) -> TodoState:
        """The plan as it was (`before`: an earlier state of this plan), as a new version with
        the source "restore", so clients and version checks see a change; no rules checked
        (it obeyed them once), no retries counted. Returns the new state."""
        self._model_saw = None  # another plan: nothing to merge a todo call with
        self._state = TodoState(
            items=before.items,
            version=self._state.version + 1,
            source="restore",
            plan_id=before.plan_id if before.items else "",
        )
        return self._state

    def clear(self) -> TodoState:
        self._model_saw = None  # another plan: nothing to merge a todo call with
        if not self._state.items:
            # Nothing changes, so no new version: a session loaded at start clears the fresh
            # plan, and a window's first edit (based on version 0) raced that and was refused.
            return self._state
        self._state = TodoState(items=(), version=self._state.version + 1, source="user")
        return self._state

    def _plan_id_for(self, items: list[TodoItem], source: Source) -> str:
        """The current plan's id, or a new one when `items` begin a new plan."""
        before = self._state
        if not items:
            return ""
        if not before.items or not before.plan_id:
            return new_plan_id()
        # The user edits one item at a time (a rewording keeps the item); the model may write
        # a whole new plan over a finished one, reusing its ids for other work.
        kept = {(item.id, item.text) for item in before.items}
        if source == "model" and not any((item.id, item.text) in kept for item in items):
            return new_plan_id()
        return before.plan_id

    def _replace(self, items: list[TodoItem], source: Source) -> PlanUpdate:
        plan_id = self._plan_id_for(items, source)
        previous = {item.id: item for item in self._state.items}
        counted: list[TodoItem] = []
        exhausted: list[TodoItem] = []
        for item in items:
            before = previous.get(item.id)
            retries = before.retries if before else 0
            if before and before.status == "failed" and item.status == "in_progress":
                retries += 1
            counted_item = replace(item, retries=retries)
            if retries >= MAX_RETRIES and before and before.retries < retries:
                exhausted.append(counted_item)
            counted.append(counted_item)
        self._state = TodoState(
            items=tuple(counted), version=self._state.version + 1, source=source, plan_id=plan_id
        )
        return PlanUpdate(self._state, exhausted)


def _wire(item: TodoItem) -> dict[str, Any]:
    return {
        "id": item.id,
        "text": item.text,
        "status": item.status,
        "notes": item.notes,
        "after": list(item.after),
    }


def new_plan_id() -> str:
    """A plan id no other plan has (unique across sessions and server restarts)."""
    return uuid.uuid4().hex[:12]
