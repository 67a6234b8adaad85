"""Ledger entries read from CSV lines: date,description,amount."""

import csv
from dataclasses import dataclass

from ledger.money import fmt, parse_amount


@dataclass
class Entry:
    date: str
    description: str
    cents: int

    def describe(self):
        return f"{self.date}  {self.description:<20} {fmt(self.cents):>12}"


def read_entries(lines):
    rows = csv.reader(line for line in lines if line.strip())
    return [Entry(date, desc, parse_amount(amount)) for date, desc, amount in rows]
