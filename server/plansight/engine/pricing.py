"""Estimated cost of an attempt from its token counts and the model's list prices.

An estimate, always labelled as one: list prices change, and what an account pays may differ
(discounts, batch, regional endpoints). Prices are USD per million tokens, as published on
Anthropic's pricing page (platform.claude.com/docs/en/about-claude/pricing, "Model pricing")
and the model overview pages (platform.claude.com/docs/en/models/<model>/overview), read
2026-12-01. Plansight's cache breakpoints use the default 5-minute cache, so cache writes are
priced at the 5-minute rate. `--prices` overrides the table for any other model or price.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from types import MappingProxyType

from plansight.engine.events import Usage

MILLION = 1_000_000


@dataclass(frozen=True)
class Prices:
    """USD per million tokens."""

    input: float
    output: float
    cache_write: float  # 5-minute cache writes
    cache_read: float  # cache hits and refreshes
    source: str = "list price"

    def cost(self, usage: Usage) -> float:
        return (
            usage.input_tokens * self.input
            + usage.output_tokens * self.output
            + usage.cache_creation_input_tokens * self.cache_write
            + usage.cache_read_input_tokens * self.cache_read
        ) / MILLION

    def describe(self) -> str:
        return (
            f"${self.input:g} input, ${self.output:g} output, ${self.cache_write:g} cache write "
            f"(5 min), ${self.cache_read:g} cache read per million tokens ({self.source})"
        )

    @classmethod
    def parse(cls, text: str) -> Prices:
        """`input,output,cache_write,cache_read` in USD per million tokens."""
        parts = [p.strip() for p in text.split(",")]
        try:
            values = [float(p) for p in parts]
        except ValueError:
            values = []
        if len(values) != 4 or any(v < 0 for v in values):
            raise ValueError(
                "--prices takes four numbers, USD per million tokens: "
                "input,output,cache_write,cache_read (e.g. 2,10,2.5,0.2)"
            )
        return cls(values[0], values[1], values[2], values[3], source="given with --prices")


# (family, major, minor) -> prices. The family and version come from the model id.
LIST_PRICES: MappingProxyType[tuple[str, int, int | None], Prices] = MappingProxyType(
    {
        ("fable", 5, 1): Prices(10, 50, 12.5, 0.25),
        ("fable", 5, None): Prices(10, 50, 12.5, 1),
        ("opus", 5, None): Prices(5, 25, 6.25, 0.5),
        ("opus", 4, 8): Prices(5, 25, 6.25, 0.5),
        ("opus", 4, 7): Prices(5, 25, 6.25, 0.5),
        ("opus", 4, 6): Prices(5, 25, 6.25, 0.5),
        ("opus", 4, 5): Prices(5, 25, 6.25, 0.5),
        ("opus", 4, 1): Prices(15, 75, 18.75, 1.5),
        ("opus", 4, None): Prices(15, 75, 18.75, 1.5),
        ("sonnet", 5, 5): Prices(2, 10, 2.5, 0.2),
        ("sonnet", 5, None): Prices(2, 10, 2.5, 0.2),
        ("sonnet", 4, None): Prices(3, 15, 3.75, 0.3),
        ("sonnet", 3, 7): Prices(3, 15, 3.75, 0.3),
        ("haiku", 3, 5): Prices(0.8, 4, 1, 0.08),
    }
)

_MODEL_ID = re.compile(r"claude-(?P<family>[a-z]+)-(?P<major>\d+)(?:-(?P<minor>\d{1,2}))?(?!\d)")


def list_prices(model: str) -> Prices | None:
    """The list prices of a model id (`claude-sonnet-5-5`, `claude-opus-4-1-20250805`), or
    None when the table does not know it."""
    match = _MODEL_ID.search(model)
    if match is None:
        return None
    family, major = match["family"], int(match["major"])
    minor = int(match["minor"]) if match["minor"] is not None else None
    return LIST_PRICES.get((family, major, minor))


def estimate(usage: Usage, prices: Prices | None) -> float | None:
    return None if prices is None else prices.cost(usage)
