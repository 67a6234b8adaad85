"""A plain-text invoice for a list of (item, quantity, unit cents)."""

from ledger.money import format_money as money_text


def invoice(customer, items, symbol="€"):
    lines = [f"Invoice for {customer}"]
    total = 0
    for name, quantity, unit in items:
        line_total = quantity * unit
        total += line_total
        lines.append(f"{quantity:>3} x {name:<16} {money_text(line_total, symbol):>12}")
    lines.append(f"{'total':>22} {money_text(total, symbol):>12}")
    return "\n".join(lines)
