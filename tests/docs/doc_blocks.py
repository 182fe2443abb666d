"""A document's fenced blocks → files written and shell sessions replayed, as a reader would type them.

A ```console block is a shell session: `$ command` lines and what each prints. `Shell` replays them in one
bash process (so `cd`, variables and `$?` carry on from one command to the next, as at a terminal), with the
suite's `plait` first on the PATH. What a block shows must appear in what the command printed (stdout and
stderr, in the order written), line by line in order; lines the reader is not shown (progress) may sit between.
Run ids and times differ on every run: they are compared as shapes, and an id shown in an earlier output may be
typed in a later command, which then gets the real one.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path

_FENCE = re.compile(r"^```(\w*)\n(.*?)^```\n", re.S | re.M)
_MARK = re.compile(r"<!-- (file|not run): ?(.*?) -->\n*$")
#: What changes from run to run, and the shape it is compared as.
_VOLATILE = [
    (re.compile(r"\b\d{8}-\d{6}-[0-9a-f]{12}\b"), "RUN-ID"),
    (re.compile(r"\b\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\b"), "TIME"),
    (re.compile(r"\bbatch-[0-9a-f]{10}(?:-[0-9a-f]{8})?\b"), "BATCH-ID"),
    (re.compile(r"\bin \d+\.\d+s\b"), "in SECONDS"),  # `plait test`'s summary: how long the tests took
    (re.compile(r"^(\s*)\d+\.\d{3}s\b"), r"\1SECONDS"),  # `plait trace`: a moment's time since the run started
    (re.compile(r"\b\d+ ms\b"), "N ms"),  # `plait trace`: how long a call took
]
#: Ids a later command may type: learnt from where the document shows them.
_IDS = (_VOLATILE[0][0], _VOLATILE[2][0])


@dataclass(frozen=True)
class Block:
    """One fenced block: its language, text, and the marker comment just above it (`file: NAME`, `not run: why`)."""

    lang: str
    text: str
    mark: str  # "file", "not run" or ""
    detail: str
    line: int


def blocks(path: Path) -> list[Block]:
    source = path.read_text(encoding="utf-8")
    out = []
    for match in _FENCE.finditer(source):
        before = source[: match.start()]
        mark = _MARK.search(before[-300:])
        out.append(
            Block(
                match.group(1),
                match.group(2),
                mark.group(1) if mark else "",
                mark.group(2).strip() if mark else "",
                before.count("\n") + 1,
            )
        )
    return out


def session(text: str) -> list[tuple[str, list[str]]]:
    """A console block → (command, the lines it shows)."""
    steps: list[tuple[str, list[str]]] = []
    for line in text.splitlines():
        if line.startswith("$ "):
            steps.append((line[2:], []))
        else:
            assert steps, f"a console block starts with output, not a `$ ` command: {line!r}"
            steps[-1][1].append(line)
    return steps


def shape(line: str) -> str:
    for pattern, name in _VOLATILE:
        line = pattern.sub(name, line)
    return " ".join(line.split())


class Shell:
    """One bash process in `folder`, fed one command at a time."""

    def __init__(self, folder: Path) -> None:
        env = {
            **os.environ,
            "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]),
            "PYTHONUNBUFFERED": "1",  # stdout and stderr reach the pipe in the order they are written
            "NO_COLOR": "1",
        }
        for name in ("PLAIT_STORE", "PYTHONPATH"):
            env.pop(name, None)
        self._proc = subprocess.Popen(
            ["bash", "--norc", "--noprofile"],
            cwd=folder,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=env,
        )
        self._end = f"--end-{uuid.uuid4().hex}--"
        self.ids: dict[str, str] = {}  # an id the document shows → the id this session got

    def run(self, command: str) -> tuple[int, list[str]]:
        """Run one command line; (its exit status, the lines it printed)."""
        assert self._proc.stdin and self._proc.stdout
        for shown, real in self.ids.items():
            command = command.replace(shown, real)
        # `(exit $rc)` first: `$?` in this command is the previous command's status, as at a terminal. The
        # command reads nothing from this pipe (the rest of the session); `{ }` keeps a `cd` in this shell.
        self._proc.stdin.write(
            f'(exit ${{__rc:-0}}); {{ {command}\n}} </dev/null\n__rc=$?; printf "\\n{self._end}%s\\n" "$__rc"\n'
        )
        self._proc.stdin.flush()
        lines = []
        while True:
            line = self._proc.stdout.readline()
            assert line, f"the shell ended during {command!r}: {lines}"
            if line.startswith(self._end):
                if lines and lines[-1] == "":
                    lines.pop()  # the newline printed before the marker
                return int(line[len(self._end) :]), lines
            lines.append(line.rstrip("\n"))

    def expect(self, command: str, shown: list[str]) -> list[str]:
        """Run `command` and check that every line `shown` appears in its output, in order; returns the output."""
        _, printed = self.run(command)
        at = 0
        for want in shown:
            while at < len(printed) and shape(printed[at]) != shape(want):
                at += 1
            assert at < len(printed), f"$ {command}\nthe document shows {want!r}; it printed:\n" + "\n".join(printed)
            self._learn(want, printed[at])
            at += 1
        return printed

    def _learn(self, shown: str, printed: str) -> None:
        for pattern in _IDS:
            for doc_id, real_id in zip(pattern.findall(shown), pattern.findall(printed)):
                self.ids.setdefault(doc_id, real_id)

    def close(self) -> None:
        if self._proc.stdin:
            self._proc.stdin.close()
        self._proc.wait()
        if self._proc.stdout:
            self._proc.stdout.close()
