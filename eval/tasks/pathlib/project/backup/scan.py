"""Finding the files to back up."""

import os


def find_files(root, suffixes=None):
    """Files under root (relative paths, sorted), only those with the given suffixes if any."""
    found = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for name in files:
            if suffixes and os.path.splitext(name)[1] not in suffixes:
                continue
            found.append(os.path.relpath(os.path.join(folder, name), root))
    return sorted(found)
