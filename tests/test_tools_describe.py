"""Edit descriptions for the review: short, human, where the change is, no file name."""

from __future__ import annotations

import pytest

from plansight.tools.describe import describe_change, describe_new_file

SOURCE = """import os


class Inventory:
    def __init__(self):
        self.items = {}

    def add(self, name, count):
        if count < 0:
            raise ValueError(name)
        self.items[name] = self.items.get(name, 0) + count


def greet(name):
    return "Hello, " + name + "!"


if __name__ == "__main__":
    print(greet("world"))
"""

ADD_METHOD = "\n    def remove(self, name):\n        del self.items[name]\n"
FAREWELL = 'def farewell(name):\n    return "Bye"\n\n\n'

# (what is replaced, by what, the description)
CASES = [
    ('+ name + "!"', '+ name.title() + "!"', "Change 1 line in greet()"),
    ("def greet(name):", "def greet(name: str) -> str:", "Change 1 line in greet()"),
    ("(name):\n", '(name):\n    """Say hello."""\n', "Add 1 line to greet()"),
    ("raise ValueError(name)", "raise ValueError(count)", "Change 1 line in Inventory.add()"),
    (
        "        if count < 0:\n            raise ValueError(name)\n",
        "",
        "Remove 2 lines from Inventory.add()",
    ),
    ("+ count\n", "+ count\n" + ADD_METHOD, "Add Inventory.remove() (3 lines)"),
    ("if __name__", FAREWELL + "if __name__", "Add farewell() (4 lines)"),
    ('def greet(name):\n    return "Hello, " + name + "!"\n\n\n', "", "Remove greet() (4 lines)"),
    ("class Inventory:", "class Stock:", "Change 1 line in class Inventory"),
    ("import os\n", "import os\nimport sys\n", "Add 1 line after line 1"),
    ("import os\n", "", "Remove line 1"),
    (
        '    print(greet("world"))',
        '    print(greet("world"))\n    print(greet("you"))',
        "Add 1 line after line 19",
    ),
    ("import os\n", "#!/usr/bin/env python\nimport os\n", "Add 1 line at the top"),
    (
        '    return "Hello, " + name + "!"',
        '    greeting = "Hello"\n    return f"{greeting}, {name}!"',
        "Change 1 line and add 1 line in greet()",
    ),
]


@pytest.mark.parametrize(("old", "new", "expected"), CASES)
def test_a_change_is_told_by_what_and_where(old: str, new: str, expected: str) -> None:
    assert SOURCE.count(old) == 1
    description = describe_change(SOURCE, SOURCE.replace(old, new))
    assert description == expected


def test_a_change_in_several_functions_names_every_one() -> None:
    """Two lines changed, one in greet() and one in shout(): both are named (not "in greet()")."""
    source = (
        "def greet(name):\n    return 'Hello, ' + name\n\n\n"
        "def shout(name):\n    return name.upper()\n"
    )
    edited = source.replace("'Hello, ' + name", "f'Hello, {name}'").replace(
        "name.upper()", "name.upper() + '!'"
    )
    assert describe_change(source, edited) == "Change 2 lines in greet() and shout()"
    added = source.replace("+ name\n", "+ name\n    # one\n").replace(
        "upper()\n", "upper()\n    # two\n"
    )
    assert describe_change(source, added) == "Add 2 lines in greet() and shout()"
    top = "import os\n" + source
    assert (
        describe_change(top, top.replace("import os", "import sys").replace("upper()", "lower()"))
        == "Change 2 lines at line 1 and in shout()"
    )


def test_whole_files() -> None:
    assert describe_new_file("a\nb\n") == "New file (2 lines)"
    assert describe_new_file("") == "New file (0 lines)"
    assert describe_change(SOURCE, "x = 1\n") == "Rewrite the whole file (1 line, was 19)"


def test_other_languages_by_their_keywords() -> None:
    ts = "export class Cart {\n  total(): number {\n    return 0;\n  }\n}\n"
    assert describe_change(ts, ts.replace("0", "1")) == "Change 1 line in class Cart"
    js = "function add(a, b) {\n  return a + b;\n}\n"
    assert describe_change(js, js.replace("a + b", "b + a")) == "Change 1 line in add()"
    rust = "pub fn area(w: u32) -> u32 {\n    w * w\n}\n"
    assert describe_change(rust, rust.replace("w * w", "w * 2")) == "Change 1 line in area()"


def test_a_change_too_large_to_diff_is_told_by_its_span() -> None:
    before = "".join(f"line {i}\n" for i in range(100_000))
    after = before.replace("line 5\n", "line five\n").replace("line 99990\n", "")
    assert describe_change(before, after) == "Change lines 6-99991 (now 99985 lines)"
