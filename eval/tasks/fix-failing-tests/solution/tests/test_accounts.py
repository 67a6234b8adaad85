from decimal import Decimal

import pytest

from bank.accounts import Account, InsufficientFunds


def test_deposit_and_withdraw():
    account = Account("ada")
    account.deposit(Decimal("50"), "2024-01-01")
    account.withdraw(Decimal("20"), "2024-01-02")
    assert account.balance == Decimal("30")


def test_cannot_overdraw():
    account = Account("ada", Decimal("10"))
    with pytest.raises(InsufficientFunds):
        account.withdraw(Decimal("10.01"), "2024-01-02")
    assert account.balance == Decimal("10")
