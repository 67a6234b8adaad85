"""The search tools (list_files, grep) as the model meets them, through the registry."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from plansight.tools import search

from tool_harness import (
    ESCAPES,
    assert_escape_refused,
    call,
    make_ctx,
    make_links,
    tools_workspace,
)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return tools_workspace(tmp_path)


def test_tool_names_and_schemas() -> None:
    required = {tool.name: tool.input_schema.get("required", []) for tool in search.TOOLS}
    assert required == {"list_files": [], "grep": ["pattern"]}


# ----- escapes ----------------------------------------------------------------------------------


@pytest.mark.parametrize("path", ESCAPES)
@pytest.mark.parametrize("tool", ["list_files", "grep"])
async def test_escapes_are_refused(ws: Path, tool: str, path: str) -> None:
    await assert_escape_refused(ws, tool, path)


async def test_recursive_listing_and_search_do_not_follow_links_out(ws: Path) -> None:
    make_links(ws)
    ctx = make_ctx(ws)
    listing = await call(ctx, "list_files")
    assert not listing.is_error
    assert "secret" not in listing.content and "file_link" not in listing.content
    found = await call(ctx, "grep", pattern="SECRET")
    assert (found.is_error, found.content) == (False, "No matches.")


async def test_absolute_path_inside_the_root_is_fine(ws: Path) -> None:
    listing = await call(make_ctx(ws), "list_files", path=str(ws / "src"))
    assert listing.content == "src/app.py\nsrc/util.py"


ODD = "dir with space/naïve 'quoted' \"name\" ü.txt"


async def test_odd_characters_in_paths(ws: Path) -> None:
    (ws / ODD).parent.mkdir()
    (ws / ODD).write_text("needle there\n")
    ctx = make_ctx(ws)
    listing = await call(ctx, "list_files", path="dir with space")
    assert listing.content == ODD
    found = await call(ctx, "grep", pattern="needle", path="dir with space")
    assert found.content == f"{ODD}:1:needle there"


# ----- list_files and grep ----------------------------------------------------------------------


def _add_ignored(root: Path) -> None:
    (root / "debug.log").write_text("greet failed\n")
    (root / "build").mkdir()
    (root / "build" / "app.py").write_text("def greet(name): pass\n")


async def test_list_files_honours_gitignore_without_git(ws: Path) -> None:
    _add_ignored(ws)
    assert not (ws / ".git").exists()
    ctx = make_ctx(ws)
    listing = await call(ctx, "list_files")
    assert listing.content == "\n".join(
        [".gitignore", "docs/readme.txt", "src/app.py", "src/util.py"]
    )
    py = await call(ctx, "list_files", pattern="*.py")
    assert py.content == "src/app.py\nsrc/util.py"
    logs = await call(ctx, "list_files", pattern="*.log")
    assert (logs.is_error, logs.content) == (False, "No files found.")
    nested = await call(ctx, "list_files", pattern="src/**/*.py")
    assert nested.content == "src/app.py\nsrc/util.py"
    under = await call(ctx, "list_files", path="docs")
    assert under.content == "docs/readme.txt"
    missing = await call(ctx, "list_files", path="nowhere")
    assert missing.is_error and "nowhere does not exist" in missing.content
    os.mkfifo(ws / "pipe")
    fifo = await call(ctx, "grep", pattern="x", path="pipe")
    assert fifo.is_error and "not a regular file or folder" in fifo.content


async def test_list_files_is_capped(ws: Path) -> None:
    many = ws / "many"
    many.mkdir()
    for i in range(600):
        (many / f"f{i:03}.txt").write_text("")
    listing = await call(make_ctx(ws), "list_files", path="many")
    lines = listing.content.split("\n")
    assert lines[0] == "many/f000.txt" and lines[499] == "many/f499.txt"
    assert lines[-1].startswith("[showing 500 of 600 files; narrow the listing")


async def test_grep_honours_gitignore_without_git(ws: Path) -> None:
    _add_ignored(ws)
    ctx = make_ctx(ws)
    found = await call(ctx, "grep", pattern=r"greet\(")
    assert found.content == (
        "docs/readme.txt:4:A greet() and a farewell() live in src/app.py.\n"
        "src/app.py:4:def greet(name):\n"
        'src/app.py:13:    print(greet("world"))'
    )
    in_logs = await call(ctx, "grep", pattern="greet", glob="*.log")
    assert (in_logs.is_error, in_logs.content) == (False, "No matches.")
    only_txt = await call(ctx, "grep", pattern="greet", glob="*.txt")
    assert only_txt.content == "docs/readme.txt:4:A greet() and a farewell() live in src/app.py."
    one_file = await call(ctx, "grep", pattern="def", path="src/util.py")
    assert one_file.content == "src/util.py:1:def add(a, b):\nsrc/util.py:5:def sub(a, b):"


async def test_grep_no_match_bad_regex_and_cap(ws: Path) -> None:
    ctx = make_ctx(ws)
    nothing = await call(ctx, "grep", pattern="zebra")
    assert (nothing.is_error, nothing.content) == (False, "No matches.")
    bad = await call(ctx, "grep", pattern="greet(")
    assert bad.is_error and "regex parse error" in bad.content
    (ws / "hits.txt").write_text("hit\n" * 300)
    capped = await call(ctx, "grep", pattern="^hit$")
    lines = capped.content.split("\n")
    assert len(lines) == 201 and lines[199] == "hits.txt:200:hit"
    assert lines[-1].startswith("[showing 200 of 300 matching lines; narrow the search")
