"""Class body → immutable slotted dataclass, made cheaply: `@record` and `Record`.

`@dataclass(frozen=True, slots=True)` writes six methods per class with `exec`
(`__init__`, `__repr__`, `__eq__`, `__hash__`, `__setattr__`, `__delattr__`),
about a quarter of a millisecond each: for the forty AST node classes that was
a fifth of a small `plait check` process. A record is the same thing built
with one `exec` per class: it is a dataclass (`dataclasses.fields`,
`replace`, `asdict` work), slotted, keyword-only, and frozen (assigning raises
`dataclasses.FrozenInstanceError`); equality, hashing and `repr` are the
dataclass ones, defined once on `Record` over each class's field names.
Subclass `Record` and decorate with `@record`.
"""

from __future__ import annotations

from dataclasses import MISSING, FrozenInstanceError, dataclass, fields
from operator import attrgetter
from typing import Any, Callable, ClassVar, TypeVar, dataclass_transform

__all__ = ["Record", "record"]


class Record:
    """Base of every record: frozen, compared and hashed by its fields in order."""

    __slots__ = ()
    __dataclass_fields__: ClassVar[dict[str, Any]]
    #: Field names in declaration order, and a getter of their values as a tuple (set by `@record`).
    _names: ClassVar[tuple[str, ...]] = ()
    _values: ClassVar[Callable[[Any], tuple]] = staticmethod(lambda self: ())

    def __setattr__(self, name: str, value: object) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return type(self)._values(self) == type(self)._values(other)

    def __hash__(self) -> int:
        return hash(type(self)._values(self))

    def __repr__(self) -> str:
        inner = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._names)
        return f"{self.__class__.__qualname__}({inner})"

    # Pickling and copying restore slots through the descriptors, past the frozen __setattr__.
    def __getstate__(self) -> tuple:
        return type(self)._values(self)

    def __setstate__(self, state: tuple) -> None:
        cls = self.__class__
        for name, value in zip(self._names, state):
            getattr(cls, name).__set__(self, value)


R = TypeVar("R", bound=Record)


@dataclass_transform(kw_only_default=True, frozen_default=True)
def record(cls: type[R]) -> type[R]:
    """Make `cls` (a subclass of `Record` with annotated fields) a frozen slotted keyword-only dataclass."""
    made: Any = dataclass(slots=True, kw_only=True, init=False, repr=False, eq=False)(cls)
    names = tuple(f.name for f in fields(made))
    getter = attrgetter(*names)
    made._names = names
    # attrgetter of one name gives the value itself, of several a tuple: always a tuple here.
    made._values = staticmethod(getter if len(names) > 1 else lambda self: (getter(self),))
    made.__init__ = _init(made)
    return made


def _init(cls: type) -> Callable[..., None]:
    """`__init__(self, *, field=default, ...)` setting each slot through its descriptor."""
    env: dict[str, Any] = {}
    params, body = [], []
    for f in fields(cls):
        env[f"_set_{f.name}"] = getattr(cls, f.name).__set__
        if f.default_factory is not MISSING:
            raise TypeError(f"{cls.__name__}.{f.name}: a record's defaults are plain values")
        if f.default is not MISSING:
            env[f"_d_{f.name}"] = f.default
            params.append(f"{f.name}=_d_{f.name}")
        else:
            params.append(f.name)
        body.append(f"    _set_{f.name}(self, {f.name})\n")
    signature = f"self, *, {', '.join(params)}" if params else "self"
    source = f"def __init__({signature}):\n" + ("".join(body) or "    pass\n")
    exec(source, env)  # noqa: S102 - generated from the class's own field names, as dataclasses does
    init: Callable[..., None] = env["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    return init
