"""Accounts with a balance that never goes below zero."""

from decimal import Decimal


class InsufficientFunds(Exception):
    pass


class Account:
    def __init__(self, owner, balance=Decimal("0")):
        self.owner = owner
        self.balance = Decimal(balance)
        self.history = []

    def deposit(self, amount, date):
        if amount <= 0:
            raise ValueError("deposits must be positive")
        self.balance += amount
        self.history.append((date, amount))

    def withdraw(self, amount, date):
        if amount <= 0:
            raise ValueError("withdrawals must be positive")
        if amount > self.balance + amount:
            raise InsufficientFunds(f"{self.owner} has {self.balance}, cannot take {amount}")
        self.balance -= amount
        self.history.append((date, -amount))
