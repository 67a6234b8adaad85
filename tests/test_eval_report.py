"""The report from attempt results: figures, intervals, the replay notice, the chart."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from PIL import Image

from plansight.engine.events import Usage
from plansight.engine.pricing import list_prices
from plansight.eval import report
from plansight.eval.attempt import AttemptResult, Limits
from plansight.eval.checks import CheckResult
from plansight.eval.plancost import Attributed
from plansight.eval.stats import attempts_for_points


def result(
    task: str, arm: str, passed: bool, *, source: str = "live", index: int = 1
) -> AttemptResult:
    usage = Usage(input_tokens=100, output_tokens=50, cache_read_input_tokens=1000)
    return AttemptResult(
        task=task,
        arm=arm,
        index=index,
        source=source,
        model="claude-sonnet-5-5",
        passed=passed,
        status="done",
        stopped_by="done",
        rounds=4,
        usage=usage,
        cost=0.01,
        seconds=12.0,
        check=CheckResult(passed=passed, total=3, failures=() if passed else ("test_x",)),
    )


RESULTS = [
    result("a", "noplan", False),
    result("a", "plan", True),
    result("b", "plan", True),
    result("b", "noplan", True),
    result("a", "plan", True, index=2),
    result("a", "noplan", False, index=2),
]


def summary(results: list[AttemptResult]) -> dict:
    return report.summarize(
        results,
        date="2026-12-01T10:00:00+00:00",
        limits=Limits(),
        prices=list_prices("claude-sonnet-5-5"),
    )


def test_per_arm_completion_with_wilson_and_the_difference_with_newcombe() -> None:
    s = summary(RESULTS)
    assert s["arms"] == ["plan", "noplan"]  # the registry's order, not the results'
    plan, noplan = s["perArm"]["plan"], s["perArm"]["noplan"]
    assert (plan["passed"], plan["attempts"], noplan["passed"], noplan["attempts"]) == (3, 3, 1, 3)
    assert plan["completion"]["low"] == pytest.approx(0.4385, abs=1e-4)
    assert plan["meanTokens"]["outputTokens"] == 50 and plan["totalCostUsd"] == pytest.approx(0.03)
    (diff,) = s["differences"]
    assert (diff["a"], diff["b"]) == ("plan", "noplan")
    assert diff["estimate"] == pytest.approx(2 / 3)
    assert diff["low"] < diff["estimate"] < diff["high"]
    rows = {(r["task"], r["arm"]): r for r in s["perTaskArm"]}
    assert rows[("a", "noplan")]["passed"] == 0 and rows[("a", "plan")]["attempts"] == 2
    assert s["notice"] is None and s["source"] == "live"
    json.dumps(s)  # all of it is JSON


def test_markdown_states_model_date_attempts_and_methods() -> None:
    text = report.markdown(summary(RESULTS))
    assert not text.startswith(">")
    for needle in (
        "claude-sonnet-5-5",
        "2026-12-01",
        "Attempts: 6",
        "Wilson",
        "Newcombe",
        "plan − noplan",
    ):
        assert needle in text
    assert "| a | noplan | 0/2 |" in text
    assert "a / noplan #1: test_x" in text


def test_a_replay_says_so_first_and_is_never_mixed_with_live_attempts(tmp_path: Path) -> None:
    replayed = [
        result("a", "plan", True, source="replay"),
        result("a", "noplan", False, source="replay"),
    ]
    s = summary(replayed)
    assert s["notice"] == "Replay, not a measurement"
    text = report.markdown(s)
    assert text.splitlines()[0].startswith("> **Replay, not a measurement.**")
    with pytest.raises(report.MixedSourcesError):
        summary([*replayed, result("b", "plan", True)])


def test_write_puts_json_markdown_and_a_chart(tmp_path: Path) -> None:
    paths = report.write(tmp_path / "out", summary(RESULTS))
    assert json.loads(paths["json"].read_text())["attempts"] == 6
    assert paths["markdown"].read_text().startswith("# Plansight eval")
    with Image.open(paths["chart"]) as chart:
        assert chart.format == "PNG" and chart.size == (720, 460)
        # The bars are drawn: the plan arm's colour is there.
        assert (46, 110, 184) in {colour for _, colour in chart.getcolors(maxcolors=100_000)}


def test_what_planning_cost_stands_beside_completion_per_arm_and_attempt() -> None:
    def planned(r: AttemptResult, todo: int, closed: bool) -> AttemptResult:
        return replace(
            r,
            tool_calls={"todo": todo, "read_file": 6},
            todo_tokens=Attributed(30.0 * todo, 80.0 * todo),
            reminders=1,
            gate_refusals=1 if not closed else 0,
            plan_items=4,
            plan_rewrites=2,
            plan_closed=closed,
        )

    results = [
        planned(RESULTS[1], 2, True),
        planned(RESULTS[2], 4, False),
        planned(RESULTS[4], 6, True),
        *(replace(r, tool_calls={"read_file": 5}) for r in RESULTS if r.arm == "noplan"),
    ]
    s = summary(results)
    plan, noplan = s["perArm"]["plan"], s["perArm"]["noplan"]
    assert (plan["todoCalls"], plan["toolCalls"]) == (12, 30)
    assert plan["todoShare"] == pytest.approx(12 / 30) and plan["meanTodoCalls"] == 4
    assert plan["meanTodoTokens"] == {"inputTokens": 120.0, "outputTokens": 320.0}
    assert (plan["meanGateRefusals"], plan["meanPlanRewrites"]) == (pytest.approx(1 / 3), 2)
    assert (plan["plansClosed"], plan["withPlan"]) == (2, 3)
    assert (noplan["todoCalls"], noplan["todoShare"], noplan["withPlan"]) == (0, 0.0, 0)
    (diff,) = s["differences"]
    assert diff["pooledCompletion"] == pytest.approx(4 / 6)
    assert diff["attemptsFor10Points"] == attempts_for_points(4 / 6)
    first = s["results"][0]
    assert first["todoCalls"] == 2 and first["todoShare"] == pytest.approx(0.25)
    assert first["planClosed"] is True and first["todoTokens"]["outputTokens"] == 160.0
    text = report.markdown(s)
    beside = text.split("## What planning cost, beside completion")[1].split("\n## ")[0]
    assert "| plan | 100 % | 4.0 (40 %) | 120 / 320 | 1.0 | 0.3 | 4.0 | 2.0 | 2/3 |" in beside
    assert "| noplan | 33 % | 0.0 (0 %) | 0 / 0 | 0.0 | 0.0 | 0.0 | 0.0 | no plan |" in beside
    per_attempt = text.split("## What planning cost, per attempt")[1]
    assert "| b | plan | 1 | yes | 4 (40 %) | 120 / 320 | 1 | 1 | 4 | 2 | no |" in per_attempt
    assert f"| {attempts_for_points(4 / 6)} per arm (at 67 %) |" in text
