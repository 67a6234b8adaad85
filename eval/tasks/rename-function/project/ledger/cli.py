"""python -m ledger.cli FILE: the entries of a CSV ledger and their monthly totals."""

import sys

from ledger.entries import read_entries
from ledger.report import render


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    with open(argv[0], encoding="utf-8") as handle:
        print(render(read_entries(handle)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
