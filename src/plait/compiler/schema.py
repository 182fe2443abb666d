"""Declaration kinds (src/plait/core/kinds/) → the attributes each accepts, their value types and defaults.

Read from the kind records' field metadata, one table drives attribute
checking, normalisation into graph attributes, and "did you mean"
suggestions for unknown attributes.
"""

from __future__ import annotations

from plait.core.kinds import DECLARED, KINDS, RUNNABLE_KINDS, TOOL_CHOICES, Attr, spec_attrs
from plait.core.vocab import ERROR_KINDS, PROVIDERS

__all__ = [
    "Attr",
    "ERROR_KINDS",
    "PROVIDERS",
    "RUNNABLE_KINDS",
    "SCHEMAS",
    "TOOL_CHOICES",
    "TYPED_BLOCKS",
    "a",
    "suggest",
]

#: Declaration kind → attribute name as written → how it is written, in the kind's field order.
SCHEMAS: dict[str, dict[str, Attr]] = {kind: spec_attrs(KINDS[kind]) for kind in DECLARED}

#: The attributes whose strings are templates (`{{...}}` reads other steps' results), by declaration kind.
TEMPLATES: dict[str, tuple[str, ...]] = {
    kind: names
    for kind, attrs in SCHEMAS.items()
    if (names := tuple(name for name, attr in attrs.items() if attr.type == "template"))
}

#: The typed blocks (`params`, `output`, `answer`) each kind may have.
TYPED_BLOCKS: dict[str, tuple[str, ...]] = {kind: cls.blocks for kind, cls in KINDS.items() if cls.blocks}


def a(kind: str) -> str:
    """`kind` with its indefinite article: "a tool", "an agent"."""
    return f"an {kind}" if kind[:1] in "aeiou" else f"a {kind}"


#: Candidate names one check compares for "did you mean" hints over the spec's own names, in all (about 2 s of
#: difflib): a hint per unknown name compares it with every declaration, so 4,000 undefined names among 4,000
#: agents took a minute (and 100,000 of each, hours). Past it, names are reported without a hint.
HINT_BUDGET = 200_000


class Hints:
    """ "Did you mean" within one check's budget of candidates compared (see HINT_BUDGET)."""

    __slots__ = ("budget",)

    def __init__(self, budget: int | None = None) -> None:
        self.budget = HINT_BUDGET if budget is None else budget

    def __call__(self, word: str, candidates: list[str] | tuple[str, ...]) -> str | None:
        self.budget -= len(candidates)
        return suggest(word, candidates) if self.budget >= 0 else None


def suggest(word: str, candidates: list[str] | tuple[str, ...]) -> str | None:
    """The candidate closest to `word` for a "did you mean" hint, or None."""
    # difflib's ratio is 2*M/(len(a)+len(b)) with M <= the shorter length, so it
    # cannot reach 0.6 when one word is over 2.34x the other. Dropping those first
    # gives the same answer without indexing a huge word (a 1 MB string took seconds).
    near = [c for c in candidates if len(word) <= 2.34 * len(c) and len(c) <= 2.34 * len(word)]
    if not near:
        return None
    import difflib  # only a spec with a misspelt name needs it: not imported by every `plait check`

    matches = difflib.get_close_matches(word, near, n=1, cutoff=0.6)
    return matches[0] if matches else None
