"""Which workspace paths are secret files, kept from the model: the protected paths.

A path is protected when the user's rules or the workspace's rules protect it, each through
the one gitignore-rules implementation (`workspace.ignore.PathRules`, the last matching
pattern of a list deciding, as in git):

- the user's: Plansight's defaults (`DEFAULT_PATTERNS`: `.env`, keys, credentials, `.ssh/`,
  cloud and cluster credentials ...) unless the user set `protect.defaults: false`, then the
  user's `protect.extra` (whose `!` lines may share what the defaults protect: it is the
  user's choice, made outside the workspace);
- the workspace's `.plansightignore`, which only adds: a `!` line there re-includes what the
  file's own earlier lines protect, never what the user's rules protect (a cloned repository
  must not be able to share its reader's `.env` with the model). Such a line is logged as a
  warning naming it, once each time the file changes (the LSP server shows warnings in the
  editor's output, `window/logMessage`).

`.plansightignore` itself is always protected: the model may neither read nor change what
keeps secrets from it. A symbolic link is protected when its own path or its target's is
(`protects`). The rules are read again when `.plansightignore` changes (a stat per question).

Who asks: the file tools (refuse), grep (skips), list_files (marks), the editor's buffers
(never read), reviews and checkpoints (never hold one), and the sandbox (hides them from
commands, `files_to_hide`).
"""

from __future__ import annotations

import logging
import os
import re
import stat
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from pathspec import GitIgnoreSpec

from plansight.workspace.ignore import PathRules, PatternList, read_patterns

log = logging.getLogger(__name__)

IGNORE_FILE = ".plansightignore"
DEFAULT_PATTERNS = (
    ".env",
    ".env.*",
    "!.env.example",
    "!.env.sample",
    "!.env.template",
    "*.pem",
    "*.key",
    "*.p12",
    "*.pfx",
    "id_rsa*",
    "id_ed25519*",
    "id_ecdsa*",
    ".netrc",
    ".npmrc",
    ".pypirc",
    ".git-credentials",
    ".aws/",
    ".ssh/",
    ".gnupg/",
    # Container, cluster and cloud credentials (version 4). A pattern with a slash inside is
    # anchored at the root in gitignore syntax: `**/` makes it match at any depth.
    "**/.docker/config.json",
    ".kube/",
    "kubeconfig",
    "credentials.json",
    "service-account*.json",
    "*.keystore",
    "*.jks",
    ".htpasswd",
    "secrets.*",
    "!secrets.example.*",
    "*.tfvars",
    ".terraform/",
)
# The home folder's own secrets, hidden from sandboxed commands with the defaults on (a
# workspace link to them is refused anyway: it points outside).
HOME_SECRETS = (
    ".ssh",
    ".aws",
    ".gnupg",
    ".netrc",
    ".git-credentials",
    ".npmrc",
    ".pypirc",
    ".docker/config.json",
    ".kube",
    ".config/gcloud",
    ".config/gh",
)
_RACY_NS = 50_000_000  # a folder judged this soon after it changed is judged again
PROTECTED_MESSAGE = (
    "{path} is a protected file (a secret: Plansight's defaults or .plansightignore); its "
    "content is kept from you. Only the user can share it: ask them if you need something "
    "from it."
)


@dataclass(frozen=True)
class ProtectOptions:
    """The `protect` option: the defaults on or off, and patterns of the user's own."""

    defaults: bool = True
    extra: tuple[str, ...] = ()
    # `protect.control`: more control-file patterns (workspace/control.py), user-level.
    control: tuple[str, ...] = ()


class ProtectedPaths:
    """The protected-path rules of one workspace (see the module's docstring)."""

    def __init__(self, root: Path, options: ProtectOptions | None = None) -> None:
        self.root = Path(os.path.realpath(root))
        self.options = options or ProtectOptions()
        sources: list[Path | PatternList] = []
        if self.options.defaults:
            sources.append(PatternList("Plansight's default protected files", DEFAULT_PATTERNS))
        sources.append(PatternList("initializationOptions.protect.extra", self.options.extra))
        # Two lists, either protecting: the workspace's file cannot undo the user's (see the
        # module's docstring).
        self._user = PathRules(self.root, files=sources)
        self._workspace = PathRules(self.root, files=[self.root / IGNORE_FILE])
        self._any: re.Pattern[str] | None = None
        self._folders = lru_cache(maxsize=4096)(self._folder)
        self._warn_reincludes()
        # The survey's verdict per (folder, control asked): (mtime, rules' generation, verdict).
        self._verdicts: dict[tuple[str, bool], tuple[int, int, Verdict]] = {}
        self._previous: dict[tuple[str, bool], tuple[int, int, Verdict]] = {}
        self._generation = 0
        self._surveying = threading.Lock()

    def patterns(self) -> list[str]:
        """Patterns that exclude at least every protected path, in order (for another tool's
        excludes: rg's, the checkpoints' repository): the user's, then the workspace file's
        without its `!` lines, which in one list could re-include what the user's protect.
        (So a path the file re-includes from its own lines is excluded there too: more is
        left out, never less.) Re-read if need be."""
        self._refresh()
        return self._user.root_lines() + [
            line for line in self._workspace.root_lines() if not line.startswith("!")
        ]

    def matches(self, relative: str, is_dir: bool = False) -> bool:
        """Whether the workspace path `relative` ("/"-separated) is protected by name."""
        clean = relative.strip("/")
        if clean in ("", "."):
            return False
        if clean == IGNORE_FILE:
            return True
        self._refresh()
        return self._decide(clean, is_dir)

    def matcher(self) -> Callable[[str, bool], bool]:
        """`matches` for many paths at once (a scan): the rules as they are now, read once."""
        self._refresh()
        return lambda relative, is_dir: self._decide(relative.strip("/"), is_dir)

    def walked(self) -> Callable[[str], bool]:
        """`protects` for the files a walk that follows no link found (rg's): by name, and for
        a file that is itself a link, by its target too (one lstat). The rules read once."""
        secret = self.matcher()

        def protected(relative: str) -> bool:
            return secret(relative, False) or (
                os.path.islink(os.path.join(self.root, relative)) and self.protects(relative)
            )

        return protected

    def _refresh(self) -> re.Pattern[str]:
        changed = self._workspace.refresh()
        if changed:
            self._warn_reincludes()
        if changed or self._any is None:
            self._any = _any_pattern(self._user.root_lines() + self._workspace.root_lines())
            self._folders.cache_clear()
            self._generation += 1
        return self._any

    def _warn_reincludes(self) -> None:
        """Log each `!` line of the workspace's file that would re-include a path the user's
        rules protect: it is ignored, and the user should know why it has no effect."""
        usable = set(self._workspace.root_lines())
        # Numbered as the file is (root_lines leaves malformed lines out).
        for number, line in enumerate(read_patterns(self.root / IGNORE_FILE).lines, 1):
            if (
                line.startswith("!")
                and line in usable
                and _reincludes(line[1:].strip(), self._user)
            ):
                log.warning(
                    "%s, line %d: %r is ignored: .plansightignore can only add protected "
                    "files; what Plansight's defaults or your protect.extra protect stays "
                    "protected (only your own setting protect.defaults: false drops the "
                    "defaults)",
                    self.root / IGNORE_FILE,
                    number,
                    line,
                )

    def _decide(self, clean: str, is_dir: bool) -> bool:
        """`matches` once the rules are fresh (a walk refreshes them once, not per entry)."""
        if clean == IGNORE_FILE:
            return True
        assert self._any is not None
        # Most paths match no pattern at all: one search of all the patterns at once says so
        # (pathspec's expressions also match a path below a folder they match).
        if self._any.search(clean + "/" if is_dir else clean) is None:
            return False
        parts = tuple(part for part in clean.split("/") if part)
        for depth in range(1, len(parts)):
            if self._folders(parts[:depth]):
                return True
        return self._user.matches_entry(parts, is_dir) or self._workspace.matches_entry(
            parts, is_dir
        )

    def _folder(self, parts: tuple[str, ...]) -> bool:
        """Whether this folder itself is excluded (its own folders asked before)."""
        return self._user.matches_entry(parts, True) or self._workspace.matches_entry(parts, True)

    def protects(self, path: str | os.PathLike[str]) -> bool:
        """Whether `path` (relative to the root, or absolute) is protected: by its own name,
        or, for a symbolic link, by its target's (inside the workspace, or any path the
        defaults would protect outside it, such as `~/.ssh/id_rsa`)."""
        raw = os.fspath(path)
        absolute = raw if os.path.isabs(raw) else os.path.join(self.root, raw)
        lexical = Path(os.path.normpath(absolute))
        if lexical.is_relative_to(self.root):
            relative = lexical.relative_to(self.root).as_posix()
            if self.matches(relative, _is_dir(lexical)) or self._link_above_protected(lexical):
                return True
        real = Path(os.path.realpath(absolute))
        if real == lexical:
            return False
        if real.is_relative_to(self.root):
            return self.matches(real.relative_to(self.root).as_posix(), _is_dir(real))
        return self.options.defaults and _outside_secret(real)

    def _link_above_protected(self, lexical: Path) -> bool:
        """A folder on the way resolving into a protected folder (`link/x`, `link -> .ssh`)."""
        for parent in lexical.parents:
            if parent == self.root or not parent.is_relative_to(self.root):
                return False
            if os.path.islink(parent):
                return self.protects(parent)
        return False

    def files_to_hide(self) -> tuple[list[Path], list[Path]]:
        """The protected files and folders in the workspace now (absolute), outermost only:
        what a sandbox covers. Every folder is searched, those of dependencies and caches too
        (a `.env` under `node_modules/` is as secret as any)."""
        found = self.survey()
        return found.files, found.folders

    def survey(self, control: Callable[[str, bool], bool] | None = None) -> Survey:
        """One walk of the workspace for the sandbox: the protected files and folders, the
        targets of protected links (wherever they are), sockets and FIFOs, and the control
        entries that `control` (a `ControlFiles.matcher()`, the same rules each time) names.
        Costs a stat per folder when little changed: what a folder holds is judged again only
        when its modification time or the rules moved."""
        with self._surveying:  # (a command's and an MCP server's start may overlap)
            return self._survey(control)

    def _survey(self, control: Callable[[str, bool], bool] | None) -> Survey:
        self._refresh()
        found = Survey()
        # Only this walk's folders are kept: those gone since are dropped.
        self._previous, self._verdicts = self._verdicts, {}
        pending = [(str(self.root), "", control is not None)]
        while pending:
            folder, prefix, asked = pending.pop()
            verdict = self._verdict(folder, prefix, control if asked else None)
            if verdict.found:
                found.add(verdict)
            for name, below in verdict.descend:
                pending.append((f"{folder}/{name}", f"{prefix}{name}/", asked and below))
        self._previous = {}
        return found

    def _verdict(
        self, folder: str, prefix: str, control: Callable[[str, bool], bool] | None
    ) -> Verdict:
        """What one folder holds for the sandbox, kept while its modification time and the
        rules stay (one judged in the clock tick of a change is not kept: a second change in
        that tick would not move the time)."""
        key = (folder, control is not None)
        try:
            mtime = os.stat(folder, follow_symlinks=False).st_mtime_ns
        except OSError:
            return Verdict()
        kept = self._previous.get(key)
        if kept is not None and kept[0] == mtime and kept[1] == self._generation:
            self._verdicts[key] = kept
            return kept[2]
        verdict = self._judge(folder, prefix, control)
        verdict.found = bool(
            verdict.files
            or verdict.folders
            or verdict.target_files
            or verdict.target_folders
            or verdict.specials
            or verdict.control
        )
        if time.time_ns() - mtime > _RACY_NS and not verdict.volatile:
            self._verdicts[key] = (mtime, self._generation, verdict)
        return verdict

    def _judge(
        self, folder: str, prefix: str, control: Callable[[str, bool], bool] | None
    ) -> Verdict:
        verdict = Verdict()
        try:
            with os.scandir(folder) as scan:
                entries = list(scan)
        except OSError:
            return verdict
        for entry in entries:
            relative = prefix + entry.name
            try:
                if entry.is_symlink():
                    real = Path(os.path.realpath(entry.path))
                    if not os.path.exists(real):
                        # Its target may come later without this folder changing: judged
                        # again each time.
                        verdict.volatile = True
                    elif self._decide(relative, False) or self._protected_target(real):
                        into = verdict.target_folders if _is_dir(real) else verdict.target_files
                        into.append(real)
                    continue
                is_dir = entry.is_dir(follow_symlinks=False)
                if not is_dir and not entry.is_file(follow_symlinks=False):
                    verdict.specials.append(Path(entry.path))  # a socket or FIFO: a channel
                    continue
            except OSError:
                continue
            if self._decide(relative, is_dir):
                (verdict.folders if is_dir else verdict.files).append(Path(entry.path))
                continue
            below = control is not None
            if control is not None and control(relative, is_dir):
                verdict.control.append((Path(entry.path), is_dir))
                if entry.name == ".git":
                    continue  # git's own data: no secret files, and big
                below = False  # all under it is read-only already
            if is_dir:
                verdict.descend.append((entry.name, below))
        return verdict

    def _protected_target(self, real: Path) -> bool:
        """Whether a link's resolved target is protected: inside the workspace by the rules,
        outside it as the defaults would protect it (`~/.ssh/id_rsa`)."""
        if real.is_relative_to(self.root):
            relative = real.relative_to(self.root).as_posix()
            return relative != "" and self.matches(relative, _is_dir(real))
        return self.options.defaults and _outside_secret(real)


@dataclass
class Survey:
    """What one walk of the workspace found for the sandbox (absolute paths)."""

    files: list[Path] = field(default_factory=list)
    folders: list[Path] = field(default_factory=list)
    target_files: list[Path] = field(default_factory=list)
    target_folders: list[Path] = field(default_factory=list)
    specials: list[Path] = field(default_factory=list)
    control: list[tuple[Path, bool]] = field(default_factory=list)

    def add(self, more: Survey) -> None:
        self.files += more.files
        self.folders += more.folders
        self.target_files += more.target_files
        self.target_folders += more.target_folders
        self.specials += more.specials
        self.control += more.control


@dataclass
class Verdict(Survey):
    """What one folder holds for the survey, and its folders to walk on (name, control asked
    below)."""

    descend: list[tuple[str, bool]] = field(default_factory=list)
    volatile: bool = False  # not to be kept (a link to nothing yet)
    found: bool = False  # anything but folders to walk on


def home_secrets(
    home: Path, config_home: Path | None = None, *, names: tuple[str, ...] = HOME_SECRETS
) -> tuple[list[Path], list[Path]]:
    """The user's credential files and folders that exist (`names` under `home`, and
    Plansight's own configuration folder, `config_home`/plansight: it holds MCP tokens),
    resolved where they are links."""
    files: list[Path] = []
    folders: list[Path] = []
    config = config_home if config_home is not None else home / ".config"
    for path in (*(home / name for name in names), config / "plansight"):
        try:
            real = Path(os.path.realpath(path))
            st = os.stat(real)
        except OSError:
            continue
        if stat.S_ISDIR(st.st_mode):
            folders.append(real)
        elif stat.S_ISREG(st.st_mode):
            files.append(real)
    return files, folders


def _reincludes(pattern: str, user: PathRules) -> bool:
    """Whether the negated `pattern` (a `!` line without its `!`) would re-include a path
    `user` protects: a path the pattern names (its wildcards filled in) is protected, or the
    pattern matches a name one of the user's patterns protects (`!*.pem` and `*.pem`). A
    heuristic for the warning only: whatever it says, the line changes nothing."""
    if not pattern:
        return False
    folder = pattern.endswith("/")
    named = _example_path(pattern)
    if named and user.matches(named, folder):
        return True
    try:
        negated = GitIgnoreSpec.from_lines([pattern.rstrip("/") if folder else pattern])
    except (ValueError, re.error):
        return False
    for line in user.root_lines():
        if not line.strip() or line.startswith(("#", "!")):
            continue
        example = _example_path(line.strip())
        if example and user.matches(example, line.endswith("/")) and negated.match_file(example):
            return True
    return False


def _example_path(pattern: str) -> str:
    """A path a gitignore pattern matches: its wildcards filled in (`*.pem` -> `x.pem`)."""
    text = pattern.removeprefix("\\").replace("**/", "").replace("/**", "/x")
    text = re.sub(r"\[[^\]]*\]", "x", text).replace("*", "x").replace("?", "x")
    return text.strip("/")


def _any_pattern(lines: list[str]) -> re.Pattern[str]:
    """One expression that matches wherever any of the patterns (re-includes too) does."""
    spec = GitIgnoreSpec.from_lines(lines, backend="simple")
    found = [p.regex.pattern for p in spec.patterns if p.include is not None and p.regex]
    if not found:
        return re.compile(r"(?!)")
    # The folder mark's named group may appear once only: unnamed in the union.
    # (DOTALL as PathRules reads them: `.` stands for any character, a newline too.)
    return re.compile("|".join(f"(?:{x.replace('(?P<ps_d>', '(?:')})" for x in found), re.DOTALL)


def _outside_secret(real: Path) -> bool:
    """Whether a path outside the workspace is one the defaults would protect (a link's
    target such as `~/.ssh` or `~/.aws/credentials`)."""
    rules = PathRules(Path("/"), files=[PatternList("defaults", DEFAULT_PATTERNS)])
    return rules.matches(real.as_posix().lstrip("/"), _is_dir(real))


def _is_dir(path: Path) -> bool:
    try:
        return stat.S_ISDIR(os.stat(path, follow_symlinks=False).st_mode)
    except OSError:
        return False


def protected_message(path: str) -> str:
    return PROTECTED_MESSAGE.format(path=path)
