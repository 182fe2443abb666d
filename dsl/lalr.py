"""The fast path's parser: tokens → the tree lark would build, by lark's LALR table and tree-shaping rules,
read from the generated tables and driven by a lean loop.

The table and the shape of every rule's children (which tokens are dropped,
which helper rules are spliced in, where `[optional]` parts leave a None)
are lark's, so the trees built are exactly the ones lark would build; a
test checks that on generated and mutated specs. What differs is
bookkeeping: each action is one lookup that gives either the next state
(shift) or a prepared (size, callback, rule name) triple (reduce). On a
token the table has no action for, it raises `ParseMismatch` without
analysing the error; the caller has lark parse the text, which explains it.
"""

from __future__ import annotations

from itertools import chain
from typing import Any, Callable, Iterable

__all__ = ["ParseMismatch", "TableParser"]


class ParseMismatch(Exception):
    """No action for a token: a syntax error, which lark will describe."""


Callback = Callable[[list], Any]


def _rule_callback(builder: Any, name: str, expand1: bool, child_filter: tuple | None) -> Callback:
    """The callback lark's parse-tree builder makes for a rule, rebuilt from its description."""
    method = getattr(builder, name, None)
    if method is None:
        default = builder.__default__

        def method(children: list, _name: str = name) -> Any:
            return default(_name, children)

    if expand1:  # a `?rule`: one child stands for the rule

        def call(children: list) -> Any:
            return children[0] if len(children) == 1 else method(children)

    else:
        call = method

    if child_filter is None:
        return call
    placeholders, include, nones_after = child_filter
    keep = tuple(i for i, _, _ in include)
    if not placeholders and not any(inline for _, inline, _ in include):
        # Only dropping tokens (`"="`, `","`): a comprehension.
        def filtered(children: list) -> Any:
            return call([children[i] for i in keep])

        return filtered

    def shaped(children: list) -> Any:
        out: list = []
        for i, inline, nones in include:
            if nones:
                out += [None] * nones
            if inline:
                if out:
                    out += children[i].children
                else:
                    # Repetitions are left-recursive (`xs: x | xs x`): extending the
                    # inner list in place, as lark does, keeps a long list linear.
                    out = children[i].children
            else:
                out.append(children[i])
        if nones_after:
            out += [None] * nones_after
        return call(out)

    return shaped


class TableParser:
    def __init__(self, tables: Any, builder: Any) -> None:
        rules = [
            (size, _rule_callback(builder, callback, expand1, child_filter), origin)
            for origin, size, callback, expand1, child_filter in tables.RULES
        ]
        self.start_state, self.end_state = tables.START, tables.END
        # state -> symbol -> next state (int) or (size, callback, rule name) to reduce by
        self.actions: dict[int, dict[str, Any]] = {
            state: {symbol: arg if arg >= 0 else rules[~arg] for symbol, arg in row.items()}
            for state, row in tables.ACTIONS.items()
        }

    def parse(self, tokens: Iterable[Any]) -> Any:
        actions, end_state = self.actions, self.end_state
        states = [self.start_state]
        values: list[Any] = []
        push_state, push_value = states.append, values.append
        for tok in chain(tokens, (_END,)):  # any iterable: the lexer's stream is consumed as it comes
            kind = tok.type
            while True:
                act = actions[states[-1]].get(kind)
                if act.__class__ is int:
                    if tok is _END:
                        raise ParseMismatch(None)
                    push_state(act)
                    push_value(tok)
                    break
                if act is None:
                    raise ParseMismatch(tok)
                size, callback, origin = act
                if size:
                    children = values[-size:]
                    del values[-size:]
                    del states[-size:]
                else:
                    children = []
                value = callback(children)
                state = actions[states[-1]][origin]
                # Only the reduction to `start`, at the end of the input, leads here.
                if state == end_state:
                    return value
                push_value(value)
                push_state(state)
        raise ParseMismatch(None)


class _EndOfInput:
    type = "$END"


_END = _EndOfInput()
