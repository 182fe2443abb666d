"""A path of the run store → created (or left) owner-only: folders 0700, files 0600.

The store holds every prompt, reply, tool result and input of a project's runs, and chats hold whole
conversations: nobody else on the machine should read them. Existing folders and files are narrowed too when
they are plait's own (the journal, its segments, chats), so a store made by an older plait is fixed when next used.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["private_dir", "private_file"]


def private_dir(path: Path) -> None:
    """`path` and the parents this makes, 0700; `path` itself narrowed to 0700 when it exists and is ours."""
    missing = []
    for folder in (path, *path.parents):
        if folder.exists():
            break
        missing.append(folder)
    for folder in reversed(missing):
        try:
            folder.mkdir(mode=0o700)
        except FileExistsError:  # another process made it first
            pass
    _narrow(path, 0o700)


def private_file(path: Path) -> None:
    """`path` created empty 0600 when absent (so a database opened on it keeps that mode), narrowed when present."""
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    except FileExistsError:
        _narrow(path, 0o600)


def _narrow(path: Path, mode: int) -> None:
    try:
        info = path.stat()
        if info.st_uid == os.getuid() and info.st_mode & 0o777 & ~mode:
            os.chmod(path, info.st_mode & mode & 0o777)
    except OSError:  # not ours to change (a shared folder, a read-only mount): leave it as it is
        pass
