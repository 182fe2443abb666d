"""A command on a pseudo-terminal → its screen output, read up to a pattern: terminal tests synchronise on output."""

from __future__ import annotations

import os
import pty
import re
import select

#: Colours and cursor moves, taken out before matching what the screen says.
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


class Terminal:
    """A child process on a pseudo-terminal; `until` reads its screen output up to a pattern."""

    def __init__(self, argv, cwd, env):
        self.pid, self.fd = pty.fork()
        if self.pid == 0:  # the child: becomes the command
            os.chdir(cwd)
            os.execve(argv[0], argv, env)
        self.seen = ""

    def until(self, pattern, guard=120.0):
        """Read until `pattern` (a regex) shows; `guard` only stops a hung test, it never paces one."""
        while not re.search(pattern, ANSI.sub("", self.seen)):
            ready, _, _ = select.select([self.fd], [], [], guard)
            assert ready, f"no {pattern!r} on the terminal; it showed: {self.seen[-2000:]!r}"
            try:
                chunk = os.read(self.fd, 65536)
            except OSError:  # the child closed the terminal
                chunk = b""
            assert chunk, f"the run ended without {pattern!r}; it showed: {self.seen[-2000:]!r}"
            self.seen += chunk.decode("utf-8", "replace")
        return ANSI.sub("", self.seen)

    def finish(self):
        while True:
            try:
                chunk = os.read(self.fd, 65536)
            except OSError:
                break
            if not chunk:
                break
            self.seen += chunk.decode("utf-8", "replace")
        _, status = os.waitpid(self.pid, 0)
        os.close(self.fd)
        return os.waitstatus_to_exitcode(status), ANSI.sub("", self.seen)
