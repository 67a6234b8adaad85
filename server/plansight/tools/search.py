"""The search tools, list_files and grep, and the ripgrep runner beneath them.

Both honour .gitignore (inside a git repository or not) and never follow symbolic links out of
the workspace: rg does the walking, this module keeps the first lines within the output limits,
counts the rest, and stops rg once it has counted enough.

A file's name may hold a newline (git allows it): rg lists names each ending in NUL, and in
grep's output the name ends at a NUL, its line at the newline after it. Names are shown as
`tools/names.py` writes them (one holding a control character as a JSON string), a form
read_file, edit_file and these tools' own `path` take back.

Protected files (secrets, workspace/secrets.py): list_files names them with ` (protected)`;
grep never searches them (rg is given their patterns as an ignore file, and every line of its
output is checked again, so no line of one can reach the model) and says how many protected
files it left out, a count found from their names alone (never from what they hold).
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import sys
import tempfile
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pathspec import GitIgnoreSpec

from plansight.tools.context import ToolContext, workspace_errors
from plansight.tools.errors import ToolError
from plansight.tools.names import given_path, shown_name
from plansight.tools.registry import (
    OUTPUT_MAX_BYTES,
    Tool,
    optional_str,
    path_place,
    require_str,
    text_of,
)
from plansight.workspace.access import WorkspacePath
from plansight.workspace.secrets import IGNORE_FILE, ProtectedPaths

LIST_MAX_FILES = 500
GREP_MAX_LINES = 200
GREP_COUNT_LIMIT = 10_000  # stop rg after this many matching lines; the count is then a floor
LIST_COUNT_LIMIT = 200_000

RG_COMMON = ("--no-config", "--no-require-git", "--hidden", "--glob", "!.git")
# How the tools ask rg for a listing: each name ends in NUL, as a name may hold a newline.
RG_FILES = (*RG_COMMON, "--files", "--null")
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
PROTECTED_MARK = " (protected)"
# The only lines rg writes in grep's output besides matches: its notes on a binary file,
# `path: binary file matches (...)`, with no NUL after the path (--null puts one elsewhere).
_RG_BINARY_MESSAGE = re.compile(
    r": (?:binary file matches|WARNING: stopped searching binary file after match) "
    r"\(found .* byte around offset \d+\)\Z",
    re.DOTALL,
)


def rg_executable() -> str:
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
    """rg's output records as they come: the first ones kept within limits, all counted."""

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

    def add_names(self, data: bytes) -> None:
        """Whole names of a listing (each ending in NUL, but perhaps the very last)."""
        text = data.decode("utf-8", errors="replace")
        if not text.endswith("\0"):
            text += "\0"
        self._add(text[:-1].split("\0"), len(text))

    def add_records(self, data: bytes, accept: Callable[[str], str | None]) -> None:
        """Whole records of grep's output (each ending in a newline, but perhaps the very last),
        each mapped by `accept` to the line to show, or None to drop it."""
        text = data.decode("utf-8", errors="replace")
        if not text.endswith("\n"):
            text += "\n"
        self._add([line for line in map(accept, _grep_records(text)) if line is not None], None)

    def _add(self, lines: list[str], size_of_all: int | None) -> None:
        """`size_of_all`: what `lines` count together (see below), when the caller knows it."""
        if len(lines) > self.count_limit - self.total:
            lines = lines[: self.count_limit - self.total]
            size_of_all = None
        self.total += len(lines)
        if len(self.kept) >= self.keep:
            return
        # Each line counts its length and a newline (its separator).
        size = size_of_all if size_of_all is not None else sum(map(len, lines)) + len(lines)
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


def _grep_records(text: str) -> list[str]:
    """grep's output (ending in a newline) cut into records: `path NUL line`, or rg's message
    about a binary file (no NUL). A path may hold a newline, so a line without NUL that is no
    message is the start of the next record."""
    lines = text[:-1].split("\n")
    if text.count("\0") == len(lines):
        return lines  # a NUL on every line (neither paths nor lines hold one): the usual case
    records: list[str] = []
    start: str | None = None  # a path so far, up to a newline in it
    for line in lines:
        if start is not None:
            line = f"{start}\n{line}"
            start = None
        if "\0" in line or _RG_BINARY_MESSAGE.search(line):
            records.append(line)
        else:
            start = line
    if start is not None:
        records.append(start)  # rg's output ended there
    return records


def _grep_records_end(data: bytes) -> int:
    """Where the last record of grep's output known to be whole ends in `data` (0: none yet).
    What follows it may be a path holding a newline, not yet ended by its NUL."""
    cut = data.rfind(b"\n") + 1
    if data.count(b"\0", 0, cut) == data.count(b"\n", 0, cut):
        return cut  # every line is a record (see _grep_records)
    last = data.rfind(b"\0", 0, cut)
    return data.find(b"\n", last) + 1 if last >= 0 else 0


async def _run_rg(
    args: list[str],
    cwd: Path,
    *,
    keep: int,
    keep_bytes: int,
    count_limit: int,
    accept: Callable[[str], str | None] | None = None,
) -> _RgOutput:
    """Run rg (never through a shell); keep its first records, count the rest, kill it if need
    be.

    With `accept`, the output is grep's (`RG_GREP`), and `accept` maps each record to the line to
    show, or None to drop it; without it, the output is a listing (`RG_FILES`), each name kept
    as it is.
    """
    proc = await asyncio.create_subprocess_exec(
        rg_executable(),
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
            # full pipe), counting names to stop it at the limit; split them once at the end.
            chunks: list[bytes] = []
            names = 0
            while names < count_limit and (chunk := await proc.stdout.read(_RG_CHUNK)):
                chunks.append(chunk)
                names += chunk.count(b"\0")
            if chunks:
                out.add_names(b"".join(chunks))
        else:
            # Records in large chunks, decoded and split at once, not one await per record.
            pending = b""
            while not out.full:
                chunk = await proc.stdout.read(_RG_CHUNK)
                if not chunk:
                    if pending:
                        out.add_records(pending, accept)
                    break
                data = pending + chunk
                cut = _grep_records_end(data)
                pending = data[cut:]
                if cut:
                    out.add_records(data[:cut], accept)
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


def _search_target(ctx: ToolContext, path: str | None, *, shareable: bool = False) -> WorkspacePath:
    name = given_path(path or ".")
    with workspace_errors():
        if shareable:  # grep: a protected file or folder named as the target is refused
            target = ctx.workspace.resolve_shareable(name)
        else:
            target = ctx.workspace.resolve(name)
    if not target.path.exists():
        raise ToolError(f"{shown_name(target.relative)} does not exist.")
    if not (target.path.is_dir() or target.path.is_file()):
        # rg would wait forever on a FIFO named explicitly.
        raise ToolError(f"{shown_name(target.relative)} is not a regular file or folder.")
    return target


def _rg_failure(tool: str, output: _RgOutput) -> ToolError:
    message = output.stderr or f"rg exited with code {output.returncode}"
    return ToolError(f"{tool} failed: {message}")


def _state_globs(ctx: ToolContext) -> list[str]:
    """rg arguments that leave out Plansight's state folders inside the workspace: after the
    model's own globs, so that none of them brings those back."""
    args: list[str] = []
    for folder in ctx.workspace.state_folders:
        escaped = "".join(f"\\{c}" if c in "\\*?[]{}!" else c for c in folder)
        args += ["--glob", f"!/{escaped}"]
    return args


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
        [*RG_FILES, *selection, *where],
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
    skip = _state_globs(ctx)
    if not pattern:
        files = await _listed_files(target, root, skip)
    else:
        selection, exact = _glob_args(pattern)
        if exact:
            files = await _listed_files(target, root, [*selection, *skip])
        else:
            # rg's --glob overrides .gitignore for the files it matches: keep only files that a
            # listing without the glob (which honours .gitignore) also has. Both run at once.
            async with asyncio.TaskGroup() as group:
                everything = group.create_task(_listed_files(target, root, skip))
                matching = group.create_task(_listed_files(target, root, [*selection, *skip]))
            allowed = set(everything.result())
            files = [name for name in matching.result() if name in allowed]
    if not files:
        return "No files found."
    ordered = files
    ordered.sort()  # in place: rg's output is sorted within folders, which sort() exploits
    shown: list[str] = []
    size = 0
    protected = ctx.workspace.protected.walked()
    for name in ordered[:LIST_MAX_FILES]:
        entry = shown_name(name)
        if protected(name):
            entry += PROTECTED_MARK
        if size + len(entry) + 1 > OUTPUT_MAX_BYTES:
            break
        shown.append(entry)
        size += len(entry) + 1
    if len(shown) < len(ordered):
        at_least = "at least " if len(ordered) >= LIST_COUNT_LIMIT else ""
        shown.append(
            f"[showing {len(shown)} of {at_least}{len(ordered)} files; narrow the listing with "
            "a more specific pattern or path]"
        )
    return "\n".join(shown)


_LIST_SHOWING = re.compile(r"^\[showing (\d+) of (at least )?(\d+) files;")


def list_summary(content: str) -> str:
    """For clients: how many files were listed ("12 files", "showing 200 of 1532 files"), not
    the first file's name (issue 31: a row said `→ src/a.py`, as if one file was found)."""
    lines = content.splitlines()
    if not lines or content.strip() == "No files found.":
        return "no files"
    cut = _LIST_SHOWING.match(lines[-1])
    if cut is not None:
        shown, at_least, total = cut.groups()
        return f"showing {shown} of {at_least or ''}{total} files"
    return "1 file" if len(lines) == 1 else f"{len(lines)} files"


def list_input_summary(tool_input: dict[str, Any]) -> str:
    """`*.py in src`, `src`, `*.py`, or `.` for the whole workspace."""
    parts = [text_of(tool_input, "pattern"), text_of(tool_input, "path")]
    return " in ".join(part for part in parts if part) or "."


def where(tool_input: dict[str, Any]) -> str:
    path = text_of(tool_input, "path")
    return f" in {path}" if path else ""


def list_title(tool_input: dict[str, Any]) -> str:
    pattern = text_of(tool_input, "pattern")
    return (
        f"List files matching {pattern}{where(tool_input)}"
        if pattern
        else (f"List files{where(tool_input)}")
    )


LIST_FILES = Tool(
    name="list_files",
    description=(
        "List the workspace's files recursively, honouring .gitignore, sorted, with paths "
        "relative to the workspace root. pattern: a glob such as '*.py' (matches file names in "
        "any folder) or 'src/**/*.ts'. path: the folder to list (default: the whole workspace). "
        "Files marked (protected) hold secrets that only the user can share."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "pattern": {"type": "string", "description": "Glob the files must match."},
            "path": {"type": "string", "description": "Folder to list, relative to the root."},
        },
    },
    handler=list_files,
    summarize=list_summary,
    summarize_input=list_input_summary,
    kind="search",
    title=lambda tool_input, summary: list_title(tool_input),
    locations=path_place,
)


async def grep(ctx: ToolContext, tool_input: dict[str, Any]) -> str:
    pattern = require_str(tool_input, "pattern", allow_empty=False)
    glob = optional_str(tool_input, "glob") or None
    target = _search_target(ctx, optional_str(tool_input, "path"), shareable=True)
    root = ctx.workspace.root
    protected = ctx.workspace.protected
    selection, exact = _glob_args(glob) if glob else ([], True)
    skip = _state_globs(ctx)
    left_out = asyncio.ensure_future(_protected_count(protected, target, root, glob))
    try:
        allowed = None if exact else set(await _listed_files(target, root, skip))
        out = await _grep(ctx, pattern, target, [*selection, *skip], allowed)
        skipped = await left_out
    finally:
        left_out.cancel()
    if out.returncode == 2 and not out.total:
        raise _rg_failure("grep", out)
    note = (
        [
            f"[{skipped} protected file{'s were' if skipped != 1 else ' was'} not searched "
            "(secrets: only the user can share them)]"
        ]
        if skipped
        else []
    )
    if not out.total:
        return "\n".join(["No matches.", *note])
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
    return "\n".join(result + note)


async def _grep(
    ctx: ToolContext,
    pattern: str,
    target: WorkspacePath,
    selection: list[str],
    allowed: set[str] | None,
) -> _RgOutput:
    """rg's matches of `pattern`, the protected files neither searched nor shown."""
    protected = ctx.workspace.protected
    secret_file = protected.walked()
    # Each path's name as shown, once looked at: None when it is not to be shown.
    shown: dict[str, str | None] = {}

    def name_of(path: str) -> str | None:
        path = _clean_path(path)
        if allowed is not None and path not in allowed:
            return None  # matched only because --glob overrides .gitignore
        name = shown.get(path, "")  # "": not looked at yet (no name is empty)
        if name == "":
            # rg follows no link but the target named: that one is checked as a whole.
            secret = secret_file(path) or (path == target.relative and protected.protects(path))
            # A protected file: rg's ignore file left it out, unless a .gitignore re-included it.
            name = shown[path] = None if secret else shown_name(path)
        return name

    def accept(record: str) -> str | None:
        # --null puts a NUL after the path, so paths holding ':' or a newline parse safely.
        path, sep, rest = record.partition("\0")
        if sep:
            name = name_of(path)
            if name is None:
                return None
            # As read_file shows lines: without the CR of a CRLF line ending. (rg itself leaves
            # a UTF-8 byte order mark out.)
            rest = rest.removesuffix("\r")
            return f"{name}:{rest}"
        message = _RG_BINARY_MESSAGE.search(record)
        if message is None:
            return record  # nothing rg is known to write: shown as it is
        name = name_of(record[: message.start()])
        return None if name is None else name + record[message.start() :]

    ignore_file = await asyncio.to_thread(_write_ignore_file, protected.patterns())
    try:
        args = [*RG_GREP, "--ignore-file", ignore_file]
        args += [*selection, "-e", pattern, "--", target.relative]
        return await _run_rg(
            args,
            ctx.workspace.root,
            keep=GREP_MAX_LINES,
            keep_bytes=OUTPUT_MAX_BYTES,
            count_limit=GREP_COUNT_LIMIT,
            accept=accept,
        )
    finally:
        os.unlink(ignore_file)


def _write_ignore_file(patterns: list[str]) -> str:
    with tempfile.NamedTemporaryFile(
        "w", prefix="plansight-protected-", suffix=".ignore", delete=False
    ) as handle:
        handle.write("".join(f"{line}\n" for line in patterns))
        return handle.name


async def _protected_count(
    protected: ProtectedPaths, target: WorkspacePath, root: Path, glob: str | None
) -> int:
    """How many protected files a search of `target` (files matching `glob`) leaves out: rg
    lists the files whose names the protecting patterns could match (their negations aside),
    and the rules decide each. Names alone: the count says nothing of any file's content."""
    globs = ["--glob", IGNORE_FILE]
    for line in protected.patterns():
        pattern = line.strip().removeprefix("\\")
        if not pattern or line.startswith(("#", "!")):
            continue
        if pattern.endswith("/"):
            pattern = pattern.rstrip("/")
            globs += ["--glob", f"{pattern}/**" if "/" in pattern else f"**/{pattern}/**"]
        else:
            globs += ["--glob", pattern, "--glob", f"{pattern.lstrip('/')}/**"]
    where = [] if target.relative == "." else ["--", target.relative]
    out = await _run_rg(
        [*RG_FILES, *globs, *where],
        root,
        keep=LIST_COUNT_LIMIT,
        keep_bytes=1 << 26,
        count_limit=LIST_COUNT_LIMIT,
    )
    try:
        chosen = GitIgnoreSpec.from_lines([glob]) if glob else None
    except ValueError:  # rg took it, pathspec does not: count within the whole target
        chosen = None
    secret = protected.walked()
    return sum(
        1 for name in set(out.lines) if (chosen is None or chosen.match_file(name)) and secret(name)
    )


def grep_input_summary(tool_input: dict[str, Any]) -> str:
    """`/def greet/`, `/TODO/ in src *.py`: the expression, and where it is searched."""
    where = " ".join(part for part in (text_of(tool_input, k) for k in ("path", "glob")) if part)
    return f"/{text_of(tool_input, 'pattern')}/" + (f" in {where}" if where else "")


GREP = Tool(
    name="grep",
    description=(
        "Search file contents with a regular expression (Rust regex syntax, as ripgrep), "
        "honouring .gitignore. Returns matching lines as path:line:text, paths relative to the "
        "workspace root. path: a file or folder to search (default: the whole workspace). "
        "glob: search only files matching it, e.g. '*.py'. Protected files (secrets) are "
        "never searched."
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
    summarize_input=grep_input_summary,
    kind="search",
    title=lambda tool_input, summary: (
        f"Search for {text_of(tool_input, 'pattern')!r}" + where(tool_input)
    ),
    locations=path_place,
)


TOOLS: tuple[Tool, ...] = (LIST_FILES, GREP)
