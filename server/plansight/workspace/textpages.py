"""What the model sees of a text file: pages of its lines, and the way back to the document.

The model sees lines without their line endings (read_file numbers them) and without a UTF-8
byte order mark; both stay on disk as they are. `scan_lines` streams a file once, in chunks, to
hash it, count its lines and keep one window of them, so that a huge file (or a huge line) never
sits in memory whole; the page builders turn that window, or an editor's text, into a
`TextPage`. `ModelView` is a document with CRLF shown as LF, as the model knows it, and maps an
edit made on that view back onto the document, in the document's own line endings.

Knows nothing of workspaces or tools.
"""

from __future__ import annotations

import codecs
import hashlib
from bisect import bisect_left
from dataclasses import dataclass
from typing import BinaryIO

BOM = "\ufeff"
BOM_BYTES = codecs.BOM_UTF8
CHUNK = 1 << 20


@dataclass(frozen=True)
class TextPage:
    """A window of a file's lines, as `Workspace.read_page` returns it."""

    path: str  # relative to the workspace root, "/"-separated
    first_line: int  # 1-based number of lines[0]
    lines: tuple[str, ...]  # without line endings, long lines cut to max_line_chars
    total_lines: int
    truncated_lines: int  # how many of `lines` were cut
    invalid_utf8: bool  # some shown bytes were not UTF-8 and are shown as U+FFFD
    unsaved: bool  # the text is the editor's, which differs from the file on disk
    size_capped: bool  # fewer lines than asked because of max_bytes

    @property
    def last_line(self) -> int:
        """1-based number of the last line shown (first_line - 1 when none is)."""
        return self.first_line + len(self.lines) - 1


@dataclass
class Scan:
    digest: bytes  # sha256 of the bytes read (the whole file unless binary)
    binary: bool  # a NUL byte was found; the scan stopped there
    total_lines: int
    lines: list[tuple[bytes, bool]]  # (kept bytes, was cut) of the lines in the window
    size_capped: bool


def scan_lines(
    handle: BinaryIO,
    first: int,
    count: int,
    max_bytes: int,
    keep_bytes: int,
    chunk_size: int = CHUNK,
) -> Scan:
    """One pass over a file: hash it, count its lines, keep lines [first, first + count).

    Each kept line keeps at most `keep_bytes` bytes; once the kept lines hold `max_bytes`, the
    window ends early (`size_capped`).
    """
    digest = hashlib.sha256()
    lines: list[tuple[bytes, bool]] = []
    end = first + count  # exclusive; shrinks when the byte budget runs out
    budget = max_bytes
    index = 0  # 0-based number of the line being read
    current = bytearray()
    current_len = 0
    last = b"\n"
    binary = size_capped = False
    while chunk := handle.read(chunk_size):
        digest.update(chunk)
        if b"\0" in chunk:
            binary = True
            break
        last = chunk[-1:]
        pos, size = 0, len(chunk)
        while pos < size:
            if index >= end:
                index += chunk.count(b"\n", pos)
                break
            if index < first:
                newlines = chunk.count(b"\n", pos)
                if index + newlines < first:
                    index += newlines
                    break
                while index < first:
                    pos = chunk.index(b"\n", pos) + 1
                    index += 1
                continue
            newline = chunk.find(b"\n", pos)
            stop = size if newline == -1 else newline
            room = keep_bytes - len(current)
            if room > 0:
                current += chunk[pos : min(stop, pos + room)]
            current_len += stop - pos
            if newline == -1:
                break
            lines.append((bytes(current), current_len > keep_bytes))
            budget -= len(current) + 1
            current, current_len = bytearray(), 0
            index += 1
            pos = newline + 1
            if budget <= 0 and index < end:
                end, size_capped = index, True
    if not binary:
        # A last line without a final newline still counts.
        if last != b"\n":
            if first <= index < end:
                lines.append((bytes(current), current_len > keep_bytes))
            index += 1
    return Scan(digest.digest(), binary, index, lines, size_capped)


def _decode_line(raw: bytes, cut: bool) -> tuple[str, bool]:
    """Decode one line; a line cut mid-character keeps its incomplete tail out of the text."""
    decoder = codecs.getincrementaldecoder("utf-8")("strict")
    try:
        return decoder.decode(raw, final=not cut), False
    except UnicodeDecodeError:
        return codecs.getincrementaldecoder("utf-8")("replace").decode(raw, final=not cut), True


def page_from_scan(path: str, scan: Scan, first_line: int, max_line_chars: int) -> TextPage:
    shown: list[str] = []
    cut_count = 0
    invalid = False
    for number, (raw, cut) in enumerate(scan.lines, first_line):
        if number == 1:
            raw = raw.removeprefix(BOM_BYTES)
        text, bad = _decode_line(raw, cut)
        invalid |= bad
        text = text.removesuffix("\r")
        if cut or len(text) > max_line_chars:
            text, cut = text[:max_line_chars], True
        cut_count += cut
        shown.append(text)
    return TextPage(
        path=path,
        first_line=first_line,
        lines=tuple(shown),
        total_lines=scan.total_lines,
        truncated_lines=cut_count,
        invalid_utf8=invalid,
        unsaved=False,
        size_capped=scan.size_capped,
    )


def page_from_text(
    path: str,
    text: str,
    first_line: int,
    max_lines: int,
    max_bytes: int,
    max_line_chars: int,
) -> TextPage:
    """A page of an editor's text (unsaved changes), cut as `page_from_scan` cuts a file."""
    all_lines = text.removeprefix(BOM).split("\n")
    if all_lines[-1] == "":
        all_lines.pop()  # the final newline ends the last line; it does not start another
    shown: list[str] = []
    cut_count = 0
    budget = max_bytes
    size_capped = False
    for line in all_lines[first_line - 1 : first_line - 1 + max_lines]:
        if shown and budget <= 0:
            size_capped = True
            break
        line = line.removesuffix("\r")
        if len(line) > max_line_chars:
            line = line[:max_line_chars]
            cut_count += 1
        budget -= len(line.encode()) + 1
        shown.append(line)
    return TextPage(
        path=path,
        first_line=first_line,
        lines=tuple(shown),
        total_lines=len(all_lines),
        truncated_lines=cut_count,
        invalid_utf8=False,
        unsaved=True,
        size_capped=size_capped,
    )


class ModelView:
    """A document as the model knows it from read_file: its CRLF line endings shown as LF.

    An edit found in the view maps back onto the document (`document_offset`) and the model's
    text takes the document's own line endings (`to_document`), so that the edit changes only
    what the model meant to change.
    """

    def __init__(self, document: str) -> None:
        self.document = document
        self.text = document.replace("\r\n", "\n")
        # Where in the view the line breaks lie that are CRLF in the document.
        self._crlf: list[int] = []
        if len(self.text) != len(document):
            found = document.find("\r\n")
            while found != -1:
                self._crlf.append(found - len(self._crlf))
                found = document.find("\r\n", found + 2)
        # Most line breaks decide: a file with a few stray LF lines is still a CRLF file.
        self.newline = "\r\n" if 2 * len(self._crlf) > self.text.count("\n") else "\n"

    def document_offset(self, offset: int) -> int:
        """The document offset of a view offset (a CRLF's LF in the view maps to its CR)."""
        return offset + bisect_left(self._crlf, offset)

    def to_document(self, text: str) -> str:
        """The model's text with the document's line endings."""
        text = as_model_text(text)
        return text.replace("\n", "\r\n") if self.newline == "\r\n" else text


def as_model_text(text: str) -> str:
    """Text from the model in the view's terms (it may have written CRLF it was never shown)."""
    return text.replace("\r\n", "\n")
