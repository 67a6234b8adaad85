"""Totals by category."""


def summarize(rows):
    totals = {}
    for category, amount in rows:
        totals[category] = totals.get(category, 0.0) + amount
    return dict(sorted(totals.items()))


def format_summary(totals):
    width = max([len("total"), *(len(name) for name in totals)])
    lines = [f"{name:<{width}}  {amount:>10.2f}" for name, amount in totals.items()]
    lines.append(f"{'total':<{width}}  {sum(totals.values()):>10.2f}")
    return "\n".join(lines)
