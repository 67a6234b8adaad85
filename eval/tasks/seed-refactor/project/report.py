import sys

from wordfreq import top_words, word_count


def format_report(text, n=3):
    lines = ["%d words" % word_count(text)]
    for word, count in top_words(text, n):
        lines.append("%-10s %3d" % (word, count))
    return "\n".join(lines)


path = sys.argv[1] if len(sys.argv) > 1 else "sample.txt"
n = int(sys.argv[2]) if len(sys.argv) > 2 else 3
with open(path, encoding="utf-8") as handle:
    print(format_report(handle.read(), n))
