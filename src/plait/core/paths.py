"""A path a spec names, or an id a user types → the file plait may read, or the reason it may not.

Shared by the compiler (`plait check` reading a scripted model's replies) and
the runtime (the scripted provider, the fake server, `--resume`): the same
rule holds at check time and at run time. A spec names files inside its own
folder only, as imports do (no `../`, no absolute path, no symlink out), and
only regular files are read, never more than a cap: `/dev/zero`, `/dev/urandom`
or a FIFO are refused at once instead of filling memory or blocking forever.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from pathlib import Path

__all__ = ["MAX_DATA_BYTES", "UnreadableFile", "outside_root", "read_inside", "read_regular", "run_id_problem"]

#: The cap on a data file a spec names (a replies script): the same as on a spec itself.
MAX_DATA_BYTES = 8 * 1024 * 1024


class UnreadableFile(OSError):
    """A file plait refuses to read; the message completes "script `x` ..." ("is not a regular file")."""


def outside_root(path: str | os.PathLike[str], root: str | os.PathLike[str]) -> bool:
    """True when `path`, with every symlink resolved, is not inside `root` (also resolved)."""
    try:
        resolved = Path(path).resolve()
        base = Path(root).resolve()
    except (OSError, ValueError, RuntimeError):
        return True  # a symlink loop or a name the OS cannot hold is not provably inside
    return not resolved.is_relative_to(base)


def read_regular(path: str | os.PathLike[str], limit: int = MAX_DATA_BYTES, *, follow: bool = True) -> bytes:
    """The bytes of a regular file of at most `limit` bytes; UnreadableFile (an OSError) otherwise.

    The file is opened without blocking (a FIFO with no writer would wait forever) and
    checked through the open descriptor, so it cannot be swapped between check and read.
    `follow=False` refuses a symlink as the last part of `path`.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    if not follow:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except ValueError:
        raise UnreadableFile("is not a valid file name") from None
    except OSError as exc:
        if not follow and exc.errno == errno.ELOOP:
            raise UnreadableFile("is a symlink") from None
        raise
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise UnreadableFile("is a directory")
        if not stat.S_ISREG(info.st_mode):
            raise UnreadableFile("is not a regular file")
        if info.st_size > limit:
            raise UnreadableFile(f"is larger than {_size(limit)}")
        os.set_blocking(fd, True)
        with os.fdopen(fd, "rb", closefd=True) as handle:
            fd = -1
            data = handle.read(limit + 1)  # the file may grow after fstat; the cap holds anyway
    finally:
        if fd >= 0:
            os.close(fd)
    if len(data) > limit:
        raise UnreadableFile(f"is larger than {_size(limit)}")
    return data


def read_inside(path: str | os.PathLike[str], root: str | os.PathLike[str], limit: int = MAX_DATA_BYTES) -> bytes:
    """`read_regular` of `path` (a relative one taken from `root`) if it lies inside `root`, symlinks resolved.

    The rule `plait check` applies to a file a spec names, applied again where the runtime opens it, so a
    program built without the compiler (a hand-made config or graph) is held to it too.
    """
    full = Path(root, path)
    if outside_root(full, root):
        raise UnreadableFile("leaves the spec's directory (no `../`, absolute path or symlink out)")
    # The checked, resolved path is opened, and not through a symlink: one swapped in after the check
    # cannot lead the open outside.
    return read_regular(full.resolve(), limit, follow=False)


def _size(limit: int) -> str:
    return f"{limit // (1024 * 1024)} MB" if limit >= 1024 * 1024 else f"{limit} bytes"


#: What `plait run` writes (20250101-120000-1a2b3c) and what a caller may choose: letters, digits, `-`, `_`, `.`.
_RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.\-]{0,127}")


def run_id_problem(run_id: str) -> str | None:
    """Why `run_id` cannot name a stored run (a path, empty, odd characters), or None when it can."""
    if not run_id:
        return "a run id is empty"
    if (
        "/" in run_id
        or "\\" in run_id
        or run_id in (".", "..")
        or run_id.endswith(".json")
        or Path(run_id).is_absolute()
    ):
        return (
            f"`{run_id[:80]}` is a path; --resume takes a run id (as `plait runs` lists them), and the store finds it"
        )
    if not _RUN_ID.fullmatch(run_id) or ".." in run_id:
        return f"`{run_id[:80]}` is not a run id (letters, digits, `-`, `_` and `.`, up to 128)"
    return None
