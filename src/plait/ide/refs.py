"""A position in a project file → the declaration named there, every use of it across files, and rename edits.

A use counts when the file it is in sees that very declaration: the first one
of the name in the file's import closure (imports share one namespace, first
wins, as the compiler takes it). Two unrelated specs of a workspace that each
declare `fast` keep their own. Positions are 0-based code-point offsets; files
are resolved paths.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from .index import Occurrence
from .workspace import Project

__all__ = ["RenameError", "Target", "references", "rename", "rename_target", "target_at"]

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_WORD = re.compile(r"[A-Za-z0-9_]+")
#: Path heads with a meaning of their own (`{{run.input}}`, `{{loop.last}}`); the others are keywords.
_PATH_ROOTS = ("input", "state", "run", "loop", "map")
#: Words a spec uses as built-in functions.
_FUNCTIONS = ("python", "http", "env", "keep_last")


class RenameError(ValueError):
    """Why a rename cannot be done, worded for the editor to show."""


@dataclass(frozen=True, slots=True)
class Target:
    """The name under the cursor and the declaration it stands for."""

    occurrence: Occurrence
    file: Path
    declaration: Occurrence


def target_at(project: Project, path: Path, offset: int) -> Target | None:
    from .analysis import occurrence_at

    occ = occurrence_at(project.occurrences(path), offset)
    if occ is None:
        return None
    if occ.role == "declaration":
        return Target(occ, path, occ)
    found = project.declaration(path, occ.name)
    return None if found is None else Target(occ, found[0], found[1])


def references(project: Project, target: Target, *, include_declaration: bool = True) -> list[tuple[Path, Occurrence]]:
    """Every place in the project the target's declaration is named, in file then text order."""
    name, home = target.declaration.name, (target.file, target.declaration.span)
    out: list[tuple[Path, Occurrence]] = []
    for file in sorted(project.known()):
        mine = [o for o in project.occurrences(file) if o.name == name]
        if not mine:
            continue
        seen = project.declaration(file, name)
        if seen is None or (seen[0], seen[1].span) != home:
            continue
        for occ in mine:
            if occ.role == "use" or (include_declaration and (file, occ.span) == home):
                out.append((file, occ))
    return out


def rename_target(project: Project, path: Path, offset: int) -> Target:
    """The declaration a rename at `offset` would rename, or a RenameError saying why there is none."""
    target = target_at(project, path, offset)
    if target is not None:
        return target
    found = project.file(path)
    word = _word_at(found[0].text, offset) if found else None
    if found is not None and found[1] is None:
        raise RenameError("the file does not parse; fix its syntax errors before renaming")
    raise RenameError(_not_renamable(word))


def rename(project: Project, path: Path, offset: int, new: str) -> dict[Path, list[tuple[Occurrence, str]]]:
    """The edits (per file: the occurrence to replace, and its new text) that rename the declaration at `offset`."""
    target = rename_target(project, path, offset)
    _check_new_name(new)
    old = target.declaration.name
    edits: dict[Path, list[tuple[Occurrence, str]]] = {}
    for file, occ in references(project, target):
        edits.setdefault(file, []).append((occ, new))
    for file in project.known():
        found = project.file(file)
        # A broken file that may see the declaration and names it: refuse rather than leave a use behind.
        if found is not None and found[1] is None and _may_use(project, file, found[0].text, target, old):
            raise RenameError(f"`{found[0].path}` does not parse and may use `{old}`; fix it before renaming")
    home = (target.file, target.declaration.span)
    for file in project.known():
        seen = project.declaration(file, old)
        if seen is None or (seen[0], seen[1].span) != home:
            continue
        clash = project.declaration(file, new)
        if clash is not None:
            line = clash[1].span.line
            raise RenameError(f"`{new}` is already declared ({clash[0].name}:{line}), where `{old}` is visible")
    return edits


def _may_use(project: Project, file: Path, text: str, target: Target, name: str) -> bool:
    if not re.search(rf"\b{re.escape(name)}\b", text):
        return False
    seen = project.lenient_closure(file)
    # Never parsed: its imports are unknown, so any import of the declaring file's name counts.
    return target.file in seen if seen else file == target.file or f'{target.file.name}"' in text


def _check_new_name(new: str) -> None:
    from plait.dsl.parser import keywords

    if not _IDENT.fullmatch(new):
        raise RenameError(f"`{new}` is not a name (letters, digits and `_`, not starting with a digit)")
    if new in keywords() or new in _PATH_ROOTS:
        raise RenameError(f"`{new}` is a keyword of the language; choose another name")


def _word_at(text: str, offset: int) -> str | None:
    for match in _WORD.finditer(text, max(0, offset - 200), offset + 200):
        if match.start() <= offset <= match.end():
            return match.group()
    return None


def _not_renamable(word: str | None) -> str:
    from plait.dsl.parser import keywords

    from plait.compiler.schema import SCHEMAS

    if word is None:
        return "nothing to rename here: put the cursor on a declaration's name or a use of it"
    if word in keywords():
        return f"`{word}` is a keyword of the language and cannot be renamed"
    keys = {key for schema in SCHEMAS.values() for key in schema}
    choices = {c for schema in SCHEMAS.values() for attr in schema.values() for c in attr.choices}
    if word in _PATH_ROOTS or word in _FUNCTIONS or word in keys or word in choices:
        return f"`{word}` is built into the language and cannot be renamed; only declarations can"
    return f"`{word}` does not name a declaration; only declarations can be renamed"
