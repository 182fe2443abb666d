"""Diagnostics' Fix records → non-overlapping text edits per file → new text (`plait check --fix` / `--diff`).

Only a Fix with both a span and a replacement is applied; the others are
advice (`help:` lines). Edits that overlap an earlier one in the same file are
skipped, not merged: the next `--fix` run, on the new text, offers them again
if they still apply. Files are written atomically (a temporary file beside the
original, then a rename), keeping the original's permissions.
"""

from __future__ import annotations

import difflib
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from plait.core.diagnostics import Diagnostic
from plait.core.source import SourceFile, Span

__all__ = ["Edit", "Plan", "apply", "apply_in_layout", "diff", "plan", "write_atomic"]


@dataclass(frozen=True, slots=True)
class Edit:
    code: str
    span: Span
    replacement: str
    message: str

    def describe(self, old: str) -> str:
        """`spec.plait:3:11: P101 `fsat` → `fast``, the line `--fix` prints for each change."""
        if not self.replacement:
            return f"{self.span}: {self.code} removed `{old}`"
        if not old:
            return f"{self.span}: {self.code} inserted `{self.replacement}`"
        return f"{self.span}: {self.code} `{old}` → `{self.replacement}`"


@dataclass(frozen=True, slots=True)
class Plan:
    #: file -> the edits to make there, in text order, none overlapping.
    edits: dict[str, tuple[Edit, ...]]
    #: Fixes left out because they overlap one that is applied.
    skipped: tuple[Edit, ...]


def plan(diagnostics: list[Diagnostic]) -> Plan:
    """Every applicable fix, grouped by file; the first of two overlapping edits (in text order) wins."""
    by_file: dict[str, list[Edit]] = {}
    for d in diagnostics:
        fix = d.fix
        if fix is None or fix.span is None or fix.replacement is None:
            continue
        edit = Edit(d.code, fix.span, fix.replacement, fix.message)
        by_file.setdefault(fix.span.file, []).append(edit)
    chosen: dict[str, tuple[Edit, ...]] = {}
    skipped: list[Edit] = []
    for file, edits in by_file.items():
        kept: list[Edit] = []
        for edit in sorted(set(edits), key=lambda e: (e.span.offset, e.span.end_offset, e.replacement)):
            last = kept[-1] if kept else None
            if last is not None and _overlap(last.span, edit.span):
                if (last.span.offset, last.span.end_offset, last.replacement) != (
                    edit.span.offset,
                    edit.span.end_offset,
                    edit.replacement,
                ):
                    skipped.append(edit)
                continue  # the same edit offered by two diagnostics is made once
            kept.append(edit)
        chosen[file] = tuple(kept)
    return Plan(chosen, tuple(skipped))


def _overlap(a: Span, b: Span) -> bool:
    # Touching edits are fine (`ab` → `xy` in two steps), two insertions at one point are not (order unknown).
    if a.offset == a.end_offset == b.offset == b.end_offset:
        return True
    return b.offset < a.end_offset


def apply(text: str, edits: tuple[Edit, ...]) -> str:
    """`text` with `edits` (in text order, not overlapping) made."""
    out = []
    at = 0
    for edit in edits:
        out.append(text[at : edit.span.offset])
        out.append(edit.replacement)
        at = edit.span.end_offset
    out.append(text[at:])
    return "".join(out)


def apply_in_layout(source: SourceFile, edits: tuple[Edit, ...]) -> str:
    """The edits made; a file kept in `plait fmt`'s layout stays in it (a longer case label re-aligns the arrows).

    A file in another layout is left in it: --fix changes what the fixes say, never a hand-made layout.
    """
    from plait.dsl.formatter import FormatterBug, format_text

    new = apply(source.text, edits)
    try:
        if format_text(source.text, source.path)[0] != source.text:
            return new
        formatted, _ = format_text(new, source.path)
    except FormatterBug:
        return new
    return formatted if formatted is not None else new


def diff(source: SourceFile, new: str) -> str:
    """A unified diff of one file, as `plait fmt --diff` prints it."""
    lines = difflib.unified_diff(
        source.text.splitlines(keepends=True),
        new.splitlines(keepends=True),
        fromfile=f"a/{source.path}",
        tofile=f"b/{source.path}",
    )
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)


def write_atomic(path: Path, text: str) -> None:
    """Replace `path`'s content with `text` in one rename; on any failure the original is untouched."""
    mode = path.stat().st_mode & 0o7777
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
