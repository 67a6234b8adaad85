"""Intervals against published values, and list prices by model id."""

from __future__ import annotations

import pytest

from plansight.engine.events import Usage
from plansight.eval.pricing import Prices, list_prices
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


@pytest.mark.parametrize(
    ("model", "prices"),
    [
        ("claude-sonnet-5-5", (2, 10, 2.5, 0.2)),
        ("claude-sonnet-4-20250514", (3, 15, 3.75, 0.3)),
        ("claude-opus-4-1-20250805", (15, 75, 18.75, 1.5)),
        ("claude-opus-4-5-20251101", (5, 25, 6.25, 0.5)),
        ("claude-haiku-3-5", (0.8, 4, 1, 0.08)),
    ],
)
def test_list_prices_by_model_id(model: str, prices: tuple[float, ...]) -> None:
    found = list_prices(model)
    assert found is not None
    assert (found.input, found.output, found.cache_write, found.cache_read) == prices


def test_unknown_models_have_no_price_and_prices_can_be_given() -> None:
    assert list_prices("my-local-model") is None
    given = Prices.parse("1, 2, 3, 0.5")
    usage = Usage(input_tokens=1_000_000, output_tokens=500_000, cache_read_input_tokens=2_000_000)
    assert given.cost(usage) == pytest.approx(1 + 1 + 1)
    with pytest.raises(ValueError, match="four numbers"):
        Prices.parse("1,2,3")
