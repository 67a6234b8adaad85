"""The workspace tools: read_file, write_file, edit_file, list_files, grep, bash.

Each tool's schema sits next to its handler. Filesystem rules (paths, staleness, unsaved
documents, atomic writes) live in `plansight.workspace`; this module turns them into what the
model sees.
"""

from __future__ import annotations

import asyncio
import difflib
import logging
import math
import os
import shutil
import signal
import sys
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from plansight.hooks import CommandRequest, EditProposal
from plansight.tools.context import ToolContext
from plansight.tools.registry import Tool, ToolError, optional_int, optional_str, require_str
from plansight.workspace import EditBase, WorkspaceError, WorkspacePath

log = logging.getLogger(__name__)

READ_MAX_LINES = 2000
READ_MAX_BYTES = 100_000
READ_MAX_LINE_CHARS = 2000
LIST_MAX_FILES = 500
GREP_MAX_LINES = 200
OUTPUT_MAX_BYTES = 30_000
GREP_COUNT_LIMIT = 10_000  # stop rg after this many matching lines; the count is then a floor
LIST_COUNT_LIMIT = 200_000
DIFF_MAX_LINES = 120
BASH_DEFAULT_TIMEOUT = 120.0
BASH_MAX_TIMEOUT = 600.0
BASH_DRAIN_GRACE = 1.0  # how long to wait for output after the command exited

RG_COMMON = ("--no-config", "--no-require-git", "--hidden", "--glob", "!.git")
# How grep asks rg for matches (the benchmark runs rg with the same flags).
RG_GREP = (
    *RG_COMMON,
    "--line-number",
    "--no-heading",
    "--with-filename",
    "--null",
    "--color",
    "never",
    "--max-columns",
    "300",
    "--max-columns-preview",
    "--sort",
    "path",
)
_RG_CHUNK = 1 << 18
# A file type of our own: its globs select files by name and, unlike --glob, leave .gitignore
# in force (rg's --glob re-includes ignored files that match it).
_RG_GLOB_TYPE = "plansightglob"


@contextmanager
def _model_errors() -> Iterator[None]:
    """Workspace errors are written for the model: pass them on as tool errors."""
    try:
        yield
    except WorkspaceError as err:
        raise ToolError(str(err)) from err


def _count_lines(text: str) -> int:
    if not text:
        return 0
    return text.count("\n") + (0 if text.endswith("\n") else 1)


def _lines(n: int) -> str:
    return f"{n} line" if n == 1 else f"{n} lines"


# ----- read_file ---------------------------------------------------------------------------------


async def read_file(ctx: ToolContext, tool_input: dict[str, Any]) -> str:
    path = require_str(tool_input, "path", allow_empty=False)
    offset = optional_int(tool_input, "offset", minimum=1) or 1
    limit = optional_int(tool_input, "limit", minimum=1)
    count = min(limit or READ_MAX_LINES, READ_MAX_LINES)
    with _model_errors():
        page = await ctx.workspace.read_page(
            path,
            offset,
            count,
            max_bytes=READ_MAX_BYTES,
            max_line_chars=READ_MAX_LINE_CHARS,
        )
    rel = page.target.relative
    if page.total_lines == 0:
        ctx.touch(rel, 0, 0)
        return f"[{rel} is empty]"
    if offset > page.total_lines:
        raise ToolError(
            f"offset={offset} is past the end of {rel}, which has {_lines(page.total_lines)}."
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
            f"[note: {_lines(page.truncated_lines)} longer than {READ_MAX_LINE_CHARS} "
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
    return "\n".join(out + notes)


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
    last_line = max(_count_lines(new) - 1, 0)
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


async def _review_and_write(
    ctx: ToolContext, base: EditBase, proposed: str, description: str
) -> str:
    """Show the change to the user; write what they accept. Returns the text written."""
    in_progress = ctx.plan.state.in_progress
    proposal = EditProposal(
        id=uuid.uuid4().hex,
        path=base.target.path,
        relative_path=base.target.relative,
        old_text=base.text,
        new_text=proposed,
        description=description,
        todo_id=in_progress.id if in_progress is not None else None,
    )
    decision = await ctx.review(proposal)
    if not decision.accepted:
        # A rejection is an error result (is_error=true): the model must see plainly that its
        # change did not happen, rather than read past a normal-looking result.
        message = f"The user rejected this edit; {base.target.relative} was not changed."
        if decision.feedback and decision.feedback.strip():
            message += f" Their feedback: {decision.feedback.strip()}"
        raise ToolError(message)
    written = decision.new_text if decision.new_text is not None else proposed
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
    start, end = _changed_range(base.text, written)
    ctx.touch(base.target.relative, start, end)
    return written


async def write_file(ctx: ToolContext, tool_input: dict[str, Any]) -> str:
    path = require_str(tool_input, "path", allow_empty=False)
    content = require_str(tool_input, "content")
    with _model_errors():
        base = await ctx.workspace.begin_edit(path)
    rel = base.target.relative
    if base.exists and base.text == content:
        raise ToolError(f"{rel} already has exactly this content; nothing to write.")
    n = _lines(_count_lines(content))
    verb = "Rewrite" if base.exists else "Create"
    written = await _review_and_write(ctx, base, content, f"{verb} {rel} ({n})")
    done = "Wrote" if base.exists else "Created"
    result = f"{done} {rel} ({_lines(_count_lines(written))})."
    if written != content:
        result += _diff_note(content, written, rel)
    return result


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
    path = require_str(tool_input, "path", allow_empty=False)
    old = require_str(tool_input, "old_text")
    new = require_str(tool_input, "new_text")
    if not old:
        raise ToolError(
            "'old_text' must not be empty; to create a file or replace all of it, use write_file."
        )
    if old == new:
        raise ToolError("old_text and new_text are identical; nothing would change.")
    with _model_errors():
        base = await ctx.workspace.begin_edit(path)
    rel = base.target.relative
    if not base.exists:
        raise ToolError(f"{rel} does not exist; use write_file to create it.")
    if not base.valid_utf8:
        raise ToolError(
            f"{rel} is not valid UTF-8, so edit_file cannot change it without corrupting its "
            "other bytes; use write_file to replace it whole, or bash."
        )
    text = base.text
    starts = _occurrences(text, old)
    if not starts and "\r\n" in text and "\r" not in old:
        # The file has Windows line endings, which read_file does not show.
        old, new = old.replace("\n", "\r\n"), new.replace("\n", "\r\n")
        starts = _occurrences(text, old)
    if not starts:
        raise ToolError(_not_found_message(text, old.replace("\r\n", "\n"), rel))
    if len(starts) > 1:
        at = ", ".join(str(text.count("\n", 0, s) + 1) for s in starts)
        more = "+" if len(starts) >= 50 else ""
        raise ToolError(
            f"old_text occurs {len(starts)}{more} times in {rel} (at lines {at}); include more "
            "surrounding lines so that it matches exactly once."
        )
    start = starts[0]
    proposed = text[:start] + new + text[start + len(old) :]
    line = text.count("\n", 0, start) + 1
    n_old, n_new = _count_lines(old), _count_lines(new)
    description = f"Edit {rel}: replace {_lines(n_old)} with {n_new} at line {line}"
    written = await _review_and_write(ctx, base, proposed, description)
    result = f"Edited {rel}: replaced {_lines(n_old)} with {n_new} at line {line}."
    if written != proposed:
        result += _diff_note(proposed, written, rel)
    return result


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
)


# ----- ripgrep: list_files and grep --------------------------------------------------------------


def _rg_executable() -> str:
    found = shutil.which("rg")
    if found:
        return found
    candidate = Path(sys.executable).parent / "rg"
    if candidate.exists():
        return str(candidate)
    raise ToolError("ripgrep (rg) is not installed here; use bash with find or grep instead.")


@dataclass
class _RgOutput:
    lines: list[str]  # the lines kept, after filtering
    total: int  # lines accepted by the filter (a floor when not complete)
    complete: bool  # False when rg was stopped at the count limit
    returncode: int
    stderr: str


class _Lines:
    """rg's output lines as they come: the first ones kept within limits, all counted."""

    def __init__(self, keep: int, keep_bytes: int, count_limit: int) -> None:
        self.keep = keep
        self.keep_bytes = keep_bytes
        self.count_limit = count_limit
        self.kept: list[str] = []
        self.size = 0
        self.total = 0

    @property
    def full(self) -> bool:
        return self.total >= self.count_limit

    def add(self, data: bytes, accept: Callable[[str], str | None] | None) -> None:
        """Whole lines of output (each ending in a newline, but perhaps the very last)."""
        text = data.decode("utf-8", errors="replace")
        if not text.endswith("\n"):
            text += "\n"
        lines = text[:-1].split("\n")
        if accept is not None:
            lines = [line for line in map(accept, lines) if line is not None]
        if len(lines) > self.count_limit - self.total:
            lines = lines[: self.count_limit - self.total]
        self.total += len(lines)
        if len(self.kept) >= self.keep:
            return
        # Each line counts its length and a newline: len(text) when all of them are here.
        whole = accept is None and not self.full
        size = len(text) if whole else sum(map(len, lines)) + len(lines)
        if len(self.kept) + len(lines) <= self.keep and self.size + size <= self.keep_bytes:
            self.kept.extend(lines)
            self.size += size
            return
        for line in lines:
            if len(self.kept) < self.keep and self.size + len(line) + 1 <= self.keep_bytes:
                self.kept.append(line)
                self.size += len(line) + 1
            else:
                self.keep = len(self.kept)  # once one line is left out, keep no later ones
                return


async def _run_rg(
    args: list[str],
    cwd: Path,
    *,
    keep: int,
    keep_bytes: int,
    count_limit: int,
    accept: Callable[[str], str | None] | None = None,
) -> _RgOutput:
    """Run rg (never through a shell); keep its first lines, count the rest, kill it if need be.

    `accept` maps each output line to the line to show, or None to drop it; without it every
    line is kept as it is.
    """
    proc = await asyncio.create_subprocess_exec(
        _rg_executable(),
        *args,
        cwd=cwd,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        limit=1 << 20,
    )
    assert proc.stdout is not None and proc.stderr is not None
    stderr_task = asyncio.create_task(proc.stderr.read())
    out = _Lines(keep, keep_bytes, count_limit)
    try:
        if accept is None:
            # A listing: take the bytes as fast as rg writes them (a slow reader stalls rg on a
            # full pipe), counting newlines to stop it at the limit; split them once at the end.
            chunks: list[bytes] = []
            newlines = 0
            while newlines < count_limit and (chunk := await proc.stdout.read(_RG_CHUNK)):
                chunks.append(chunk)
                newlines += chunk.count(b"\n")
            if chunks:
                out.add(b"".join(chunks), None)
        else:
            # Lines in large chunks, decoded and split at once, not one await per line.
            pending = b""
            while not out.full:
                chunk = await proc.stdout.read(_RG_CHUNK)
                if not chunk:
                    if pending:
                        out.add(pending, accept)
                    break
                data = pending + chunk
                cut = data.rfind(b"\n") + 1
                pending = data[cut:]
                if cut:
                    out.add(data[:cut], accept)
        if out.full:
            with suppress(ProcessLookupError):
                proc.kill()
            # Drain what is left so the pipe closes and the process can be reaped.
            while await proc.stdout.read(_RG_CHUNK):
                pass
        stderr = (await stderr_task).decode("utf-8", errors="replace").strip()
        returncode = await proc.wait()
    except BaseException:
        # Cancelled (or failed): rg must not outlive the call.
        if proc.returncode is None:
            with suppress(ProcessLookupError):
                proc.kill()
        # Drain what rg left in its pipes: Process.wait() also waits for them to close.
        with suppress(Exception):
            await asyncio.wait_for(asyncio.gather(proc.stdout.read(), stderr_task, proc.wait()), 5)
        raise
    return _RgOutput(out.kept, out.total, not out.full, returncode, stderr)


def _clean_path(path: str) -> str:
    return path[2:] if path.startswith("./") else path


def _search_target(ctx: ToolContext, path: str | None) -> WorkspacePath:
    with _model_errors():
        target = ctx.workspace.resolve(path or ".")
    if not target.path.exists():
        raise ToolError(f"{target.relative} does not exist.")
    if not (target.path.is_dir() or target.path.is_file()):
        # rg would wait forever on a FIFO named explicitly.
        raise ToolError(f"{target.relative} is not a regular file or folder.")
    return target


def _rg_failure(tool: str, output: _RgOutput) -> ToolError:
    message = output.stderr or f"rg exited with code {output.returncode}"
    return ToolError(f"{tool} failed: {message}")


def _glob_args(glob: str) -> tuple[list[str], bool]:
    """rg arguments that keep only files matching `glob`, and whether .gitignore still holds.

    A glob without "/" matches file names, which a file type does without overriding
    .gitignore: one rg run suffices. Other globs need --glob, whose matches rg lists even when
    ignored; the caller then intersects with a listing that honours .gitignore.
    """
    if "/" not in glob and not glob.startswith(("!", "include:")):
        return ["--type-add", f"{_RG_GLOB_TYPE}:{glob}", "--type", _RG_GLOB_TYPE], True
    return ["--glob", glob], False


async def _listed_files(target: WorkspacePath, root: Path, selection: list[str]) -> list[str]:
    # Without a path rg lists the folder it runs in, with no "./" before each name to strip.
    where = [] if target.relative == "." else ["--", target.relative]
    out = await _run_rg(
        [*RG_COMMON, "--files", *selection, *where],
        root,
        keep=LIST_COUNT_LIMIT,
        keep_bytes=1 << 30,
        count_limit=LIST_COUNT_LIMIT,
    )
    if out.returncode == 2 and not out.lines:
        raise _rg_failure("list_files", out)
    return out.lines  # each file once, in rg's (partly sorted) order


async def list_files(ctx: ToolContext, tool_input: dict[str, Any]) -> str:
    pattern = optional_str(tool_input, "pattern") or None
    target = _search_target(ctx, optional_str(tool_input, "path"))
    root = ctx.workspace.root
    if not pattern:
        files = await _listed_files(target, root, [])
    else:
        selection, exact = _glob_args(pattern)
        if exact:
            files = await _listed_files(target, root, selection)
        else:
            # rg's --glob overrides .gitignore for the files it matches: keep only files that a
            # listing without the glob (which honours .gitignore) also has. Both run at once.
            async with asyncio.TaskGroup() as group:
                everything = group.create_task(_listed_files(target, root, []))
                matching = group.create_task(_listed_files(target, root, selection))
            allowed = set(everything.result())
            files = [name for name in matching.result() if name in allowed]
    if not files:
        return "No files found."
    ordered = files
    ordered.sort()  # in place: rg's output is sorted within folders, which sort() exploits
    shown: list[str] = []
    size = 0
    for name in ordered[:LIST_MAX_FILES]:
        if size + len(name) + 1 > OUTPUT_MAX_BYTES:
            break
        shown.append(name)
        size += len(name) + 1
    if len(shown) < len(ordered):
        at_least = "at least " if len(ordered) >= LIST_COUNT_LIMIT else ""
        shown.append(
            f"[showing {len(shown)} of {at_least}{len(ordered)} files; narrow the listing with "
            "a more specific pattern or path]"
        )
    return "\n".join(shown)


LIST_FILES = Tool(
    name="list_files",
    description=(
        "List the workspace's files recursively, honouring .gitignore, sorted, with paths "
        "relative to the workspace root. pattern: a glob such as '*.py' (matches file names in "
        "any folder) or 'src/**/*.ts'. path: the folder to list (default: the whole workspace)."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "pattern": {"type": "string", "description": "Glob the files must match."},
            "path": {"type": "string", "description": "Folder to list, relative to the root."},
        },
    },
    handler=list_files,
)


async def grep(ctx: ToolContext, tool_input: dict[str, Any]) -> str:
    pattern = require_str(tool_input, "pattern", allow_empty=False)
    glob = optional_str(tool_input, "glob") or None
    target = _search_target(ctx, optional_str(tool_input, "path"))
    root = ctx.workspace.root
    selection, exact = _glob_args(glob) if glob else ([], True)
    allowed = None if exact else set(await _listed_files(target, root, []))

    def accept(line: str) -> str | None:
        # --null puts a NUL after the path, so paths containing ':' parse safely.
        path, sep, rest = line.partition("\0")
        if not sep:
            return line  # a message from rg, e.g. about a binary file
        path = _clean_path(path)
        if allowed is not None and path not in allowed:
            return None  # matched only because --glob overrides .gitignore
        return f"{path}:{rest}"

    args = [*RG_GREP]
    args += [*selection, "-e", pattern, "--", target.relative]
    out = await _run_rg(
        args,
        root,
        keep=GREP_MAX_LINES,
        keep_bytes=OUTPUT_MAX_BYTES,
        count_limit=GREP_COUNT_LIMIT,
        accept=accept,
    )
    if out.returncode == 2 and not out.total:
        raise _rg_failure("grep", out)
    if not out.total:
        return "No matches."
    result = list(out.lines)
    if len(out.lines) < out.total:
        count = f"{out.total}" if out.complete else f"more than {out.total}"
        result.append(
            f"[showing {len(out.lines)} of {count} matching lines; narrow the search with a more "
            "specific pattern, path or glob]"
        )
    if out.returncode == 2 and out.stderr:
        errors = "\n".join(out.stderr.splitlines()[:3])
        result.append(f"[some files could not be searched: {errors}]")
    return "\n".join(result)


GREP = Tool(
    name="grep",
    description=(
        "Search file contents with a regular expression (Rust regex syntax, as ripgrep), "
        "honouring .gitignore. Returns matching lines as path:line:text, paths relative to the "
        "workspace root. path: a file or folder to search (default: the whole workspace). "
        "glob: search only files matching it, e.g. '*.py'."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "pattern": {"type": "string", "description": "Regular expression to search for."},
            "path": {"type": "string", "description": "File or folder, relative to the root."},
            "glob": {"type": "string", "description": "Glob the searched files must match."},
        },
        "required": ["pattern"],
    },
    handler=grep,
)


# ----- bash --------------------------------------------------------------------------------------


class _CappedOutput:
    """Keeps the first and last bytes of a stream, counting what falls in between."""

    def __init__(self, limit: int) -> None:
        self._head_limit = limit // 2
        self._tail_limit = limit - self._head_limit
        self._head = bytearray()
        self._tail = bytearray()
        self.omitted = 0

    def feed(self, data: bytes) -> None:
        room = self._head_limit - len(self._head)
        if room > 0:
            self._head += data[:room]
            data = data[room:]
        if not data:
            return
        self._tail += data
        excess = len(self._tail) - self._tail_limit
        if excess > 0:
            del self._tail[:excess]
            self.omitted += excess

    def text(self) -> str:
        head = self._head.decode("utf-8", errors="replace")
        tail = self._tail.decode("utf-8", errors="replace")
        if self.omitted:
            return f"{head}\n[... {self.omitted} bytes omitted ...]\n{tail}"
        return head + tail


def _kill_group(pgid: int) -> None:
    # SIGKILL, to the whole group: children that ignore SIGTERM die too.
    with suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def _parse_timeout(tool_input: dict[str, Any]) -> float:
    raw = tool_input.get("timeout")
    if raw is None:
        return BASH_DEFAULT_TIMEOUT
    if isinstance(raw, bool) or not isinstance(raw, int | float) or not math.isfinite(raw):
        raise ToolError("'timeout' must be a number of seconds.")
    if raw <= 0:
        raise ToolError("'timeout' must be more than 0 seconds.")
    return min(float(raw), BASH_MAX_TIMEOUT)


def _exit_status(returncode: int) -> str:
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        return f"[killed by {name}]"
    return f"[exit code {returncode}]"


async def bash(ctx: ToolContext, tool_input: dict[str, Any]) -> str:
    command = require_str(tool_input, "command", allow_empty=False)
    timeout = _parse_timeout(tool_input)
    root = ctx.workspace.root
    decision = await ctx.approve(CommandRequest(command=command, cwd=str(root)))
    if not decision.approved:
        message = "The user did not approve this command; it was not run."
        if decision.feedback and decision.feedback.strip():
            message += f" Their feedback: {decision.feedback.strip()}"
        raise ToolError(message)

    output = _CappedOutput(OUTPUT_MAX_BYTES)
    loop = asyncio.get_running_loop()
    # Our own pipe rather than PIPE: asyncio's Process.wait() would otherwise also wait for
    # every background child that holds the output open.
    read_fd, write_fd = os.pipe()
    try:
        proc = await asyncio.create_subprocess_exec(
            "/bin/bash",
            "-c",
            command,
            cwd=root,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=write_fd,
            stderr=write_fd,
            start_new_session=True,  # its own process group, killed as a whole
            env={**os.environ, "PAGER": "cat", "GIT_PAGER": "cat"},
        )
    except BaseException:
        os.close(read_fd)
        raise
    finally:
        os.close(write_fd)
    transport: asyncio.ReadTransport | None = None
    pump_task: asyncio.Task[None] | None = None
    timed_out = lingering = False
    try:
        reader = asyncio.StreamReader()
        transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(read_fd, "rb", buffering=0)
        )

        async def pump() -> None:
            while chunk := await reader.read(1 << 16):
                output.feed(chunk)

        pump_task = asyncio.create_task(pump())
        try:
            returncode = await asyncio.wait_for(proc.wait(), timeout)
        except TimeoutError:
            timed_out = True
            log.info("bash: %r timed out after %g s; killing group %d", command, timeout, proc.pid)
            _kill_group(proc.pid)
            returncode = await proc.wait()
        done, _ = await asyncio.wait({pump_task}, timeout=BASH_DRAIN_GRACE)
        lingering = not done
    except BaseException:
        # Cancelled (the run was stopped) or failed: nothing of the command may survive.
        log.info("bash: stopping %r; killing group %d", command, proc.pid)
        _kill_group(proc.pid)
        await proc.wait()
        raise
    finally:
        if pump_task is not None:
            pump_task.cancel()
            with suppress(asyncio.CancelledError):
                await pump_task
        if transport is not None:
            transport.close()
        else:
            with suppress(OSError):
                os.close(read_fd)

    text = output.text().rstrip("\n")
    if timed_out:
        raise ToolError(
            f"Command timed out after {timeout:g} s; its process group was killed.\n"
            + (text or "(no output)")
        )
    parts = [text or "(no output)"]
    if lingering:
        parts.append(
            "[background processes still held the output open; later output was not captured. "
            "Redirect a background process's output, e.g. `nohup cmd > log 2>&1 &`.]"
        )
    parts.append(_exit_status(returncode))
    return "\n".join(parts)


BASH = Tool(
    name="bash",
    description=(
        "Run a command with /bin/bash in the workspace root, after the user approves it. "
        "Returns stdout and stderr together (long output keeps its start and end) and the exit "
        "code. stdin is empty: do not run interactive commands. timeout: seconds (default 120, "
        "at most 600); on timeout the command and all its child processes are killed. To leave "
        "a process running, redirect its output: `nohup cmd > log 2>&1 &`."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "command": {"type": "string", "description": "The bash command line to run."},
            "timeout": {"type": "number", "description": "Seconds (default 120, max 600)."},
        },
        "required": ["command"],
    },
    handler=bash,
)


TOOLS: tuple[Tool, ...] = (READ_FILE, WRITE_FILE, EDIT_FILE, LIST_FILES, GREP, BASH)
