"""The agent's working notes: one text, replaced whole."""

from __future__ import annotations


class Scratchpad:
    def __init__(self, content: str = "") -> None:
        self.content = content

    def write(self, content: str) -> None:
        self.content = content

    def clear(self) -> None:
        self.content = ""
