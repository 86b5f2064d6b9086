"""Permission bits as a user meets them, even when the tests run as root (in a container, say), where
read-only and unreadable files read and write like any other.

``user_folder()`` gives a folder the user owns; inside ``as_user()`` the process acts as that user. As
root both mean the ``nobody`` account: the folder is made outside pytest's temporary tree (root-only) and
the effective user id is switched for the block.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

NOBODY = 65534
ROOT = hasattr(os, "geteuid") and os.geteuid() == 0


@contextmanager
def user_folder(tmp_path: Path) -> Iterator[Path]:
    if not ROOT:
        yield tmp_path
        return
    folder = Path(tempfile.mkdtemp(prefix="tightfit-user-"))
    os.chmod(folder, 0o755)
    os.chown(folder, NOBODY, NOBODY)
    try:
        yield folder
    finally:
        shutil.rmtree(folder)


@contextmanager
def as_user() -> Iterator[None]:
    if not ROOT:
        yield
        return
    os.seteuid(NOBODY)
    try:
        yield
    finally:
        os.seteuid(0)


def snapshot(path: Path) -> object:
    """What is at ``path`` (read as root, whatever its mode), to check that nothing was changed there."""
    if path.is_symlink():
        return ("link", os.readlink(path))
    if path.is_dir():
        return ("folder", sorted(p.name for p in path.iterdir()))
    if path.is_fifo():
        return "fifo"
    return ("file", path.read_bytes()) if path.exists() else None
