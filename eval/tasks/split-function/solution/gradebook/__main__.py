import sys

from gradebook.report import build_report

with open(sys.argv[1], encoding="utf-8") as handle:
    print(build_report(handle))
