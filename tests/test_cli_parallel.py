"""The terminal's parallel workers: each worker's live line, and `/parallel`'s parsing."""

from __future__ import annotations

from plansight.cli.interactive import parse_line, take_in_line
from plansight.cli.ui import worker_line


def test_a_running_worker_shows_its_current_tool_and_a_finished_one_its_files() -> None:
    running = {"status": "running", "tool": "bash", "summary": "$ make test", "rounds": 3}
    assert worker_line("2", running) == "⟳ #2 bash: $ make test (3 tools)"
    assert worker_line("2", {"status": "running", "rounds": 0}) == "⟳ #2 starting (0 tools)"
    done = {"status": "completed", "files": [{"path": "a.py", "added": 2, "removed": 1}]}
    assert worker_line("2", done) == "✓ #2 completed: a.py +2 -1"
    assert worker_line("3", {"status": "failed", "files": []}) == "✗ #3 failed, no changes"


def test_parallel_is_a_command_and_a_take_in_is_told_in_one_line() -> None:
    command = parse_line("/parallel 2 3")
    assert (command.name, command.argument) == ("parallel", "2 3")
    answer = {"applied": ["a.py"], "rejected": [], "conflicts": ["b.py"], "skipped": []}
    assert take_in_line("2", answer) == "#2: 1 applied, 1 conflicts"
    assert take_in_line("3", {}) == "#3: nothing to take in"
