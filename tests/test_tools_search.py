"""The search tools (list_files, grep) as the model meets them, through the registry."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from plansight.tools import search

from tool_harness import (
    ESCAPES,
    REGISTRY,
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


async def test_clients_see_how_many_files_were_listed_not_the_first_name(ws: Path) -> None:
    """toolResult.summary of list_files counts the files (issue 31: a row said `→ a.py`)."""
    many = ws / "many"
    many.mkdir()
    for i in range(600):
        (many / f"f{i:03}.txt").write_text("")
    ctx = make_ctx(ws)
    capped = await call(ctx, "list_files", path="many")
    three = await call(ctx, "list_files", path="many", pattern="f00[0-2].txt")
    one = await call(ctx, "list_files", path="many", pattern="f000.txt")
    none = await call(ctx, "list_files", pattern="*.nothing")
    assert REGISTRY.summary("list_files", capped) == "showing 500 of 600 files"
    assert REGISTRY.summary("list_files", three) == "3 files"
    assert REGISTRY.summary("list_files", one) == "1 file"
    assert REGISTRY.summary("list_files", none) == "no files"


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


# ----- names holding a newline ------------------------------------------------------------------


async def test_grep_counts_every_match_of_files_whose_names_hold_newlines(ws: Path) -> None:
    # More output than one read takes, every record's name holding a newline. (rg writes whole
    # records, so the reads seldom cut one: the next test cuts its output everywhere.)
    folder = ws / "deep"
    folder.mkdir()
    names = [f"deep/{'x' * 120}\n{'y' * 120}{i}.txt" for i in range(3)]
    for name in names:
        (ws / name).write_text("hit\n" * 3000)
    found = await call(make_ctx(ws), "grep", pattern="^hit$", path="deep")
    lines = found.content.split("\n")
    assert lines[-1].startswith("[showing "), lines[-1]
    assert " of 9000 matching lines;" in lines[-1], lines[-1]
    shown = '"' + names[0].replace("\n", "\\n") + '"'
    assert lines[0] == f"{shown}:1:hit" and all(line.startswith('"deep/') for line in lines[:-1])


def test_grep_output_cut_anywhere_gives_the_same_records() -> None:
    # What the reader does with each piece of rg's output: whole records now, the rest later.
    output = (
        b"./a\nb.txt\x001:hit\n./plain.txt\x002:hit\n"
        b"./c\nd.dat: WARNING: stopped searching binary file after match"
        b' (found "\\0" byte around offset 9)\n'
        b"./e\n\nf\x003:hit\n"
    )
    whole = search._grep_records(output.decode())
    assert whole == [
        "./a\nb.txt\x001:hit",
        "./plain.txt\x002:hit",
        './c\nd.dat: WARNING: stopped searching binary file after match (found "\\0" byte'
        " around offset 9)",
        "./e\n\nf\x003:hit",
    ]
    for size in range(1, len(output)):
        records: list[str] = []
        pending = b""
        for start in range(0, len(output), size):
            data = pending + output[start : start + size]
            cut = search._grep_records_end(data)
            pending = data[cut:]
            if cut:
                records += search._grep_records(data[:cut].decode())
        if pending:
            records += search._grep_records(pending.decode())
        assert records == whole, size


async def test_binary_file_messages_name_the_file_as_it_is_shown(ws: Path) -> None:
    (ws / "bi\nn.dat").write_bytes(b"needle\0")
    (ws / "wa\nrn.dat").write_bytes(b"needle\n" + b"x" * 200_000 + b"\n\0")
    ctx = make_ctx(ws)
    one = await call(ctx, "grep", pattern="needle", path='"bi\\nn.dat"')
    assert one.content == '"bi\\nn.dat": binary file matches (found "\\0" byte around offset 6)'
    walked = await call(ctx, "grep", pattern="needle")
    assert walked.content == (
        '"wa\\nrn.dat":1:needle\n"wa\\nrn.dat": WARNING: stopped searching binary file after'
        ' match (found "\\0" byte around offset 200008)'
    )


async def test_grep_never_shows_a_protected_file_under_a_name_holding_a_newline(ws: Path) -> None:
    (ws / "a\nb").mkdir()
    (ws / "a\nb" / ".env").write_text("TOKEN=needle\n")
    found = await call(make_ctx(ws), "grep", pattern="needle")
    assert "TOKEN" not in found.content and found.content.startswith("No matches."), found.content


async def test_a_protected_file_under_a_name_holding_a_newline_is_protected(ws: Path) -> None:
    (ws / "a\nb").mkdir()
    (ws / "a\nb" / ".env").write_text("TOKEN=needle\n")
    ctx = make_ctx(ws)
    read = await call(ctx, "read_file", path="a\nb/.env")
    assert read.is_error and "TOKEN" not in read.content, read.content
    listing = await call(ctx, "list_files", path='"a\\nb"')
    assert listing.content == '"a\\nb/.env" (protected)'


CONTROL_NAMES = ["cr\r.txt", "esc\x1b[2J.txt", "nel\x85.txt", "ls\u2028.txt", '"quoted".txt']


async def test_names_holding_control_characters_are_shown_on_one_line_and_read_back(
    ws: Path,
) -> None:
    folder = ws / "odd"
    folder.mkdir()
    for name in CONTROL_NAMES:
        (folder / name).write_text(f"in {name!r}\n")
    (folder / "tab\there.txt").write_text("a tab\n")
    ctx = make_ctx(ws)
    listing = await call(ctx, "list_files", path="odd")
    entries = listing.content.split("\n")
    # One entry a name, with no control character in it (a tab aside: it splits no line).
    assert len(entries) == len(CONTROL_NAMES) + 1 and entries.count("odd/tab\there.txt") == 1
    assert not any(
        (c < " " and c != "\t") or "\x7f" <= c <= "\x9f" or c == "\u2028" for c in "".join(entries)
    ), entries
    for entry in entries:
        read = await call(ctx, "read_file", path=entry)
        name = json.loads(entry) if entry.startswith('"') else entry
        assert read.content == f"     1\t{(ws / name).read_text().rstrip()}", (entry, read.content)
    assert {'odd/"quoted".txt', '"odd/esc\\u001b[2J.txt"', '"odd/ls\\u2028.txt"'} <= set(entries)
    # A name that is itself in quotes is quoted again, so that a quoted entry means one file.
    (ws / '"x"').write_text("quoted\n")
    (ws / "x").write_text("bare\n")
    listing = await call(ctx, "list_files", pattern='"x"')
    assert listing.content == '"\\"x\\""'
    read = await call(ctx, "read_file", path=listing.content)
    assert read.content == "     1\tquoted"
