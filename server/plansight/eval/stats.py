"""Confidence intervals for completion rates and their differences.

- `wilson`: the Wilson score interval for one proportion (Wilson 1927), which behaves well
  for small samples and rates near 0 or 1, where the Wald interval fails;
- `newcombe`: the interval for the difference of two independent proportions by Newcombe's
  hybrid score method (Newcombe 1998, "Interval estimation for the difference between
  independent proportions: comparison of eleven methods", method 10), built from the two
  Wilson intervals.

Both at 95 % by default (z = 1.959964).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

Z95 = 1.959963984540054


@dataclass(frozen=True)
class Interval:
    estimate: float
    low: float
    high: float

    def to_wire(self) -> dict[str, float]:
        return {"estimate": self.estimate, "low": self.low, "high": self.high}


def wilson(successes: int, trials: int, z: float = Z95) -> Interval:
    """The Wilson score interval of successes/trials; (0, 0, 1) when there are no trials."""
    if trials < 0 or not 0 <= successes <= trials:
        raise ValueError(f"need 0 <= successes <= trials, got {successes}/{trials}")
    if trials == 0:
        return Interval(0.0, 0.0, 1.0)
    p = successes / trials
    z2 = z * z
    denominator = 1 + z2 / trials
    centre = (p + z2 / (2 * trials)) / denominator
    half = z / denominator * math.sqrt(p * (1 - p) / trials + z2 / (4 * trials * trials))
    # Exact at the ends: rounding must not leave 0/n with a low bound above 0.
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == trials else min(1.0, centre + half)
    return Interval(p, low, high)


def newcombe(
    successes_a: int, trials_a: int, successes_b: int, trials_b: int, z: float = Z95
) -> Interval:
    """The interval of p_a - p_b by Newcombe's hybrid score method (method 10)."""
    a = wilson(successes_a, trials_a, z)
    b = wilson(successes_b, trials_b, z)
    delta = a.estimate - b.estimate
    low = delta - math.sqrt((a.estimate - a.low) ** 2 + (b.high - b.estimate) ** 2)
    high = delta + math.sqrt((a.high - a.estimate) ** 2 + (b.estimate - b.low) ** 2)
    return Interval(delta, max(-1.0, low), min(1.0, high))
