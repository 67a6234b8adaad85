"""The checkpoint manifest: records round-trip, a damaged tail is dropped, ids never repeat."""

from __future__ import annotations

from pathlib import Path

from plansight.checkpoints import Checkpoint
from plansight.checkpoints.manifest import Manifest


def checkpoint(seq: int, **fields: object) -> Checkpoint:
    values: dict[str, object] = {
        "seq": seq,
        "commit": f"{seq:040x}",
        "tree": f"{seq + 100:040x}",
        "kind": "edit",
        "label": f"checkpoint {seq}",
        "created_at": "2026-12-01T10:00:00.000Z",
        "session": 1,
    }
    values.update(fields)
    return Checkpoint(**values)  # type: ignore[arg-type]


def test_records_round_trip_with_every_field(tmp_path: Path) -> None:
    manifest = Manifest(tmp_path / "checkpoints.jsonl")
    full = checkpoint(
        1,
        todo_id="2",
        changed=("a.py", "b/ü.txt"),
        agent=("a.py",),
        uncaptured={"big.bin": "large"},
        extra={"plan": {"version": 3}},
    )
    manifest.append(full)
    manifest.append(checkpoint(2, kind="runStart"))
    again = Manifest(manifest.path)
    again.load()
    assert again.checkpoints == [full, checkpoint(2, kind="runStart")]
    assert again.next_seq == 3


def test_a_damaged_last_line_is_dropped_and_the_rest_kept(tmp_path: Path) -> None:
    manifest = Manifest(tmp_path / "checkpoints.jsonl")
    manifest.append(checkpoint(1))
    manifest.append(checkpoint(2))
    with manifest.path.open("ab") as handle:
        handle.write(b'{"type": "checkpoint", "seq": 3, "comm')  # a full disk cut it short
    again = Manifest(manifest.path)
    again.load()
    assert [c.seq for c in again.checkpoints] == [1, 2]
    assert manifest.path.read_text().endswith("\n")  # rewritten without the damage
    again.append(checkpoint(3))
    third = Manifest(manifest.path)
    third.load()
    assert [c.seq for c in third.checkpoints] == [1, 2, 3]


def test_ids_and_the_session_survive_pruning(tmp_path: Path) -> None:
    manifest = Manifest(tmp_path / "checkpoints.jsonl")
    for seq in range(1, 6):
        manifest.append(checkpoint(seq))
    assert manifest.start_session() == 2
    manifest.keep(manifest.checkpoints[-1:])
    manifest.keep([])  # even with nothing left, the next id is not reused
    again = Manifest(manifest.path)
    again.load()
    assert (again.checkpoints, again.next_seq, again.session) == ([], 6, 2)


def test_the_wire_form_is_the_protocols_checkpoint() -> None:
    edit = checkpoint(7, todo_id="3", changed=("src/a.py",), agent=("src/a.py",))
    assert edit.to_wire() == {
        "id": "7",
        "todoId": "3",
        "label": "checkpoint 7",
        "createdAt": "2026-12-01T10:00:00.000Z",
        "paths": ["src/a.py"],
        "kind": "edit",
    }
    first = checkpoint(8, kind="runStart", changed=("outside.txt",))
    assert first.to_wire()["paths"] == []  # a run's first checkpoint
    assert "todoId" not in first.to_wire()
