"""Copying files into the backup folder, each under a stamped name."""

import os
import shutil

from backup.paths import backup_name, ensure_dir
from backup.scan import find_files


def back_up(source, target, stamp, suffixes=None):
    """Copy the files of source into target with stamped names; the relative names copied."""
    copied = []
    for relative in find_files(source, suffixes):
        destination = os.path.join(target, backup_name(relative, stamp))
        ensure_dir(os.path.dirname(destination))
        if os.path.exists(destination):
            continue
        shutil.copy2(os.path.join(source, relative), destination)
        copied.append(relative)
    return copied
