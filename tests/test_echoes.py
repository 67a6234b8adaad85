"""Echoes: the agent's own changes told apart from others', on real files (no watcher here)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from plansight.tools.context import NoRecorder
from plansight.workspace.echoes import CommandEchoes, Echoes


class Judged:
    def __init__(self) -> None:
        self.own: list[str] = []
        self.others: list[str] = []

    def __call__(self, own: list[str], others: list[str]) -> None:
        self.own += own
        self.others += others


def test_a_file_is_the_agents_own_until_someone_changes_it_again(tmp_path: Path) -> None:
    judged = Judged()
    echoes = Echoes(tmp_path, judged)
    (tmp_path / "kept.txt").write_text("as the agent left it\n")
    echoes.left_as_they_are(["kept.txt", "gone.txt"])  # gone.txt: removed by the agent

    echoes.report(["kept.txt", "gone.txt", "kept.txt"])
    assert (judged.own, judged.others) == (["kept.txt", "gone.txt"], [])

    (tmp_path / "kept.txt").write_text("someone else's\n")
    (tmp_path / "gone.txt").write_text("made again by someone else\n")
    echoes.report(["kept.txt", "gone.txt"])
    assert judged.others == ["kept.txt", "gone.txt"]
    # Once someone else's, it stays theirs (the agent's stamp is forgotten).
    (tmp_path / "gone.txt").unlink()
    echoes.report(["gone.txt"])
    assert judged.others == ["kept.txt", "gone.txt", "gone.txt"]


def test_reports_are_held_until_the_last_hold_ends(tmp_path: Path) -> None:
    judged = Judged()
    echoes = Echoes(tmp_path, judged)
    echoes.hold()
    echoes.hold()
    echoes.report(["a.txt"])
    echoes.release()
    assert judged.others == []
    echoes.release()
    assert judged.others == ["a.txt"]


async def test_a_command_s_changes_are_found_by_scans_before_and_after(tmp_path: Path) -> None:
    (tmp_path / "changed.txt").write_text("before\n")
    (tmp_path / "removed.txt").write_text("before\n")
    (tmp_path / "same.txt").write_text("before\n")
    (tmp_path / ".gitignore").write_text("ignored/\n")
    judged = Judged()
    echoes = Echoes(tmp_path, judged)
    recorder = CommandEchoes(echoes, NoRecorder())
    recorder.watched = True

    await recorder.before_command()
    echoes.report(["someone.txt"])  # held while the command runs
    (tmp_path / "changed.txt").write_text("after, longer\n")
    (tmp_path / "removed.txt").unlink()
    (tmp_path / "made" / "deep").mkdir(parents=True)
    (tmp_path / "made" / "deep" / "new.txt").write_text("new\n")
    (tmp_path / "ignored").mkdir()
    (tmp_path / "ignored" / "x").write_text("ignored\n")
    recorder.command_ran("the command")
    assert judged.others == []
    await asyncio.wait_for(recorder.settled(), 30)

    assert sorted(judged.own) == [
        "changed.txt",
        "made",
        "made/deep",
        "made/deep/new.txt",
        "removed.txt",
    ]
    assert judged.others == ["someone.txt"]
    # The watcher's late report of the same changes: the agent's own.
    echoes.report(["made/deep/new.txt", "made", "removed.txt"])
    assert judged.others == ["someone.txt"]
