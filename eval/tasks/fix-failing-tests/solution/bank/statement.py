"""A statement: transactions in date order with a running balance."""

from bank.amounts import format_amount


def statement_lines(opening, history):
    balance = opening
    lines = []
    for date, amount in sorted(history, key=lambda item: item[0]):
        balance += amount
        lines.append(f"{date}  {format_amount(amount):>10}  {format_amount(balance):>10}")
    return lines
