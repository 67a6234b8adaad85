"""The todo tool: a plan replaced whole through the registry, and its items shown as they stream."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from plansight.engine.events import PlanChanged, PlanDraft
from plansight.tools.planning import complete_items

from tool_harness import REGISTRY, call, make_ctx


def _items(*specs: tuple[str, str, str]) -> list[dict[str, Any]]:
    return [{"id": i, "text": t, "status": s} for i, t, s in specs]


async def test_todo_replaces_the_plan_and_returns_it_rendered(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path)
    seen: list[Any] = []
    ctx.events.subscribe(seen.append)
    outcome = await call(
        ctx, "todo", items=_items(("1", "a", "in_progress"), ("2", "b", "pending"))
    )
    assert (outcome.is_error, outcome.content) == (False, "[>] #1: a\n[ ] #2: b\n(0/2 completed)")
    assert [type(e) for e in seen] == [PlanChanged]
    bad = await call(ctx, "todo", items=_items(("1", "a", "done")))
    assert bad.is_error and bad.content.startswith("Plan rejected, nothing changed: Item #1")
    assert ctx.plan.state.rendered == outcome.content and len(seen) == 1


def _drafts_while_streaming(ctx: Any, items: list[dict[str, Any]], chunk: int) -> list[int]:
    """Stream one todo call's input in chunks; the sizes of the drafts shown meanwhile."""
    drafts: list[int] = []
    ctx.events.subscribe(lambda e: drafts.append(len(e.items)) if isinstance(e, PlanDraft) else 0)
    stream = REGISTRY.preview_stream(ctx, "todo")
    assert stream is not None
    text = json.dumps({"items": items})
    for start in range(0, len(text), chunk):
        stream.feed(text[start : start + chunk])
    return drafts


def test_each_call_shows_its_items_once_each_as_they_complete(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path)
    three = _items(("1", "a", "in_progress"), ("2", "b", "pending"), ("3", "c", "pending"))
    assert _drafts_while_streaming(ctx, three, chunk=3) == [1, 2, 3]
    # A second call in the same response (its tools run only once it has all streamed) shows
    # its items too, however many the first showed: each call's preview keeps its own count.
    assert _drafts_while_streaming(ctx, three, chunk=1000) == [3]
    assert ctx.plan.state.items == ()  # a preview is no change of the plan


def test_tools_without_a_preview_gather_nothing(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path)
    assert REGISTRY.preview_stream(ctx, "read_file") is None
    assert REGISTRY.preview_stream(ctx, "no_such_tool") is None


def test_complete_items_of_a_streaming_plan() -> None:
    full = (
        '{"items": [{"id": "1", "text": "Say \\"hi\\" {now}", "status": "pending"}, {"id": "2", "te'
    )
    assert complete_items(full) == [{"id": "1", "text": 'Say "hi" {now}', "status": "pending"}]
    assert complete_items('{"items": [') == []
    assert complete_items("") == []
    done = '{"items": [{"id": "1", "text": "a", "status": "pending"}], "x": {"id": 3}}'
    assert complete_items(done) == [{"id": "1", "text": "a", "status": "pending"}]
