"""A toy bank: accounts, amounts, interest and statements."""
