"""The sandbox the agent's commands run in (bubblewrap), and the environment they get.

What can be made here is found once per `CommandSandbox` (`availability`): Linux, the `bwrap`
program on `PATH`, and user namespaces that work (one `bwrap ... true`). For each command
`argv` then builds bwrap's arguments without starting any other process (the mounts in this
order, each later one on top of the earlier):
- the whole file system read-only (`--ro-bind / /`), a fresh `/dev` and `/proc`, a private
  `/tmp` (also `TMPDIR`), and empty `/run`, `/var/run` and `$XDG_RUNTIME_DIR` (host sockets);
- the workspace and the user's `writable` paths writable (bound after the `/tmp` mount, so
  that a workspace under /tmp stays visible). Only the user widens this: a `.git` *file*
  (`gitdir: …`) makes nothing writable (PROTOCOL.md version 4: the boundary is set from
  outside it);
- the control files read-only (workspace/control.py), except what `git add`/`git commit`
  write in a `.git` folder: there only `config`, `hooks/`, `info/`, `commondir`,
  `config.worktree` and `modules/*/config|hooks` are. A control path of the root that is
  absent gets a read-only placeholder, so that a command cannot create it either: an empty
  read-only folder (for files' names too: git lists no empty folder), whose mount point bwrap
  makes on the host, removed again when the last command using it ends (`finished`);
- Plansight's storage and the user's credential folders (`home_secrets`) behind an empty
  tmpfs, the protected files and the targets of protected links behind `/dev/null`, protected
  folders behind an empty read-only tmpfs (workspace/secrets.py's `survey`), and the sockets
  and FIFOs found in the workspace and near the home folder behind `/dev/null`;
- no capabilities, even when the server runs as root (which bwrap would otherwise keep, and
  with them a command could unmount all of the above);
- its own IPC namespace (no System V IPC or POSIX message queue of the host), its own process
  namespace (nothing outlives the command: when its first process ends, the kernel ends the
  rest) and, unless `network`, its own network namespace (no network, not even the host's
  loopback or its abstract sockets). bwrap dies with its parent (`--die-with-parent`), so a
  killed server leaves nothing behind.

`command_env` is every command's environment, sandboxed or not: ours without the secrets
(`is_secret_name`: `ANTHROPIC_*`, names containing KEY, TOKEN, SECRET, PASSWORD, CREDENTIAL,
AUTH, PRIVATE or PASSWD or ending in _PAT or _DSN; and any value holding a URL with a
password).
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import shutil
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from plansight.workspace.control import (
    GIT_MODULE_READ_ONLY,
    GIT_READ_ONLY,
    GIT_READ_ONLY_ABSENT_FOLDERS,
    GIT_SWEPT,
    ROOT_CONTROL_ABSENT,
    ControlFiles,
)
from plansight.workspace.secrets import ProtectedPaths, Survey, home_secrets

log = logging.getLogger(__name__)

SandboxMode = bool | Literal["auto"]
SANDBOX_NOTE = "[ran in a sandbox"  # how the result line begins
DETECT_TIMEOUT = 10.0
SECRET_NAME_PARTS = (
    "KEY",
    "TOKEN",
    "SECRET",
    "PASSWORD",
    "CREDENTIAL",
    "AUTH",
    "PRIVATE",
    "PASSWD",
)
SECRET_NAME_ENDS = ("_PAT", "_DSN")
# A URL with a password (`postgres://user:pw@host/db`, `redis://:pw@host`) anywhere in a value.
PASSWORD_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^/\s:@]*:[^/\s@]+@")
# The host's folders of sockets (the session bus, Docker's, systemd's): empty in the sandbox.
RUNTIME_FOLDERS = ("/run", "/var/run")
# How deep below the home folder sockets and FIFOs are looked for (`~/.docker/run/docker.sock`).
HOME_CHANNEL_DEPTH = 3
RACY_NS = 50_000_000  # a folder's listing read this soon after it changed is read again
INSTALL_HINT = (
    "Install bubblewrap (Debian/Ubuntu: `sudo apt-get install bubblewrap`; Fedora: `sudo dnf "
    "install bubblewrap`; Arch: `sudo pacman -S bubblewrap`), make sure unprivileged user "
    "namespaces are allowed, and restart Plansight; or set the option sandbox.enabled to "
    '"auto" or false to run commands without a sandbox.'
)


@dataclass(frozen=True)
class SandboxOptions:
    """The `sandbox` option."""

    enabled: SandboxMode = "auto"
    network: bool = False
    writable: tuple[str, ...] = ()  # absolute paths


@dataclass(frozen=True)
class SandboxDescription:
    """What a sandboxed command may do (workspace/sandbox.py), as its approval shows it."""

    network: bool
    writable: tuple[str, ...]  # absolute paths, the workspace first

    def to_wire(self) -> dict[str, Any]:
        """`plansight/approveCommand`'s `sandbox`."""
        return {"network": self.network, "writable": list(self.writable)}


def result_line(allowed: SandboxDescription) -> str:
    """The line before a sandboxed command's exit status: what it could do, for the model."""
    others = ", ".join(allowed.writable[1:])
    where = "the workspace" + (f", {others}" if others else "")
    network = "with network access" if allowed.network else "no network (not even localhost)"
    return (
        f"{SANDBOX_NOTE}: it could write only {where} and a private /tmp (emptied after the "
        f"command), {network}, protected files unreadable, no process outlives it; if the task "
        "needs more, ask the user instead of retrying]"
    )


@dataclass(frozen=True)
class Availability:
    available: bool
    reason: str = ""  # why no sandbox can be made here
    bwrap: str = ""


def is_secret_name(name: str) -> bool:
    upper = name.upper()
    return (
        upper.startswith("ANTHROPIC_")
        or any(part in upper for part in SECRET_NAME_PARTS)
        or upper.endswith(SECRET_NAME_ENDS)
    )


def is_secret_value(value: str) -> bool:
    """Whether a variable's value gives a secret away whatever its name: a URL with a password."""
    return PASSWORD_URL.search(value) is not None


def command_env(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """A command's environment: `base` (ours) without the secret variables, no pager."""
    source = os.environ if base is None else base
    env = {k: v for k, v in source.items() if not is_secret_name(k) and not is_secret_value(v)}
    env.update({"PAGER": "cat", "GIT_PAGER": "cat"})
    return env


# Every command's view of the machine, the probe's too: all of it read-only, its own /dev and
# /proc, and an empty /tmp of its own.
READ_ONLY_SYSTEM = ("--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp")


PRIVATE_TMP = Path("/tmp")


def tools_in_tmp(path: str | None = None) -> tuple[Path, ...]:
    """The folders under /tmp that commands need although the sandbox's /tmp is private: the
    server's own Python environment and the `PATH` folders that live there (a checkout with its
    virtual environment under /tmp, as a CI runner may have it). Shown read-only; a `bin` folder
    of a virtual environment brings the whole environment (its `lib` is needed too)."""
    entries = [sys.prefix, *(path if path is not None else os.environ.get("PATH", "")).split(":")]
    found: list[Path] = []
    for entry in entries:
        if not entry:
            continue
        # A PATH folder this user may not enter (`/root/.cargo/bin` after `sudo -u`) makes
        # is_dir() raise rather than answer: such an entry is skipped, as the shell does.
        try:
            real = Path(os.path.realpath(entry))
            if not real.is_dir() or real == PRIVATE_TMP or not real.is_relative_to(PRIVATE_TMP):
                continue
            if real.name == "bin" and (real.parent / "pyvenv.cfg").exists():
                real = real.parent
        except OSError:
            continue
        if not any(real.is_relative_to(kept) for kept in found):
            found = [kept for kept in found if not kept.is_relative_to(real)] + [real]
    return tuple(found)


def _venv_of(path: Path) -> tuple[Path, ...]:
    """The virtual environment `path` is in (a folder with `pyvenv.cfg` above it), if any."""
    for parent in path.parents:
        if (parent / "pyvenv.cfg").is_file():
            return (parent,)
    return ()


def detect(path: str | None = None) -> Availability:
    """Whether a sandbox can be made here: blocks for one `bwrap ... true` (tens of ms)."""
    if not sys.platform.startswith("linux"):
        return Availability(False, f"the sandbox needs Linux (this is {sys.platform})")
    bwrap = shutil.which("bwrap", path=path)
    if bwrap is None:
        return Availability(False, "bubblewrap (the bwrap program) is not on PATH")
    probe = [
        bwrap,
        *READ_ONLY_SYSTEM,
        "--unshare-pid",
        "--unshare-net",
        "--die-with-parent",
        "true",
    ]
    try:
        done = subprocess.run(
            probe,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=DETECT_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.SubprocessError) as err:
        return Availability(False, f"bwrap could not be run ({err})")
    if done.returncode != 0:
        why = done.stderr.strip().splitlines()[-1:] or [f"exit code {done.returncode}"]
        return Availability(False, f"bwrap cannot make a sandbox here (user namespaces?): {why[0]}")
    return Availability(True, bwrap=bwrap)


class CommandSandbox:
    """How one workspace's commands run: sandboxed or not, and bwrap's arguments for each."""

    def __init__(
        self,
        root: Path,
        options: SandboxOptions | None = None,
        *,
        protected: ProtectedPaths | None = None,
        hidden: Sequence[Path] = (),
        path: str | None = None,
    ) -> None:
        """`hidden`: folders no command may see (Plansight's storage); `path`: where to look
        for bwrap (default: our PATH)."""
        self.root = Path(os.path.realpath(root))
        self.options = options or SandboxOptions()
        # Without rules of the session's own, Plansight's defaults still hide secret files.
        self.protected = protected if protected is not None else ProtectedPaths(self.root)
        self.control = ControlFiles(self.root, self.protected.options.control)
        self.hidden = tuple(Path(os.path.realpath(p)) for p in hidden)
        self._path = path
        self._found: Availability | None = None
        self._lock = threading.Lock()
        self._writable = self._existing_writable()
        self._tools = tuple(p for p in tools_in_tmp() if not self.root.is_relative_to(p))
        self._home_channels = _ChannelScan()
        # Placeholders bwrap made on the host for absent control paths, and how many commands
        # started since use them: removed when the last one ends (`finished`).
        self._placeholders: dict[Path, None] = {}
        self._swept: dict[Path, None] = {}  # files git would read, absent before a command
        self._running = 0

    def _existing_writable(self) -> tuple[Path, ...]:
        kept: list[Path] = []
        for raw in self.options.writable:
            path = Path(os.path.realpath(raw))
            if not os.path.exists(path):  # (False, not an error, where it may not look)
                log.warning("sandbox.writable: %s does not exist, so commands cannot write it", raw)
                continue
            if path != self.root and path not in kept:
                kept.append(path)
        return tuple(kept)

    def availability(self) -> Availability:
        """What can be made here, found on the first call (blocking: call it off the event
        loop); `auto` warns once when the answer is no."""
        with self._lock:
            if self._found is None:
                if self.options.enabled is False:
                    self._found = Availability(False, "the option sandbox.enabled is false")
                else:
                    self._found = detect(self._path)
                    if not self._found.available and self.options.enabled == "auto":
                        log.warning(
                            "commands run without a sandbox: %s. %s",
                            self._found.reason,
                            INSTALL_HINT,
                        )
            return self._found

    def refusal(self) -> str | None:
        """Why a command must not run at all (`enabled: true` without a sandbox), or None."""
        found = self.availability()
        if found.available or self.options.enabled is not True:
            return None
        return (
            "This command was not run: commands run only in a sandbox here (the option "
            f"sandbox.enabled is true), and none can be made: {found.reason}. Tell the user: "
            + INSTALL_HINT
        )

    def description(self) -> SandboxDescription | None:
        """What the next command may do, or None when it runs without a sandbox."""
        if not self.availability().available:
            return None
        return SandboxDescription(
            self.options.network, (str(self.root), *(str(p) for p in self._writable))
        )

    def server_argv(self, command: Sequence[str], home: Path | None = None) -> list[str]:
        """How an MCP server that a workspace file names is started: confined as a command is,
        but with the network (a server may need it) and its `home` writable (its caches, under
        Plansight's storage, which stays hidden otherwise); as it is where no sandbox can be
        made. (No placeholders at absent control paths: nothing tells when a server ends, and
        they would stay on the host while it runs.)"""
        if not self.availability().available:
            return list(command)
        # The files its command line names (its script, say) stay visible under /tmp too, as
        # named and where they lead; a virtual environment's Python (a link to the system's)
        # brings its whole environment, which it needs.
        shown: list[Path] = []
        for word in command:
            if not os.path.isabs(word) or not Path(word).exists():
                continue
            named = Path(os.path.abspath(word))
            for path in (*_venv_of(named), named, Path(os.path.realpath(word))):
                if not path.is_relative_to(PRIVATE_TMP) or path == PRIVATE_TMP:
                    continue
                if not any(path.is_relative_to(kept) for kept in shown):
                    shown = [kept for kept in shown if not kept.is_relative_to(path)] + [path]
        return self.argv(
            command,
            network=True,
            visible=shown,
            writable=(home,) if home is not None else (),
            placeholders=False,
        )

    def argv(
        self,
        command: Sequence[str],
        *,
        network: bool | None = None,
        visible: Sequence[Path] = (),
        writable: Sequence[Path] = (),
        placeholders: bool = True,
    ) -> list[str]:
        """bwrap's command line running `command` sandboxed (only when `description()` is
        not None); `network`: None for the option's; `writable`: more folders it may write,
        even inside the hidden ones (an MCP server's home in the storage). Walks the workspace
        (a stat per folder when little changed); starts no process. With `placeholders`, the
        caller calls `finished()` once the command has ended."""
        found = self.availability()
        assert found.available
        args = [found.bwrap, *READ_ONLY_SYSTEM]
        args += self._runtime_hidden()
        for shown in (*self._tools, *visible):  # read-only in the private /tmp
            args += ["--ro-bind", str(shown), str(shown)]
        # A root inside a hidden folder (a parallel worker's copy in Plansight's storage): the
        # folder is hidden first and the root bound into the empty tmpfs, so nothing else of
        # the storage (the sessions, the other workers' copies) is in sight.
        for folder in self.hidden:
            if self.root.is_relative_to(folder) and self.root != folder and os.path.isdir(folder):
                args += ["--tmpfs", str(folder)]
        for path in (self.root, *self._writable):
            args += ["--bind", str(path), str(path)]
        survey = self.protected.survey(self.control.matcher())
        args += self._control(survey, placeholders)
        for folder in self.hidden:
            if os.path.isdir(folder) and not self.root.is_relative_to(folder):
                args += ["--tmpfs", str(folder)]
        files, folders = self._secrets(survey)
        for file in files:
            args += ["--ro-bind", os.devnull, str(file)]
        for folder in folders:
            args += ["--tmpfs", str(folder), "--remount-ro", str(folder)]
        for path in writable:  # after the hiding: bound over it
            args += ["--bind", str(path), str(path)]
        args += [
            # Run by root, bwrap would keep every capability: a command could `umount` any
            # of the mounts above (and so write a control file or read a hidden secret).
            "--cap-drop",
            "ALL",
            "--unshare-ipc",
            "--unshare-pid",
            "--die-with-parent",
            "--setenv",
            "TMPDIR",
            "/tmp",
        ]
        if not (self.options.network if network is None else network):
            args.append("--unshare-net")
        args += ["--chdir", str(self.root), "--", *command]
        return args

    def _runtime_hidden(self) -> list[str]:
        """Empty tmpfs over the host's socket folders; /etc/resolv.conf stays readable where
        it points into one (systemd-resolved's stub), so that the network option still
        resolves names."""
        folders: list[Path] = []
        runtime = os.environ.get("XDG_RUNTIME_DIR", "")
        for raw in (*RUNTIME_FOLDERS, *([runtime] if os.path.isabs(runtime) else [])):
            real = Path(os.path.realpath(raw))
            if real != Path("/") and os.path.isdir(real) and real not in folders:
                folders.append(real)
        args: list[str] = []
        for folder in sorted(folders, key=lambda f: len(f.parts)):
            if not any(folder.is_relative_to(outer) for outer in folders if outer != folder):
                args += ["--tmpfs", str(folder)]
        resolv = Path(os.path.realpath("/etc/resolv.conf"))
        if os.path.isfile(resolv) and any(resolv.is_relative_to(f) for f in folders):
            args += ["--ro-bind", str(resolv), str(resolv)]
        return args

    def _control(self, survey: Survey, placeholders: bool) -> list[str]:
        """The control files read-only (see the module's docstring)."""
        args: list[str] = []
        for path, is_dir in survey.control:
            if is_dir and path.name == ".git":
                args += _git_folder(path)
            else:
                args += ["--ro-bind", str(path), str(path)]
        if not placeholders:
            return args
        made = [self.root / n for n in ROOT_CONTROL_ABSENT if not os.path.lexists(self.root / n)]
        dot_git = self.root / ".git"
        swept: list[Path] = []
        if dot_git.is_dir() and not dot_git.is_symlink():
            for name in GIT_READ_ONLY_ABSENT_FOLDERS:
                if not os.path.lexists(dot_git / name):
                    made.append(dot_git / name)
            # No placeholder can stand for these files (git fails on an empty or unreadable
            # one): one a command made is removed as it ends (`finished`).
            swept = [dot_git / n for n in GIT_SWEPT if not os.path.lexists(dot_git / n)]
        for path in made:
            args += ["--tmpfs", str(path), "--remount-ro", str(path)]
        with self._lock:
            self._running += 1
            self._placeholders.update(dict.fromkeys(made))
            self._swept.update(dict.fromkeys(swept))
        return args

    def finished(self) -> list[str]:
        """A command built by `argv` (with placeholders) ended: when no other one runs, the
        placeholders bwrap made on the host go, those still empty (what the user wrote there
        meanwhile stays). Not before: removing a mount point on the host while another
        sandbox holds it would unmount it there."""
        with self._lock:
            self._running = max(0, self._running - 1)
            swept = list(self._swept)
            if not self._running:
                self._swept = {}
        for path in swept:
            if os.path.lexists(path):
                log.warning("sandbox: a command made %s (git would read it as configuration)", path)
                if path.is_dir() and not path.is_symlink():
                    shutil.rmtree(path, ignore_errors=True)
                else:
                    with contextlib.suppress(OSError):
                        path.unlink()
        with self._lock:
            if self._running:
                return []
            made, self._placeholders = self._placeholders, {}
        removed: list[str] = []
        for path in sorted(made, key=lambda p: -len(p.parts)):  # `.git/hooks` before `.git`
            try:
                if stat.S_ISDIR(os.stat(path, follow_symlinks=False).st_mode):
                    os.rmdir(path)  # only if empty
                    removed.append(path.relative_to(self.root).as_posix())
            except (OSError, ValueError):
                continue
        return removed

    def _secrets(self, survey: Survey) -> tuple[list[Path], list[Path]]:
        """What is hidden besides the storage: files behind /dev/null, folders behind tmpfs."""
        files = [*survey.files, *survey.specials]
        folders = list(survey.folders)
        # A protected link's target is hidden where it is (a link itself cannot be mounted
        # on); under the private /tmp it is not there to hide.
        files += [t for t in survey.target_files if not t.is_relative_to(PRIVATE_TMP)]
        folders += [t for t in survey.target_folders if not t.is_relative_to(PRIVATE_TMP)]
        home = Path(os.path.expanduser("~"))
        config = os.environ.get("XDG_CONFIG_HOME", "")
        config_home = Path(config) if os.path.isabs(config) else home / ".config"
        if self.protected.options.defaults:
            more_files, more_folders = home_secrets(home, config_home)
        else:  # Plansight's own configuration (MCP tokens) stays hidden without the defaults
            more_files, more_folders = home_secrets(home, config_home, names=())
        files += more_files
        folders += [f for f in more_folders if not self.root.is_relative_to(f)]
        if not home.is_relative_to(PRIVATE_TMP) and home != Path("/"):
            files += self._home_channels.find(home, HOME_CHANNEL_DEPTH, skip=self.root)
        return list(dict.fromkeys(files)), list(dict.fromkeys(folders))


def _git_folder(dot_git: Path) -> list[str]:
    """A `.git` folder: what git reads as configuration or runs read-only (in submodules'
    folders under `modules/` too); its objects, index, refs, logs and HEAD, and the lock files
    git makes beside them, stay writable."""
    args: list[str] = []
    for name in GIT_READ_ONLY:
        if os.path.lexists(dot_git / name):
            args += ["--ro-bind", str(dot_git / name), str(dot_git / name)]
    pending = [dot_git / "modules"]
    while pending:
        try:
            modules = [e for e in os.scandir(pending.pop()) if e.is_dir(follow_symlinks=False)]
        except OSError:
            continue
        for module in modules:
            for name in GIT_MODULE_READ_ONLY:
                path = Path(module.path) / name
                if os.path.lexists(path):
                    args += ["--ro-bind", str(path), str(path)]
            pending.append(Path(module.path) / "modules")
    return args


class _ChannelScan:
    """Sockets and FIFOs near one folder (the home), found again only where a folder's
    modification time moved: listings kept per folder."""

    def __init__(self) -> None:
        self._kept: dict[str, tuple[int, tuple[str, ...], tuple[str, ...]]] = {}

    def find(self, top: Path, depth: int, *, skip: Path) -> list[Path]:
        kept, self._kept = self._kept, {}
        found: list[Path] = []
        pending = [(str(top), depth)]
        while pending:
            folder, left = pending.pop()
            try:
                mtime = os.stat(folder, follow_symlinks=False).st_mtime_ns
            except OSError:
                continue
            listing = kept.get(folder)
            if listing is None or listing[0] != mtime:
                listing = (mtime, *_channels_and_folders(folder))
            # (Not kept when read in the clock tick of a change: a second one would not show.)
            if time.time_ns() - mtime > RACY_NS:
                self._kept[folder] = listing
            found += [Path(folder, name) for name in listing[1]]
            if left > 1:
                pending += [
                    (sub, left - 1)
                    for name in listing[2]
                    if not Path(sub := os.path.join(folder, name)).is_relative_to(skip)
                ]
        return found


def _channels_and_folders(folder: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    channels: list[str] = []
    folders: list[str] = []
    try:
        with os.scandir(folder) as scan:
            for entry in scan:
                try:
                    if entry.is_dir(follow_symlinks=False):
                        folders.append(entry.name)
                    elif not entry.is_file(follow_symlinks=False) and not entry.is_symlink():
                        mode = entry.stat(follow_symlinks=False).st_mode
                        if stat.S_ISSOCK(mode) or stat.S_ISFIFO(mode):
                            channels.append(entry.name)
                except OSError:
                    continue
    except OSError:
        pass
    return tuple(channels), tuple(folders)
