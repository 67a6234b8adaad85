"""A short report of a text file: its word count and its most frequent words."""

from __future__ import annotations

import sys

from wordfreq import top_words, word_count


def format_report(text: str, n: int = 3) -> str:
    """The word count of `text`, then its `n` most frequent words, one per line."""
    lines = ["%d words" % word_count(text)]
    for word, count in top_words(text, n):
        lines.append("%-10s %3d" % (word, count))
    return "\n".join(lines)


def main(argv: list[str]) -> None:
    """Print the report of the file named in `argv`, with the number of top words."""
    path = argv[1] if len(argv) > 1 else "sample.txt"
    n = int(argv[2]) if len(argv) > 2 else 3
    with open(path, encoding="utf-8") as handle:
        print(format_report(handle.read(), n))


if __name__ == "__main__":
    main(sys.argv)
