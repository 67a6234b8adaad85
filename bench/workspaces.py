"""Temporary workspaces for the benchmarks: small projects, large trees, big files."""

from __future__ import annotations

import random
from pathlib import Path

_WORDS = (
    "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho "
    "sigma tau upsilon phi chi psi omega"
).split()


def python_module(index: int, lines: int, rng: random.Random) -> str:
    """Plausible Python source of about ``lines`` lines."""
    out = [f'"""Module {index}: generated for the Plansight benchmarks."""', "", "import os", ""]
    function = 0
    while len(out) < lines:
        function += 1
        word = rng.choice(_WORDS)
        out.append(f"def {word}_{index}_{function}(value: int) -> int:")
        out.append(f'    """Return {word} of value (step {function})."""')
        out.append(f"    total = value * {rng.randint(2, 99)} + {rng.randint(0, 999)}")
        out.append(f"    return total % {rng.randint(7, 97)}  # {rng.choice(_WORDS)}")
        out.append("")
    return "\n".join(out[:lines]) + "\n"


def small_project(root: Path, files: int = 20, lines: int = 30) -> list[str]:
    """``files`` small modules under src/; returns their relative paths."""
    rng = random.Random(1)
    (root / "src").mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(files):
        rel = f"src/mod_{i:02d}.py"
        (root / rel).write_text(python_module(i, lines, rng), encoding="utf-8")
        paths.append(rel)
    (root / "README.md").write_text("# bench project\n\nSmall modules to read.\n")
    return paths


def large_tree(root: Path, files: int, per_dir: int = 100, needle_every: int = 9973) -> int:
    """A tree of ``files`` small Python files in folders of ``per_dir``, plus an ignored
    ``build/`` folder (in .gitignore) of 5 % more. Every file imports os; every
    ``needle_every``-th holds ``NEEDLE_42``. Returns how many files were written."""
    rng = random.Random(2)
    written = 0
    (root / ".gitignore").write_text("build/\n*.log\n")
    body_cache = [python_module(i, 24, rng) for i in range(64)]
    for i in range(files):
        folder = root / f"pkg_{i // per_dir // 50:02d}" / f"sub_{i // per_dir:04d}"
        if i % per_dir == 0:
            folder.mkdir(parents=True, exist_ok=True)
        text = body_cache[i % len(body_cache)]
        if i % needle_every == 0:
            text += "NEEDLE_42 = True\n"
        suffix = ".py" if i % 4 else ".txt"
        (folder / f"file_{i:06d}{suffix}").write_text(text)
        written += 1
    ignored = root / "build"
    ignored.mkdir(exist_ok=True)
    for i in range(files // 20):
        (ignored / f"gen_{i:05d}.py").write_text("import os\nNEEDLE_42 = False\n")
        written += 1
    return written


def big_file(path: Path, lines: int = 5000) -> None:
    """A source file of ``lines`` lines (about 40 characters each)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(python_module(999, lines, random.Random(3)), encoding="utf-8")
