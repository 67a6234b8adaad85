"""The scratchpad tools through the registry: notes replaced whole, each change announced."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from plansight.engine.events import ScratchpadChanged

from tool_harness import call, make_ctx


async def test_the_scratchpad_is_replaced_whole_and_each_change_is_announced(
    tmp_path: Path,
) -> None:
    ctx = make_ctx(tmp_path)
    seen: list[Any] = []
    ctx.events.subscribe(seen.append)
    empty = await call(ctx, "read_scratchpad")
    assert (empty.is_error, empty.content) == (False, "(the scratchpad is empty)")
    wrote = await call(ctx, "write_scratchpad", content="loop.py drives rounds\n")
    assert (wrote.is_error, wrote.content) == (False, "Scratchpad saved (22 characters).")
    await call(ctx, "write_scratchpad", content="replaced")
    back = await call(ctx, "read_scratchpad")
    assert back.content == "replaced" and ctx.scratchpad.content == "replaced"
    assert seen == [ScratchpadChanged("loop.py drives rounds\n"), ScratchpadChanged("replaced")]
    bad = await call(ctx, "write_scratchpad", content=3)
    assert bad.is_error and "'content' is required and must be a string" in bad.content
    assert ctx.scratchpad.content == "replaced" and len(seen) == 2
