"""The file tools: read_file, write_file and edit_file.

Filesystem rules (paths, staleness, unsaved documents, atomic writes) live in
`workspace.access`; this module turns them into what the model sees. Both edits end the same
way (`_propose`): the user reviews the whole new document, the server writes what the user
accepted, and the model is told how that differs from its proposal.
"""

from __future__ import annotations

import asyncio
import difflib
import re
import uuid
from collections.abc import Callable
from typing import Any

from plansight.engine.hooks import EditProposal
from plansight.tools.context import ToolContext, workspace_errors
from plansight.tools.describe import (
    count_lines,
    describe_change,
    describe_new_file,
    n_lines,
)
from plansight.tools.errors import ToolError
from plansight.tools.names import given_path
from plansight.tools.registry import (
    OUTPUT_MAX_BYTES,
    Tool,
    line_number_of,
    line_of,
    optional_int,
    path_place,
    require_str,
    text_of,
)
from plansight.workspace.access import EditBase, WorkspaceError
from plansight.workspace.textpages import ModelView, as_model_text

READ_MAX_LINES = 2000
READ_MAX_BYTES = 100_000
READ_MAX_LINE_CHARS = 2000
DIFF_MAX_LINES = 120


# ----- read_file ---------------------------------------------------------------------------------


async def read_file(ctx: ToolContext, tool_input: dict[str, Any]) -> str:
    path = given_path(require_str(tool_input, "path", allow_empty=False))
    offset = optional_int(tool_input, "offset", minimum=1) or 1
    limit = optional_int(tool_input, "limit", minimum=1)
    count = min(limit or READ_MAX_LINES, READ_MAX_LINES)
    with workspace_errors():
        page = await ctx.workspace.read_page(
            path,
            offset,
            count,
            max_bytes=READ_MAX_BYTES,
            max_line_chars=READ_MAX_LINE_CHARS,
        )
    rel = page.path
    if page.total_lines == 0:
        ctx.touch(rel, 0, 0)
        return f"[{rel} is empty]"
    if offset > page.total_lines:
        raise ToolError(
            f"offset={offset} is past the end of {rel}, which has {n_lines(page.total_lines)}."
        )
    ctx.touch(rel, page.first_line - 1, page.last_line - 1)
    out = [f"{page.first_line + i:>6}\t{line}" for i, line in enumerate(page.lines)]
    notes: list[str] = []
    if page.unsaved:
        notes.append(
            f"[note: {rel} has unsaved changes in the editor; this is the editor's text. Edits "
            "to it are refused until the user saves or reverts it.]"
        )
    if page.invalid_utf8:
        notes.append(
            f"[note: {rel} is not valid UTF-8; undecodable bytes are shown as \ufffd. edit_file "
            "cannot change it.]"
        )
    if page.truncated_lines:
        notes.append(
            f"[note: {n_lines(page.truncated_lines)} longer than {READ_MAX_LINE_CHARS} "
            "characters were cut.]"
        )
    if page.last_line < page.total_lines:
        why = " (output size limit)" if page.size_capped else ""
        notes.append(
            f"[showing lines {page.first_line}-{page.last_line} of {page.total_lines}{why}; "
            f"call read_file with offset={page.last_line + 1} to continue]"
        )
    elif page.first_line > 1:
        notes.append(
            f"[showing lines {page.first_line}-{page.last_line} of {page.total_lines}; "
            "this is the end of the file]"
        )
    return "\n".join(out + notes) + ctx.instructions_note(rel)


_NUMBERED_LINE = re.compile(r"^ *(\d+)\t", re.MULTILINE)
_PAGE_NOTE = re.compile(r"\[showing lines (\d+)-(\d+) of (\d+)")


def read_summary(content: str) -> str:
    """For clients: what was read ("14 lines", "lines 1-2000 of 5000"), not its first line."""
    numbers = _NUMBERED_LINE.findall(content)
    if not numbers:
        return content.strip().splitlines()[0] if content.strip() else ""
    page = _PAGE_NOTE.search(content)
    if page is not None:
        first, last, total = page.groups()
        return f"lines {first}-{last} of {total}"
    return n_lines(len(numbers))


def read_input_summary(tool_input: dict[str, Any]) -> str:
    """`src/app.py`, `src/app.py:10-39` (offset 10, limit 30), `src/app.py:10-` (to the end)."""
    path = line_of(tool_input, "path")
    offset, limit = line_number_of(tool_input, "offset"), line_number_of(tool_input, "limit")
    if offset is None and limit is None:
        return path
    first = offset or 1
    return f"{path}:{first}-{first + limit - 1 if limit is not None else ''}"


READ_FILE = Tool(
    name="read_file",
    description=(
        "Read a text file in the workspace. Lines come numbered like `cat -n` (number, tab, "
        "text); the numbers are not part of the file. At most 2000 lines per call: page with "
        "offset (first line, 1-based) and limit (number of lines). Shows the editor's unsaved "
        "text when the file is open there. Read a file before editing it."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "File path relative to the workspace root."},
            "offset": {"type": "integer", "minimum": 1, "description": "First line, 1-based."},
            "limit": {"type": "integer", "minimum": 1, "description": "Number of lines."},
        },
        "required": ["path"],
    },
    handler=read_file,
    summarize=read_summary,
    summarize_input=read_input_summary,
    kind="read",
    title=lambda tool_input, summary: f"Read {summary or text_of(tool_input, 'path')}",
    locations=lambda tool_input: path_place(tool_input, line_number_of(tool_input, "offset") or 1),
)


# ----- write_file and edit_file ------------------------------------------------------------------


def _changed_range(old: str, new: str) -> tuple[int, int]:
    """0-based inclusive lines of `new` that differ from `old` (by common prefix and suffix)."""
    old_lines, new_lines = old.split("\n"), new.split("\n")
    prefix = 0
    while (
        prefix < len(old_lines)
        and prefix < len(new_lines)
        and old_lines[prefix] == new_lines[prefix]
    ):
        prefix += 1
    suffix = 0
    limit = min(len(old_lines), len(new_lines)) - prefix
    while suffix < limit and old_lines[-1 - suffix] == new_lines[-1 - suffix]:
        suffix += 1
    last_line = max(count_lines(new) - 1, 0)
    start = min(prefix, last_line)
    end = max(start, min(len(new_lines) - suffix - 1, last_line))
    return start, end


def _diff_note(proposed: str, written: str, rel: str) -> str:
    diff = difflib.unified_diff(
        proposed.splitlines(keepends=True),
        written.splitlines(keepends=True),
        fromfile=f"{rel} (your proposal)",
        tofile=f"{rel} (as written)",
        n=2,
    )
    lines = [line if line.endswith("\n") else line + "\n" for line in diff]
    shown: list[str] = []
    size = 0
    for line in lines:
        if len(shown) >= DIFF_MAX_LINES or size + len(line) > OUTPUT_MAX_BYTES // 3:
            shown.append(f"[... {len(lines) - len(shown)} more diff lines; read the file]\n")
            break
        shown.append(line)
        size += len(line)
    return (
        " The user changed your proposal before accepting it; the file as written differs "
        "from what you proposed:\n" + "".join(shown).rstrip("\n")
    )


async def _propose(
    ctx: ToolContext,
    base: EditBase,
    proposed: str,
    description: str,
    report: Callable[[str], str],
) -> str:
    """The shared ending of both edits: review, write what the user accepted, report it.

    `report(written)` says what was done; a note on how the written text differs from the
    proposal follows it when the user changed the proposal before accepting it.
    """
    in_progress = ctx.plan.state.in_progress
    proposal = EditProposal(
        id=uuid.uuid4().hex,
        path=base.target.path,
        relative_path=base.target.relative,
        old_text=base.text,
        new_text=proposed,
        description=description,
        todo_id=in_progress.id if in_progress is not None else None,
        plan_id=ctx.plan.state.plan_id if in_progress is not None else None,
        control=base.control,
        call_id=ctx.call_id,
    )
    decision = await ctx.review(proposal)
    if not decision.accepted:
        # A rejection is an error result (is_error=true): the model must see plainly that its
        # change did not happen, rather than read past a normal-looking result.
        message = f"This edit was rejected by the user; {base.target.relative} was not changed."
        if decision.feedback and decision.feedback.strip():
            message += f" Their feedback: {decision.feedback.strip()}"
        raise ToolError(message)
    written = decision.new_text if decision.new_text is not None else proposed
    await ctx.changes.before_edit(base.target.relative)
    try:
        # The user may have typed or saved while the review was open.
        await ctx.workspace.verify_unchanged(base)
        await ctx.workspace.write(base, written)
    except WorkspaceError as err:
        raise ToolError(f"{err} Nothing was written.") from err
    except OSError as err:
        raise ToolError(
            f"Could not write {base.target.relative}: {err.strerror or err}. Nothing was written."
        ) from err
    ctx.changes.edited(base.target.relative)
    start, end = _changed_range(base.text, written)
    ctx.touch(base.target.relative, start, end)
    result = report(written)
    if written != proposed:
        result += _diff_note(as_model_text(proposed), as_model_text(written), base.target.relative)
    return result + ctx.instructions_note(base.target.relative)


async def write_file(ctx: ToolContext, tool_input: dict[str, Any]) -> str:
    path = given_path(require_str(tool_input, "path", allow_empty=False))
    content = require_str(tool_input, "content")
    with workspace_errors():
        base = await ctx.workspace.begin_edit(path)
    rel = base.target.relative
    if base.exists:
        # A file with CRLF line endings keeps them (the model never saw them).
        content = ModelView(base.text).to_document(content)
    if base.exists and base.text == content:
        raise ToolError(f"{rel} already has exactly this content; nothing to write.")
    if base.exists:
        description = await asyncio.to_thread(
            describe_change, as_model_text(base.text), as_model_text(content)
        )
    else:
        description = describe_new_file(content)
    done = "Wrote" if base.exists else "Created"
    return await _propose(
        ctx,
        base,
        content,
        description,
        lambda written: f"{done} {rel} ({n_lines(count_lines(written))}).",
    )


def write_input_summary(tool_input: dict[str, Any]) -> str:
    """`hello.py (12 lines)`: the file and the size of what it is to hold."""
    lines = n_lines(count_lines(text_of(tool_input, "content")))
    return f"{line_of(tool_input, 'path')} ({lines})"


WRITE_FILE = Tool(
    name="write_file",
    description=(
        "Create a file, or replace a file's whole content. To change part of an existing file "
        "prefer edit_file. An existing file must be read with read_file first. Missing parent "
        "folders are created. The user reviews the change before it is written."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "File path relative to the workspace root."},
            "content": {"type": "string", "description": "The file's complete new content."},
        },
        "required": ["path", "content"],
    },
    handler=write_file,
    summarize_input=write_input_summary,
    kind="edit",
    title=lambda tool_input, summary: f"Write {text_of(tool_input, 'path')}",
    locations=lambda tool_input: path_place(tool_input, 1),
    asks=True,
    changes_workspace=True,
)


def _occurrences(text: str, needle: str, limit: int = 50) -> list[int]:
    # Overlapping matches count too: they make old_text just as ambiguous.
    found: list[int] = []
    start = text.find(needle)
    while start != -1 and len(found) < limit:
        found.append(start)
        start = text.find(needle, start + 1)
    return found


def _not_found_message(text: str, old: str, rel: str) -> str:
    message = (
        f"old_text was not found in {rel}. It must match the file exactly, whitespace and "
        "indentation included, without read_file's line numbers; or the file changed: read it "
        "again with read_file."
    )
    file_lines = text.split("\n")
    old_lines = old.strip("\n").split("\n")
    stripped_old = [line.strip() for line in old_lines]
    n = len(old_lines)
    if len(file_lines) <= 20_000:
        stripped_file = [line.strip() for line in file_lines]
        for i in range(len(file_lines) - n + 1):
            if stripped_file[i : i + n] == stripped_old:
                return (
                    message
                    + f" Lines {i + 1}-{i + n} match it except for whitespace or indentation:\n"
                    + _numbered(file_lines, i, i + n)
                )
        anchor = next((line for line in stripped_old if line), "")
        if anchor:
            close = difflib.get_close_matches(anchor, stripped_file, n=3, cutoff=0.6)
            starts = sorted({stripped_file.index(line) for line in close})
            if starts:
                span = max(1, min(n, 12 // len(starts)))
                shown = "\n  ...\n".join(
                    _numbered(file_lines, i, min(i + span, len(file_lines))) for i in starts
                )
                return message + " The closest lines:\n" + shown
    return message


def _numbered(lines: list[str], start: int, end: int, max_lines: int = 12) -> str:
    end = min(end, start + max_lines)
    return "\n".join(f"{i + 1:>6}\t{lines[i][:300]}" for i in range(start, end))


async def edit_file(ctx: ToolContext, tool_input: dict[str, Any]) -> str:
    path = given_path(require_str(tool_input, "path", allow_empty=False))
    old = require_str(tool_input, "old_text")
    new = require_str(tool_input, "new_text")
    if not old:
        raise ToolError(
            "'old_text' must not be empty; to create a file or replace all of it, use write_file."
        )
    old, new = as_model_text(old), as_model_text(new)
    if old == new:
        raise ToolError("old_text and new_text are identical; nothing would change.")
    with workspace_errors():
        base = await ctx.workspace.begin_edit(path)
    rel = base.target.relative
    if not base.exists:
        raise ToolError(f"{rel} does not exist; use write_file to create it.")
    if not base.valid_utf8:
        raise ToolError(
            f"{rel} is not valid UTF-8, so edit_file cannot change it without corrupting its "
            "other bytes; use write_file to replace it whole, or bash."
        )
    # Matched against the text as read_file showed it (no CR of a CRLF line ending, no byte
    # order mark), then put back into the file in its own line endings.
    view = ModelView(base.text)
    text = view.text
    starts = _occurrences(text, old)
    if not starts:
        raise ToolError(_not_found_message(text, old, rel))
    if len(starts) > 1:
        at = ", ".join(str(text.count("\n", 0, s) + 1) for s in starts)
        more = "+" if len(starts) >= 50 else ""
        raise ToolError(
            f"old_text occurs {len(starts)}{more} times in {rel} (at lines {at}); include more "
            "surrounding lines so that it matches exactly once."
        )
    start = starts[0]
    begin, end = view.document_offset(start), view.document_offset(start + len(old))
    proposed = base.text[:begin] + view.to_document(new) + base.text[end:]
    line = text.count("\n", 0, start) + 1
    n_old, n_new = count_lines(old), count_lines(new)
    # A diff of the whole text, cheap as the common start and end are skipped first; in a
    # thread all the same, as a large change would hold the event loop.
    changed = text[:start] + new + text[start + len(old) :]
    description = await asyncio.to_thread(describe_change, text, changed)
    return await _propose(
        ctx,
        base,
        proposed,
        description,
        lambda written: f"Edited {rel}: replaced {n_lines(n_old)} with {n_new} at line {line}.",
    )


EDIT_FILE = Tool(
    name="edit_file",
    description=(
        "Replace one exact occurrence of old_text with new_text in an existing file. old_text "
        "must match the file exactly (whitespace and indentation included, without read_file's "
        "line numbers) and occur exactly once: include enough surrounding lines to make it "
        "unique. Read the file with read_file first. The user reviews the change before it is "
        "written."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "File path relative to the workspace root."},
            "old_text": {"type": "string", "description": "Exact text to replace (unique)."},
            "new_text": {"type": "string", "description": "The text to put in its place."},
        },
        "required": ["path", "old_text", "new_text"],
    },
    handler=edit_file,
    summarize_input=lambda tool_input: line_of(tool_input, "path"),
    kind="edit",
    title=lambda tool_input, summary: f"Edit {text_of(tool_input, 'path')}",
    locations=path_place,
    asks=True,
    changes_workspace=True,
)


TOOLS: tuple[Tool, ...] = (READ_FILE, WRITE_FILE, EDIT_FILE)
