"""A declaration's checked attribute values → its kind record: the builder the compiler passes fill in.

The passes write what they check into one `Draft` per declaration, under the
names its kind record (src/plait/core/kinds/) declares: a field's name, the
name a spec writes it under (`history` for `keep_last`), or a folded
attribute (a tool's `allow_private`). Writing a name the record does not
declare is a `KeyError` where it is written, not a value the graph would
silently drop.
build_graph makes the record from `fields()`.
"""

from __future__ import annotations

from typing import Any, Iterator

from plait.core.graph import node_attrs
from plait.core.kinds import Node, metas

__all__ = ["NOTHING", "Draft"]

_MISSING: Any = object()
_NAMES: dict[type[Node], frozenset[str]] = {}
_SPELLED: dict[type[Node], dict[str, str]] = {}


def _names(cls: type[Node]) -> frozenset[str]:
    names = _NAMES.get(cls)
    if names is None:
        spelled = _SPELLED[cls] = {name: meta.spelled for name, meta in metas(cls).items() if meta.spelled}
        names = _NAMES[cls] = frozenset(node_attrs(cls)) | frozenset(spelled.values()) | frozenset(cls.folded)
    return names


class Draft:
    """The values checked so far for one declaration of kind `cls`, read and written like a dict."""

    __slots__ = ("cls", "_values")

    def __init__(self, cls: type[Node], **values: Any) -> None:
        self.cls = cls
        self._values: dict[str, Any] = {}
        for key, value in values.items():
            self[key] = value

    def _known(self, key: str) -> str:
        if key not in _names(self.cls):
            raise KeyError(
                f"a {self.cls.kind} record has no attribute {key!r} (src/plait/core/kinds/{self.cls.kind}.py)"
            )
        return key

    def declares(self, key: str) -> bool:
        """Whether the kind record has this attribute (a field, a spec's spelling of one, or a folded one)."""
        return key in _names(self.cls)

    def __getitem__(self, key: str) -> Any:
        return self._values[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self._values[self._known(key)] = value

    def __contains__(self, key: object) -> bool:
        return key in self._values

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def get(self, key: str, default: Any = None) -> Any:
        # A read may ask any kind for any name (a rule reading `parameters` of whatever owns a template): a name the
        # kind does not declare is simply never set. Writes are what the record's names guard.
        return self._values.get(key, default)

    def pop(self, key: str, default: Any = _MISSING) -> Any:
        if default is _MISSING:
            return self._values.pop(self._known(key))
        return self._values.pop(self._known(key), default)

    def fields(self) -> dict[str, Any]:
        """The record's attributes set so far (None leaves the record's default), read under the spec's spelling
        where it has one; `output`, name, span and file are the builder's to give."""
        _names(self.cls)
        spelled = _SPELLED[self.cls]
        values = self._values
        out = {}
        for name in node_attrs(self.cls):
            value = values.get(name)
            if value is None and name in spelled:
                value = values.get(spelled[name])
            if value is not None and name != "output":
                out[name] = value
        return out


#: What a reader gets for a name with no draft (undeclared, or an inline parallel): nothing is set.
NOTHING = Draft(Node)
