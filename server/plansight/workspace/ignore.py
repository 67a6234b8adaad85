"""Which paths gitignore-syntax rules exclude, decided as git decides: one matcher for every list.

`PathRules(root, files=..., per_folder=...)` answers for paths under `root` (relative, "/"
separated). Its patterns come from two kinds of source, both in gitignore syntax and compiled by
pathspec's `GitIgnoreSpec`:

- `files`: lists of patterns relative to the root (a `PatternList`, or a file, read again by
  `refresh`), lowest precedence first, as git reads
  `core.excludesFile` and then `.git/info/exclude`;
- `per_folder`: the name of the files each folder may hold (`.gitignore`), whose patterns apply
  below their folder and take precedence over those of every folder above and over `files`.

Within one list the last matching pattern decides (`!` re-includes); a path is excluded when it
or any folder above it is, since git never looks inside an excluded folder. Patterns ending in
`/` match folders only. One difference from git is known, pathspec's: it reads `a/**/` (the
folders inside `a`) as `a/` (`a` itself).

`git_ignore_rules(root)` is git's own set for a workspace: every `.gitignore`,
`.git/info/exclude` and the user's `core.excludesFile` (git's config; by default
`$XDG_CONFIG_HOME/git/ignore`). The watcher and the echo scans (workspace/scan.py) use it, and
the checkpoints give the same root lists (`GitIgnoreSources.lines`) to their own repository, whose
git reads the same `.gitignore` files.
"""

from __future__ import annotations

import logging
import os
import re
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from pathspec import GitIgnoreSpec

log = logging.getLogger(__name__)

# pathspec marks the slash after a folder a pattern matched with this group (its regexes are
# built so; the comparison with `git check-ignore` in the tests would catch a change).
_FOLDER_MARK = "ps_d"
# Variables that point git at another repository than the workspace's: not the user's git
# config, so they are dropped when asking git for `core.excludesFile`.
_REPOSITORY_VARIABLES = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_COMMON_DIR",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_NAMESPACE",
)
GIT_CONFIG_TIMEOUT = 10.0
# How much older than its reading a file's stamp must be to be trusted (the file system's clock
# ticks every few milliseconds).
_RACY_NS = 100_000_000


@dataclass(frozen=True)
class PatternList:
    """Patterns in gitignore syntax, one a line, and where they came from (for messages)."""

    origin: str
    lines: tuple[str, ...]


def read_patterns(path: Path) -> PatternList:
    """The patterns of one file; none when there is no such file or it cannot be read."""
    try:
        text = path.read_text(errors="replace")
    except FileNotFoundError:
        text = ""
    except OSError as err:  # a folder, a file we may not read: it excludes nothing, as in git
        log.debug("cannot read %s (%s); it excludes nothing", path, err)
        text = ""
    return PatternList(str(path), tuple(text.splitlines()))


def _stamp(path: Path) -> tuple[int, int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_ino, st.st_size, max(st.st_mtime_ns, st.st_ctime_ns))


def usable_lines(lines: Sequence[str], origin: str) -> list[str]:
    """`lines` without those that are no valid pattern (`foo\\`, `[z-a]`), each logged as a
    warning naming `origin` and the line: one malformed line does not void the rest."""
    try:
        GitIgnoreSpec.from_lines(lines, backend="simple")
        return list(lines)
    except (ValueError, re.error):
        pass
    kept: list[str] = []
    for number, line in enumerate(lines, 1):
        try:
            GitIgnoreSpec.from_lines([line], backend="simple")
        except (ValueError, re.error) as err:
            log.warning(
                "%s, line %d: %r is not a valid pattern (%s); ignored", origin, number, line, err
            )
            continue
        kept.append(line)
    return kept


class _Patterns:
    """One list compiled: which of its patterns matches an entry itself, the last one winning."""

    def __init__(self, lines: Sequence[str]) -> None:
        spec = GitIgnoreSpec.from_lines(lines, backend="simple")
        # Newest first: the first match found is the last in the list. Comments and blank
        # lines compile to patterns that decide nothing (include None).
        self.patterns: tuple[tuple[re.Pattern[str], bool], ...] = tuple(
            (spanning_lines(p.regex), bool(p.include))
            for p in reversed(spec.patterns)
            if p.include is not None and p.regex is not None
        )

    def decide(self, path: str, is_dir: bool) -> bool | None:
        """True: excluded, False: re-included (`!`), None: no pattern matches `path` itself."""
        for regex, include in self.patterns:
            if _matches_itself(regex, path, is_dir):
                return include
        return None


def spanning_lines(regex: re.Pattern[str]) -> re.Pattern[str]:
    """pathspec's expression with `.` matching a newline too: its `.+/` (of `**/`) and `/.*`
    (below a folder) stand for any characters, and a name may hold a newline (`a\nb/.env`
    is as protected as `ab/.env`)."""
    return re.compile(regex.pattern, regex.flags | re.DOTALL)


def _matches_itself(regex: re.Pattern[str], path: str, is_dir: bool) -> bool:
    """Whether pathspec's `regex` matches the entry `path` itself, not a folder above it.

    pathspec answers for files: its regexes also match every path below a folder that a
    pattern matches, marking the slash after that folder. Here the folders above were asked
    about already (the walk in `PathRules.matches`, as git walks), so only a match that ends
    at this entry counts: the mark after a folder's own name, or none at all.
    """
    subject = path + "/" if is_dir else path
    marked = _FOLDER_MARK in regex.groupindex
    start = 0
    while (match := regex.search(subject, start)) is not None:
        mark = match.start(_FOLDER_MARK) if marked else -1
        if mark == len(path):
            return True  # the slash after this folder
        # No mark: the pattern matched this name, or the start of a path ("out/" of
        # "out/**"), which is something inside that folder, never the folder itself.
        if mark < 0 and (not is_dir or match.end() < len(subject)):
            return True
        # A folder above: an unanchored pattern ("*/") may still match further on.
        start = match.start() + 1
    return False


class PathRules:
    """Gitignore-syntax rules over the tree under `root` (see the module's docstring)."""

    def __init__(
        self,
        root: Path,
        *,
        files: Sequence[Path | PatternList] = (),
        per_folder: str | None = None,
    ) -> None:
        self.root = root
        self.files = tuple(files)
        self.per_folder = per_folder
        self._stamps: tuple[tuple[int, int, int] | None, ...] = ()
        self._racy = False
        self._root_lines: tuple[str, ...] = ()
        self._root: _Patterns | None = None
        self._folders = lru_cache(maxsize=4096)(self._load_folder)
        self.refresh()

    def refresh(self) -> bool:
        """Read the root files again if they may have changed; True when what they say did
        (then it is compiled anew). Cheap when nothing changed: a stat of each file."""
        stamps = tuple(None if isinstance(s, PatternList) else _stamp(s) for s in self.files)
        if self._root is not None and stamps == self._stamps and not self._racy:
            return False
        read_at = time.time_ns()
        lines: list[str] = []
        for source in self.files:
            found = source if isinstance(source, PatternList) else read_patterns(source)
            lines += usable_lines(found.lines, found.origin)
        # A file changed within a tick of the file system's clock before it was read may
        # change again with the same stamp (as git's "racily clean" index entries): such files
        # are read every time until their stamp is old enough to trust.
        self._racy = any(s is not None and read_at - s[2] < _RACY_NS for s in stamps)
        self._stamps = stamps
        if self._root is not None and tuple(lines) == self._root_lines:
            return False
        self._root_lines = tuple(lines)
        self._root = _Patterns(lines)
        return True

    def invalidate(self) -> None:
        """Forget the per-folder files read so far (one of them changed)."""
        self._folders.cache_clear()

    def root_lines(self) -> list[str]:
        """The patterns of `files`, in order: what a git repository's info/exclude would hold."""
        return list(self._root_lines)

    def _load_folder(self, folder: tuple[str, ...]) -> _Patterns | None:
        if self.per_folder is None:
            return None
        found = read_patterns(self.root.joinpath(*folder, self.per_folder))
        lines = usable_lines(found.lines, found.origin)
        return _Patterns(lines) if any(line.strip() for line in lines) else None

    def matches(self, relative: str, is_dir: bool = False) -> bool:
        """Whether `relative` (a "/"-separated path under the root) is excluded: it, or a
        folder above it."""
        parts = tuple(part for part in relative.split("/") if part)
        for depth in range(1, len(parts) + 1):
            if self.matches_entry(parts[:depth], depth < len(parts) or is_dir):
                return True
        return False

    def matches_entry(self, parts: tuple[str, ...], is_dir: bool) -> bool:
        """Whether this one entry is excluded, for a walk that already kept its folders."""
        # The deepest folder's file first: the first to decide wins.
        for level in range(len(parts) - 1, -1, -1):
            folder = self._folders(parts[:level])
            if folder is not None:
                decided = folder.decide("/".join(parts[level:]), is_dir)
                if decided is not None:
                    return decided
        assert self._root is not None
        return bool(self._root.decide("/".join(parts), is_dir))


@dataclass(frozen=True)
class GitIgnoreSources:
    """The workspace-wide files git reads besides the `.gitignore` files, lowest precedence
    first: the user's `core.excludesFile`, then the repository's `info/exclude` (`root` being
    the repository's top folder)."""

    files: tuple[Path, ...]

    @classmethod
    def find(cls, root: Path) -> GitIgnoreSources:
        """Where those files are for `root` (runs `git config`: off the event loop). Without a
        repository yet, where `git init` would put info/exclude: a file that appears counts."""
        git_dir = _git_dir(root) or root / ".git"
        return cls((excludes_file(root), git_dir / "info" / "exclude"))

    def lines(self) -> list[str]:
        """Their patterns, in order (later lines take precedence)."""
        return [line for path in self.files for line in read_patterns(path).lines]


def git_ignore_rules(root: Path, sources: GitIgnoreSources | None = None) -> PathRules:
    """git's rules for the workspace `root` (`sources` found now unless given)."""
    found = sources if sources is not None else GitIgnoreSources.find(root)
    return PathRules(root, files=found.files, per_folder=".gitignore")


def excludes_file(root: Path) -> Path:
    """The user's `core.excludesFile` as git in `root` reads its configuration, or git's
    default, `$XDG_CONFIG_HOME/git/ignore` (`~/.config/git/ignore`), without git or setting."""
    env = {k: v for k, v in os.environ.items() if k not in _REPOSITORY_VARIABLES}
    try:
        done = subprocess.run(
            ["git", "config", "--path", "--get", "core.excludesFile"],
            cwd=root,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=GIT_CONFIG_TIMEOUT,
            check=False,
        )
    except FileNotFoundError:
        done = None  # no git here: nobody set anything, its default holds
    except (OSError, subprocess.SubprocessError) as err:
        log.warning("cannot ask git for core.excludesFile (%s); using its default", err)
        done = None
    if done is not None and done.returncode == 0 and done.stdout.strip():
        return root / done.stdout.strip()  # an absolute value stays as it is
    if done is not None and done.returncode not in (0, 1):  # 1: not set
        log.warning("git config core.excludesFile failed: %s", done.stderr.strip())
    config_home = os.environ.get("XDG_CONFIG_HOME") or os.path.join(
        os.path.expanduser("~"), ".config"
    )
    return Path(config_home) / "git" / "ignore"


def _git_dir(root: Path) -> Path | None:
    """The repository whose top folder `root` is: `.git`, or where a `.git` file (a worktree's,
    a submodule's) points; a worktree's info/exclude is its main repository's."""
    dot_git = root / ".git"
    if dot_git.is_dir():
        return dot_git
    try:
        first = dot_git.read_text(errors="replace").splitlines()[0]
    except (OSError, IndexError):
        return None
    if not first.startswith("gitdir:"):
        return None
    git_dir = root / first.removeprefix("gitdir:").strip()
    try:
        common = (git_dir / "commondir").read_text(errors="replace").strip()
    except OSError:
        return git_dir
    return git_dir / common
