"""Where a run's prompt comes from, and how it is echoed back.

`plansight run "<prompt>"` takes it as an argument; `plansight run -` reads it from stdin and
`plansight run --prompt-file F` from a file, for prompts a shell refuses as one argument (Linux
caps a single argument at 128 kB) or that are easier kept in a file. Either way the whole text
is sent to the model. The header echoes a short prompt as it is and a long one (more than
`ECHO_LINES` lines or `ECHO_LIMIT` characters) as its first line and its size: a 120 kB
specification is not scrolled through the terminal before the run even starts.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from plansight.cli import render

STDIN = "-"
ECHO_LIMIT = 300  # characters shown as they are; above that, the first line and the size
ECHO_LINES = 5  # likewise, lines
FIRST_LINE_LIMIT = 160


class PromptError(Exception):
    """The prompt could not be read (no such file, empty input): the message says why."""


@dataclass(frozen=True)
class Prompt:
    text: str
    from_stdin: bool = False  # stdin held the prompt, so it cannot also answer the reviews


def read_prompt(
    argument: str | None, prompt_file: str | None, stdin: IO[str] | None = None
) -> Prompt:
    """The prompt of `run`: the argument, stdin for `-`, or the file's text."""
    if prompt_file is not None:
        path = Path(prompt_file).expanduser()
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise PromptError(f"no such prompt file: {path}") from None
        except IsADirectoryError:
            raise PromptError(f"the prompt file is a folder: {path}") from None
        except (OSError, UnicodeDecodeError) as err:
            raise PromptError(f"could not read the prompt file {path}: {err}") from None
        return _checked(text, f"the prompt file {path} is empty")
    if argument == STDIN:
        stream = stdin if stdin is not None else sys.stdin
        if stream.isatty():
            # Reading a terminal until Ctrl-D works, but say so: a blank wait looks like a hang.
            print("Type the prompt, then Ctrl-D on a line of its own:", file=sys.stderr)
        try:
            text = stream.read()
        except (OSError, UnicodeDecodeError) as err:
            raise PromptError(f"could not read the prompt from stdin: {err}") from None
        return Prompt(_checked(text, "the prompt read from stdin is empty").text, from_stdin=True)
    return Prompt(argument or "")  # as typed: an argument is sent as it was given


def _checked(text: str, empty: str) -> Prompt:
    if not text.strip():
        raise PromptError(empty)
    return Prompt(text.strip("\n"))


def size_text(characters: int) -> str:
    """`812 characters`, `120 kB` (of text: characters, roughly bytes for code and English)."""
    if characters < 10_000:
        return f"{characters:,} characters"
    return f"{characters / 1000:,.0f} kB"


def prompt_echo(prompt: str) -> str:
    """The prompt as the header shows it: whole when short, else its first line and its size."""
    lines = prompt.splitlines() or [""]
    if len(lines) <= ECHO_LINES and len(prompt) <= ECHO_LIMIT:
        return prompt
    first = next((line for line in lines if line.strip()), "")
    shown = render.shorten(first, FIRST_LINE_LIMIT)
    more = "" if shown.endswith("…") else " …"
    count = len(lines)
    return f"{shown}{more} ({size_text(len(prompt))}, {count:,} line{'s' if count != 1 else ''})"
