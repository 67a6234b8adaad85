"""python -m csvsum FILE...: totals by category."""

import argparse
import logging
import sys

from csvsum.reader import read_all
from csvsum.summary import format_summary, summarize


def main(argv=None):
    parser = argparse.ArgumentParser(prog="csvsum")
    parser.add_argument("files", nargs="+")
    parser.add_argument("-v", "--verbose", action="store_true", help="log debug messages to stderr")
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.WARNING,
        stream=sys.stderr,
        format="%(levelname)s %(name)s: %(message)s",
    )
    print(format_summary(summarize(read_all(args.files))))
    return 0
