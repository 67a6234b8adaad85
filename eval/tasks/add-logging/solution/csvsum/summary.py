"""Totals by category."""

import logging

log = logging.getLogger(__name__)


def summarize(rows):
    totals = {}
    for category, amount in rows:
        totals[category] = totals.get(category, 0.0) + amount
    log.info("summarized %d rows in %d categories", len(rows), len(totals))
    return dict(sorted(totals.items()))


def format_summary(totals):
    width = max([len("total"), *(len(name) for name in totals)])
    lines = [f"{name:<{width}}  {amount:>10.2f}" for name, amount in totals.items()]
    lines.append(f"{'total':<{width}}  {sum(totals.values()):>10.2f}")
    return "\n".join(lines)
