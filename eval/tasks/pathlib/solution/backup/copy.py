"""Copying files into the backup folder, each under a stamped name."""

import shutil
from pathlib import Path

from backup.paths import backup_name, ensure_dir
from backup.scan import find_files


def back_up(source, target, stamp, suffixes=None):
    """Copy the files of source into target with stamped names; the relative Paths copied."""
    source, target = Path(source), Path(target)
    copied = []
    for relative in find_files(source, suffixes):
        destination = target / backup_name(relative, stamp)
        ensure_dir(destination.parent)
        if destination.exists():
            continue
        shutil.copy2(source / relative, destination)
        copied.append(relative)
    return copied
