"""A tiny ledger: entries in cents, reports and invoices."""

from ledger.money import format_money, parse_amount

__all__ = ["format_money", "parse_amount"]
