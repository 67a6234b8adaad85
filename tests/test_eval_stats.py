"""Intervals against published values. (List prices: test_eval_pricing.py.)"""

from __future__ import annotations

import pytest

from plansight.eval.stats import newcombe, wilson


@pytest.mark.parametrize(
    ("successes", "trials", "low", "high"),
    # Newcombe (1998), "Two-sided confidence intervals for the single proportion", Table I,
    # Wilson score method.
    [
        (81, 263, 0.2553, 0.3662),
        (15, 148, 0.0624, 0.1605),
        (0, 20, 0.0, 0.1611),
        (1, 29, 0.0061, 0.1718),
    ],
)
def test_wilson_matches_published_intervals(
    successes: int, trials: int, low: float, high: float
) -> None:
    interval = wilson(successes, trials)
    assert interval.estimate == successes / trials
    assert (round(interval.low, 4), round(interval.high, 4)) == (low, high)


@pytest.mark.parametrize(
    ("a", "b", "low", "high"),
    # Newcombe (1998), "Interval estimation for the difference between independent
    # proportions", Table II, method 10 (score, hybrid): examples (a), (b), (d)-(h).
    [
        ((56, 70), (48, 80), 0.0524, 0.3339),
        ((9, 10), (3, 10), 0.1705, 0.8090),
        ((5, 56), (0, 29), -0.0381, 0.1926),
        ((0, 10), (0, 20), -0.1611, 0.2775),
        ((0, 10), (0, 10), -0.2775, 0.2775),
        ((10, 10), (0, 20), 0.6791, 1.0),
        ((10, 10), (0, 10), 0.6075, 1.0),
    ],
)
def test_newcombe_matches_published_intervals(
    a: tuple[int, int], b: tuple[int, int], low: float, high: float
) -> None:
    interval = newcombe(*a, *b)
    assert interval.estimate == pytest.approx(a[0] / a[1] - b[0] / b[1])
    assert (round(interval.low, 4), round(interval.high, 4)) == (low, high)


def test_intervals_refuse_impossible_counts() -> None:
    with pytest.raises(ValueError):
        wilson(3, 2)
    assert wilson(0, 0).low == 0.0 and wilson(0, 0).high == 1.0
