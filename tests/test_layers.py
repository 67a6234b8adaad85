"""The package's layers, read from its imports: every part of the package has a layer
(`LAYERS`, bottom first), and no import runs back up (a part imports its own layer and those
below). Front doors (lsp, acp) and clients (cli) sit on top of the session and the engine, so a
front door is a thin adapter over `plansight.session`, needing no code of another one.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "server" / "plansight"

# What each part of the package may import of the others (besides itself and `plansight`).
FRONT_DOORS = {"lsp", "acp"}
CLIENTS = {"cli"}
BELOW_THE_FRONT_DOORS = (
    "engine",
    "plan",
    "workspace",
    "session",
    "tools",
    "checkpoints",
    "mcp",
    "parallel",
)
# Every part's layer, bottom first. Parts in one layer may import each other: the engine's loop
# runs the tools, and the tools report through the engine's events and hooks.
LAYERS: tuple[frozenset[str], ...] = tuple(
    frozenset(layer)
    for layer in (
        {"__version__", "protocol", "httpserve"},  # the wire, engine-free
        {"plan", "fakeapi"},
        {"workspace"},  # the user's folder: paths, secrets, the sandbox, the watcher
        {"engine", "tools"},  # the agent: its loop and its tools
        {"checkpoints", "mcp"},
        {"session"},  # one session API, with everything it wires together
        {"parallel"},  # plan items run by workers, each a session of its own
        {"lsp", "acp"},  # the front doors
        {"cli"},  # the terminal client (an LSP client)
        {"eval"},  # the eval kit drives the terminal client's pieces
        {"__main__"},
    )
)


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path) -> Iterator[str]:
    """Every `plansight...` module a file imports, at any depth (function-level too)."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module.startswith("plansight"):
                yield node.module
                for alias in node.names:
                    yield f"{node.module}.{alias.name}"
        elif isinstance(node, ast.Import):
            yield from (a.name for a in node.names if a.name.startswith("plansight"))


def part_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


@functools.cache
def imports_by_part() -> dict[str, set[tuple[str, str]]]:
    found: dict[str, set[tuple[str, str]]] = {}
    for path in PACKAGE.rglob("*.py"):
        importer = module_name(path)
        for imported in imports_of(path):
            found.setdefault(part_of(importer), set()).add((importer, imported))
    return found


@pytest.mark.parametrize("part", BELOW_THE_FRONT_DOORS)
def test_nothing_below_the_front_doors_imports_them_or_the_clients(part: str) -> None:
    wrong = sorted(
        f"{importer} imports {imported}"
        for importer, imported in imports_by_part().get(part, set())
        if part_of(imported) in FRONT_DOORS | CLIENTS
    )
    assert wrong == []


def layer_of(part: str) -> int:
    return next(i for i, layer in enumerate(LAYERS) if part in layer)


def test_every_part_of_the_package_has_a_layer() -> None:
    parts = {
        module_name(path).split(".")[1]
        for path in PACKAGE.rglob("*.py")
        if path.parent != PACKAGE or path.stem != "__init__"
    }
    assert parts <= set().union(*LAYERS), sorted(parts - set().union(*LAYERS))


def test_no_import_runs_back_up_the_layers() -> None:
    wrong = sorted(
        f"{importer} imports {imported}"
        for part, pairs in imports_by_part().items()
        if part
        for importer, imported in pairs
        if part_of(imported) and layer_of(part_of(imported)) > layer_of(part)
    )
    assert wrong == []


def test_only_the_entry_point_imports_a_front_door() -> None:
    wrong = sorted(
        f"{importer} imports {imported}"
        for part, pairs in imports_by_part().items()
        if part not in FRONT_DOORS | {"__main__"}
        for importer, imported in pairs
        if part_of(imported) in FRONT_DOORS
    )
    assert wrong == []


def test_the_layer_check_sees_a_wrong_import(tmp_path: Path) -> None:
    # The check reads real source: a file that imports the LSP layer is found.
    sample = tmp_path / "sample.py"
    sample.write_text("def f():\n    from plansight.lsp.server import create_server\n")
    assert "plansight.lsp.server" in set(imports_of(sample))
    assert part_of("plansight.lsp.server") in FRONT_DOORS
    assert layer_of(part_of("plansight.lsp.server")) > layer_of("session")
