"""Finding the files to back up."""

from pathlib import Path


def find_files(root, suffixes=None):
    """Files under root (relative Paths, sorted), only those with the given suffixes if any."""
    root = Path(root)
    found = []
    for path in root.rglob("*"):
        relative = path.relative_to(root)
        if any(part.startswith(".") for part in relative.parts[:-1]) or not path.is_file():
            continue
        if suffixes and path.suffix not in suffixes:
            continue
        found.append(relative)
    return sorted(found)
