"""Names of backup files."""

from pathlib import Path


def backup_name(path, stamp):
    """'notes/todo.txt', '20240101' -> Path('notes/todo.20240101.txt')."""
    path = Path(path)
    return path.with_name(f"{path.stem}.{stamp}{path.suffix}")


def ensure_dir(path):
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    return path
