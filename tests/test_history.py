"""The runs' history log (session.history): what is kept, merged, bounded, and survives."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from plansight.session.history import HISTORY, RunHistory

USAGE = {
    "inputTokens": 1,
    "outputTokens": 2,
    "cacheReadInputTokens": 0,
    "cacheCreationInputTokens": 0,
}


def result(text: str = "Done.") -> dict[str, Any]:
    return {"status": "done", "text": text, "rounds": 1, "usage": USAGE}


def run_events(prompt: str, *texts: str) -> list[dict[str, Any]]:
    return [
        {"type": "runStarted", "prompt": prompt},
        *({"type": "textDelta", "text": t} for t in texts),
        {"type": "runFinished", "result": result()},
    ]


def test_a_run_is_kept_with_text_deltas_merged_and_tool_input_left_out(tmp_path: Path) -> None:
    history = RunHistory(tmp_path)
    for event in [
        {"type": "runStarted", "prompt": "Fix it"},
        {"type": "textDelta", "text": "Let me "},
        {"type": "textDelta", "text": "look."},
        {"type": "toolInputDelta", "id": "t1", "name": "read_file", "partialJson": '{"pa'},
        {"type": "planDraft", "items": []},
        {"type": "toolCall", "id": "t1", "name": "read_file", "input": {"path": "a.py"}},
        {"type": "toolResult", "id": "t1", "name": "read_file", "isError": False, "summary": "3"},
        {"type": "thinkingDelta", "text": "Hm"},
        {"type": "thinkingDelta", "text": "m."},
        {"type": "textDelta", "text": "Done."},
        {"type": "runFinished", "result": result()},
    ]:
        history.record(event)
    expected = [
        {"type": "runStarted", "prompt": "Fix it"},
        {"type": "textDelta", "text": "Let me look."},
        {"type": "planDraft", "items": []},
        {"type": "toolCall", "id": "t1", "name": "read_file", "input": {"path": "a.py"}},
        {"type": "toolResult", "id": "t1", "name": "read_file", "isError": False, "summary": "3"},
        {"type": "thinkingDelta", "text": "Hmm."},
        {"type": "textDelta", "text": "Done."},
        {"type": "runFinished", "result": result()},
    ]
    [run] = history.runs()
    assert run["prompt"] == "Fix it"
    assert run["result"] == result()
    assert run["startedAt"].endswith("Z")
    assert run["events"] == expected
    # A restarted server reads the same from disk.
    assert RunHistory(tmp_path).runs() == [run]


def test_text_of_two_model_turns_stays_two_deltas_in_memory_and_on_disk(tmp_path: Path) -> None:
    history = RunHistory(tmp_path, flush_text_at=10)  # also cut and merged again when read
    for event in [
        {"type": "runStarted", "prompt": "Plan it"},
        {"type": "textDelta", "text": "I read it ", "turn": 1},
        {"type": "textDelta", "text": "and planned.", "turn": 1},
        {"type": "textDelta", "text": "The plan waits.", "turn": 2},
        {"type": "runFinished", "result": result()},
    ]:
        history.record(event)
    texts = [
        {"type": "textDelta", "text": "I read it and planned.", "turn": 1},
        {"type": "textDelta", "text": "The plan waits.", "turn": 2},
    ]
    [run] = history.runs()
    assert run["events"][1:-1] == texts
    assert RunHistory(tmp_path).runs()[0]["events"][1:-1] == texts


def test_runs_come_newest_last_and_limited(tmp_path: Path) -> None:
    history = RunHistory(tmp_path)
    for n in range(5):
        for event in run_events(f"prompt {n}", "a"):
            history.record(event)
    assert [r["prompt"] for r in history.runs(limit=3)] == ["prompt 2", "prompt 3", "prompt 4"]
    assert [r["prompt"] for r in RunHistory(tmp_path).runs()] == [f"prompt {n}" for n in range(5)]
    assert history.runs(limit=0) == []


def test_the_run_in_progress_is_included_without_a_result(tmp_path: Path) -> None:
    history = RunHistory(tmp_path)
    history.record({"type": "runStarted", "prompt": "Go"})
    history.record({"type": "textDelta", "text": "Work"})
    history.record({"type": "textDelta", "text": "ing"})
    [run] = history.runs()
    assert "result" not in run
    assert run["events"][-1] == {"type": "textDelta", "text": "Working"}


def test_events_between_runs_belong_to_no_run(tmp_path: Path) -> None:
    history = RunHistory(tmp_path)
    history.record({"type": "filesChanged", "paths": ["a.py"]})
    for event in run_events("x"):
        history.record(event)
    history.record({"type": "filesChanged", "paths": ["b.py"]})
    [run] = RunHistory(tmp_path).runs()
    assert [e["type"] for e in run["events"]] == ["runStarted", "runFinished"]


def test_the_log_stays_bounded_keeping_the_newest_runs(tmp_path: Path) -> None:
    history = RunHistory(tmp_path, max_runs=3)
    for n in range(10):
        for event in run_events(f"p{n}", "text"):
            history.record(event)
    assert [r["prompt"] for r in history.runs()] == ["p7", "p8", "p9"]
    lines = (tmp_path / HISTORY).read_text().splitlines()
    assert {json.loads(line)["run"] for line in lines} == {8, 9, 10}
    # By size too: a big answer pushes older runs out.
    sized = RunHistory(tmp_path / "sized", max_bytes=20_000, max_value=100_000)
    for n in range(6):
        for event in run_events(f"big {n}", "x" * 6_000):
            sized.record(event)
    assert (tmp_path / "sized" / HISTORY).stat().st_size <= 20_000
    assert sized.runs()[-1]["prompt"] == "big 5"
    assert len(sized.runs()) < 6


def test_long_values_are_kept_cut(tmp_path: Path) -> None:
    history = RunHistory(tmp_path, max_value=100)
    history.record({"type": "runStarted", "prompt": "Write it"})
    content = "line\n" * 1000
    history.record(
        {
            "type": "toolCall",
            "id": "t",
            "name": "write_file",
            "input": {"path": "a", "content": content},
        }
    )
    [run] = RunHistory(tmp_path).runs()
    kept = run["events"][1]["input"]["content"]
    assert kept.startswith("line\n" * 20) and "4900 more characters not kept" in kept


def test_a_damaged_or_cut_line_loses_only_itself(tmp_path: Path) -> None:
    history = RunHistory(tmp_path)
    for event in run_events("first", "one"):
        history.record(event)
    for event in run_events("second", "two"):
        history.record(event)
    path = tmp_path / HISTORY
    lines = path.read_text().splitlines(keepends=True)
    lines[1] = "{not json\n"  # first run's text
    path.write_text("".join(lines) + '{"run": 3, "event": {"type": "runSta')  # a cut last line
    runs = RunHistory(tmp_path).runs()
    assert [r["prompt"] for r in runs] == ["first", "second"]
    assert [e["type"] for e in runs[0]["events"]] == ["runStarted", "runFinished"]
    assert runs[1]["events"][1] == {"type": "textDelta", "text": "two"}


def test_a_new_session_is_marked_on_its_first_run(tmp_path: Path) -> None:
    history = RunHistory(tmp_path)
    for event in run_events("one"):
        history.record(event)
    history.mark_new_session()
    for event in run_events("two"):
        history.record(event)
    runs = RunHistory(tmp_path).runs()
    assert "newSession" not in runs[0] and runs[1]["newSession"] is True


KILLED_WRITER = """
import os, sys
from pathlib import Path
from plansight.session.history import RunHistory
h = RunHistory(Path(sys.argv[1]), flush_text_at=50)
h.record({"type": "runStarted", "prompt": "long answer"})
for n in range(1000):
    h.record({"type": "textDelta", "text": "word%d " % n})
    if n == 600:
        os.kill(os.getpid(), 9)
"""


def test_a_run_cut_by_kill_9_keeps_what_was_written(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", KILLED_WRITER, str(tmp_path)], env={**os.environ}, timeout=60
    )
    assert done.returncode == -9
    [run] = RunHistory(tmp_path).runs()
    assert run["prompt"] == "long answer" and "result" not in run
    [start, text] = run["events"]
    assert start["type"] == "runStarted"
    # Every flushed stretch is there, merged back into one, in order, up to the kill.
    words = text["text"].split()
    assert words == [f"word{n}" for n in range(len(words))]
    assert 500 <= len(words) <= 601


def test_an_undo_after_a_run_is_kept_with_that_run_and_read_back(tmp_path: Path) -> None:
    history = RunHistory(tmp_path)
    restored = {"type": "restored", "todoId": "1", "restored": ["a.py"], "deleted": ["b.txt"]}
    history.record_after(restored)  # no run yet: nothing to show it under
    for event in run_events("one", "Done."):
        history.record(event)
    history.record_after(restored)
    for event in run_events("two", "Again."):
        history.record(event)

    runs = RunHistory(tmp_path).runs()

    assert runs[0]["after"] == [restored]
    assert "after" not in runs[1]
    assert [e["type"] for e in runs[0]["events"]] == ["runStarted", "textDelta", "runFinished"]


def test_an_undo_survives_the_log_being_rewritten(tmp_path: Path) -> None:
    history = RunHistory(tmp_path, max_runs=2)
    restored = {"type": "restored", "checkpoint": "c1", "restored": ["a.py"], "deleted": []}
    for n in range(3):
        for event in run_events(f"run {n}"):
            history.record(event)
        history.record_after({**restored, "checkpoint": f"c{n}"})

    runs = RunHistory(tmp_path).runs()

    assert [r["prompt"] for r in runs] == ["run 1", "run 2"]
    assert [r["after"][0]["checkpoint"] for r in runs] == ["c1", "c2"]
