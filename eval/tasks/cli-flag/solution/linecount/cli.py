"""The command line: python -m linecount FILE..."""

import argparse

from linecount.core import count_file


def build_parser():
    parser = argparse.ArgumentParser(prog="linecount", description="Count the lines of files.")
    parser.add_argument("files", nargs="+", metavar="FILE", help="files to count")
    parser.add_argument(
        "--ignore-blank",
        action="store_true",
        help="do not count blank lines (empty or only whitespace)",
    )
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)
    total = 0
    for path in args.files:
        count = count_file(path, ignore_blank=args.ignore_blank)
        total += count
        print(f"{count:>7} {path}")
    if len(args.files) > 1:
        print(f"{total:>7} total")
    return 0
