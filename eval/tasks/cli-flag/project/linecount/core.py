"""Counting lines."""


def count_lines(text):
    """The number of lines in text; a last line without a newline counts too."""
    return len(text.splitlines())


def count_file(path):
    with open(path, encoding="utf-8") as handle:
        return count_lines(handle.read())
