"""Names of backup files."""

import os


def backup_name(path, stamp):
    """'notes/todo.txt', '20240101' -> 'notes/todo.20240101.txt'."""
    folder = os.path.dirname(path)
    base, ext = os.path.splitext(os.path.basename(path))
    return os.path.join(folder, f"{base}.{stamp}{ext}")


def ensure_dir(path):
    if not os.path.isdir(path):
        os.makedirs(path)
    return path
