"""The evaluation tasks: one folder per task under `eval/tasks/<name>/`.

A task folder holds

- `task.toml`: `title`, `prompt` (the request as a user would type it), `steps` (the distinct
  steps a correct solution takes, at least `MIN_STEPS`; documentation for readers and a check
  on the task's size), and optionally `optional` (files of the reference solution whose change
  the checks do not require, see `changed_paths`), `max_rounds`, and `checks`, when the
  checks are the project's own tests (below);
- `project/`: the untouched project, copied into a fresh temporary folder for each attempt;
- `solution/`: the whole project as a correct solution (the reference; never shown to the
  agent);
- `checks/`: pytest files run against the folder the agent left, after the attempt, from a
  copy outside it (see `plansight.eval.checks`); or, instead of that folder, `checks` in
  `task.toml`: a pytest command line of the project's own tests (`checks = "pytest
  tests/test_x.py"`), run in a copy of the folder the agent left with the test files it names
  taken from `solution/` (a task brought from another suite, or a real bug of one's own
  repository: the tests that must pass).

Nothing here runs the agent; the loader only reads and validates.
"""

from __future__ import annotations

import filecmp
import shlex
import shutil
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MIN_STEPS = 5
TASK_FILE = "task.toml"
# Left out when copying or comparing a project: caches a test run leaves behind.
IGNORED_NAMES = frozenset({"__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache"})


class TaskError(ValueError):
    """A task folder is malformed: the message names the folder and what is wrong."""


@dataclass(frozen=True)
class Task:
    name: str
    root: Path
    title: str
    prompt: str
    steps: tuple[str, ...]
    optional: tuple[str, ...] = ()
    max_rounds: int | None = None
    # `checks = "pytest ..."`: pytest's arguments (the project's own tests), else None.
    checks_command: tuple[str, ...] | None = None

    @property
    def check_paths(self) -> tuple[str, ...]:
        """The test files or folders `checks_command` names (`tests/test_x.py::test_y` gives
        `tests/test_x.py`): taken from the solution when the checks run."""
        if self.checks_command is None:
            return ()
        return tuple(
            arg.split("::", 1)[0].rstrip("/")
            for arg in self.checks_command
            if not arg.startswith("-") and arg.split("::", 1)[0]
        )

    def is_check_path(self, path: str) -> bool:
        return any(path == own or path.startswith(own + "/") for own in self.check_paths)

    @property
    def project_dir(self) -> Path:
        return self.root / "project"

    @property
    def solution_dir(self) -> Path:
        return self.root / "solution"

    @property
    def checks_dir(self) -> Path:
        return self.root / "checks"


def default_tasks_dir() -> Path:
    """`eval/tasks/` of the repository this package was installed from (editable install)."""
    return Path(__file__).resolve().parents[3] / "eval" / "tasks"


def load_task(root: Path) -> Task:
    """Read and validate one task folder."""
    where = f"task {root.name!r} ({root})"
    spec_path = root / TASK_FILE
    if not spec_path.is_file():
        raise TaskError(f"{where}: no {TASK_FILE}")
    try:
        spec: dict[str, Any] = tomllib.loads(spec_path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as err:
        raise TaskError(f"{where}: {TASK_FILE} is not valid TOML: {err}") from None
    unknown = set(spec) - {"title", "prompt", "steps", "optional", "max_rounds", "checks"}
    if unknown:
        raise TaskError(f"{where}: unknown keys in {TASK_FILE}: {sorted(unknown)}")
    title = spec.get("title")
    prompt = spec.get("prompt")
    steps = spec.get("steps")
    optional = spec.get("optional", [])
    max_rounds = spec.get("max_rounds")
    if not isinstance(title, str) or not title.strip():
        raise TaskError(f"{where}: 'title' must be a non-empty string")
    if not isinstance(prompt, str) or not prompt.strip():
        raise TaskError(f"{where}: 'prompt' must be a non-empty string")
    if not isinstance(steps, list) or not all(isinstance(s, str) and s.strip() for s in steps):
        raise TaskError(f"{where}: 'steps' must be a list of non-empty strings")
    if len(steps) < MIN_STEPS:
        raise TaskError(f"{where}: a task needs at least {MIN_STEPS} steps, it lists {len(steps)}")
    if not isinstance(optional, list) or not all(isinstance(p, str) for p in optional):
        raise TaskError(f"{where}: 'optional' must be a list of paths")
    if max_rounds is not None and (
        isinstance(max_rounds, bool) or not isinstance(max_rounds, int) or max_rounds < 1
    ):
        raise TaskError(f"{where}: 'max_rounds' must be a positive whole number")
    command = _checks_command(spec.get("checks"), where)
    for part in (
        ("project", "solution") if command is not None else ("project", "solution", "checks")
    ):
        if not (root / part).is_dir():
            raise TaskError(f"{where}: no {part}/ folder")
    if command is not None:
        if (root / "checks").exists():
            raise TaskError(
                f"{where}: give checks/ or 'checks' in {TASK_FILE}, not both (which would judge?)"
            )
    elif not any((root / "checks").glob("test_*.py")):
        raise TaskError(f"{where}: checks/ holds no test_*.py file")
    task = Task(
        name=root.name,
        root=root.resolve(),
        title=title.strip(),
        prompt=prompt.strip(),
        steps=tuple(s.strip() for s in steps),
        optional=tuple(optional),
        max_rounds=max_rounds,
        checks_command=command,
    )
    for path in task.check_paths:
        if Path(path).is_absolute() or ".." in Path(path).parts:
            raise TaskError(f"{where}: 'checks' names {path!r}, outside the project")
    return task


def _checks_command(value: Any, where: str) -> tuple[str, ...] | None:
    """`checks = "pytest tests/test_x.py"` as pytest's arguments (`python -m pytest` is
    accepted too); None without it."""
    if value is None:
        return None
    rule = f"{where}: 'checks' must be a pytest command line such as \"pytest tests/test_x.py\""
    if not isinstance(value, str):
        raise TaskError(rule)
    try:
        words = shlex.split(value)
    except ValueError as err:
        raise TaskError(f"{rule} ({err})") from None
    if words[:3] == ["python", "-m", "pytest"]:
        words = ["pytest", *words[3:]]
    if not words or words[0] != "pytest":
        raise TaskError(rule)
    return tuple(words[1:])


def load_tasks(tasks_dir: Path, names: list[str] | None = None) -> list[Task]:
    """Every task under `tasks_dir`, by name; with `names`, those tasks in that order."""
    if not tasks_dir.is_dir():
        raise TaskError(f"no tasks folder at {tasks_dir}")
    available = sorted(p.name for p in tasks_dir.iterdir() if (p / TASK_FILE).is_file())
    if names is None:
        return [load_task(tasks_dir / name) for name in available]
    missing = [name for name in names if name not in available]
    if missing:
        raise TaskError(f"unknown task(s): {', '.join(missing)}; available: {', '.join(available)}")
    return [load_task(tasks_dir / name) for name in dict.fromkeys(names)]


def _ignore(_folder: str, names: list[str]) -> set[str]:
    return {name for name in names if name in IGNORED_NAMES}


def copy_tree(source: Path, target: Path) -> Path:
    """Copy a project (without caches) into `target`, which must not exist yet."""
    shutil.copytree(source, target, ignore=_ignore, symlinks=True)
    return target


def project_files(root: Path) -> set[str]:
    """Relative paths (with `/`) of the files of a project, caches left out."""
    found: set[str] = set()
    for path in root.rglob("*"):
        relative = path.relative_to(root)
        if any(part in IGNORED_NAMES for part in relative.parts) or not path.is_file():
            continue
        found.add(relative.as_posix())
    return found


def changed_paths(before: Path, after: Path) -> list[str]:
    """Files added, removed or changed from `before` to `after`, sorted."""
    old, new = project_files(before), project_files(after)
    changed = old ^ new
    for common in old & new:
        if not filecmp.cmp(before / common, after / common, shallow=False):
            changed.add(common)
    return sorted(changed)


def revert_one(task: Task, path: str, target: Path) -> Path:
    """The reference solution with one changed file put back as the project has it (or
    removed, when the project has no such file): a solution with one step left undone."""
    copy_tree(task.solution_dir, target)
    original = task.project_dir / path
    reverted = target / path
    if original.is_file():
        reverted.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(original, reverted)
    else:
        reverted.unlink()
    return target
