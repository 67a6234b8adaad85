"""python -m textkit.cli DATE TITLE [TAG ...]: where a new post goes."""

import sys

from textkit.blog import post_url
from textkit.files import post_filename
from textkit.tags import normalize_tags


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    date, title, *tags = argv
    print(post_url(date, title))
    print(post_filename(date, title))
    print(", ".join(normalize_tags(tags)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
