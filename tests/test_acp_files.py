"""The workspace's editor seam (`workspace.access.EditorFiles`), as `plansight acp` uses it:
reads through the editor see its unsaved buffer, an unsaved buffer is never overwritten, and an
accepted edit is written by the editor (its undo knows it), then checked against the disk."""

from __future__ import annotations

from pathlib import Path

import pytest

from plansight.workspace.access import EditorFiles, UnsavedChangesError, Workspace


class Editor:
    """An editor's fs/*: buffers it holds, else the disk; what it was asked to write."""

    def __init__(self, *, can_write: bool = True) -> None:
        self.can_write = can_write
        self.buffers: dict[Path, str] = {}
        self.reads: list[Path] = []
        self.writes: list[Path] = []

    def open_text(self, path: Path) -> str | None:
        return self.buffers.get(path)

    async def read_text(self, path: Path) -> str | None:
        self.reads.append(path)
        if path in self.buffers:
            return self.buffers[path]
        return path.read_text(encoding="utf-8") if path.exists() else None

    async def write_text(self, path: Path, text: str) -> None:
        self.writes.append(path)
        path.write_text(text, encoding="utf-8")
        self.buffers.pop(path, None)


def test_the_double_is_an_editor_files() -> None:
    assert isinstance(Editor(), EditorFiles)


async def test_reads_see_the_buffer_and_an_unsaved_one_is_never_overwritten(tmp_path: Path) -> None:
    target = tmp_path / "a.py"
    target.write_text("one\n")
    editor = Editor()
    editor.buffers[target] = "one\ntyped\n"
    workspace = Workspace(tmp_path, editor)
    page = await workspace.read_page("a.py")
    assert page.lines == ("one", "typed")
    with pytest.raises(UnsavedChangesError):
        await workspace.begin_edit("a.py")
    assert target.read_text() == "one\n" and editor.writes == []


async def test_an_edit_is_written_through_the_editor_and_can_be_edited_again(
    tmp_path: Path,
) -> None:
    target = tmp_path / "a.py"
    target.write_text("one\n")
    editor = Editor()
    workspace = Workspace(tmp_path, editor)
    await workspace.read_page("a.py")
    base = await workspace.begin_edit("a.py")
    await workspace.write(base, "two\n")
    assert editor.writes == [target.resolve()] and target.read_text() == "two\n"
    again = await workspace.begin_edit("a.py")  # no new read needed: the write is known
    assert again.text == "two\n"


async def test_an_editor_that_cannot_write_leaves_the_write_to_the_workspace(
    tmp_path: Path,
) -> None:
    target = tmp_path / "a.py"
    target.write_text("one\n")
    editor = Editor(can_write=False)
    workspace = Workspace(tmp_path, editor)
    await workspace.read_page("a.py")
    await workspace.write(await workspace.begin_edit("a.py"), "two\n")
    assert editor.writes == [] and target.read_text() == "two\n"
