"""A `plait.lock` beside a spec → its `Lock`, or the reason it cannot be used (check_mcp and check_models read it).

Imported only when a lock is there: a spec without one loads no lock reader
(nor its JSON codec).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from plait.core.mcp_lock import Lock


def read_lock(path: Path, root: Path | None) -> Lock | str | None:
    """The lock at `path`; None when there is none (a dangling symlink included); a message when it is a link out
    of `root` (the spec's directory), too big, unreadable or not a lock."""
    from plait.core.mcp_lock import LockError, loads
    from plait.core.paths import MAX_DATA_BYTES, UnreadableFile, outside_root, read_regular

    if not os.path.lexists(path):
        return None
    if root is not None and outside_root(path, root):
        return "leaves the spec's directory (a symlink out); a lock must be a file beside the spec"
    try:
        text = read_regular(path, MAX_DATA_BYTES).decode("utf-8")
    except FileNotFoundError:
        return None  # a dangling symlink
    except UnreadableFile as exc:
        return str(exc)
    except (OSError, UnicodeDecodeError) as exc:
        return f"cannot be read ({getattr(exc, 'strerror', None) or exc})"
    try:
        return loads(text)
    except LockError as exc:
        return str(exc)
