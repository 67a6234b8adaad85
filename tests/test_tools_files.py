"""The file tools (read_file, write_file, edit_file) as the model meets them: results, errors,
and what lands on disk."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pathspec
import pytest

import plansight
from plansight.engine.events import FilesChanged
from plansight.engine.hooks import EditDecision, EditProposal
from plansight.tools import files

from tool_harness import (
    ESCAPES,
    REGISTRY,
    Documents,
    Reviewer,
    assert_escape_refused,
    call,
    make_ctx,
    tools_workspace,
)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return tools_workspace(tmp_path)


def test_tool_names_and_schemas() -> None:
    names = [tool.name for tool in files.TOOLS]
    assert names == ["read_file", "write_file", "edit_file"]
    required = {tool.name: tool.input_schema.get("required", []) for tool in files.TOOLS}
    assert required == {
        "read_file": ["path"],
        "write_file": ["path", "content"],
        "edit_file": ["path", "old_text", "new_text"],
    }


# ----- escapes ----------------------------------------------------------------------------------


@pytest.mark.parametrize("path", ESCAPES)
@pytest.mark.parametrize("tool", ["read_file", "write_file", "edit_file"])
async def test_escapes_are_refused(ws: Path, tool: str, path: str) -> None:
    await assert_escape_refused(ws, tool, path)


async def test_absolute_path_inside_the_root_is_fine(ws: Path) -> None:
    ctx = make_ctx(ws)
    outcome = await call(ctx, "read_file", path=str(ws / "src" / "util.py"))
    assert not outcome.is_error
    assert outcome.content.startswith("     1\tdef add(a, b):")


async def test_symlink_inside_the_root_edits_its_target(ws: Path) -> None:
    (ws / "alias.py").symlink_to("src/util.py")
    ctx = make_ctx(ws)
    await call(ctx, "read_file", path="alias.py")
    outcome = await call(ctx, "edit_file", path="alias.py", old_text="a + b", new_text="b + a")
    assert not outcome.is_error, outcome.content
    assert "return b + a" in (ws / "src" / "util.py").read_text()
    assert (ws / "alias.py").is_symlink()


# ----- read_file --------------------------------------------------------------------------------


async def test_read_file_numbers_lines_and_records_the_location(ws: Path) -> None:
    ctx = make_ctx(ws)
    outcome = await call(ctx, "read_file", path="src/util.py", offset=2, limit=4)
    assert outcome.content == (
        "     2\t    return a + b\n     3\t\n     4\t\n     5\tdef sub(a, b):\n"
        "[showing lines 2-5 of 6; call read_file with offset=6 to continue]"
    )
    assert ctx.last_location is not None
    assert (ctx.last_location.path, ctx.last_location.start_line) == ("src/util.py", 1)
    assert ctx.last_location.end_line == 4


async def test_clients_see_what_was_read_not_the_first_line(ws: Path) -> None:
    """The one-line summary a client shows (toolResult.summary) says how much was read."""
    (ws / "long.txt").write_text("".join(f"row {i}\n" for i in range(1, 5313)))
    (ws / "empty.txt").write_text("")
    ctx = make_ctx(ws)
    whole = await call(ctx, "read_file", path="src/util.py")
    paged = await call(ctx, "read_file", path="long.txt")
    empty = await call(ctx, "read_file", path="empty.txt")
    assert REGISTRY.summary("read_file", whole) == "6 lines"
    assert REGISTRY.summary("read_file", paged) == "lines 1-2000 of 5312"
    assert REGISTRY.summary("read_file", empty) == "[empty.txt is empty]"


async def test_read_file_pages_a_long_file(ws: Path) -> None:
    (ws / "long.txt").write_text("".join(f"row {i}\n" for i in range(1, 5313)))
    ctx = make_ctx(ws)
    first = await call(ctx, "read_file", path="long.txt")
    lines = first.content.split("\n")
    assert len(lines) == 2001
    assert lines[1999] == "  2000\trow 2000"
    assert lines[-1] == (
        "[showing lines 1-2000 of 5312; call read_file with offset=2001 to continue]"
    )
    last = await call(ctx, "read_file", path="long.txt", offset=5001)
    assert last.content.split("\n")[-2] == "  5312\trow 5312"
    assert last.content.endswith("[showing lines 5001-5312 of 5312; this is the end of the file]")
    past = await call(ctx, "read_file", path="long.txt", offset=6000)
    assert past.is_error and "past the end" in past.content and "5312 lines" in past.content


async def test_read_file_caps_output_size_and_long_lines(ws: Path) -> None:
    (ws / "wide.txt").write_text(("w" * 150 + "\n") * 2000)
    (ws / "one.txt").write_text("q" * 5000 + "\nshort\n")
    ctx = make_ctx(ws)
    wide = await call(ctx, "read_file", path="wide.txt")
    assert len(wide.content.encode()) < 110_000
    assert "(output size limit); call read_file with offset=" in wide.content
    one = await call(ctx, "read_file", path="one.txt")
    first = one.content.split("\n")[0]
    assert first == "     1\t" + "q" * 2000
    assert "1 line longer than 2000 characters were cut" in one.content


async def test_read_file_errors(ws: Path) -> None:
    (ws / "image.png").write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0")
    (ws / "latin1.txt").write_bytes(b"na\xefve\n")
    (ws / "empty.txt").write_text("")
    ctx = make_ctx(ws)
    binary = await call(ctx, "read_file", path="image.png")
    assert binary.is_error and "binary file" in binary.content
    folder = await call(ctx, "read_file", path="src")
    assert folder.is_error and "list_files" in folder.content
    missing = await call(ctx, "read_file", path="nope.py")
    assert missing.is_error and "nope.py does not exist" in missing.content
    latin = await call(ctx, "read_file", path="latin1.txt")
    assert not latin.is_error
    assert "na\ufffdve" in latin.content and "not valid UTF-8" in latin.content
    empty = await call(ctx, "read_file", path="empty.txt")
    assert (empty.is_error, empty.content) == (False, "[empty.txt is empty]")
    bad = await call(ctx, "read_file", path="src/app.py", offset=0)
    assert bad.is_error and "'offset' must be at least 1" in bad.content


async def test_read_file_shows_unsaved_editor_text(ws: Path) -> None:
    docs = Documents()
    docs.texts[(ws / "src" / "util.py").resolve()] = "def add(a, b):\n    return 42\n"
    ctx = make_ctx(ws, documents=docs)
    outcome = await call(ctx, "read_file", path="src/util.py")
    assert "     2\t    return 42" in outcome.content
    assert "unsaved changes in the editor" in outcome.content


# ----- write_file and edit_file -----------------------------------------------------------------


async def test_edit_without_read_is_refused(ws: Path) -> None:
    before = (ws / "src" / "app.py").read_text()
    reviewer = Reviewer()
    ctx = make_ctx(ws, reviewer)
    edit = await call(ctx, "edit_file", path="src/app.py", old_text="Hello", new_text="Hi")
    assert edit.is_error
    assert edit.content == "Read src/app.py with read_file before editing it."
    write = await call(ctx, "write_file", path="src/app.py", content="x = 1\n")
    assert write.is_error and "with read_file before editing" in write.content
    assert (ws / "src" / "app.py").read_text() == before
    assert reviewer.proposals == []


async def test_edit_after_external_change_is_refused(ws: Path) -> None:
    ctx = make_ctx(ws)
    await call(ctx, "read_file", path="src/app.py")
    (ws / "src" / "app.py").write_text("changed by someone else\n")
    edit = await call(ctx, "edit_file", path="src/app.py", old_text="Hello", new_text="Hi")
    assert edit.is_error
    assert edit.content == (
        "src/app.py was modified since you read it; read it again with read_file before editing."
    )
    assert (ws / "src" / "app.py").read_text() == "changed by someone else\n"


async def test_edit_flow_accepted(ws: Path) -> None:
    reviewer = Reviewer()
    ctx = make_ctx(ws, reviewer)
    ctx.plan.update_from_model([{"id": "1", "text": "Be friendlier", "status": "in_progress"}])
    seen: list[Any] = []
    ctx.events.subscribe(seen.append)  # filesChanged is for changes made outside the agent
    before = (ws / "src" / "app.py").read_text()
    await call(ctx, "read_file", path="src/app.py")
    outcome = await call(
        ctx,
        "edit_file",
        path="src/app.py",
        old_text='    return f"Hello, {name}!"',
        new_text='    greeting = "Hello"\n    return f"{greeting}, {name}!"',
    )
    assert (outcome.is_error, outcome.content) == (
        False,
        "Edited src/app.py: replaced 1 line with 2 at line 5.",
    )
    after = (ws / "src" / "app.py").read_text()
    assert after == before.replace(
        '    return f"Hello, {name}!"', '    greeting = "Hello"\n    return f"{greeting}, {name}!"'
    )
    [proposal] = reviewer.proposals
    assert proposal.old_text == before and proposal.new_text == after
    assert proposal.path == (ws / "src" / "app.py").resolve()
    assert proposal.relative_path == "src/app.py"
    assert proposal.todo_id == "1"
    # Short and human; the client shows the file's name beside it.
    assert proposal.description == "Change 1 line and add 1 line in greet()"
    assert len(proposal.id) == 32
    assert ctx.last_location is not None
    assert (ctx.last_location.start_line, ctx.last_location.end_line) == (4, 5)
    assert not [event for event in seen if isinstance(event, FilesChanged)]
    # The written file counts as read: editing again needs no new read.
    again = await call(ctx, "edit_file", path="src/app.py", old_text="Goodbye", new_text="Bye")
    assert not again.is_error, again.content
    assert 'f"Bye, {name}!"' in (ws / "src" / "app.py").read_text()


async def test_edit_rejected_with_feedback(ws: Path) -> None:
    async def reject(proposal: EditProposal) -> EditDecision:
        return EditDecision(accepted=False, feedback="Keep the English greeting.")

    ctx = make_ctx(ws, Reviewer(reject))
    before = (ws / "src" / "app.py").read_text()
    await call(ctx, "read_file", path="src/app.py")
    outcome = await call(ctx, "edit_file", path="src/app.py", old_text="Hello", new_text="Hola")
    assert outcome.is_error
    assert outcome.content.startswith("This edit was rejected by the user")
    assert outcome.content.endswith("Their feedback: Keep the English greeting.")
    assert (ws / "src" / "app.py").read_text() == before


async def test_edit_accepted_with_the_users_own_text(ws: Path) -> None:
    async def settle(proposal: EditProposal) -> EditDecision:
        text = proposal.new_text.replace("Hola", "Bonjour")
        return EditDecision(accepted=True, new_text=text)

    ctx = make_ctx(ws, Reviewer(settle))
    await call(ctx, "read_file", path="src/app.py")
    outcome = await call(ctx, "edit_file", path="src/app.py", old_text="Hello", new_text="Hola")
    assert not outcome.is_error
    assert 'return f"Bonjour, {name}!"' in (ws / "src" / "app.py").read_text()
    assert "The user changed your proposal" in outcome.content
    assert '-    return f"Hola, {name}!"' in outcome.content
    assert '+    return f"Bonjour, {name}!"' in outcome.content


async def test_file_changed_during_review_is_not_written(ws: Path) -> None:
    target = ws / "src" / "app.py"

    async def user_types_meanwhile(proposal: EditProposal) -> EditDecision:
        target.write_text("saved by the user during the review\n")
        return EditDecision(accepted=True)

    ctx = make_ctx(ws, Reviewer(user_types_meanwhile))
    await call(ctx, "read_file", path="src/app.py")
    outcome = await call(ctx, "edit_file", path="src/app.py", old_text="Hello", new_text="Hi")
    assert outcome.is_error and "was modified since you read it" in outcome.content
    assert "Nothing was written." in outcome.content
    assert target.read_text() == "saved by the user during the review\n"


async def test_unsaved_editor_changes_block_edits(ws: Path) -> None:
    docs = Documents()
    target = ws / "src" / "app.py"
    before = target.read_text()
    reviewer = Reviewer()
    ctx = make_ctx(ws, reviewer, documents=docs)
    await call(ctx, "read_file", path="src/app.py")
    docs.texts[target.resolve()] = before + "# typed, not saved\n"
    expected = (
        "src/app.py has unsaved changes in the editor; ask the user to save or revert it, "
        "then read it again."
    )
    edit = await call(ctx, "edit_file", path="src/app.py", old_text="Hello", new_text="Hi")
    assert (edit.is_error, edit.content) == (True, expected)
    write = await call(ctx, "write_file", path="src/app.py", content="x = 1\n")
    assert (write.is_error, write.content) == (True, expected)
    assert target.read_text() == before
    assert reviewer.proposals == []
    # The editor holding the same text as the disk is no obstacle.
    docs.texts[target.resolve()] = before
    edit = await call(ctx, "edit_file", path="src/app.py", old_text="Hello", new_text="Hi")
    assert not edit.is_error, edit.content


async def test_an_editor_that_has_not_reloaded_yet_holds_no_unsaved_work(ws: Path) -> None:
    docs = Documents()
    target = ws / "src" / "util.py"
    docs.texts[target.resolve()] = target.read_text()  # open, clean
    ctx = make_ctx(ws, documents=docs)
    await call(ctx, "read_file", path="src/util.py")
    first = await call(ctx, "edit_file", path="src/util.py", old_text="a + b", new_text="b + a")
    assert not first.is_error, first.content
    # The editor still shows the version before our write: the disk's text is what counts.
    read = await call(ctx, "read_file", path="src/util.py")
    assert "     2\t    return b + a" in read.content and "unsaved" not in read.content
    second = await call(ctx, "edit_file", path="src/util.py", old_text="a - b", new_text="b - a")
    assert not second.is_error, second.content
    assert "return b + a" in target.read_text() and "return b - a" in target.read_text()
    # Typing in the editor is unsaved work again.
    docs.texts[target.resolve()] += "# typed\n"
    third = await call(ctx, "edit_file", path="src/util.py", old_text="b - a", new_text="0")
    assert third.is_error and "unsaved changes" in third.content


async def test_edit_file_match_errors(ws: Path) -> None:
    ctx = make_ctx(ws)
    before = (ws / "src" / "util.py").read_text()
    await call(ctx, "read_file", path="src/util.py")
    none = await call(ctx, "edit_file", path="src/util.py", old_text="def mul(a, b):", new_text="")
    assert none.is_error
    assert "old_text was not found in src/util.py" in none.content
    assert "read it again with read_file" in none.content
    # The closest candidates, numbered as read_file shows them.
    assert (
        "The closest lines:\n     1\tdef add(a, b):\n  ...\n     5\tdef sub(a, b):" in none.content
    )
    indent = await call(
        ctx,
        "edit_file",
        path="src/util.py",
        old_text="def add(a, b):\n  return a + b",
        new_text="x",
    )
    assert indent.is_error and "Lines 1-2 match it except for whitespace" in indent.content
    twice = await call(ctx, "edit_file", path="src/util.py", old_text="(a, b):", new_text="(x, y):")
    assert twice.is_error
    assert "occurs 2 times in src/util.py (at lines 1, 5)" in twice.content
    assert "include more surrounding lines" in twice.content
    same = await call(ctx, "edit_file", path="src/util.py", old_text="add", new_text="add")
    assert same.is_error and "identical" in same.content
    empty = await call(ctx, "edit_file", path="src/util.py", old_text="", new_text="x")
    assert empty.is_error and "'old_text' must not be empty" in empty.content
    missing = await call(ctx, "edit_file", path="nope.py", old_text="a", new_text="b")
    assert missing.is_error and "use write_file to create it" in missing.content
    assert (ws / "src" / "util.py").read_text() == before


async def test_edit_keeps_windows_line_endings(ws: Path) -> None:
    (ws / "dos.txt").write_bytes(b"alpha\r\nbeta\r\ngamma\r\n")
    ctx = make_ctx(ws)
    read = await call(ctx, "read_file", path="dos.txt")
    assert "\r" not in read.content
    outcome = await call(ctx, "edit_file", path="dos.txt", old_text="alpha\nbeta", new_text="A\nB")
    assert not outcome.is_error, outcome.content
    assert (ws / "dos.txt").read_bytes() == b"A\r\nB\r\ngamma\r\n"
    # One line replaced by several: the new lines end in CRLF too, not in bare LF.
    more = await call(ctx, "edit_file", path="dos.txt", old_text="B", new_text="B1\nB2\n")
    assert not more.is_error, more.content
    assert (ws / "dos.txt").read_bytes() == b"A\r\nB1\r\nB2\r\n\r\ngamma\r\n"
    again = await call(ctx, "read_file", path="dos.txt")
    assert again.content == "     1\tA\n     2\tB1\n     3\tB2\n     4\t\n     5\tgamma"
    # A whole rewrite keeps them as well.
    whole = await call(ctx, "write_file", path="dos.txt", content="one\ntwo\n")
    assert not whole.is_error, whole.content
    assert (ws / "dos.txt").read_bytes() == b"one\r\ntwo\r\n"


async def test_an_edit_changes_only_the_line_endings_of_what_it_replaces(ws: Path) -> None:
    # Mostly CRLF, with one stray LF line that must stay as it is.
    (ws / "mixed.txt").write_bytes(b"one\r\ntwo\nthree\r\nfour\r\n")
    (ws / "unix.txt").write_bytes(b"a\nb\n")
    reviewer = Reviewer()
    ctx = make_ctx(ws, reviewer)
    await call(ctx, "read_file", path="mixed.txt")
    edit = await call(
        ctx, "edit_file", path="mixed.txt", old_text="two\nthree", new_text="2\n3a\n3b"
    )
    assert not edit.is_error, edit.content
    assert (ws / "mixed.txt").read_bytes() == b"one\r\n2\r\n3a\r\n3b\r\nfour\r\n"
    assert reviewer.proposals[0].old_text == "one\r\ntwo\nthree\r\nfour\r\n"  # as on disk
    second = await call(ctx, "edit_file", path="mixed.txt", old_text="one", new_text="1")
    assert not second.is_error, second.content
    assert (ws / "mixed.txt").read_bytes() == b"1\r\n2\r\n3a\r\n3b\r\nfour\r\n"
    # An LF file stays LF, even where the model wrote CRLF.
    await call(ctx, "read_file", path="unix.txt")
    unix = await call(ctx, "edit_file", path="unix.txt", old_text="a\r\nb", new_text="x\r\ny")
    assert not unix.is_error, unix.content
    assert (ws / "unix.txt").read_bytes() == b"x\ny\n"


BOM = b"\xef\xbb\xbf"


async def test_a_byte_order_mark_is_hidden_from_the_model_and_kept_on_disk(ws: Path) -> None:
    (ws / "bom.py").write_bytes(BOM + b"import os\r\nprint(os.sep)\r\n")
    reviewer = Reviewer()
    docs = Documents()
    ctx = make_ctx(ws, reviewer, documents=docs)
    read = await call(ctx, "read_file", path="bom.py")
    assert read.content == "     1\timport os\n     2\tprint(os.sep)"
    found = await call(ctx, "grep", pattern="^import", path="bom.py")
    assert found.content == "bom.py:1:import os"
    edit = await call(
        ctx, "edit_file", path="bom.py", old_text="import os\n", new_text="import sys\n"
    )
    assert not edit.is_error, edit.content
    assert edit.content == "Edited bom.py: replaced 1 line with 1 at line 1."
    assert (ws / "bom.py").read_bytes() == BOM + b"import sys\r\nprint(os.sep)\r\n"
    assert "\ufeff" not in reviewer.proposals[0].old_text + reviewer.proposals[0].new_text
    whole = await call(ctx, "write_file", path="bom.py", content="print(1)\n")
    assert not whole.is_error, whole.content
    assert (ws / "bom.py").read_bytes() == BOM + b"print(1)\r\n"
    # An editor shows the file without its mark: the same text is no unsaved change.
    docs.texts[(ws / "bom.py").resolve()] = "print(1)\r\n"
    clean = await call(ctx, "read_file", path="bom.py")
    assert clean.content == "     1\tprint(1)"
    edited = await call(ctx, "edit_file", path="bom.py", old_text="1", new_text="2")
    assert not edited.is_error, edited.content
    assert (ws / "bom.py").read_bytes() == BOM + b"print(2)\r\n"
    # And one that holds typed text (the mark aside) is.
    docs.texts[(ws / "bom.py").resolve()] = "\ufeffprint(2)  # typed\r\n"
    typed = await call(ctx, "read_file", path="bom.py")
    assert typed.content.startswith("     1\tprint(2)  # typed\n[note: bom.py has unsaved")
    refused = await call(ctx, "edit_file", path="bom.py", old_text="2", new_text="3")
    assert refused.is_error and "unsaved changes" in refused.content


async def test_a_file_deleted_since_the_read_is_not_recreated(ws: Path) -> None:
    target = ws / "src" / "util.py"
    reviewer = Reviewer()
    ctx = make_ctx(ws, reviewer)
    await call(ctx, "read_file", path="src/util.py")
    target.unlink()  # the user deletes it
    write = await call(ctx, "write_file", path="src/util.py", content="def add(): ...\n")
    assert write.is_error and write.content.startswith(
        "src/util.py was deleted since you read it. Read it again with read_file"
    )
    edit = await call(ctx, "edit_file", path="src/util.py", old_text="add", new_text="plus")
    assert edit.is_error and "was deleted since you read it" in edit.content
    assert not target.exists() and reviewer.proposals == []
    # Once the model has seen that it is gone, creating it again is its informed choice.
    gone = await call(ctx, "read_file", path="src/util.py")
    assert gone.is_error and "does not exist" in gone.content
    again = await call(ctx, "write_file", path="src/util.py", content="def add(): ...\n")
    assert (again.is_error, again.content) == (False, "Created src/util.py (1 line).")
    assert target.read_text() == "def add(): ...\n"


async def test_a_file_deleted_during_the_review_is_not_recreated(ws: Path) -> None:
    target = ws / "src" / "app.py"

    async def delete_meanwhile(proposal: EditProposal) -> EditDecision:
        target.unlink()
        return EditDecision(accepted=True)

    ctx = make_ctx(ws, Reviewer(delete_meanwhile))
    await call(ctx, "read_file", path="src/app.py")
    outcome = await call(ctx, "edit_file", path="src/app.py", old_text="Hello", new_text="Hi")
    assert outcome.is_error and "was deleted since you read it" in outcome.content
    assert "Nothing was written." in outcome.content
    assert not target.exists()


async def test_edit_refuses_invalid_utf8(ws: Path) -> None:
    (ws / "latin1.txt").write_bytes(b"caf\xe9 au lait\n")
    ctx = make_ctx(ws)
    await call(ctx, "read_file", path="latin1.txt")
    outcome = await call(ctx, "edit_file", path="latin1.txt", old_text="au", new_text="with")
    assert outcome.is_error and "not valid UTF-8" in outcome.content
    assert (ws / "latin1.txt").read_bytes() == b"caf\xe9 au lait\n"


async def test_write_file_creates_and_rewrites(ws: Path) -> None:
    reviewer = Reviewer()
    ctx = make_ctx(ws, reviewer)
    created = await call(ctx, "write_file", path="tests/unit/test_x.py", content="a = 1\nb = 2\n")
    assert (created.is_error, created.content) == (False, "Created tests/unit/test_x.py (2 lines).")
    assert (ws / "tests" / "unit" / "test_x.py").read_text() == "a = 1\nb = 2\n"
    assert reviewer.proposals[0].old_text == ""
    assert reviewer.proposals[0].description == "New file (2 lines)"
    assert reviewer.proposals[0].todo_id is None
    rewritten = await call(ctx, "write_file", path="tests/unit/test_x.py", content="a = 3\n")
    assert rewritten.content == "Wrote tests/unit/test_x.py (1 line)."
    assert reviewer.proposals[1].old_text == "a = 1\nb = 2\n"
    assert reviewer.proposals[1].description == "Rewrite the whole file (1 line, was 2)"
    same = await call(ctx, "write_file", path="tests/unit/test_x.py", content="a = 3\n")
    assert same.is_error and "already has exactly this content" in same.content
    into_folder = await call(ctx, "write_file", path="src", content="x")
    assert into_folder.is_error and "is a folder" in into_folder.content


async def test_atomic_write_keeps_the_mode(ws: Path) -> None:
    script = ws / "run.sh"
    script.write_text("#!/bin/sh\necho one\n")
    script.chmod(0o755)
    ctx = make_ctx(ws)
    await call(ctx, "read_file", path="run.sh")
    outcome = await call(ctx, "edit_file", path="run.sh", old_text="one", new_text="two")
    assert not outcome.is_error
    assert script.read_text() == "#!/bin/sh\necho two\n"
    assert stat.S_IMODE(script.stat().st_mode) == 0o755
    assert _names(ws, ".run.sh") == []


ODD = "dir with space/naïve 'quoted' \"name\" ü.txt"


async def test_odd_characters_in_paths(ws: Path) -> None:
    ctx = make_ctx(ws)
    created = await call(ctx, "write_file", path=ODD, content="needle here\n")
    assert not created.is_error, created.content
    assert (ws / ODD).read_text() == "needle here\n"
    read = await call(ctx, "read_file", path=ODD)
    assert read.content == "     1\tneedle here"
    edit = await call(ctx, "edit_file", path=ODD, old_text="here", new_text="there")
    assert not edit.is_error
    assert (ws / ODD).read_text() == "needle there\n"


def _names(folder: Path, prefix: str) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith(prefix))


# ----- files the user could not write -----------------------------------------------------------

NOBODY = 65534

# Runs the tools through the registry on the workspace in argv[1], as whoever runs it, and prints
# each call's outcome. The review (the user) accepts everything, and locks one file meanwhile.
AS_A_USER = """
import asyncio, json, os, sys
from pathlib import Path
from plansight.engine.events import EventBus
from plansight.engine.hooks import EditDecision, approve_all_commands
from plansight.plan.plan import Plan
from plansight.plan.scratchpad import Scratchpad
from plansight.tools import default_tools
from plansight.tools.context import ToolContext
from plansight.workspace.access import Workspace

async def review(proposal):
    if proposal.relative_path == "locked_during_review.txt":
        os.chmod(proposal.path, 0o444)
    return EditDecision(accepted=True)

async def main(root):
    tools = default_tools()
    workspace = Workspace(root)
    ctx = ToolContext(Plan(), Scratchpad(), workspace, review, approve_all_commands, EventBus())
    async def call(name, **tool_input):
        outcome = await tools.call(ctx, name, tool_input)
        return [outcome.is_error, outcome.content]
    out = {"uid": os.geteuid()}
    for name in sorted(p.name for p in root.iterdir()):
        out[name] = [
            await call("read_file", path=name),
            await call("edit_file", path=name, old_text="old", new_text="new"),
            await call("write_file", path=name, content="replaced\\n"),
        ]
    out["created.txt"] = await call("write_file", path="created.txt", content="new\\n")
    print(json.dumps(out))

asyncio.run(main(Path(sys.argv[1])))
"""


def _run_as_a_user(root: Path, package: Path) -> dict[str, Any]:
    """Run AS_A_USER as an unprivileged user: nobody when we are root (CI), else ourselves."""
    # The tools need only the standard library and pathspec: a world-readable copy of both will
    # do, wherever the checkout lives.
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(package), "PYTHONDONTWRITEBYTECODE": "1"}
    as_user: list[str] = []
    if os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            pytest.skip("needs setpriv (util-linux) to run as an unprivileged user")
        as_user = [setpriv, f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
    # An interpreter that user may run: ours, else the system's.
    probe = "import sys; assert sys.version_info >= (3, 11); import plansight.tools"
    for python in dict.fromkeys([sys.executable, "/usr/bin/python3"]):
        check = subprocess.run([*as_user, python, "-s", "-c", probe], env=env, capture_output=True)
        if check.returncode == 0:
            break
    else:
        pytest.skip(f"no Python 3.11+ that an unprivileged user may run ({check.stderr[-200:]!r})")
    command = [*as_user, python, "-s", "-c", AS_A_USER, str(root)]
    run = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    result: dict[str, Any] = json.loads(run.stdout)
    assert result["uid"] != 0
    return result


def test_files_the_user_could_not_write_are_refused_and_left_as_they_are() -> None:
    """Read-only and other users' files: a rename would get past both; nothing may be written."""
    # In /tmp, which every user may enter (TMPDIR, or pytest's tmp_path, may be private).
    base = Path(tempfile.mkdtemp(prefix="plansight-perm-", dir="/tmp"))
    try:
        os.chmod(base, 0o755)
        package = base / "lib"
        # The tools need the standard library and pathspec (the ignore rules: pure Python).
        for needed in (plansight, pathspec):
            shutil.copytree(
                Path(needed.__file__).parent,
                package / needed.__name__,
                ignore=shutil.ignore_patterns("__pycache__"),
            )
        root = base / "ws"
        root.mkdir()
        me = (os.geteuid(), os.getegid())
        user = (NOBODY, NOBODY) if os.geteuid() == 0 else me
        files = {
            "mine.txt": (user, 0o644),  # writable: the control, so the refusals mean something
            "readonly.txt": (user, 0o444),
            "locked_during_review.txt": (user, 0o644),
        }
        if os.geteuid() == 0:  # only root can make files of another user
            files["theirs.txt"] = (me, 0o644)
            files["shared_but_theirs.txt"] = (me, 0o666)  # writable, but the rename takes it
        for name, (owner, mode) in files.items():
            (root / name).write_text("old\n")
            os.chown(root / name, *owner)
            os.chmod(root / name, mode)
        os.chown(root, *user)  # the folder is the user's: a rename in it would succeed
        before = {name: (root / name).stat() for name in files}

        out = _run_as_a_user(root, package)

        def outcome(name: str, call: int) -> tuple[bool, str]:
            is_error, content = out[name][call]
            return is_error, content

        assert outcome("mine.txt", 1) == (
            False,
            "Edited mine.txt: replaced 1 line with 1 at line 1.",
        )
        assert (
            outcome("mine.txt", 2)[0] is False and (root / "mine.txt").read_text() == "replaced\n"
        )
        assert out["created.txt"] == [False, "Created created.txt (1 line)."]
        assert (root / "created.txt").stat().st_uid == user[0]
        refused = {
            "readonly.txt": "is read-only (-r--r--r--) for the user Plansight runs as",
            "theirs.txt": "is read-only (-rw-r--r--) for the user Plansight runs as",
            "shared_but_theirs.txt": f"belongs to another user (uid {me[0]})",
        }
        for name, reason in refused.items():
            if name not in files:
                continue
            for call in (1, 2):  # edit_file, write_file
                is_error, content = outcome(name, call)
                assert is_error and reason in content, (name, content)
                assert "tell the user if it must change" in content
            after = (root / name).stat()
            assert (root / name).read_text() == "old\n"
            assert (after.st_ino, after.st_uid, after.st_mode) == (
                before[name].st_ino,
                before[name].st_uid,
                before[name].st_mode,
            )
        # Locked while the review was open: the check at the moment of the write refuses it.
        is_error, content = outcome("locked_during_review.txt", 1)
        assert is_error and "is read-only (-r--r--r--)" in content
        assert content.endswith("Nothing was written.")
        assert (root / "locked_during_review.txt").read_text() == "old\n"
        assert not [p for p in root.iterdir() if p.name.startswith(".")]  # no temporary file
    finally:
        shutil.rmtree(base)
