"""Class body → immutable slotted dataclass, made cheaply: `@record` and `Record`.

`@dataclass(frozen=True, slots=True)` writes six methods per class with `exec`
(`__init__`, `__repr__`, `__eq__`, `__hash__`, `__setattr__`, `__delattr__`),
about a quarter of a millisecond each: for the forty AST node classes that was
a fifth of a small `plait check` process. A record is the same thing built
with one `exec` per class: it is a dataclass (`dataclasses.fields`,
`replace`, `asdict` work), slotted, keyword-only, and frozen (assigning raises
`dataclasses.FrozenInstanceError`); equality, hashing and `repr` are the
dataclass ones, defined once on `Record` over each class's field names
(`field(compare=False)` and `field(repr=False)` leave a field out of them,
`field(default_factory=...)` gives each instance its own default).
Subclass `Record` and decorate with `@record`.
"""

from __future__ import annotations

from dataclasses import MISSING, FrozenInstanceError, dataclass, field, fields
from operator import attrgetter
from typing import Any, Callable, ClassVar, TypeVar, dataclass_transform, overload

__all__ = ["Record", "record"]


class Record:
    """Base of every record: frozen, compared and hashed by its fields in order."""

    __slots__ = ()
    __dataclass_fields__: ClassVar[dict[str, Any]]
    #: Field names in declaration order, and a getter of their values as a tuple (set by `@record`).
    _names: ClassVar[tuple[str, ...]] = ()
    _values: ClassVar[Callable[[Any], tuple]] = staticmethod(lambda self: ())
    #: The values equality and hashing compare (fields without `compare=False`), and the names `repr` shows.
    _key: ClassVar[Callable[[Any], tuple]] = staticmethod(lambda self: ())
    _shown: ClassVar[tuple[str, ...]] = ()

    def __setattr__(self, name: str, value: object) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return type(self)._key(self) == type(self)._key(other)

    def __hash__(self) -> int:
        return hash(type(self)._key(self))

    def __repr__(self) -> str:
        inner = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._shown)
        return f"{self.__class__.__qualname__}({inner})"

    # Pickling and copying restore slots through the descriptors, past the frozen __setattr__.
    def __getstate__(self) -> tuple:
        return type(self)._values(self)

    def __setstate__(self, state: tuple) -> None:
        cls = self.__class__
        for name, value in zip(self._names, state):
            getattr(cls, name).__set__(self, value)


R = TypeVar("R", bound=Record)


@overload
def record(cls: type[R], /) -> type[R]: ...


@overload
def record(*, kw_only: bool = True) -> Callable[[type[R]], type[R]]: ...


@dataclass_transform(kw_only_default=True, frozen_default=True, field_specifiers=(field,))
def record(cls: type[R] | None = None, /, *, kw_only: bool = True) -> type[R] | Callable[[type[R]], type[R]]:
    """Make `cls` (a subclass of `Record` with annotated fields) a frozen slotted dataclass.

    Keyword-only unless `@record(kw_only=False)`: small value types (`ListType(TEXT)`) read better positional."""
    if cls is None:
        return lambda c: _make(c, kw_only)
    return _make(cls, kw_only)


def _make(cls: type[R], kw_only: bool) -> type[R]:
    made: Any = dataclass(slots=True, kw_only=kw_only, init=False, repr=False, eq=False)(cls)
    made._names = tuple(f.name for f in fields(made))
    made._values = staticmethod(_getter(made._names))
    made._key = staticmethod(_getter(tuple(f.name for f in fields(made) if f.compare)))
    made._shown = tuple(f.name for f in fields(made) if f.repr)
    made.__init__ = _init(made)
    return made


def _getter(names: tuple[str, ...]) -> Callable[[Any], tuple]:
    """The values of `names` as a tuple (attrgetter of one name gives the value itself, of none fails)."""
    if not names:
        return lambda self: ()
    getter = attrgetter(*names)
    return getter if len(names) > 1 else lambda self: (getter(self),)


_FACTORY = object()


def _init(cls: type) -> Callable[..., None]:
    """`__init__(self, a, b=default, *, c, ...)` setting each slot through its descriptor."""
    env: dict[str, Any] = {"_FACTORY": _FACTORY}
    positional: list[str] = []
    keywords: list[str] = []
    body: list[str] = []
    for f in fields(cls):
        if not f.init:
            raise TypeError(f"{cls.__name__}.{f.name}: every field of a record is set by its constructor")
        params = keywords if f.kw_only else positional
        env[f"_set_{f.name}"] = getattr(cls, f.name).__set__
        if f.default_factory is not MISSING:
            # As dataclasses does: a sentinel default, replaced by a fresh value from the factory per instance.
            env[f"_f_{f.name}"] = f.default_factory
            params.append(f"{f.name}=_FACTORY")
            body.append(f"    _set_{f.name}(self, _f_{f.name}() if {f.name} is _FACTORY else {f.name})\n")
            continue
        if f.default is not MISSING:
            env[f"_d_{f.name}"] = f.default
            params.append(f"{f.name}=_d_{f.name}")
        else:
            params.append(f.name)
        body.append(f"    _set_{f.name}(self, {f.name})\n")
    signature = ", ".join(["self", *positional, *(["*", *keywords] if keywords else [])])
    source = f"def __init__({signature}):\n" + ("".join(body) or "    pass\n")
    exec(source, env)  # noqa: S102 - generated from the class's own field names, as dataclasses does
    init: Callable[..., None] = env["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    return init
