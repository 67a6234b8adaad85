"""The sandbox the agent's commands run in (bubblewrap), and the environment they get.

What can be made here is found once per `CommandSandbox` (`availability`): Linux, the `bwrap`
program on `PATH`, and user namespaces that work (one `bwrap ... true`). For each command
`argv` then builds bwrap's arguments without starting any other process: the whole file system
read-only (`--ro-bind / /`), a fresh `/dev` and `/proc`, a private `/tmp` (also `TMPDIR`),
the workspace (and its repository where its `.git` is a file pointing elsewhere: a linked
worktree, a submodule) and the `writable` paths writable (bound after the `/tmp` mount, so
that a workspace under /tmp stays visible), Plansight's storage hidden behind an empty tmpfs, the
protected files behind `/dev/null` and protected folders behind an empty tmpfs
(workspace/secrets.py; the home folder's `.ssh`, `.aws` ... too), its own process namespace
(nothing outlives the command: when its first process ends, the kernel ends the rest) and,
unless `network`, its own network namespace (no network, not even the host's loopback).
bwrap dies with its parent (`--die-with-parent`), so a killed server leaves nothing behind.

`command_env` is every command's environment, sandboxed or not: ours without the secrets
(`ANTHROPIC_*`, and names containing KEY, TOKEN, SECRET, PASSWORD or CREDENTIAL).
"""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from plansight.engine.hooks import SandboxDescription
from plansight.workspace.secrets import ProtectedPaths, home_secrets

log = logging.getLogger(__name__)

SandboxMode = bool | Literal["auto"]
SANDBOX_NOTE = "[ran in a sandbox"  # how the result line begins
DETECT_TIMEOUT = 10.0
SECRET_NAME_PARTS = ("KEY", "TOKEN", "SECRET", "PASSWORD", "CREDENTIAL")
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
    return upper.startswith("ANTHROPIC_") or any(part in upper for part in SECRET_NAME_PARTS)


def command_env(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """A command's environment: `base` (ours) without the secret variables, no pager."""
    source = os.environ if base is None else base
    env = {k: v for k, v in source.items() if not is_secret_name(k)}
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
        real = Path(os.path.realpath(entry))
        if not real.is_dir() or real == PRIVATE_TMP or not real.is_relative_to(PRIVATE_TMP):
            continue
        if real.name == "bin" and (real.parent / "pyvenv.cfg").exists():
            real = real.parent
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
        self.protected = protected
        self.hidden = tuple(Path(os.path.realpath(p)) for p in hidden)
        self._path = path
        self._found: Availability | None = None
        self._lock = threading.Lock()
        self._writable = self._existing_writable()
        self._writable += self._git_dirs()
        self._tools = tuple(p for p in tools_in_tmp() if not self.root.is_relative_to(p))

    def _existing_writable(self) -> tuple[Path, ...]:
        kept: list[Path] = []
        for raw in self.options.writable:
            path = Path(os.path.realpath(raw))
            if not path.exists():
                log.warning("sandbox.writable: %s does not exist, so commands cannot write it", raw)
                continue
            if path != self.root and path not in kept:
                kept.append(path)
        return tuple(kept)

    def _git_dirs(self) -> tuple[Path, ...]:
        """Where the workspace's repository lives when its `.git` is a file pointing elsewhere
        (a linked worktree, a submodule): writable too, so that `git commit` works."""
        dot_git = self.root / ".git"
        try:
            first = dot_git.read_text(errors="replace").splitlines()[0]
        except (OSError, IndexError):
            return ()  # a folder (inside the workspace already), or no repository
        if not first.startswith("gitdir:"):
            return ()
        git_dir = Path(os.path.realpath(self.root / first.removeprefix("gitdir:").strip()))
        found = [git_dir]
        try:
            common = (git_dir / "commondir").read_text(errors="replace").strip()
            found.insert(0, Path(os.path.realpath(git_dir / common)))  # the outer one first
        except OSError:
            pass
        return tuple(
            p
            for p in dict.fromkeys(found)
            if p.is_dir() and not p.is_relative_to(self.root) and p not in self._writable
        )

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
        made."""
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
            command, network=True, visible=shown, writable=(home,) if home is not None else ()
        )

    def argv(
        self,
        command: Sequence[str],
        *,
        network: bool | None = None,
        visible: Sequence[Path] = (),
        writable: Sequence[Path] = (),
    ) -> list[str]:
        """bwrap's command line running `command` sandboxed (only when `description()` is
        not None); `network`: None for the option's; `writable`: more folders it may write,
        even inside the hidden ones (an MCP server's home in the storage). Stats the protected
        files; starts no process."""
        found = self.availability()
        assert found.available
        args = [found.bwrap, *READ_ONLY_SYSTEM]
        for shown in (*self._tools, *visible):  # read-only in the private /tmp
            args += ["--ro-bind", str(shown), str(shown)]
        for path in (self.root, *self._writable):
            args += ["--bind", str(path), str(path)]
        for folder in self.hidden:
            if folder.exists() and not self.root.is_relative_to(folder):
                args += ["--tmpfs", str(folder)]
        files, folders = self._secrets()
        for file in files:
            args += ["--ro-bind", os.devnull, str(file)]
        for folder in folders:
            args += ["--tmpfs", str(folder), "--remount-ro", str(folder)]
        for path in writable:  # after the hiding: bound over it
            args += ["--bind", str(path), str(path)]
        args += ["--unshare-pid", "--die-with-parent", "--setenv", "TMPDIR", "/tmp"]
        if not (self.options.network if network is None else network):
            args.append("--unshare-net")
        args += ["--chdir", str(self.root), "--", *command]
        return args

    def _secrets(self) -> tuple[list[Path], list[Path]]:
        if self.protected is None:
            return [], []
        files, folders = self.protected.files_to_hide()
        if self.protected.options.defaults:
            home = Path(os.path.expanduser("~"))
            if home.is_dir() and not self.root.is_relative_to(home / ".ssh"):
                more_files, more_folders = home_secrets(home)
                files += [f for f in more_files if f not in files]
                folders += [f for f in more_folders if f not in folders]
        return files, folders
