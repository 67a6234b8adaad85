"""Word counts of a text: the words it holds, how many, and the most frequent ones."""

from __future__ import annotations

import re
import sys
from collections import Counter

WORD = re.compile(r"[a-z']+")


def words(text: str) -> list[str]:
    """The words of `text`, lower-cased, without surrounding apostrophes."""
    return [w.strip("'") for w in WORD.findall(text.lower()) if w.strip("'")]


def word_count(text: str) -> int:
    """How many words `text` holds."""
    return len(words(text))


def top_words(text: str, n: int = 3) -> list[tuple[str, int]]:
    """The `n` most frequent words with their counts, ties in alphabetical order."""
    counts = Counter(words(text))
    return sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:n]


def main(argv: list[str]) -> None:
    """Print the word count of the file named in `argv` (default: sample.txt)."""
    path = argv[1] if len(argv) > 1 else "sample.txt"
    with open(path, encoding="utf-8") as handle:
        print(word_count(handle.read()), "words")


if __name__ == "__main__":
    main(sys.argv)
