"""Dates and ranges of dates: parsing, weekends, working days."""

import datetime as dt


def parse_date(text):
    """'2024-03-01' -> date(2024, 3, 1); also accepts '2024/03/01'."""
    text = text.strip().replace("/", "-")
    year, month, day = (int(part) for part in text.split("-"))
    return dt.date(year, month, day)


def parse_range(text):
    """'START..END' -> (start, end), both included; END before START is an error."""
    start_text, sep, end_text = text.partition("..")
    if not sep:
        raise ValueError(f"not a range: {text!r} (expected START..END)")
    start, end = parse_date(start_text), parse_date(end_text)
    if end < start:
        raise ValueError(f"range ends before it starts: {text!r}")
    return start, end


def is_weekend(day):
    return day.weekday() >= 5


def business_days(start, end, holidays=()):
    """Working days from start to end, both included, skipping weekends and holidays."""
    count = 0
    day = start
    while day <= end:
        if not is_weekend(day) and day not in holidays:
            count += 1
        day += dt.timedelta(days=1)
    return count
