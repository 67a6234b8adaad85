"""The pytest plugin a task's checks run with: the `project` fixture.

`plansight.eval.checks` runs `pytest -p plansight.eval.checkfixtures` on a copy of the task's
`checks/` folder, with `PLANSIGHT_EVAL_WORKSPACE` naming the folder the agent left. Checks
exercise that folder through `Project`:

- `project.module("name")` imports a module of the workspace afresh (nothing cached from a
  previous test), `project.run(...)` runs `python` there in a subprocess, `project.pytest()`
  runs the workspace's own tests;
- `project.copy(tmp_path)` and `Project.replace_body(...)` build mutants: a test suite the
  agent wrote must fail when a function it tests is broken;
- `project.read`, `project.exists`, `project.tree` and `project.syntax` look at files.

Check behaviour, not wording: a different but correct solution must pass.
"""

from __future__ import annotations

import ast
import importlib
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import pytest

WORKSPACE_ENV = "PLANSIGHT_EVAL_WORKSPACE"
IGNORED = frozenset({"__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache"})


@dataclass(frozen=True)
class TestRun:
    """What a run of the workspace's own tests showed."""

    returncode: int
    output: str
    passed: int
    failed: int
    errors: int

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and self.passed > 0 and not self.failed and not self.errors


def _count(pattern: str, text: str) -> int:
    found = re.findall(rf"(\d+) {pattern}", text)
    return int(found[-1]) if found else 0


class Project:
    """A project folder (the agent's result, or a copy made by a check)."""

    def __init__(self, path: Path) -> None:
        self.path = path.resolve()

    def __repr__(self) -> str:
        return f"Project({str(self.path)!r})"

    # Files ---------------------------------------------------------------------------
    def file(self, relative: str) -> Path:
        return self.path / relative

    def exists(self, relative: str) -> bool:
        return self.file(relative).exists()

    def read(self, relative: str) -> str:
        return self.file(relative).read_text(encoding="utf-8")

    def write(self, relative: str, text: str) -> None:
        target = self.file(relative)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")

    def tree(self, pattern: str = "**/*.py") -> list[str]:
        """Relative paths matching `pattern`, caches left out, sorted."""
        return sorted(
            p.relative_to(self.path).as_posix()
            for p in self.path.glob(pattern)
            if p.is_file() and not IGNORED.intersection(p.relative_to(self.path).parts)
        )

    def syntax(self, relative: str) -> ast.Module:
        return ast.parse(self.read(relative), filename=relative)

    def copy(self, target: Path) -> Project:
        """A copy of this project at `target` (which must not exist yet)."""
        shutil.copytree(self.path, target, ignore=shutil.ignore_patterns(*IGNORED))
        return Project(target)

    # Code ----------------------------------------------------------------------------
    def module(self, name: str) -> ModuleType:
        """Import `name` from this project. The `project` fixture forgets the project's
        modules before and after each test, so every test starts from fresh imports, and
        the modules a test imports see each other (one `Status` class, not two)."""
        top = name.partition(".")[0]
        loaded = sys.modules.get(top)
        if loaded is not None and not self._holds(loaded):
            self._forget(lambda key, _module: key == top or key.startswith(top + "."))
        root = str(self.path)
        if root in sys.path:
            sys.path.remove(root)
        sys.path.insert(0, root)
        importlib.invalidate_caches()
        return importlib.import_module(name)

    def forget_modules(self) -> None:
        """Drop every module imported from this project, so the next import is fresh."""
        self._forget(lambda _key, module: self._holds(module))

    def _holds(self, module: ModuleType) -> bool:
        origin = getattr(module, "__file__", None) or ""
        return origin.startswith(str(self.path) + os.sep)

    @staticmethod
    def _forget(which: Callable[[str, ModuleType], bool]) -> None:
        for key, loaded in list(sys.modules.items()):
            if loaded is not None and which(key, loaded):
                del sys.modules[key]

    def env(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
        env.pop(WORKSPACE_ENV, None)
        env["PYTHONPATH"] = str(self.path)
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        env["PYTHONIOENCODING"] = "utf-8"
        env.update(extra or {})
        return env

    def run(
        self,
        *args: str,
        input: str | None = None,
        env: Mapping[str, str] | None = None,
        cwd: Path | None = None,
        timeout: float = 60,
    ) -> subprocess.CompletedProcess[str]:
        """`python *args` in the project folder (or `cwd`); output captured as text."""
        return subprocess.run(
            [sys.executable, *args],
            cwd=cwd or self.path,
            input=input if input is not None else "",
            capture_output=True,
            text=True,
            env=self.env(env),
            timeout=timeout,
            check=False,
        )

    def pytest(self, *args: str, timeout: float = 180) -> TestRun:
        """The project's own tests (`python -m pytest -q`, its own configuration)."""
        result = self.run(
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            *args,
            env={"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"},
            timeout=timeout,
        )
        output = result.stdout + result.stderr
        return TestRun(
            returncode=result.returncode,
            output=output,
            passed=_count("passed", output),
            failed=_count("failed", output),
            errors=_count("errors?", output),
        )

    def replace_body(self, relative: str, function: str, body: str) -> None:
        """Replace the body of `function` (`name` or `Class.name`) in a file with `body`:
        a mutant for checking that tests catch a broken function. AssertionError when the
        file does not define it."""
        source = self.read(relative)
        node = _find_function(ast.parse(source), function)
        assert node is not None, f"{relative} defines no function {function!r}"
        lines = source.splitlines(keepends=True)
        first = node.body[0]
        indent = " " * first.col_offset
        start, end = first.lineno - 1, node.body[-1].end_lineno or first.lineno
        new_body = "".join(f"{indent}{line}\n" for line in body.splitlines())
        self.write(relative, "".join([*lines[:start], new_body, *lines[end:]]))


def _find_function(tree: ast.Module, dotted: str) -> ast.FunctionDef | None:
    scope: list[ast.stmt] = tree.body
    *owners, name = dotted.split(".")
    for owner in owners:
        classes = [n for n in scope if isinstance(n, ast.ClassDef) and n.name == owner]
        if not classes:
            return None
        scope = classes[0].body
    for node in scope:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return node
    return None


def module_functions(module: ModuleType) -> dict[str, object]:
    """The functions a module defines itself (not those it imports)."""
    import inspect

    return {
        name: value
        for name, value in vars(module).items()
        if inspect.isfunction(value) and value.__module__ == module.__name__
    }


def identifiers(tree: ast.AST) -> Iterator[str]:
    """Every name used or defined in a syntax tree (names, attributes, defs, imports)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            yield node.id
        elif isinstance(node, ast.Attribute):
            yield node.attr
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            yield node.name
        elif isinstance(node, ast.alias):
            yield node.asname or node.name
            yield node.name
        elif isinstance(node, ast.keyword) and node.arg:
            yield node.arg
        elif isinstance(node, ast.arg):
            yield node.arg


def pytest_configure(config: pytest.Config) -> None:
    if not os.environ.get(WORKSPACE_ENV):
        raise pytest.UsageError(f"{WORKSPACE_ENV} must name the folder to check")


@pytest.fixture
def project() -> Iterator[Project]:
    """The folder the agent left (checks must not change it: copy it first)."""
    workspace = Project(Path(os.environ[WORKSPACE_ENV]))
    workspace.forget_modules()
    yield workspace
    workspace.forget_modules()
