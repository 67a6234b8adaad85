import re
import sys
from collections import Counter

WORD = re.compile(r"[a-z']+")


def words(text):
    return [w.strip("'") for w in WORD.findall(text.lower()) if w.strip("'")]


def word_count(text):
    return len(words(text))


def top_words(text, n=3):
    counts = Counter(words(text))
    return sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:n]


path = sys.argv[1] if len(sys.argv) > 1 else "sample.txt"
with open(path, encoding="utf-8") as handle:
    print(word_count(handle.read()), "words")
