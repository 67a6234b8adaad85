"""Weekend summaries."""

import datetime as dt

from dates import is_weekend


def weekend_report(start, end):
    weekends = 0
    day = start
    while day <= end:
        if is_weekend(day):
            weekends += 1
        day += dt.timedelta(days=1)
    return f"{weekends} weekend days from {start.isoformat()} to {end.isoformat()}"
