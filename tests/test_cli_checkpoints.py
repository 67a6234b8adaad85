"""`plansight checkpoints`, `plansight undo --step N` and `plansight restore ID` as a user runs
them: real CLI processes after a real `plansight run` (the fake Messages API), the files on
disk, and what the terminal printed."""

from __future__ import annotations

import datetime
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from plansight.cli.checkpoints import checkpoint_lines, restore_lines, when
from plansight.fakeapi import FakeMessagesAPI, text_reply, tool_reply

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs the git program")

ORIGINAL = {"app.py": "print('hello')\n", "util.py": "VALUE = 1\n", "README.md": "# demo\n"}
COMMAND = "echo made > made.txt && echo 'VALUE = 2' >> util.py && rm README.md"


def plan(*statuses: str) -> dict[str, Any]:
    texts = ("Change the greeting", "Write the notes")
    return {
        "items": [
            {"id": str(n), "text": t, "status": s}
            for n, (t, s) in enumerate(zip(texts, statuses, strict=True), 1)
        ]
    }


def env_for(state: Path, api: FakeMessagesAPI | None) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("ANTHROPIC_", "PLANSIGHT_")) and k not in ("FORCE_COLOR", "COLUMNS")
    }
    env["XDG_STATE_HOME"] = str(state)  # the default storage, as a user has it
    env["COLUMNS"] = "200"
    if api is not None:
        env["ANTHROPIC_BASE_URL"] = api.base_url
        env["ANTHROPIC_API_KEY"] = "test-key"
    return env


def plansight(
    state: Path, *args: str, api: FakeMessagesAPI | None = None, cwd: Path | None = None
) -> tuple[int, str]:
    done = subprocess.run(
        [sys.executable, "-m", "plansight", *args],
        env=env_for(state, api),
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    return done.returncode, done.stdout + done.stderr


def files(root: Path) -> dict[str, str]:
    """The workspace's files; not the plan files (Plansight's state, never checkpointed)."""
    return {
        relative: p.read_text()
        for p in sorted(root.rglob("*"))
        if p.is_file()
        and not (relative := p.relative_to(root).as_posix()).startswith(".plansight/plans/")
    }


@pytest.fixture
def done_run(tmp_path: Path, fake_api: FakeMessagesAPI) -> tuple[Path, Path]:
    """A workspace after a two-step run: step 1 edited app.py and ran a command that made,
    changed and deleted a file; step 2 wrote notes.txt."""
    root = tmp_path / "project"
    root.mkdir()
    for rel, text in ORIGINAL.items():
        (root / rel).write_text(text)
    state = tmp_path / "state"
    fake_api.push(
        tool_reply("todo", plan("in_progress", "pending")),
        tool_reply("read_file", {"path": "app.py"}),
        tool_reply("edit_file", {"path": "app.py", "old_text": "hello", "new_text": "bonjour"}),
        tool_reply("bash", {"command": COMMAND}),
        tool_reply("todo", plan("completed", "in_progress")),
        tool_reply("write_file", {"path": "notes.txt", "content": "step 2\n"}),
        tool_reply("todo", plan("completed", "completed")),
        text_reply("Both steps are done."),
    )
    code, out = plansight(
        state, "run", "Do both steps", "--workspace", str(root), "--yes", api=fake_api
    )
    assert code == 0, out
    return root, state


def test_the_checkpoints_are_listed_with_their_step_and_files(done_run: tuple[Path, Path]) -> None:
    root, state = done_run

    code, out = plansight(state, "checkpoints", "--workspace", str(root))

    assert code == 0, out
    lines = out.splitlines()
    assert lines[0] == f"Checkpoints of {root.resolve()}, oldest first:"
    rows = [line for line in lines if re.match(r"\s*\d+  ", line)]
    assert len(rows) == 7
    assert "Workspace as found at start-up" in rows[0]
    assert "Run started" in rows[1]
    assert re.search(r"#1\s+#1 started", rows[2])
    assert re.search(r"#1\s+Edited app.py\s+app.py$", rows[3])
    assert re.search(r"#1\s+Ran echo made > made.txt.*README.md, made.txt, util.py$", rows[4])
    assert re.search(r"#2\s+Edited notes.txt\s+notes.txt$", rows[6])


def test_in_the_project_folder_no_workspace_flag_is_needed(done_run: tuple[Path, Path]) -> None:
    # The README's examples and the hint "To undo this: plansight restore N" are typed in the
    # project folder, where `Path(".").name` is empty.
    root, state = done_run

    code, out = plansight(state, "checkpoints", cwd=root)
    assert code == 0, out
    assert len([line for line in out.splitlines() if re.match(r"\s*\d+  ", line)]) == 7, out

    code, out = plansight(state, "undo", "--step", "2", cwd=root)
    assert code == 0, out
    assert not (root / "notes.txt").exists()
    undo = re.search(r"To undo this: plansight restore (\d+)", out)
    assert undo is not None, out

    code, out = plansight(state, "restore", undo.group(1), cwd=root)
    assert code == 0, out
    assert (root / "notes.txt").read_text() == "step 2\n"


def test_undoing_a_step_shows_what_was_restored_and_what_was_left_and_why(
    done_run: tuple[Path, Path],
) -> None:
    root, state = done_run
    (root / "util.py").write_text("VALUE = 'mine'\n")  # the user's own change since

    code, out = plansight(state, "undo", "--step", "1", "--workspace", str(root))

    assert code == 0, out
    assert "Step #1 undone: restored 2 files, deleted 1 file" in out
    for path in ("README.md", "app.py"):
        assert f"  ✓ {path}" in out
    assert "  - made.txt (deleted)" in out and "✓ made.txt" not in out  # version 3
    assert "Left as they are (1):" in out
    assert re.search(r"✗ util.py — it was changed outside Plansight after checkpoint \d+", out)
    undo = re.search(r"To undo this: plansight restore (\d+)", out)
    assert undo is not None
    assert files(root) == {
        "app.py": ORIGINAL["app.py"],
        "README.md": ORIGINAL["README.md"],
        "util.py": "VALUE = 'mine'\n",
        "notes.txt": "step 2\n",
    }

    # The restore undoes itself with the checkpoint it names.
    code, out = plansight(state, "restore", undo.group(1), "--workspace", str(root))
    assert code == 0, out
    assert f"Checkpoint {undo.group(1)}: restored 2 files, deleted 1 file" in out
    assert files(root)["app.py"] == "print('bonjour')\n" and "made.txt" in files(root)


def test_restore_with_force_and_the_conversation(done_run: tuple[Path, Path]) -> None:
    root, state = done_run
    (root / "util.py").write_text("VALUE = 'mine'\n")
    code, out = plansight(state, "checkpoints", "--workspace", str(root))
    run_start = re.search(r"^\s*(\d+)\s.*Run started", out, re.M)
    assert run_start is not None

    code, out = plansight(
        state,
        "restore",
        run_start.group(1),
        "--conversation",
        "--force",
        "--yes",  # it overwrites the user's util.py: confirmed here (asked without it)
        "--workspace",
        str(root),
    )

    assert code == 0, out
    assert (
        f"Checkpoint {run_start.group(1)} (and the conversation): restored 3 files, deleted 2 files"
    ) in out
    assert files(root) == ORIGINAL


def test_refusals_are_said_and_exit_1(done_run: tuple[Path, Path], tmp_path: Path) -> None:
    root, state = done_run
    code, out = plansight(state, "restore", "999", "--workspace", str(root))
    assert code == 1 and "there is no checkpoint '999'" in out
    code, out = plansight(state, "undo", "--step", "7", "--workspace", str(root))
    assert code == 1 and "the plan has no item #7" in out
    code, out = plansight(state, "checkpoints", "--workspace", str(tmp_path / "missing"))
    assert code == 1 and "no such folder" in out


def test_listing_a_folder_never_used_says_there_are_none_and_snapshots_nothing(
    tmp_path: Path,
) -> None:
    """Listing changes nothing: no repository made, no first snapshot taken of the workspace
    (seconds for a large one) just to say there is nothing to list."""
    root = tmp_path / "fresh"
    root.mkdir()
    for n in range(50):
        (root / f"file{n}.py").write_text(f"VALUE = {n}\n")
    state = tmp_path / "state"
    code, out = plansight(state, "checkpoints", "--workspace", str(root))
    assert code == 0, out
    assert f"Checkpoints of {root.resolve()}, oldest first:" in out
    assert "No checkpoints yet" in out
    left = (
        sorted(p.relative_to(state).as_posix() for p in state.rglob("*")) if state.exists() else []
    )
    assert not [p for p in left if "/checkpoints" in p], left
    # Nor is a restore attempted where nothing was ever kept.
    code, out = plansight(state, "undo", "--step", "1", "--workspace", str(root))
    assert code == 1 and "has no checkpoints yet" in out, out
    assert not state.exists() or not any("checkpoints" in p.name for p in state.rglob("*"))


# ----- rendering (pure) ----------------------------------------------------------------------


def shown(lines: list[Any]) -> str:
    console = Console(width=200, record=True, color_system=None)
    for line in lines:
        console.print(line)
    return console.export_text()


def test_a_long_list_of_files_is_shortened_and_times_are_local() -> None:
    today = datetime.date(2026, 12, 1)
    stamp = "2026-12-01T10:00:00.000Z"
    text = shown(
        checkpoint_lines(
            [{"id": "12", "label": "Ran make", "createdAt": stamp, "paths": list("abcde")}], today
        )
    )
    assert "a, b, c and 2 more" in text
    assert when(stamp, today) == datetime.datetime(
        2026, 12, 1, 10, tzinfo=datetime.UTC
    ).astimezone().strftime("%H:%M:%S")
    assert when("2026-11-02T10:00:00Z", today).startswith("Nov 02")


def test_a_restore_that_changed_nothing_says_so() -> None:
    text = shown(restore_lines({"restored": [], "skipped": []}, "Step #2 undone", "9"))
    assert "Step #2 undone: no file needed restoring" in text
    assert "To undo" not in text


def test_a_forced_step_undo_shows_deleted_files_and_the_later_steps_work_it_lost() -> None:
    text = shown(
        restore_lines(
            {
                "restored": ["same.py"],
                "deleted": ["hello.py"],
                "skipped": [],
                "alsoUndone": [
                    {"path": "hello.py", "todoIds": ["3"]},
                    {"path": "same.py", "todoIds": ["2", "4"]},
                ],
            },
            "Step #1 undone",
            "9",
        )
    )
    assert "Step #1 undone: restored 1 file, deleted 1 file" in text
    assert "  ✓ same.py" in text and "  - hello.py (deleted)" in text
    assert "✓ hello.py" not in text and "restored hello.py" not in text
    assert "Later steps' changes also undone (2):" in text
    assert "  ! hello.py — the changes of #3" in text
    assert "  ! same.py — the changes of #2, #4" in text
    assert "To undo this: plansight restore 9" in text


# ----- issue 21: what a restore says --------------------------------------------------------


def last_checkpoint(state: Path, root: Path) -> str:
    code, out = plansight(state, "checkpoints", "--workspace", str(root))
    assert code == 0, out
    rows = [m.group(1) for m in re.finditer(r"^\s*(\d+)  ", out, re.M)]
    return rows[-1]


def test_the_skip_reason_names_the_checkpoint_after_which_the_file_changed_and_the_flag(
    done_run: tuple[Path, Path],
) -> None:
    root, state = done_run
    last = last_checkpoint(state, root)  # the user changes util.py after this one
    (root / "util.py").write_text("VALUE = 'mine'\n")

    code, out = plansight(state, "undo", "--step", "1", "--workspace", str(root))

    assert code == 0, out
    assert (
        f"✗ util.py — it was changed outside Plansight after checkpoint {last} "
        "(restore with --force to overwrite it)"
    ) in out
    assert "Step #1 is pending again in the plan." in out


def test_a_dry_run_says_what_would_happen_and_changes_nothing(
    done_run: tuple[Path, Path],
) -> None:
    root, state = done_run
    before = files(root)

    code, out = plansight(state, "undo", "--step", "1", "--dry-run", "--workspace", str(root))

    assert code == 0, out
    assert "Undoing step #1 (dry run): would have restored 3 files and deleted 1 file" in out
    assert "  - made.txt (would be deleted)" in out
    assert "Nothing was changed: this was a dry run." in out
    assert "To undo this" not in out and "pending again" not in out
    assert files(root) == before


def test_a_forced_restore_that_would_delete_the_users_file_asks_first(
    done_run: tuple[Path, Path], tmp_path: Path
) -> None:
    root, state = done_run
    code, out = plansight(state, "checkpoints", "--workspace", str(root))
    run_start = re.search(r"^\s*(\d+)\s.*Run started", out, re.M)
    assert run_start is not None
    (root / "notes.txt").write_text("my own notes, not the agent's\n")  # the user's work now
    args = ("restore", run_start.group(1), "--force", "--workspace", str(root))

    # No terminal to ask on: refused, nothing deleted.
    code, out = plansight(state, *args)
    assert code == 1, out
    assert "--force would lose changes made outside Plansight:" in out
    assert "  ! notes.txt (deleted)" in out
    assert "not restored: confirm on a terminal, or add --yes" in out
    assert (root / "notes.txt").read_text() == "my own notes, not the agent's\n"

    # --yes: done without asking.
    code, out = plansight(state, *args, "--yes")
    assert code == 0, out
    assert "  - notes.txt (deleted)" in out and not (root / "notes.txt").exists()


def test_a_workspace_that_is_a_file_is_called_a_file(tmp_path: Path) -> None:
    target = tmp_path / "notes.txt"
    target.write_text("x\n")
    for args in (("checkpoints",), ("undo", "--step", "1")):
        done = subprocess.run(
            [sys.executable, "-m", "plansight", *args, "--workspace", str(target)],
            env=env_for(tmp_path / "state", None),
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 1
        assert done.stdout == ""  # an error: on stderr
        assert f"{target} is a file, not a folder" in done.stderr
        assert "no such folder" not in done.stderr


def test_a_folder_replaced_by_a_link_is_listed_and_restored_never_through_the_link(
    tmp_path: Path, fake_api: FakeMessagesAPI
) -> None:
    """After a run edited src/a.py, `src` is replaced by a symbolic link to a folder outside
    the workspace. Listing, undoing and restoring work (they crashed with a traceback: git
    refused to snapshot a path "beyond a symbolic link"), and nothing is written through the
    link: the folder outside is byte for byte as it was."""
    root = tmp_path / "project"
    (root / "src").mkdir(parents=True)
    (root / "src" / "a.py").write_text("A = 1\n")
    (root / "app.py").write_text("print('hello')\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "a.py").write_text("OUTSIDE\n")
    (outside / "secret.txt").write_text("not the workspace's\n")
    state = tmp_path / "state"
    one = {"items": [{"id": "1", "text": "Change A", "status": "in_progress"}]}
    fake_api.push(
        tool_reply("todo", one),
        tool_reply("read_file", {"path": "src/a.py"}),
        tool_reply("edit_file", {"path": "src/a.py", "old_text": "A = 1", "new_text": "A = 2"}),
        tool_reply("todo", {"items": [{**one["items"][0], "status": "completed"}]}),
        text_reply("Changed."),
    )
    code, out = plansight(state, "run", "Change A", "--workspace", str(root), "--yes", api=fake_api)
    assert code == 0, out
    shutil.rmtree(root / "src")
    (root / "src").symlink_to(outside, target_is_directory=True)
    before = files(outside)
    where = ("--workspace", str(root))

    code, out = plansight(state, "checkpoints", *where)
    assert code == 0 and "Traceback" not in out, out
    assert re.search(r"#1\s+Edited src/a.py", out), out
    code, out = plansight(state, "undo", "--step", "1", *where)
    assert code == 0 and "Traceback" not in out, out
    assert "src/a.py — it was changed outside Plansight" in out
    assert files(outside) == before
    code, out = plansight(state, "restore", "1", "--force", "--yes", *where)
    assert code == 0 and "Traceback" not in out, out

    assert files(outside) == before  # nothing written, deleted or read through the link
    assert not (root / "src").is_symlink()  # the link (only the link) gave way to the folder
    assert (root / "src" / "a.py").read_text() == "A = 1\n"
