"""python -m csvsum FILE...: totals by category."""

import argparse

from csvsum.reader import read_all
from csvsum.summary import format_summary, summarize


def main(argv=None):
    parser = argparse.ArgumentParser(prog="csvsum")
    parser.add_argument("files", nargs="+")
    args = parser.parse_args(argv)
    print(format_summary(summarize(read_all(args.files))))
    return 0
