"""Counting lines."""


def count_lines(text, ignore_blank=False):
    """The number of lines in text; a last line without a newline counts too.

    With ignore_blank, lines that are empty or hold only whitespace are not counted.
    """
    lines = text.splitlines()
    if ignore_blank:
        lines = [line for line in lines if line.strip()]
    return len(lines)


def count_file(path, ignore_blank=False):
    with open(path, encoding="utf-8") as handle:
        return count_lines(handle.read(), ignore_blank=ignore_blank)
