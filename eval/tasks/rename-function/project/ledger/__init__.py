"""A tiny ledger: entries in cents, reports and invoices."""

from ledger.money import fmt, parse_amount

__all__ = ["fmt", "parse_amount"]
