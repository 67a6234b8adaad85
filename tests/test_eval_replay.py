"""`plansight eval` end to end, offline: the committed recordings replayed through the real
server, tools and checks; a run recorded from an endpoint and replayed; the usage errors."""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from plansight.eval.recordings import find_recordings
from plansight.fakeapi import FakeMessagesAPI, Script

REPO = Path(__file__).resolve().parents[1]
RECORDINGS = REPO / "eval" / "recordings"


def plansight_eval(
    *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "PLANSIGHT_"))}
    return subprocess.run(
        [sys.executable, "-m", "plansight", "eval", *args],
        capture_output=True,
        text=True,
        env={**base, **(env or {}), "COLUMNS": "120"},
        timeout=600,
        check=False,
    )


class Ran(NamedTuple):
    returncode: int
    stderr: str


def attempts(out: Path) -> dict[tuple[str, str], dict[str, Any]]:
    data = json.loads((out / "report.json").read_text())
    return {(r["task"], r["arm"]): r for r in data["results"]}


# The first test to use `replayed` waits for all ten recordings: a bound to match.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]


@pytest.fixture(scope="module")
def replayed(tmp_path_factory: pytest.TempPathFactory, worker_id: str) -> tuple[Ran, Path]:
    """One replay of the committed recordings per test session, even with parallel workers
    (they share the session's temporary folder: the first one replays, the others read it)."""
    if worker_id == "master":
        out = tmp_path_factory.mktemp("replay") / "report"
        run = plansight_eval("--replay", str(RECORDINGS), "--out", str(out))
        return Ran(run.returncode, run.stderr), out
    shared = tmp_path_factory.getbasetemp().parent / "eval-replay"
    shared.mkdir(exist_ok=True)
    with open(shared / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        done = shared / "done.json"
        if not done.exists():
            run = plansight_eval("--replay", str(RECORDINGS), "--out", str(shared / "report"))
            done.write_text(json.dumps([run.returncode, run.stderr]))
        returncode, stderr = json.loads(done.read_text())
    return Ran(returncode, stderr), shared / "report"


ARMS_REPLAYED = ["plan", "noplan", "planmode", "noreminder", "nogate", "remind2"]


def test_the_recordings_cover_three_tasks_in_two_arms_and_every_other_arm() -> None:
    recordings = find_recordings(RECORDINGS)
    pairs = {(r.task, r.arm) for r in recordings}
    tasks = {task for task, _ in pairs}
    assert len(tasks) >= 3 and all(
        (task, arm) in pairs for task in tasks for arm in ("plan", "noplan")
    )
    for arm in ("planmode", "noreminder", "nogate", "remind2"):
        assert ("rename-function", arm) in pairs
    assert {r.origin for r in recordings} == {"hand-written"}


def test_the_replay_verdicts_come_from_the_checks(replayed: tuple[Ran, Path]) -> None:
    run, out = replayed
    assert run.returncode == 0, run.stderr
    results = attempts(out)
    assert len(results) == 10
    wrong = results[("cli-flag", "noplan")]
    # Its run ended as a success in its own words; its files fail the checks.
    assert wrong["status"] == "done" and not wrong["passed"]
    assert "test_core_counts_with_and_without_the_option" in wrong["checks"]["failures"]
    for key, attempt in results.items():
        if key != ("cli-flag", "noplan"):
            assert attempt["passed"], (key, attempt["checks"])
        assert attempt["source"] == "replay" and attempt["checks"]["total"] > 0


def test_each_recording_was_followed_to_its_end(replayed: tuple[Ran, Path]) -> None:
    _, out = replayed
    by_pair = {(r.task, r.arm): r for r in find_recordings(RECORDINGS)}
    for key, attempt in attempts(out).items():
        steps = len(by_pair[key].data["steps"])
        # One round per step: the server asked exactly when the recording answered (the done
        # gate and the reminder fired where the plan arm's recording expects them).
        assert attempt["rounds"] == steps, key
        assert attempt["error"] is None


def test_the_arms_differ_only_in_planning(replayed: tuple[Ran, Path]) -> None:
    _, out = replayed
    results = attempts(out)
    plan, noplan = results[("rename-function", "plan")], results[("rename-function", "noplan")]
    assert "todo" in plan["toolsOffered"] and "todo" not in noplan["toolsOffered"]
    assert set(plan["toolsOffered"]) - {"todo", "submit_plan"} == set(noplan["toolsOffered"])
    assert plan["reminders"] >= 1  # it went three rounds without its plan
    assert noplan["reminders"] == 0  # and so did this one, unreminded
    planmode = results[("rename-function", "planmode")]
    assert planmode["toolsOffered"] == plan["toolsOffered"]  # plan mode is a run's mode
    assert planmode["planReviews"] == 1 and planmode["passed"]


def test_the_replay_report_says_it_is_no_measurement(replayed: tuple[Ran, Path]) -> None:
    run, out = replayed
    text = (out / "report.md").read_text()
    assert text.startswith("> **Replay, not a measurement.**")
    data = json.loads((out / "report.json").read_text())
    assert data["source"] == "replay" and data["notice"] == "Replay, not a measurement"
    assert data["perArm"]["noplan"]["passed"] == 2 and data["perArm"]["plan"]["passed"] == 3
    assert data["arms"] == ARMS_REPLAYED
    assert {(d["a"], d["b"]) for d in data["differences"]} == {
        (a, b) for i, a in enumerate(ARMS_REPLAYED) for b in ARMS_REPLAYED[i + 1 :]
    }
    assert all(d["low"] <= d["estimate"] <= d["high"] for d in data["differences"])
    assert "measure nothing" in text.split("\n\n")[0]
    assert (out / "completion.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "Replay, not a measurement." in run.stderr
    wrong = out / "attempts" / "cli-flag" / "noplan-1"
    assert "test_core_counts_with_and_without_the_option" in (wrong / "checks.txt").read_text()
    first = json.loads((wrong / "conversation.jsonl").read_text().splitlines()[0])
    assert first["role"] == "user"  # the session as the server stored it


def test_the_report_shows_what_each_part_of_planning_cost(replayed: tuple[Ran, Path]) -> None:
    _, out = replayed
    results = attempts(out)
    plan = results[("rename-function", "plan")]
    # The same answers in plan, noreminder and remind2: only the harness differs.
    assert (plan["reminders"], plan["gateRefusals"], plan["planClosed"]) == (1, 1, True)
    assert plan["todoCalls"] == plan["toolCalls"]["todo"] == 5
    assert plan["todoShare"] == round(5 / sum(plan["toolCalls"].values()), 4)
    assert plan["planItems"] == 5 and plan["planRewrites"] == 0
    assert plan["todoTokens"]["outputTokens"] > 0 and plan["todoTokens"]["inputTokens"] > 0
    assert results[("rename-function", "noreminder")]["reminders"] == 0
    assert results[("rename-function", "noreminder")]["gateRefusals"] == 1
    assert results[("rename-function", "remind2")]["reminders"] == 3
    nogate = results[("rename-function", "nogate")]
    assert (nogate["gateRefusals"], nogate["planClosed"], nogate["passed"]) == (0, False, True)
    noplan = results[("rename-function", "noplan")]
    assert (noplan["todoCalls"], noplan["planClosed"], noplan["todoTokens"]["outputTokens"]) == (
        0,
        None,
        0,
    )
    data = json.loads((out / "report.json").read_text())
    assert data["armOptions"]["nogate"] == {"doneGate": False}
    assert data["armOptions"]["remind2"] == {"reminderAfter": 2}
    assert data["perArm"]["noplan"]["withPlan"] == 0
    assert data["perArm"]["plan"]["plansClosed"] == data["perArm"]["plan"]["withPlan"] == 3
    text = (out / "report.md").read_text()
    table = text.split("## What planning cost, beside completion")[1].split("\n## ")[0]
    # arm | completion | todo calls (share) | todo tokens | reminders | gate refusals | plan
    # items | rewrites | closed
    cells = {
        row[0]: row
        for line in table.splitlines()
        if line.startswith("| ") and "%" in line
        for row in [[cell.strip() for cell in line.strip("|").split("|")]]
    }
    assert cells["nogate"][1] == "100 %" and cells["nogate"][5] == "0.0"
    assert cells["nogate"][8] == "0/1" and cells["noplan"][8] == "no plan"
    assert cells["plan"][5] == "0.3" and cells["plan"][8] == "3/3"  # one gate in three
    assert cells["remind2"][4] == "3.0" and cells["noreminder"][4] == "0.0"
    assert cells["noplan"][2] == "0.0 (0 %)"
    assert "attempts for 10 points" in text


def test_a_live_run_is_recorded_and_replays_to_the_same_verdict(tmp_path: Path) -> None:
    source = next(
        r for r in find_recordings(RECORDINGS) if r.task == "rename-function" and r.arm == "plan"
    )
    with FakeMessagesAPI(Script.from_dict(source.data)) as upstream:
        live = plansight_eval(
            "--tasks", "rename-function", "--arms", "plan", "--record", str(tmp_path / "rec"),
            "--out", str(tmp_path / "live"), "--model", "claude-sonnet-5-5",
            env={"ANTHROPIC_BASE_URL": upstream.base_url, "ANTHROPIC_API_KEY": "test-key"},
        )  # fmt: skip
        assert live.returncode == 0, live.stderr
        assert len(upstream.message_requests) == len(source.data["steps"])
    (recorded,) = find_recordings(tmp_path / "rec")
    assert (recorded.task, recorded.arm, recorded.origin) == ("rename-function", "plan", "live")
    assert recorded.digest == source.digest
    strip = [
        [{k: v for k, v in b.items() if k != "id"} for b in s["content"]]
        for s in recorded.data["steps"]
    ]
    assert strip == [s["content"] for s in source.data["steps"]]
    assert all(s["usage"]["output_tokens"] > 0 for s in recorded.data["steps"])
    live_report = json.loads((tmp_path / "live" / "report.json").read_text())
    assert live_report["source"] == "live" and live_report["notice"] is None

    replay = plansight_eval("--replay", str(tmp_path / "rec"), "--out", str(tmp_path / "again"))
    assert replay.returncode == 0, replay.stderr
    again = json.loads((tmp_path / "again" / "report.json").read_text())
    assert again["source"] == "replay"
    (first,), (second,) = live_report["results"], again["results"]
    assert first["passed"] and second["passed"]
    assert first["usage"] == second["usage"]  # the recorded usage, served again


@pytest.mark.parametrize(
    ("args", "env", "message"),
    [
        ([], {}, "no ANTHROPIC_API_KEY"),
        (["--arms", "plan,bogus"], {"ANTHROPIC_API_KEY": "k"}, "unknown arm 'bogus'"),
        (["--tasks", "nope"], {}, "unknown task(s): nope"),
        (["--replay", str(RECORDINGS), "--record", "x"], {}, "a replay has none to keep"),
        (["--model", "my-model"], {"ANTHROPIC_API_KEY": "k"}, "no list price known for my-model"),
    ],
)
def test_usage_errors_are_explained(args: list[str], env: dict[str, str], message: str) -> None:
    run = plansight_eval(*args, env=env)
    assert run.returncode == 2
    assert message in run.stderr


def test_a_recording_of_a_changed_task_is_refused(tmp_path: Path) -> None:
    stale = json.loads((RECORDINGS / "cli-flag" / "plan-1.json").read_text())
    stale["eval"]["taskDigest"] = "0" * 16
    (tmp_path / "cli-flag").mkdir()
    (tmp_path / "cli-flag" / "plan-1.json").write_text(json.dumps(stale))
    run = plansight_eval("--replay", str(tmp_path))
    assert run.returncode == 2
    assert "recorded for another version of task 'cli-flag'" in run.stderr


def test_every_eval_argument_has_a_help_text() -> None:
    from plansight.__main__ import build_parser

    (commands,) = [a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)]
    parser = commands.choices["eval"]
    for action in parser._actions:
        assert action.help and action.help != argparse.SUPPRESS, action.dest
