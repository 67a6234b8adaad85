"""The command line: python -m linecount FILE..."""

import argparse

from linecount.core import count_file


def build_parser():
    parser = argparse.ArgumentParser(prog="linecount", description="Count the lines of files.")
    parser.add_argument("files", nargs="+", metavar="FILE", help="files to count")
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)
    total = 0
    for path in args.files:
        count = count_file(path)
        total += count
        print(f"{count:>7} {path}")
    if len(args.files) > 1:
        print(f"{total:>7} total")
    return 0
