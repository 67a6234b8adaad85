"""Intervals against published values, and the attempts a difference needs against the
standard calculation, a simulation and eval/README.md. (List prices: test_eval_pricing.py.)"""

from __future__ import annotations

import math
import random
from pathlib import Path

import pytest

from plansight.eval.stats import (
    Z95,
    around,
    attempts_for_points,
    attempts_needed,
    newcombe,
    power_table,
    wilson,
)


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


# The attempts a difference needs ------------------------------------------------------------

README = Path(__file__).resolve().parents[1] / "eval" / "README.md"


@pytest.mark.parametrize(
    ("p_a", "p_b", "power", "n"),
    # The same normal approximation as R's power.prop.test (strict = FALSE), rounded up:
    # 387.3 per group for 0.5 vs 0.6 at power 0.8, and the example of its help page,
    # p1 = .50, p2 = .75, power = .90: n = 76.7.
    [(0.5, 0.6, 0.8, 388), (0.6, 0.5, 0.8, 388), (0.5, 0.75, 0.9, 77)],
)
def test_attempts_needed_match_the_standard_two_proportion_calculation(
    p_a: float, p_b: float, power: float, n: int
) -> None:
    assert attempts_needed(p_a, p_b, power=power) == n


def test_that_many_attempts_do_see_the_difference_four_times_in_five() -> None:
    # A simulated check of the formula: with n attempts per arm at 45 % and 55 %, a two-sided
    # z-test at 0.05 finds the difference in about 80 % of repeated comparisons.
    n = attempts_for_points(0.5)
    rng = random.Random(22)
    found, trials = 0, 2000
    for _ in range(trials):
        a = sum(rng.random() < 0.45 for _ in range(n))
        b = sum(rng.random() < 0.55 for _ in range(n))
        pooled = (a + b) / (2 * n)
        z = abs(a - b) / n / math.sqrt(2 * pooled * (1 - pooled) / n)
        found += z > Z95
    assert 0.76 <= found / trials <= 0.84, found / trials


def test_ten_points_around_a_rate_stay_inside_zero_and_one() -> None:
    assert around(0.5, 0.1) == pytest.approx((0.45, 0.55))
    assert around(0.98, 0.1) == pytest.approx((0.9, 1.0))
    assert around(0.0, 0.1) == pytest.approx((0.0, 0.1))
    assert attempts_for_points(0.5) == attempts_needed(0.45, 0.55)
    # Hardest in the middle, easier towards either end.
    counts = [attempts_for_points(rate / 10) for rate in range(1, 10)]
    assert counts == counts[::-1] and max(counts) == counts[4] > counts[0]
    with pytest.raises(ValueError):
        attempts_needed(0.5, 0.5)


def test_the_readme_shows_the_computed_numbers() -> None:
    assert power_table() in README.read_text(encoding="utf-8")
