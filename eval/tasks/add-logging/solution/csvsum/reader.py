"""Rows of CSV files: category,amount. Malformed rows are skipped."""

import csv
import logging

log = logging.getLogger(__name__)


def read_rows(path):
    rows = []
    log.debug("reading %s", path)
    with open(path, encoding="utf-8", newline="") as handle:
        for number, fields in enumerate(csv.reader(handle), start=1):
            if not fields or fields[0].startswith("#"):
                continue
            try:
                category, amount = fields
                rows.append((category.strip(), float(amount)))
            except ValueError:
                log.warning("%s:%d: skipping malformed row %r", path, number, ",".join(fields))
                continue
    return rows


def read_all(paths):
    rows = []
    for path in paths:
        rows.extend(read_rows(path))
    return rows
