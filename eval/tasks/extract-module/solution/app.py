"""workdays: how many working days a date range holds.

    python app.py 2024-03-01..2024-03-31 [--holidays holidays.txt]
"""

import argparse

from dates import business_days, parse_range
from holidays import load_holidays
from report import weekend_report


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
