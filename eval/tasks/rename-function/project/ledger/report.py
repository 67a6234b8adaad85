"""Monthly totals of a ledger."""

from collections import defaultdict

from ledger import money


def monthly_totals(entries):
    totals = defaultdict(int)
    for entry in entries:
        totals[entry.date[:7]] += entry.cents
    return dict(sorted(totals.items()))


def render(entries):
    lines = [entry.describe() for entry in entries]
    lines.append("")
    for month, cents in monthly_totals(entries).items():
        lines.append(f"{month}  total {money.fmt(cents):>12}")
    lines.append(f"balance {money.fmt(sum(e.cents for e in entries))}")
    return "\n".join(lines)
