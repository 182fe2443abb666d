"""AST + comments → canonical text (`plait fmt`).

The layout, decided once so every spec reads the same (LANGUAGE.md's "A whole
file" is the model):

- two-space indentation; `plait 0.1` first, then one blank line;
- one blank line between declarations, except that one-line declarations of
  the same kind written on consecutive lines stay together; a group of
  models, chains or parallels aligns its `=` and its `{`;
- in a block, `=` is aligned over each run of attributes not broken by a blank
  line, and parameter types over each run of parameters (keys longer than
  `ALIGN_MAX` are written unpadded so one long key does not push every value
  right); at most one blank line is kept where the author left one;
- a block stays on one line (`{ a = 1, b = 2 }`) when it was written with its
  first member on the `{` line and still fits in `WIDTH` columns (the author
  decides, as prettier does for objects); typed blocks (`params`, `output`,
  `answer`, `input`, `state`) and a route's cases follow the same rule; blocks
  holding a comment or a multi-line block string are always expanded;
- lists and call arguments go on one line when they fit, otherwise one item
  per line with a trailing comma; a chain (or a loop's or a map's body) that
  does not fit breaks before `->`; a route's `->` are aligned like `=`;
- conditions stay on one line with the fewest parentheses that keep their
  meaning, plus one pair around an `and` inside an `or`;
- strings are written with JSON escapes (`\\{` kept); block strings stay block
  strings, re-indented one level under their line (or on one line, if written
  so and that decodes the same); numbers, durations and sizes as written;
- a comment stays where it was: above the thing it preceded, or at the end of
  the line holding what it followed, from `COMMENT_COLUMN` (further right
  when the code is longer, and in one column over consecutive lines).

Comments are placed after layout: every piece of text written records the
source offsets it came from ("marks"), and each comment goes above the line of
the first mark after it (own-line comments) or at the end of the line of the
last mark before it (trailing comments). Nothing is ever dropped, and
`format_text` re-parses its result to prove it.
"""

from __future__ import annotations

import bisect
import json
import re
from collections import defaultdict
from dataclasses import dataclass
from itertools import islice
from typing import Any, Callable, Iterable, Sequence

from . import ast
from plait.core.diagnostics import Diagnostic
from plait.core.source import SourceFile, Span

__all__ = ["ALIGN_MAX", "COMMENT_COLUMN", "WIDTH", "FormatError", "FormatterBug", "format_module", "format_text"]

WIDTH = 88
#: Longer keys are written unpadded; 14 lets a loop's `max_iterations` align with its `until`.
ALIGN_MAX = 14
#: Trailing comments start here, as in LANGUAGE.md, unless the code is longer.
COMMENT_COLUMN = 44
INDENT = "  "

_OPENERS = ("{", "[", "(")
_CLOSERS = ("}", "]", ")")


class FormatError(ValueError):
    """The text does not parse, so it is not formatted. `diagnostics` says why."""

    def __init__(self, diagnostics: list[Diagnostic]) -> None:
        super().__init__("\n".join(str(d) for d in diagnostics) or "the text does not parse")
        self.diagnostics = diagnostics


class FormatterBug(RuntimeError):
    """The formatted text would mean something else or lose a comment; never written."""


def format_text(text: str, path: str = "<string>") -> tuple[str | None, list[Diagnostic]]:
    """Format one file's text. `(None, diagnostics)` when it has syntax errors.

    The result is re-parsed and compared with the input (ignoring spans) before
    it is returned, so a formatter bug raises `FormatterBug` instead of
    silently changing a spec.
    """
    from .parser import parse_module

    source = SourceFile(path, text)
    module, diagnostics = parse_module(source)
    if module is None:
        return None, diagnostics
    formatted = format_module(module, source)
    # The input's tree is let go before the output is parsed: one tree at a time, compared by digest.
    meant, comments = ast.meaning(module), len(module.comments)
    del module
    again, problems = parse_module(SourceFile(path, formatted))
    if again is None:
        raise FormatterBug(f"{path}: formatted text does not parse: {problems[0] if problems else ''}")
    if ast.meaning(again) != meant:
        raise FormatterBug(f"{path}: formatting would change the meaning of the spec")
    if len(again.comments) != comments:
        raise FormatterBug(f"{path}: formatting would lose a comment")
    return formatted, diagnostics


def format_module(module: ast.Module, source: SourceFile) -> str:
    layout = _Layout(source, module.comments)
    layout.module(module)
    return _place_comments(layout, module.comments, source)


# --- strings ----------------------------------------------------------------------

_SURROGATE = re.compile("[\ud800-\udfff]")
# In JSON text a run of backslashes before `{` is whole `\\` pairs; the last
# pair stands for the template escape `\{`, which the source writes singly.
_TEMPLATE_ESCAPE = re.compile(r"\\\\(?=\{)")


def encode_string(value: str) -> str:
    """A value as a `"..."` literal that decodes back to exactly `value`."""
    text = json.dumps(value, ensure_ascii=False)
    text = _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
    return _TEMPLATE_ESCAPE.sub(r"\\", text)


def block_string_lines(value: str, indent: str) -> list[str]:
    """A block string's lines: `\"\"\"`, the value one level in, `\"\"\"` under `indent`.

    The value is already dedented, so adding one indentation to every
    non-empty line and closing on a line of its own decodes back to it.
    """
    body = [indent + INDENT + line if line else "" for line in value.split("\n")]
    return ['"""', *body, indent + '"""']


def _one_line_block(value: str) -> bool:
    """Whether a block string can stay on one line and decode back to `value`:
    nothing for the dedent to strip, and no quote running into the closing ones."""
    return not value or ("\n" not in value and value[0] not in " \t" and not value.endswith('"'))


# --- layout -----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Mark:
    """Text written for source offsets [start, end), on output lines first..last."""

    start: int
    end: int
    first: int
    last: int


class _Layout:
    """Writes the declarations line by line and records a mark for every piece."""

    def __init__(self, source: SourceFile, comments: tuple[ast.Comment, ...]) -> None:
        self.source = source
        self.text = source.text
        self.lines: list[str] = []
        self.cur = ""
        self.marks: list[_Mark] = []
        #: Marks only place comments: a spec without any records none (a mark was ~180 bytes a piece).
        self.marking = bool(comments)
        #: Lines that start inside a block string, and lines that end inside one:
        #: no comment may go above the first kind or after the second.
        self.starts_in_string: set[int] = set()
        self.ends_in_string: set[int] = set()
        self._comment_starts = sorted(c.span.offset for c in comments)

    # --- writing ------------------------------------------------------------------

    def write(self, text: str) -> None:
        self.cur += text

    def newline(self, indent: str, blank: bool = False) -> None:
        self.lines.append(self.cur.rstrip())
        if blank:
            self.lines.append("")
        self.cur = indent

    def emit(self, text: str, start: int, end: int) -> None:
        first = len(self.lines)
        self.write(text)
        if self.marking:
            self.marks.append(_Mark(start, end, first, len(self.lines)))

    def emit_node(self, text: str, node: ast.Node) -> None:
        self.emit(text, node.span.offset, node.span.end_offset)

    def finish(self) -> list[str]:
        if self.cur.strip():
            self.lines.append(self.cur.rstrip())
        self.cur = ""
        return self.lines

    def fits(self, text: str) -> bool:
        return len(self.cur) + len(text) <= WIDTH

    # --- source queries -----------------------------------------------------------

    def has_comment(self, span: Span) -> bool:
        return self.comment_between(span.offset, span.end_offset)

    def comment_between(self, start: int, end: int) -> bool:
        i = bisect.bisect_left(self._comment_starts, start)
        return i < len(self._comment_starts) and self._comment_starts[i] < end

    def skip_to(self, pos: int) -> int:
        """The offset of the next character that is not space, a comma or in a comment."""
        text = self.text
        while pos < len(text):
            ch = text[pos]
            if ch == "#":
                nl = text.find("\n", pos)
                pos = len(text) if nl == -1 else nl
            elif ch.isspace() or ch == ",":
                pos += 1
            else:
                break
        return pos

    def opens_on_same_line(self, open_offset: int, first_member: ast.Node | None) -> bool:
        """True when the author wrote the first member on the line of its `{`."""
        if first_member is None:
            return True
        return "\n" not in self.text[open_offset : first_member.span.offset]

    def gap_has_blank(self, end: int, start: int) -> bool:
        """A blank line between two members, before any own-line comment (whose
        own blank lines are kept when the comments are placed)."""
        src = self.source
        for line in range(src.position(end).line + 1, src.position(start).line):
            content = src.line_text(line).strip()
            if not content:
                return True
            if content.startswith("#"):
                return False
        return False

    # --- file ---------------------------------------------------------------------

    def module(self, module: ast.Module) -> None:
        if module.version is not None:
            self.emit_node(f"plait {module.version.raw}", module.version)
        decls = module.declarations
        single = [self.one_line_decl(d) for d in decls]
        pads = self.decl_pads(decls, single)
        for i, decl in enumerate(decls):
            if i > 0 and self.same_run(decls, single, i):
                self.newline("")
            elif i > 0 or module.version is not None:
                self.newline("", blank=True)
            line = single[i]
            if line is not None:
                (head, middle, rest), (head_width, middle_width) = line, pads[i]
                self.emit_node(head.ljust(head_width) + middle.ljust(middle_width if rest else 0) + rest, decl)
            else:
                self.decl(decl)
        self.finish()

    def same_run(self, decls: Sequence[ast.Decl], single: list[tuple[str, str, str] | None], i: int) -> bool:
        a, b = decls[i - 1], decls[i]
        return (
            single[i - 1] is not None
            and single[i] is not None
            and a.kind == b.kind
            and not self.gap_has_blank(a.span.end_offset, b.span.offset)
            and "\n" in self.text[a.span.end_offset : b.span.offset]
        )

    def decl_pads(self, decls: Sequence[ast.Decl], single: list[tuple[str, str, str] | None]) -> list[tuple[int, int]]:
        """Widths to pad one-line declarations' heads and middles to, so a group
        of `model`s (or chains, or parallels) lines up its `=` and its `{`."""
        pads = [(0, 0)] * len(decls)
        i = 0
        while i < len(decls):
            j = i + 1
            while j < len(decls) and self.same_run(decls, single, j):
                j += 1
            if single[i] is not None and decls[i].kind in ("model", "chain", "parallel"):
                run = [line for line in single[i:j] if line is not None]
                head = max(len(h) for h, _, _ in run)
                middle = max((len(m) for _, m, r in run if r), default=0)
                pads[i:j] = [(head, middle)] * (j - i)
            i = j
        return pads

    def one_line_decl(self, d: ast.Decl) -> tuple[str, str, str] | None:
        """(head, middle, body) of a declaration that fits on one line, else None:
        `model fast`, ` = "openai/gpt-4o-mini"`, ` { temperature = 0.2 }`.

        Comments between a declaration's words do not stop this: on one line
        they can only go above it or after it, which is where the next run
        would put them too. Comments inside its brackets do (see `inline`).
        """
        middle: list[str | None]
        body: list[str | None]
        if isinstance(d, ast.TestDecl):
            return None  # a test's expectations read best one per line
        if isinstance(d, ast.ImportDecl):
            head, middle, body = "import", [self.inline(d.path)], []
        elif isinstance(d, ast.InputDecl | ast.StateDecl):
            head, middle, body = d.kind, [], [self.inline_typed(d.fields, braces_only=True)]
        elif isinstance(d, ast.TypeDecl):
            head = f"type {d.name.name}"
            middle = [self.inline(d.description)] if d.description else []
            if d.alias is not None:
                middle, body = middle + ["=", self.inline_type(d.alias)], []
            else:
                assert d.fields is not None
                body = [self.inline_typed(d.fields, braces_only=True)]
        elif isinstance(d, ast.RouteDecl):
            head = f"route {d.name.name}"
            middle = [self.inline(d.description)] if d.description else []
            subject = self.inline(d.subject) if isinstance(d.subject, ast.String) else self.path_text(d.subject)
            middle += ["on", subject or ""]
            body = [self.inline_cases(d)]
        elif isinstance(d, ast.LoopDecl | ast.MapDecl):
            head = f"{d.kind} {d.name.name}"
            middle = [self.inline(d.description)] if d.description else []
            middle += ["=", self.inline_elements(d.body)]
            body = [self.inline(d.block)]
        elif isinstance(d, ast.AskDecl):
            head, middle = f"ask {d.name.name}", [self.inline(d.question)]
            body = [self.inline(d.block)] if d.block else []
        else:
            head = f"{d.kind} {d.name.name}"
            if isinstance(d, ast.ChainDecl):
                middle, body = ["=", self.inline_chain(d)], [self.inline(d.body)] if d.body else []
            elif isinstance(d, ast.ModelDecl | ast.ParallelDecl):
                first = d.target if isinstance(d, ast.ModelDecl) else d.branches
                middle, body = ["=", self.inline(first)], [self.inline(d.body)] if d.body else []
            else:
                middle = [self.inline(d.description)] if d.description else []
                body = [self.inline(d.body)] if d.body is not None else []  # a thread's block is optional
        middle_text, body_text = _spaced(middle), _spaced(body)
        if middle_text is None or body_text is None:
            return None
        columns = (head, middle_text, body_text)
        return columns if sum(map(len, columns)) <= WIDTH else None

    # --- declarations (over several lines) ----------------------------------------

    def keyword(self, d: ast.Decl) -> None:
        self.emit(d.kind, d.span.offset, d.span.offset + len(d.kind))

    def decl(self, d: ast.Decl) -> None:
        self.keyword(d)
        if isinstance(d, ast.ImportDecl):
            self.write(" ")
            self.string(d.path, "")
            return
        if isinstance(d, ast.InputDecl | ast.StateDecl):
            self.write(" ")
            self.typed_members(d.fields, "", d.kind)
            return
        self.write(" ")
        self.emit_node(d.name.name, d.name)
        if isinstance(d, ast.ChainDecl):
            self.chain(d)
            return
        if isinstance(d, ast.RouteDecl):
            self.route(d)
            return
        if isinstance(d, ast.LoopDecl | ast.MapDecl):
            if d.description is not None:
                self.write(" ")
                self.string(d.description, "")
            self.write(" = ")
            text = self.inline_elements(d.body)
            if text is not None and self.fits(text + " {"):
                self.emit(text, d.body[0].span.offset, d.body[-1].span.end_offset)
            else:
                self.elements(d.body)
            self.write(" ")
            self.block(d.block, "")
            return
        if isinstance(d, ast.AskDecl):
            self.write(" ")
            self.string(d.question, "")
            if d.block is not None:
                self.write(" ")
                self.block(d.block, "")
            return
        if isinstance(d, ast.TestDecl):
            self.test(d)
            return
        if isinstance(d, ast.TypeDecl):
            self.type_decl(d)
            return
        if isinstance(d, ast.ModelDecl):
            self.write(" = ")
            self.string(d.target, "")
        elif isinstance(d, ast.ParallelDecl):
            self.write(" = ")
            self.value(d.branches, "")
        elif d.description is not None:
            self.write(" ")
            self.string(d.description, "")
        if d.body is not None:
            self.write(" ")
            self.block(d.body, "")

    def type_decl(self, d: ast.TypeDecl) -> None:
        """`type NAME ["description"] { ... }` or `type NAME = TYPE` (plait 0.3)."""
        if d.description is not None:
            self.write(" ")
            self.string(d.description, "")
        if d.alias is not None:
            self.write(" = ")
            self.type(d.alias, "")
            return
        assert d.fields is not None
        self.write(" ")
        self.typed_members(d.fields, "", d.fields.keyword)

    def test(self, d: ast.TestDecl) -> None:
        """`test NAME ["description"] { ... }`: attributes and `expect` lines in the order written."""
        if d.description is not None:
            self.write(" ")
            self.string(d.description, "")
        self.write(" ")
        members: list[ast.Attribute | ast.Expect] = sorted((*d.attributes, *d.expects), key=lambda m: m.span.offset)
        keys = [self.key(m) if isinstance(m, ast.Attribute) else None for m in members]
        open_at = self.skip_to((d.description or d.name).span.end_offset)
        self.members(open_at, d.span.end_offset - 1, members, keys, "", self.test_member)

    def test_member(self, m: ast.Attribute | ast.Expect, key: str | None, indent: str) -> None:
        if isinstance(m, ast.Attribute):
            self.member(m, key, indent)
            return
        self.emit("expect", m.span.offset, m.span.offset + len("expect"))
        self.write(" ")
        subject = self.inline(m.subject)
        if subject is None:
            self.value(m.subject, indent)
        else:
            self.emit_node(subject, m.subject)
        if m.op is not None and m.value is not None:
            self.write(" ")
            self.emit_node(m.op.name, m.op)
            self.write(" ")
            self.value(m.value, indent)

    def chain(self, d: ast.ChainDecl) -> None:
        self.write(" = ")
        if d.body is None:
            self.elements(d.elements)
            return
        # With a block (a `budget`), as a loop's: the elements on one line when they fit there, then the block.
        text = self.inline_elements(d.elements)
        if text is not None and self.fits(text + " {"):
            self.emit(text, d.elements[0].span.offset, d.elements[-1].span.end_offset)
        else:
            self.elements(d.elements)
        self.write(" ")
        self.block(d.body, "")

    def elements(self, elements: Sequence[ast.ChainElement]) -> None:
        """A chain's (or a loop's, a map's) elements, one per line from the second."""
        for i, element in enumerate(elements):
            if i:
                self.newline(INDENT)
                self.write("-> ")
            self.element(element, INDENT)

    def inline_chain(self, d: ast.ChainDecl) -> str | None:
        return self.inline_elements(d.elements)

    def inline_elements(self, elements: Sequence[ast.ChainElement]) -> str | None:
        # A comment between elements keeps them on their own lines; one before
        # the first element goes above the declaration in either layout.
        if self.comment_between(elements[0].span.offset, elements[-1].span.end_offset):
            return None
        return _joined((self.inline_element(e) for e in elements), " -> ")

    # --- routes -------------------------------------------------------------------

    def route(self, d: ast.RouteDecl) -> None:
        if d.description is not None:
            self.write(" ")
            self.string(d.description, "")
        self.write(" on ")
        if isinstance(d.subject, ast.String):  # an expression: written as it is
            self.string(d.subject, "")
        else:
            self.emit_node(self.path_text(d.subject), d.subject)
        self.write(" ")
        open_at = self.skip_to(d.subject.span.end_offset)
        text = self.inline_cases(d)
        if text is not None and self.fits(text):
            self.emit(text, open_at, d.span.end_offset)
            return
        members = _route_members(d)
        # Cases align on their arrows; an attribute (`budget = ...`) is not one of them.
        keys = [self.case_label(m) if isinstance(m, ast.RouteCase) else None for m in members]
        self.members(open_at, d.span.end_offset - 1, members, keys, "", self.route_member)

    def route_member(self, m: ast.RouteCase | ast.Attribute, key: str | None, indent: str) -> None:
        if isinstance(m, ast.RouteCase):
            self.case(m, key or self.case_label(m), indent)
        else:
            self.member(m, self.key(m), indent)

    def inline_cases(self, d: ast.RouteDecl) -> str | None:
        """`{ "a" -> x, else -> y }`, where the author wrote the first case on the `{` line (its attributes, a
        `budget`, where they were written among them)."""
        open_at = self.skip_to(d.subject.span.end_offset)
        if self.comment_between(open_at, d.span.end_offset):
            return None
        members = _route_members(d)
        if not members:
            return "{}"
        if not self.opens_on_same_line(open_at, members[0]):
            return None
        texts: list[str | None] = [
            f"{self.case_label(m)} -> {_case_target(m)}" if isinstance(m, ast.RouteCase) else self.inline_member(m)
            for m in members
        ]
        joined = _joined(texts, ", ")
        return None if joined is None else "{ " + joined + " }"

    def inline_member(self, m: ast.Attribute) -> str | None:
        value = self.inline(m.value)
        return None if value is None else f"{self.key(m)} = {value}"

    def case_label(self, case: ast.RouteCase) -> str:
        if case.literal is None:
            return "else"
        # A string, number or bool: one line, but for a block string written over lines, which is kept as written.
        text = self.inline(case.literal)
        if text is None:
            return self.text[case.literal.span.offset : case.literal.span.end_offset]
        return text

    def case(self, case: ast.RouteCase, key: str, indent: str) -> None:
        label = key.rstrip()
        self.emit(label, case.span.offset, case.literal.span.end_offset if case.literal else case.span.offset + 4)
        self.write(key[len(label) :] + " -> ")
        self.emit_node(case.target.name, case.target)
        if case.loop is not None:  # `break outer`
            self.write(" ")
            self.emit_node(case.loop.name, case.loop)

    def inline_element(self, e: ast.ChainElement) -> str | None:
        if isinstance(e, ast.ChainRef):
            return e.name
        if self.has_comment(e.span):
            return None
        return "parallel(" + ", ".join(b.name for b in e.branches) + ")"

    def element(self, e: ast.ChainElement, indent: str) -> None:
        text = self.inline_element(e)
        if text is not None:
            self.emit_node(text, e)
            return
        assert isinstance(e, ast.InlineParallel)  # a chain reference is always one line
        self.emit("parallel", e.span.offset, e.span.offset + len("parallel"))
        open_at = self.skip_to(e.span.offset + len("parallel"))
        self.sequence("(", ")", open_at, e.span.end_offset - 1, e.branches, indent, self.name_item)

    def name_item(self, ident: ast.Ident, indent: str) -> None:
        self.emit_node(ident.name, ident)

    # --- values -------------------------------------------------------------------

    def inline(self, v: ast.Value | ast.Compare | ast.Not | ast.BoolOp) -> str | None:
        """The value on one line, or None when it must span lines."""
        if isinstance(v, ast.String):
            if not v.block:
                return encode_string(v.value)
            # One line only where the author wrote it on one line.
            written = self.text[v.span.offset : v.span.end_offset]
            return f'"""{v.value}"""' if "\n" not in written and _one_line_block(v.value) else None
        if isinstance(v, ast.Number | ast.Duration | ast.Size):
            return v.raw
        if isinstance(v, ast.PathValue):
            return self.path_text(v)
        if isinstance(v, ast.Compare | ast.Not | ast.BoolOp):
            # A condition stays on one line; a comment inside it goes above or after that line.
            return self.condition(v)
        if isinstance(v, ast.Bool):
            return "true" if v.value else "false"
        if isinstance(v, ast.Ref):
            return v.name
        if self.has_comment(v.span):
            return None
        if isinstance(v, ast.Succeeded):
            return f"{self.target_text(v)} succeeded"
        if isinstance(v, ast.ListValue):
            items = self.inline_all(v.items)
            return None if items is None else f"[{items}]"
        if isinstance(v, ast.Call):
            args = self.inline_all(v.args)
            if args is None:
                return None
            if v.block is None:
                return f"{v.func.name}({args})"
            block = self.inline(v.block)
            return None if block is None else f"{v.func.name}({args}) {block}"
        if isinstance(v, ast.Block):
            return self.inline_block(v)
        raise TypeError(f"not a value: {type(v).__name__}")

    @staticmethod
    def path_text(p: ast.PathValue) -> str:
        return ".".join(p.parts)

    def target_text(self, v: ast.Succeeded) -> str:
        return v.target.name if isinstance(v.target, ast.Ref) else self.path_text(v.target)

    def condition(self, v: ast.Condition, parent: int = 0) -> str:
        """A condition's text, with parentheses where precedence needs them, where
        the author's grouping must survive a re-parse (`a and (b and c)`), and
        around an `and` inside an `or`."""
        rank = _rank(v)
        if isinstance(v, ast.BoolOp):
            text = f" {v.op} ".join(self.condition(o, rank) for o in v.operands)
        elif isinstance(v, ast.Not):
            text = "not " + self.condition(v.operand, rank - 1)
        elif isinstance(v, ast.Compare):
            text = f"{self.condition(v.left, rank)} {v.op} {self.condition(v.right, rank)}"
        else:
            text = self.inline(v) or self.text[v.span.offset : v.span.end_offset]
        # `and` inside `or` keeps its brackets although it binds tighter: readers misread the bare form.
        return f"({text})" if rank <= parent or (parent == 1 and rank == 2) else text

    def inline_all(self, items: Iterable[ast.Value]) -> str | None:
        return _joined((self.inline(item) for item in items), ", ")

    def inline_block(self, b: ast.Block) -> str | None:
        if not b.attributes and not b.params:
            return "{}"
        members = _in_order(b)
        if not self.opens_on_same_line(b.span.offset, members[0]):
            return None
        parts: list[str] = []
        for m in members:
            if _is_with(m):
                assert isinstance(m, ast.Attribute) and isinstance(m.value, ast.Block)
                text = self.inline_bindings(m.value)
                if text is None:
                    return None
                parts.append(f"with {text}")
                continue
            text = self.inline_typed(m) if isinstance(m, ast.Params) else self.inline(m.value)
            if text is None:
                return None
            parts.append(text if isinstance(m, ast.Params) else f"{self.key(m)} = {text}")
        return "{ " + ", ".join(parts) + " }"

    def inline_bindings(self, b: ast.Block) -> str | None:
        """`{ plan: planner.tasks, topic: input.topic }` on one line where the author wrote it so."""
        if not b.attributes:
            return "{}"
        if self.has_comment(b.span) or not self.opens_on_same_line(b.span.offset, b.attributes[0]):
            return None
        text = _joined((_suffixed(self.inline(m.value), m.key.name) for m in b.attributes), ", ")
        return None if text is None else "{ " + text + " }"

    def bindings(self, b: ast.Block, indent: str) -> None:
        """A `with`'s `{ ... }`: on one line when written so and it fits, else one binding per line, aligned."""
        text = self.inline_bindings(b)
        if text is not None and self.fits(text):
            self.emit_node(text, b)
            return
        members = list(b.attributes)
        keys = [f"{m.key.name}:" for m in members]
        self.members(b.span.offset, b.span.end_offset - 1, members, keys, indent, self.binding)

    def binding(self, m: ast.Attribute, key: str, indent: str) -> None:
        self.emit_node(key.rstrip(), m.key)
        self.write(key[len(key.rstrip()) :] + " ")
        self.value(m.value, indent)

    def typed_open(self, p: ast.Params, keyword: str) -> int:
        # A `type` declaration's fields start at their `{` (its keyword and name come before).
        skip = len(keyword) if self.text.startswith(keyword, p.span.offset) else 0
        return self.skip_to(p.span.offset + skip)

    def inline_typed(self, p: ast.Params, braces_only: bool = False) -> str | None:
        """`output { a: int, b: string }` on one line where the author wrote it so
        (`{ ... }` alone for `input` and `state`, whose keyword is the declaration's)."""
        if self.has_comment(p.span):
            return None
        if p.type is not None:  # `output list[Flight]` (plait 0.3)
            shown = self.inline_type(p.type)
            return None if shown is None else f"{p.keyword} {shown}"
        open_at = self.typed_open(p, p.keyword)
        if not p.params:
            text = "{}"
        else:
            if not self.opens_on_same_line(open_at, p.params[0]):
                return None
            fields = _joined((self.inline_param(f) for f in p.params), ", ")
            if fields is None:
                return None
            text = "{ " + fields + " }"
        return text if braces_only else f"{p.keyword} {text}"

    def value(self, v: ast.Value | ast.Compare | ast.Not | ast.BoolOp, indent: str) -> None:
        text = self.inline(v)
        if text is not None and (self.fits(text) or not isinstance(v, ast.ListValue | ast.Call | ast.Block)):
            self.emit_node(text, v)
        elif isinstance(v, ast.String):
            self.string(v, indent)
        elif isinstance(v, ast.ListValue):
            self.sequence("[", "]", v.span.offset, v.span.end_offset - 1, v.items, indent, self.value)
        elif isinstance(v, ast.Call):
            self.call(v, indent)
        elif isinstance(v, ast.Block):
            self.block(v, indent)
        else:  # `x succeeded` with a comment between its words
            assert isinstance(v, ast.Succeeded)  # every other value has a one-line text
            self.emit_node(f"{self.target_text(v)} succeeded", v)

    def string(self, s: ast.String, indent: str) -> None:
        text = self.inline(s)
        if text is not None:
            self.emit_node(text, s)
            return
        first = len(self.lines)
        lines = block_string_lines(s.value, indent)
        self.write(lines[0])
        for line in lines[1:]:
            # Appended as is: trailing spaces on a content line are part of the value.
            self.ends_in_string.add(len(self.lines))
            self.lines.append(self.cur)
            self.starts_in_string.add(len(self.lines))
            self.cur = line
        if self.marking:
            self.marks.append(_Mark(s.span.offset, s.span.end_offset, first, len(self.lines)))

    def call(self, c: ast.Call, indent: str) -> None:
        self.emit_node(c.func.name, c.func)
        args = self.inline_all(c.args)
        open_at = self.skip_to(c.func.span.end_offset)
        last = c.args[-1].span.end_offset if c.args else open_at + 1
        close_at = self.skip_to(last)
        if args is not None and not self.comment_between(open_at, close_at) and self.fits(f"({args})"):
            self.emit(f"({args})", open_at, close_at + 1)
        else:
            self.sequence("(", ")", open_at, close_at, c.args, indent, self.value)
        if c.block is not None:
            self.write(" ")
            self.block(c.block, indent)

    def sequence(
        self,
        open_: str,
        close: str,
        open_at: int,
        close_at: int,
        items: Iterable[Any],
        indent: str,
        item: Callable[[Any, str], None],
    ) -> None:
        """Items one per line between brackets, each followed by a comma."""
        inner = indent + INDENT
        self.emit(open_, open_at, open_at + 1)
        for node in items:
            self.newline(inner)
            item(node, inner)
            self.write(",")
        self.newline(indent)
        self.emit(close, close_at, close_at + 1)

    # --- blocks -------------------------------------------------------------------

    @staticmethod
    def key(attr: ast.Attribute) -> str:
        return encode_string(attr.key.name) if attr.quoted else attr.key.name

    def block(self, b: ast.Block, indent: str) -> None:
        text = self.inline_block(b)
        if text is not None and not self.has_comment(b.span) and self.fits(text):
            self.emit_node(text, b)
            return
        members = _in_order(b)
        keys = [self.key(m) if isinstance(m, ast.Attribute) and not _is_with(m) else None for m in members]
        self.members(b.span.offset, b.span.end_offset - 1, members, keys, indent, self.member)

    def member(self, m: ast.Attribute | ast.Params, key: str | None, indent: str) -> None:
        if _is_with(m):
            assert isinstance(m, ast.Attribute) and isinstance(m.value, ast.Block)
            self.emit_node("with", m.key)
            self.write(" ")
            self.bindings(m.value, indent)
            return
        if isinstance(m, ast.Params):
            self.emit(m.keyword, m.span.offset, m.span.offset + len(m.keyword))
            self.write(" ")
            if m.type is not None:
                self.type(m.type, indent)
            else:
                self.typed_members(m, indent, m.keyword)
            return
        assert key is not None  # `block` gives every attribute its key
        self.emit_node(key, m.key)
        self.write(" = ")
        self.value(m.value, indent)

    def typed_members(self, p: ast.Params, indent: str, keyword: str) -> None:
        """A typed block's `{ ... }`: on one line when written so and it fits, else one field per line."""
        open_at = self.typed_open(p, keyword)
        text = self.inline_typed(p, braces_only=True)
        if text is not None and self.fits(text):
            self.emit(text, open_at, p.span.end_offset)
            return
        fields = list(p.params)
        keys = [f"{f.name.name}:" for f in fields]
        self.members(open_at, p.span.end_offset - 1, fields, keys, indent, self.param)

    def members(
        self,
        open_at: int,
        close_at: int,
        members: Sequence[Any],
        keys: Sequence[str | None],
        indent: str,
        write: Callable[[Any, Any, str], None],
    ) -> None:
        """`{`, one member per line with keys aligned per run, `}`."""
        if not members and not self.comment_between(open_at, close_at):
            self.emit("{}", open_at, close_at + 1)
            return
        inner = indent + INDENT
        self.emit("{", open_at, open_at + 1)
        after = islice(members, 1, None)
        blanks = [False] + [self.gap_has_blank(a.span.end_offset, b.span.offset) for a, b in zip(members, after)]
        widths = _aligned_widths(keys, blanks)
        for m, key, width, blank in zip(members, keys, widths, blanks):
            self.newline(inner, blank=blank)
            write(m, key if key is None else key.ljust(width), inner)
        self.newline(indent)
        self.emit("}", close_at, close_at + 1)

    # --- parameters and types -----------------------------------------------------

    def param(self, p: ast.Param, key: str, indent: str) -> None:
        self.emit_node(key.rstrip(), p.name)
        self.write(key[len(key.rstrip()) :] + " ")
        self.type(p.type, indent)
        if p.description is not None:
            self.write(" ")
            self.string(p.description, indent)
        if p.default is not None:
            self.write(" = ")
            self.value(p.default, indent)

    def inline_type(self, t: ast.TypeExpr) -> str | None:
        if self.has_comment(t.span):
            return None
        name = t.name or ""  # every form but a union has its name
        if t.form == "name":
            text = name
        elif t.form == "generic":
            arg = self.inline_type(t.args[0])
            if arg is None:
                return None
            text = f"{name}[{arg}]"
        elif t.form == "union":
            literals = _joined((self.inline(s) for s in t.literals), " | ")
            if literals is None:
                return None
            text = literals
        elif t.form == "names":
            text = " | ".join(arg.name or "" for arg in t.args)
        else:
            open_at = self.skip_to(t.span.offset + len(name))
            first = t.fields[0] if t.fields else None
            if not self.opens_on_same_line(open_at, first):
                return None
            fields = _joined((self.inline_param(f) for f in t.fields), ", ")
            if fields is None:
                return None
            text = f"{name} {{ {fields} }}" if t.fields else f"{name} {{}}"
        return text + "?" if t.optional else text

    def inline_param(self, p: ast.Param) -> str | None:
        parts = [f"{p.name.name}:", self.inline_type(p.type)]
        if p.description is not None:
            parts.append(self.inline(p.description))
        if p.default is not None:
            parts += ["=", self.inline(p.default)]
        return _joined(parts, " ")

    def type(self, t: ast.TypeExpr, indent: str) -> None:
        text = self.inline_type(t)
        if text is not None and self.fits(text):
            self.emit_node(text, t)
            return
        name = t.name or ""  # every form but a union has its name
        if t.form == "name":
            self.emit_node(name, t)
        elif t.form == "generic":
            self.emit(f"{name}[", t.span.offset, t.span.offset + len(name))
            self.type(t.args[0], indent)
            self.emit("]", t.args[0].span.end_offset, t.args[0].span.end_offset)
        elif t.form == "union":
            for i, literal in enumerate(t.literals):
                self.write(" | " if i else "")
                self.value(literal, indent)
        elif t.form == "names":
            for i, arg in enumerate(t.args):
                self.write(" | " if i else "")
                self.emit_node(arg.name or "", arg)
        else:
            self.emit(name, t.span.offset, t.span.offset + len(name))
            self.write(" ")
            open_at = self.skip_to(t.span.offset + len(name))
            close_at = t.span.end_offset - (2 if t.optional else 1)
            close_at = self.text.rfind("}", open_at, close_at + 1)
            fields = list(t.fields)
            keys = [f"{p.name.name}:" for p in fields]
            self.members(open_at, close_at, fields, keys, indent, self.param)
        if t.optional:
            self.write("?")


def _is_with(m: ast.Node) -> bool:
    """`with { name: path ... }` (or `with = { name = path }`, written in the first form): a runnable's bindings."""
    return (
        isinstance(m, ast.Attribute)
        and not m.quoted
        and m.key.name == "with"
        and isinstance(m.value, ast.Block)
        and not m.value.params
    )


def _suffixed(text: str | None, name: str) -> str | None:
    return None if text is None else f"{name}: {text}"


def _joined(texts: Iterable[str | None], sep: str) -> str | None:
    """The texts joined by `sep`, or None when one of them is (that part does not fit on one line)."""
    parts: list[str] = []
    for text in texts:
        if text is None:
            return None
        parts.append(text)
    return sep.join(parts)


def _spaced(texts: Iterable[str | None]) -> str | None:
    """Each text after a space (`" a b"`, or `""` for none), or None when one of them is."""
    parts: list[str] = []
    for text in texts:
        if text is None:
            return None
        parts.append(" " + text)
    return "".join(parts)


def _case_target(case: ast.RouteCase) -> str:
    """`billing`, or `break outer` for a case that leaves a named loop."""
    return case.target.name if case.loop is None else f"{case.target.name} {case.loop.name}"


def _route_members(d: ast.RouteDecl) -> list[ast.RouteCase | ast.Attribute]:
    """A route's cases and attributes, in the order written."""
    attributes = list(d.body.attributes) if d.body is not None else []
    return sorted([*d.cases, *attributes], key=lambda m: m.span.offset)


def _in_order(b: ast.Block) -> Sequence[ast.Attribute | ast.Params]:
    """A block's members in source order; attributes alone as they are (a packed block, read one at a time:
    sorting a block of 2 million attributes made every node at once)."""
    return sorted((*b.attributes, *b.params), key=lambda m: m.span.offset) if b.params else b.attributes


def _rank(v: ast.Node) -> int:
    """Binding strength in a condition: `or` < `and` < `not` < comparisons < operands."""
    if isinstance(v, ast.BoolOp):
        return 1 if v.op == "or" else 2
    if isinstance(v, ast.Not):
        return 3
    return 4 if isinstance(v, ast.Compare) else 5


def _aligned_widths(keys: Sequence[str | None], blanks: list[bool]) -> list[int]:
    """The width each key is padded to: the longest key of its run (runs end at a
    blank line or a non-key member); keys over ALIGN_MAX stay unpadded."""
    widths = [0] * len(keys)
    #: (index, key length) of the run so far.
    run: list[tuple[int, int]] = []

    def close() -> None:
        # The run's width once, not per key: 2 million attributes in one block made this quadratic.
        width = max((n for _, n in run if n <= ALIGN_MAX), default=0)
        for k, n in run:
            widths[k] = width if n <= ALIGN_MAX else 0
        run.clear()

    for i, key in enumerate(keys):
        if key is None or blanks[i]:
            close()
        if key is not None:
            run.append((i, len(key)))
    close()
    return widths


# --- comments ---------------------------------------------------------------------


def _place_comments(layout: _Layout, comments: tuple[ast.Comment, ...], source: SourceFile) -> str:
    lines = layout.finish()
    marks = sorted(layout.marks, key=lambda m: (m.start, m.first, m.last))
    starts = [m.start for m in marks]
    above: dict[int, list[ast.Comment]] = defaultdict(list)
    trailing: dict[int, list[ast.Comment]] = defaultdict(list)
    tail: list[ast.Comment] = []

    def statement_start(line: int) -> int:
        # Above a block string's content would put the comment inside the value.
        while line in layout.starts_in_string:
            line -= 1
        return line

    for comment in comments:
        offset = comment.span.offset
        i = bisect.bisect_left(starts, offset)
        # The last piece written from before the comment; it holds the comment
        # when the comment sat inside something laid out on one line.
        before = marks[i - 1] if i else None
        line_start = source.text.rfind("\n", 0, offset) + 1
        if before is not None and source.text[line_start:offset].strip():
            if before.last in layout.ends_in_string:
                above[statement_start(before.last)].append(comment)
            else:
                trailing[before.last].append(comment)
        elif before is not None and before.end > offset:
            above[statement_start(before.first)].append(comment)
        elif i < len(marks):
            above[statement_start(marks[i].first)].append(comment)
        else:
            tail.append(comment)
    # One line holds one trailing comment; any others go above it.
    for at, group in trailing.items():
        if len(group) > 1:
            target = statement_start(at)
            above[target] = sorted(above[target] + group[:-1], key=lambda c: c.span.offset)
            del group[:-1]
    for group in above.values():
        group.sort(key=lambda c: c.span.offset)

    out: list[str] = []
    notes: dict[int, str] = {}  # index in out → its trailing comment
    for n, line in enumerate(lines):
        if n in above:
            indent = line[: len(line) - len(line.lstrip(" "))]
            closing = line.lstrip().startswith(_CLOSERS)
            _comment_lines(out, above[n], indent + INDENT if closing else indent, source, not closing)
        if trailing.get(n):
            notes[len(out)] = trailing[n][0].text.rstrip()
        out.append(line)
    if tail:
        _comment_lines(out, tail, "", source, False)
    _append_trailing(out, notes)
    while out and not out[-1]:
        out.pop()
    while out and not out[0]:
        out.pop(0)
    return "\n".join(out) + "\n" if out else ""


def _append_trailing(out: list[str], notes: dict[int, str]) -> None:
    """Trailing comments on consecutive lines start in one column: COMMENT_COLUMN,
    or two spaces after the longest line of the run."""
    for n in sorted(notes):
        if n - 1 in notes:
            continue
        run = range(n, next(k for k in range(n, len(out) + 1) if k not in notes))
        column = max(COMMENT_COLUMN, max(len(out[k]) for k in run) + 2)
        for k in run:
            out[k] = out[k].ljust(column) + notes[k]


def _comment_lines(out: list[str], group: list[ast.Comment], indent: str, source: SourceFile, last_blank: bool) -> None:
    """Own-line comments above a line, keeping one blank line where the author left one."""
    if _blank_line(source, group[0].span.line - 1) and out and out[-1] and not out[-1].endswith(_OPENERS):
        out.append("")
    for i, comment in enumerate(group):
        out.append(indent + comment.text.rstrip())
        if _blank_line(source, comment.span.line + 1) and (last_blank or i < len(group) - 1):
            out.append("")


def _blank_line(source: SourceFile, line: int) -> bool:
    return 1 <= line <= source.line_count and not source.line_text(line).strip()
