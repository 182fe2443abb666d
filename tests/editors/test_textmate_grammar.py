"""The TextMate grammar (editors/plait.tmLanguage.json) against the language's own vocabulary.

The words the grammar colours as keywords are exactly the lexer's keywords (the string terminals of
src/plait/grammars/plait.lark a name could match), every scope the grammar can give is asserted by a case in
tests/editors/*.test.plait, and those cases are plait the parser accepts. The assertions themselves run
through vscode-tmgrammar-test in test_grammar_assertions.py.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest

from editors_support import CASES, EXTENSION, GRAMMAR
from plait.core.source import SourceFile
from plait.dsl.parser import parse_module
from plait.dsl.parser import keywords

#: Scopes that say "this word is a keyword of the language".
KEYWORD_SCOPES = ("keyword.", "storage.", "constant.language.")
#: ...except the unit letters inside a literal (`30s`, `4MB`): part of one DURATION or SIZE token, not a word.
UNIT_SCOPE = "keyword.other.unit."
WORDS = re.compile(r"[A-Za-z_]+(?:\|[A-Za-z_]+)*")


def grammar() -> dict[str, Any]:
    return json.loads(GRAMMAR.read_text())


def capture_groups(regex: str) -> dict[int, str]:
    """The text of each capturing group of an Oniguruma pattern, by number."""
    groups: dict[int, str] = {}
    stack: list[tuple[int | None, int]] = []
    count, i, in_class = 0, 0, False
    while i < len(regex):
        ch = regex[i]
        if ch == "\\":
            i += 2
            continue
        if in_class:
            in_class = ch != "]"
        elif ch == "[":
            in_class = True
        elif ch == "(":
            capturing = not regex.startswith("?", i + 1) or (
                regex.startswith("?<", i + 1) and regex[i + 3 : i + 4] not in ("=", "!")
            )
            if capturing:
                count += 1
            stack.append((count if capturing else None, i + 1))
        elif ch == ")":
            number, start = stack.pop()
            if number is not None:
                groups[number] = regex[start:i]
        i += 1
    assert not stack and not in_class, f"unbalanced pattern: {regex}"
    return groups


def scoped_texts(node: Any, skip: frozenset[str] = frozenset({"comment"})) -> Iterator[tuple[str, str | None]]:
    """(scope name, the pattern text it covers or None for a whole region) for every scope in the grammar.

    Capture scopes cover their group's text; a match rule's name covers the whole match. The comment rule
    is skipped (a suppression directive inside a comment is not a word of the language).
    """
    if isinstance(node, list):
        for item in node:
            yield from scoped_texts(item, skip)
        return
    if not isinstance(node, dict):
        return
    for key, captures in (("match", "captures"), ("begin", "beginCaptures"), ("end", "endCaptures")):
        if key not in node:
            continue
        groups = capture_groups(node[key])
        groups[0] = node[key]
        named = {**node.get(captures, {}), **(node.get("captures", {}) if key == "begin" else {})}
        for number, capture in named.items():
            assert int(number) in groups, f"capture {number} of {node[key]!r}: the pattern has no such group"
            if "name" in capture:
                yield capture["name"], groups[int(number)]
    if "name" in node and ("match" in node or "begin" in node):
        yield node["name"], node.get("match")
    for key, value in node.items():
        if key == "repository":
            for name, rule in value.items():
                if name not in skip:
                    yield from scoped_texts(rule, skip)
        elif key in ("patterns", "captures", "beginCaptures", "endCaptures"):
            yield from scoped_texts(value if key == "patterns" else list(value.values()), skip)


def grammar_keywords() -> set[str]:
    words: set[str] = set()
    for scope, text in scoped_texts(grammar()):
        if not scope.startswith(KEYWORD_SCOPES) or scope.startswith(UNIT_SCOPE) or text is None:
            continue
        if not re.search(r"[A-Za-z]", text):
            continue  # an operator: `->`, `==`, `=`, `|`, `?`
        assert WORDS.fullmatch(text), (
            f"the keyword scope {scope!r} covers {text!r}: write keywords as a capture group `(a|b)` of plain words"
        )
        words.update(text.split("|"))
    return words


def scope_names() -> set[str]:
    """Every scope the grammar can give, with `$N` references expanded to the words their group matches."""
    names: set[str] = set()
    for scope, _ in scoped_texts(grammar(), skip=frozenset()):
        for part in scope.split():
            if "$" not in part:
                names.add(part)
    for scope, number, words in _referenced_groups(grammar()):
        names.update(scope.replace(f"${number}", word) for word in words)
    return names


def _referenced_groups(node: Any) -> Iterator[tuple[str, int, list[str]]]:
    """(scope, N, the words group N matches) for each scope name that refers to a group as `$N`."""
    if isinstance(node, list):
        for item in node:
            yield from _referenced_groups(item)
        return
    if not isinstance(node, dict):
        return
    for key, captures in (("match", "captures"), ("begin", "beginCaptures")):
        if key not in node:
            continue
        groups = capture_groups(node[key])
        scopes = [c["name"] for c in node.get(captures, {}).values() if "name" in c]
        scopes += [node["name"]] if "name" in node else []
        for scope in scopes:
            for number in map(int, re.findall(r"\$(\d+)", scope)):
                text = groups[number]
                assert WORDS.fullmatch(text), f"{scope!r} refers to ${number} = {text!r}, which is not a list of words"
                yield scope, number, text.split("|")
    for value in node.values():
        if isinstance(value, (dict, list)):
            yield from _referenced_groups(value)


def assertions() -> Iterator[tuple[str, str, set[str]]]:
    """(case file, the source text an assertion covers, the scopes it requires) for every assertion."""
    for case in CASES:
        source = ""
        for line in case.read_text().splitlines()[1:]:
            if carets := re.match(r"#( *)(\^+)\s+(.*)$", line):
                start = 1 + len(carets[1])
                covered, required = source[start : start + len(carets[2])], carets[3]
            elif arrow := re.match(r"# <(-+)\s+(.*)$", line):
                covered, required = source[: len(arrow[1])], arrow[2]
            else:
                source = line
                continue
            yield case.name, covered, set(required.split(" - ")[0].split())


def test_the_cases_exist_and_name_the_grammar():
    assert len(CASES) >= 3
    for case in CASES:
        assert case.read_text().startswith('# SYNTAX TEST "source.plait"'), case


def test_the_grammar_is_the_plait_grammar_of_the_extension():
    spec = grammar()
    manifest = json.loads((EXTENSION / "package.json").read_text())
    (language,) = manifest["contributes"]["languages"]
    (contributed,) = manifest["contributes"]["grammars"]
    assert spec["scopeName"] == contributed["scopeName"] == "source.plait"
    assert language["id"] == contributed["language"] == "plait"
    assert language["extensions"] == [".plait"] and spec["fileTypes"] == ["plait"]
    # The extension ships a copy made from this file (copy-grammar.js), so both paths must name it.
    assert contributed["path"] == "./syntaxes/plait.tmLanguage.json"
    configuration = json.loads((EXTENSION / language["configuration"]).read_text())
    assert configuration["comments"] == {"lineComment": "#"}
    assert {"open": "{", "close": "}"} in configuration["autoClosingPairs"]
    # A quote typed inside a string or a comment is text, not the start of a string.
    assert {"open": '"', "close": '"', "notIn": ["string", "comment"]} in configuration["autoClosingPairs"]
    markers = configuration["folding"]["markers"]
    assert re.match(markers["start"], "  # region tools") and re.match(markers["end"], "# endregion")


def test_every_include_names_a_rule_and_every_rule_is_used():
    spec = grammar()
    text = GRAMMAR.read_text()
    included = set(re.findall(r'"include":\s*"#([^"]+)"', text))
    assert included <= set(spec["repository"]), included - set(spec["repository"])
    assert set(spec["repository"]) <= included, set(spec["repository"]) - included


def test_the_grammar_colours_exactly_the_lexers_keywords():
    words = grammar_keywords()
    assert words - set(keywords()) == set(), "coloured as keywords, but the lexer has no such keyword"
    assert set(keywords()) - words == set(), "lexer keywords the grammar does not colour"


def test_every_keyword_is_asserted_with_a_keyword_scope():
    asserted = {
        covered
        for _, covered, scopes in assertions()
        if any(s.startswith(KEYWORD_SCOPES) and not s.startswith(UNIT_SCOPE) for s in scopes)
    }
    assert set(keywords()) - asserted == set()


def test_every_scope_the_grammar_gives_is_asserted_somewhere():
    asserted = set().union(*(scopes for _, _, scopes in assertions()))
    assert scope_names() - asserted - {"source.plait"} == set()


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.name)
def test_each_case_is_plait_the_parser_accepts(case):
    # The assertions are about the language as it is, not about a dialect invented for the grammar.
    module, diagnostics = parse_module(SourceFile.read(case))
    assert module is not None and [str(d) for d in diagnostics] == []
