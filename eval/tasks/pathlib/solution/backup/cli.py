"""python -m backup.cli SOURCE TARGET STAMP [SUFFIX ...]"""

import sys

from backup.copy import back_up


def main(argv=None):
    source, target, stamp, *suffixes = sys.argv[1:] if argv is None else argv
    copied = back_up(source, target, stamp, set(suffixes) or None)
    for relative in copied:
        print(f"copied {relative}")
    print(f"{len(copied)} files")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
