"""Confidence intervals for completion rates and their differences.

- `wilson`: the Wilson score interval for one proportion (Wilson 1927), which behaves well
  for small samples and rates near 0 or 1, where the Wald interval fails;
- `newcombe`: the interval for the difference of two independent proportions by Newcombe's
  hybrid score method (Newcombe 1998, "Interval estimation for the difference between
  independent proportions: comparison of eleven methods", method 10), built from the two
  Wilson intervals;
- `attempts_needed`: how many attempts per arm a two-sided test of two proportions needs to
  see a given difference (the standard normal-approximation formula without continuity
  correction, Fleiss, Levin & Paik 2003, eq. 4.14), and `attempts_for_points`: that number
  for a difference of `points` centred on an observed rate.

Both intervals at 95 % by default (z = 1.959964); the power calculation at alpha 0.05
(two-sided) and power 0.8 by default.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist

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


def attempts_needed(p_a: float, p_b: float, *, alpha: float = 0.05, power: float = 0.8) -> int:
    """Attempts per arm for a two-sided test at `alpha` to find p_a != p_b with `power`:
    n = (z(1-alpha/2) sqrt(2 p q) + z(power) sqrt(p_a q_a + p_b q_b))^2 / (p_a - p_b)^2,
    p the mean of the two rates, q = 1 - p; rounded up."""
    if not (0 <= p_a <= 1 and 0 <= p_b <= 1) or p_a == p_b:
        raise ValueError(f"need two different rates in [0, 1], got {p_a} and {p_b}")
    if not (0 < alpha < 1 and 0 < power < 1):
        raise ValueError("alpha and power must be between 0 and 1")
    normal = NormalDist()
    z_alpha, z_power = normal.inv_cdf(1 - alpha / 2), normal.inv_cdf(power)
    mean = (p_a + p_b) / 2
    spread = z_alpha * math.sqrt(2 * mean * (1 - mean)) + z_power * math.sqrt(
        p_a * (1 - p_a) + p_b * (1 - p_b)
    )
    # The float noise of an exact whole number must not add an attempt.
    return math.ceil(round(spread**2 / (p_a - p_b) ** 2, 9))


def around(rate: float, points: float) -> tuple[float, float]:
    """Two rates `points` apart centred on `rate`, moved inside [0, 1] when they would
    leave it (a rate of 0.98 and 10 points: 0.90 and 1.00)."""
    if not 0 < points <= 1:
        raise ValueError(f"points must be in (0, 1], got {points}")
    low = min(max(rate - points / 2, 0.0), 1.0 - points)
    return low, low + points


def attempts_for_points(
    rate: float, points: float = 0.10, *, alpha: float = 0.05, power: float = 0.8
) -> int:
    """Attempts per arm to see a difference of `points` between arms whose rates are about
    `rate` (`around`), at `alpha` and `power`."""
    return attempts_needed(*around(rate, points), alpha=alpha, power=power)


def power_table(rates: tuple[float, ...] = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)) -> str:
    """The Markdown table of `attempts_for_points` at 10 points for typical rates (it stands
    in eval/README.md; a test keeps the two equal)."""
    lines = [
        "| completion around | the two rates | attempts per arm | in all (two arms) |",
        "|---|---|---|---|",
    ]
    for rate in rates:
        a, b = around(rate, 0.10)
        n = attempts_for_points(rate)
        lines.append(f"| {100 * rate:.0f} % | {100 * a:.0f} % vs {100 * b:.0f} % | {n} | {2 * n} |")
    return "\n".join(lines)
