"""What each tool says of a call in one line (`toolCall.summary`): the clients show it as it is,
beside the tool's name, so every tool that has something to say says it itself."""

from __future__ import annotations

from typing import Any

import pytest

from plansight.tools import default_tools

REGISTRY = default_tools()


CASES: list[tuple[str, dict[str, Any], str]] = [
    ("read_file", {"path": "src/app.py"}, "src/app.py"),
    ("read_file", {"path": "src/app.py", "offset": 10, "limit": 30}, "src/app.py:10-39"),
    ("read_file", {"path": "src/app.py", "offset": 10}, "src/app.py:10-"),
    ("read_file", {"path": "src/app.py", "limit": 5}, "src/app.py:1-5"),
    # Input the tool will refuse is still summarized, as well as it can be.
    ("read_file", {"path": "a.py", "offset": "ten", "limit": True}, "a.py"),
    ("write_file", {"path": "new.py", "content": "a\nb\n"}, "new.py (2 lines)"),
    ("write_file", {"path": "empty.py", "content": ""}, "empty.py (0 lines)"),
    ("edit_file", {"path": "hello.py", "old_text": "x", "new_text": "y"}, "hello.py"),
    ("list_files", {}, "."),
    ("list_files", {"pattern": "*.py", "path": "src"}, "*.py in src"),
    ("list_files", {"path": "src"}, "src"),
    ("grep", {"pattern": "def greet"}, "/def greet/"),
    ("grep", {"pattern": "TODO", "path": "src", "glob": "*.py"}, "/TODO/ in src *.py"),
    ("bash", {"command": "npm test"}, "$ npm test"),
    ("bash", {"command": "cd x &&\n  make   test", "timeout": 30}, "$ cd x && make test"),
    ("todo", {"items": [{"id": "1"}, {"id": "2"}, {"id": "3"}]}, "3 items"),
    ("todo", {"items": [{"id": "1"}]}, "1 item"),
    ("read_scratchpad", {}, ""),
    (
        "write_scratchpad",
        {"content": "Findings:\n- a.py lacks hints"},
        "Findings: - a.py lacks hints",
    ),
    (
        "submit_plan",
        {"summary": "## Approach\n- Rename `greet` in **hello.py**\n- Run [the tests](x)"},
        "Approach Rename greet in hello.py Run the tests",
    ),
    (
        # The VS Code client's render test shows this summary's row as these words.
        "submit_plan",
        {"summary": "## Approach\n\n- Rename **greet** in `hello.py`\n- Run the [tests](tests/)"},
        "Approach Rename greet in hello.py Run the tests",
    ),
    ("ask_user", {"question": "Which style:\nNumPy or Google?"}, "Which style: NumPy or Google?"),
]


@pytest.mark.parametrize(("name", "tool_input", "summary"), CASES)
def test_each_tool_summarizes_its_calls(
    name: str, tool_input: dict[str, Any], summary: str
) -> None:
    assert REGISTRY.input_summary(name, tool_input) == summary


def test_a_summary_is_one_line_of_at_most_100_characters() -> None:
    command = "echo " + "word " * 100
    summary = REGISTRY.input_summary("bash", {"command": command})
    assert len(summary) == 100 and summary.startswith("$ echo word") and summary.endswith("…")
    notes = REGISTRY.input_summary("write_scratchpad", {"content": "n" * 300})
    assert len(notes) == 80  # the notes are shown in full beside the conversation


def test_every_tool_is_summarized_above() -> None:
    # A tool without a summarizer falls back to its raw input as JSON, which is no sentence:
    # every tool the model is offered has a case above.
    assert {d["name"] for d in REGISTRY.definitions()} == {name for name, _, _ in CASES}
