"""workdays: how many working days a date range holds.

    python app.py 2024-03-01..2024-03-31 [--holidays holidays.txt]
"""

import argparse
import datetime as dt

from holidays import load_holidays
from report import weekend_report


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


def main(argv=None):
    parser = argparse.ArgumentParser(prog="workdays")
    parser.add_argument("range", help="START..END, e.g. 2024-03-01..2024-03-31")
    parser.add_argument("--holidays", help="a file of dates, one per line")
    args = parser.parse_args(argv)
    start, end = parse_range(args.range)
    holidays = load_holidays(args.holidays) if args.holidays else set()
    print(f"{business_days(start, end, holidays)} working days")
    print(weekend_report(start, end))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
