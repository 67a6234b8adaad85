"""Text pages: one streamed pass over a file, and the window of lines the model is shown."""

from __future__ import annotations

import hashlib
import io

from hypothesis import given, settings
from hypothesis import strategies as st

from plansight.workspace.textpages import ModelView, page_from_scan, page_from_text, scan_lines


@settings(max_examples=150, deadline=None)
@given(
    data=st.lists(
        st.sampled_from([b"a", b"bc", b"\n", b"\r\n", b"\xc3\xa9", b"long" * 5]), max_size=60
    ),
    first=st.integers(min_value=0, max_value=25),
    count=st.integers(min_value=0, max_value=25),
    chunk_size=st.integers(min_value=1, max_value=16),
)
def test_scan_matches_a_plain_split(
    data: list[bytes], first: int, count: int, chunk_size: int
) -> None:
    """Chunk boundaries anywhere: the streamed window equals the lines of a plain split."""
    content = b"".join(data)
    scan = scan_lines(io.BytesIO(content), first, count, 1 << 20, 12, chunk_size=chunk_size)
    lines = content.split(b"\n")
    if lines[-1] == b"":
        lines.pop()
    assert scan.total_lines == len(lines)
    expected = [(line[:12], len(line) > 12) for line in lines[first : first + count]]
    assert scan.lines == expected
    assert scan.digest == hashlib.sha256(content).digest()


def test_a_line_cut_mid_character_is_not_shown_as_invalid() -> None:
    line = "é" * 10 + "\n"  # 2 bytes a character: cut after 5 bytes, half of one is kept
    scan = scan_lines(io.BytesIO(line.encode() * 2), 0, 2, 1 << 20, 5)
    page = page_from_scan("f.txt", scan, 1, 100)
    assert page.lines == ("éé", "éé") and page.truncated_lines == 2
    assert not page.invalid_utf8


def test_a_byte_budget_ends_the_window_early() -> None:
    scan = scan_lines(io.BytesIO(b"0123456789\n" * 10), 0, 10, 25, 100)
    assert (len(scan.lines), scan.size_capped, scan.total_lines) == (3, True, 10)


def test_a_binary_file_stops_the_scan() -> None:
    scan = scan_lines(io.BytesIO(b"text\n\0more\n"), 0, 10, 1 << 20, 100)
    assert scan.binary


def test_an_editor_text_page_is_cut_like_a_file_page() -> None:
    page = page_from_text("f.txt", "one\r\n" + "x" * 50 + "\nthree\n", 1, 2, 1 << 20, 20)
    assert page.lines == ("one", "x" * 20) and page.truncated_lines == 1
    assert (page.total_lines, page.last_line, page.unsaved) == (3, 2, True)


@settings(max_examples=200, deadline=None)
@given(
    parts=st.lists(st.sampled_from(["a", "bc", "\n", "\r\n", "\r", "é"]), max_size=40),
    data=st.data(),
)
def test_a_span_of_the_view_maps_onto_the_same_span_of_the_document(
    parts: list[str], data: st.DataObject
) -> None:
    document = "".join(parts)
    view = ModelView(document)
    assert view.text == document.replace("\r\n", "\n")
    start = data.draw(st.integers(0, len(view.text)))
    end = data.draw(st.integers(start, len(view.text)))
    begin, stop = view.document_offset(start), view.document_offset(end)
    assert document[begin:stop].replace("\r\n", "\n") == view.text[start:end]
    # Replacing that span leaves the rest of the document byte for byte.
    edited = document[:begin] + view.to_document("X\nY") + document[stop:]
    assert edited.startswith(document[:begin]) and edited.endswith(document[stop:])


def test_new_text_takes_the_line_endings_most_of_the_document_has() -> None:
    assert ModelView("a\r\nb\r\nc\n").to_document("x\ny\r\n") == "x\r\ny\r\n"
    assert ModelView("a\r\nb\nc\n").to_document("x\r\ny\n") == "x\ny\n"
    assert ModelView("no line break").to_document("x\ny") == "x\ny"


def test_the_byte_order_mark_is_not_shown() -> None:
    scan = scan_lines(io.BytesIO(b"\xef\xbb\xbfone\ntwo\n"), 0, 2, 1 << 20, 100)
    assert page_from_scan("f", scan, 1, 100).lines == ("one", "two")
    later = scan_lines(io.BytesIO(b"\xef\xbb\xbfone\n\xef\xbb\xbftwo\n"), 1, 1, 1 << 20, 100)
    assert page_from_scan("f", later, 2, 100).lines == ("\ufefftwo",)  # only the file's start
    assert page_from_text("f", "\ufeffone\n", 1, 10, 1 << 20, 100).lines == ("one",)
