"""Holiday files: one date per line, '#' starts a comment."""


def load_holidays(path):
    from app import parse_date

    days = set()
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            line = line.split("#", 1)[0].strip()
            if line:
                days.add(parse_date(line))
    return days
