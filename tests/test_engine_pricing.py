"""Estimated cost (engine/pricing.py): list prices found from the model id, prices given on the
command line, and the cost of token counts at those prices, labelled as the estimate it is.
(Moved here from test_eval_stats.py: the list prices by model id and `--prices`.)"""

from __future__ import annotations

import pytest

from plansight.engine.events import Usage
from plansight.engine.pricing import Prices, estimate, list_prices


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


@pytest.mark.parametrize(
    "model",
    ["claude-sonnet-55", "gpt-5", "claude-opus-3", "claude-sonnet-6-0", "claude-haiku-4"],
)
def test_a_model_id_the_table_does_not_know_has_no_price(model: str) -> None:
    assert list_prices(model) is None


def test_a_dated_or_prefixed_id_finds_its_family_and_version() -> None:
    assert list_prices("anthropic/claude-sonnet-5-5-20261101") == list_prices("claude-sonnet-5-5")
    assert list_prices("claude-fable-5-1") != list_prices("claude-fable-5")  # cache reads differ


def test_each_kind_of_token_is_priced_at_its_own_rate() -> None:
    prices = Prices(input=2, output=10, cache_write=2.5, cache_read=0.2)
    assert prices.cost(Usage(input_tokens=1_000_000)) == pytest.approx(2)
    assert prices.cost(Usage(output_tokens=1_000_000)) == pytest.approx(10)
    assert prices.cost(Usage(cache_creation_input_tokens=1_000_000)) == pytest.approx(2.5)
    assert prices.cost(Usage(cache_read_input_tokens=1_000_000)) == pytest.approx(0.2)
    assert prices.cost(Usage(1000, 200, 3000, 400)) == pytest.approx(
        (1000 * 2 + 200 * 10 + 400 * 2.5 + 3000 * 0.2) / 1_000_000
    )
    assert estimate(Usage(1_000_000), prices) == pytest.approx(2)
    assert estimate(Usage(1_000_000), None) is None  # no price, no estimate


def test_prices_say_where_they_come_from() -> None:
    listed = list_prices("claude-sonnet-5-5")
    assert listed is not None
    assert listed.describe() == (
        "$2 input, $10 output, $2.5 cache write (5 min), $0.2 cache read per million tokens "
        "(list price)"
    )
    assert Prices.parse("1,2,3,4").describe().endswith("(given with --prices)")


@pytest.mark.parametrize("text", ["", "1,2,3,4,5", "1,2,x,4", "1,-2,3,4", "1;2;3;4"])
def test_prices_given_wrongly_are_refused_saying_the_form(text: str) -> None:
    with pytest.raises(ValueError, match="input,output,cache_write,cache_read"):
        Prices.parse(text)
