"""The completion chart (eval/chart.py), read back as pixels: a bar per arm, in order, as high
as its completion rate, and a replay marked in red above it so that nobody mistakes it for a
measurement."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from plansight.eval import chart

Image = pytest.importorskip("PIL.Image")


def summary(source: str, rates: dict[str, float]) -> dict[str, Any]:
    return {
        "models": ["claude-sonnet-5-5"],
        "date": "2026-12-01T20:00:00+00:00",
        "attempts": 10 * len(rates),
        "source": source,
        "perArm": {
            arm: {
                "completion": {
                    "estimate": rate,
                    "low": max(0.0, rate - 0.1),
                    "high": min(1.0, rate + 0.1),
                },
                "passed": round(10 * rate),
                "attempts": 10,
            }
            for arm, rate in rates.items()
        },
    }


def bar_top(image: Any, x: int) -> int:
    """The highest row of the plot area at column `x` that is bar-coloured."""
    for y in range(chart.MARGIN_TOP, chart.HEIGHT - chart.MARGIN_BOTTOM):
        if image.getpixel((x, y)) in chart.BAR_COLOURS:
            return y
    return chart.HEIGHT - chart.MARGIN_BOTTOM


def test_each_arm_has_a_bar_as_high_as_its_completion(tmp_path: Path) -> None:
    rates = {"plan": 0.8, "noplan": 0.4, "planmode": 0.6}
    path = chart.completion_chart(summary("live", rates), tmp_path / "completion.png")
    image = Image.open(path).convert("RGB")
    assert image.size == (chart.WIDTH, chart.HEIGHT)
    left, right = chart.MARGIN_LEFT, chart.WIDTH - chart.MARGIN_RIGHT
    top, bottom = chart.MARGIN_TOP, chart.HEIGHT - chart.MARGIN_BOTTOM
    slot = (right - left) / len(rates)
    for i, rate in enumerate(rates.values()):
        x = round(left + slot * (i + 0.5) - 20)  # beside the whisker at the bar's centre
        assert image.getpixel((x, bottom - 2)) == chart.BAR_COLOURS[i]
        expected = bottom - rate * (bottom - top)
        assert abs(bar_top(image, x) - expected) <= 2, (i, rate)


def warn_pixels(image: Any) -> int:
    """Pixels of the subtitle's line drawn in the warning colour."""
    return sum(
        image.getpixel((x, y)) == chart.WARN for x in range(chart.WIDTH) for y in range(36, 60)
    )


def test_a_replay_says_so_in_red_a_live_run_does_not(tmp_path: Path) -> None:
    rates = {"plan": 1.0, "noplan": 0.0}
    replay = chart.completion_chart(summary("replay", rates), tmp_path / "replay.png")
    live = chart.completion_chart(summary("live", rates), tmp_path / "live.png")
    assert warn_pixels(Image.open(replay).convert("RGB")) > 50
    assert warn_pixels(Image.open(live).convert("RGB")) == 0


def test_an_arm_with_nothing_passed_has_no_bar(tmp_path: Path) -> None:
    path = chart.completion_chart(summary("live", {"noplan": 0.0}), tmp_path / "c.png")
    image = Image.open(path).convert("RGB")
    centre = (chart.MARGIN_LEFT + chart.WIDTH - chart.MARGIN_RIGHT) // 2
    bottom = chart.HEIGHT - chart.MARGIN_BOTTOM
    column = [image.getpixel((centre - 20, y)) for y in range(chart.MARGIN_TOP, bottom)]
    assert not any(pixel in chart.BAR_COLOURS for pixel in column)
