"""The conversation as each checkpoint saw it, kept so that a restore can rewind it.

Messages are stored once each, by digest, in an append-only file (`<digest>\\t<json>` lines):
a conversation mostly grows, so a checkpoint adds only the messages new since the last one.
What a checkpoint saw is a *list*: the digests of its messages in order, stored the same way
under its own digest, which the checkpoint's record names. Compaction and reset replace
messages with new ones; the old ones stay here for as long as a kept checkpoint names them
(`prune`). Lines are appended with a single write; a damaged last line is skipped on reading.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from plansight.workspace import atomic

log = logging.getLogger(__name__)

Message = dict[str, Any]
_LIST = "L"  # prefix of a list's digest, so that lists and messages never collide


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:32]


@dataclass(frozen=True)
class Captured:
    """A conversation's digest, and the lines the archive must add to hold it."""

    digest: str
    lines: tuple[bytes, ...]


class ConversationArchive:
    def __init__(self, path: Path) -> None:
        self.path = path
        # The messages last captured, and their digests: a message that is the same object
        # as before is the same message (the conversation appends; what changes a message,
        # as compaction does, makes a new one), except the last, which may still grow.
        self._seen: list[tuple[Message, str]] = []
        self._last_list: str | None = None
        self._written: set[str] = set()

    def load_index(self) -> None:
        """Learn what the file already holds (at start-up, off the event loop)."""
        self._written = {digest for digest, _ in self._lines()}

    def capture(self, messages: Sequence[Message]) -> Captured:
        """Digest a conversation now (on the caller's thread: the list may change after)."""
        lines: list[bytes] = []
        digests: list[str] = []
        seen: list[tuple[Message, str]] = []
        for index, message in enumerate(messages):
            last = index == len(messages) - 1
            if index < len(self._seen) and self._seen[index][0] is message and not last:
                digest = self._seen[index][1]
            else:
                data = json.dumps(message, ensure_ascii=False).encode()
                digest = _digest(data)
                if digest not in self._written:
                    lines.append(digest.encode() + b"\t" + data + b"\n")
                    self._written.add(digest)
            digests.append(digest)
            seen.append((message, digest))
        self._seen = seen
        listed = json.dumps(digests).encode()
        list_digest = _LIST + _digest(listed)
        if list_digest not in self._written:
            lines.append(list_digest.encode() + b"\t" + listed + b"\n")
            self._written.add(list_digest)
        self._last_list = list_digest
        return Captured(list_digest, tuple(lines))

    def write(self, captured: Captured) -> None:
        """Add what `capture` found new (off the event loop)."""
        if captured.lines:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            atomic.append_whole(self.path, b"".join(captured.lines))

    def load(self, list_digest: str) -> list[Message] | None:
        """The conversation a checkpoint saw, or None when it is no longer held."""
        entries = self._read({list_digest})
        listed = entries.get(list_digest)
        if not isinstance(listed, list):
            return None
        messages = self._read(set(listed))
        if any(digest not in messages for digest in listed):
            return None
        return [messages[digest] for digest in listed]

    def prune(self, kept_lists: Iterable[str]) -> None:
        """Keep only what the kept checkpoints' conversations need, and the conversation last
        captured (its checkpoint may still be on its way)."""
        wanted_lists = set(kept_lists) | ({self._last_list} if self._last_list else set())
        lists = self._read(wanted_lists)
        wanted = wanted_lists | {d for listed in lists.values() for d in listed}
        wanted |= {digest for _, digest in self._seen}
        kept: list[bytes] = []
        present: set[str] = set()
        for digest, raw in self._lines():
            if digest in wanted and digest not in present:
                kept.append(digest.encode() + b"\t" + raw + b"\n")
                present.add(digest)
        atomic.write_atomic(self.path, b"".join(kept))
        self._written = present

    def _lines(self) -> Iterable[tuple[str, bytes]]:
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return
        for line in data.split(b"\n"):
            digest, tab, raw = line.partition(b"\t")
            if tab:
                yield digest.decode("ascii", "replace"), raw

    def _read(self, wanted: set[str]) -> dict[str, Any]:
        found: dict[str, Any] = {}
        for digest, raw in self._lines():
            if digest in wanted and digest not in found:
                try:
                    found[digest] = json.loads(raw)
                except ValueError:
                    log.error("%s: the entry %s is damaged", self.path, digest)
        return found
