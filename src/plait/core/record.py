"""Class body → immutable slotted dataclass, made cheaply: `@record` and `Record`.

`@dataclass(frozen=True, slots=True)` writes six methods per class with `exec`
(`__init__`, `__repr__`, `__eq__`, `__hash__`, `__setattr__`, `__delattr__`)
and then works out its fields, about half a millisecond per class: for the
hundred record classes a `plait check` imports (AST, types, graph,
diagnostics) that was most of its start-up. A record is the same thing built
from one reading of the class body: it is slotted, keyword-only (or
positional with `@record(kw_only=False)`) and frozen (assigning raises
`dataclasses.FrozenInstanceError`); equality, hashing and `repr` are the
dataclass ones, defined once on `Record` over each class's field names
(`field(compare=False)` and `field(repr=False)` leave a field out of them,
`field(default_factory=...)` gives each instance its own default). Its
`__init__` is written at the first construction, and what `dataclasses`
reads (`fields`, `replace`, `asdict`, `is_dataclass` all work) is made by
`dataclasses` itself at the first such call. Subclass `Record` and decorate
with `@record`.
"""

from __future__ import annotations

from dataclasses import MISSING, Field, FrozenInstanceError, dataclass, field
from functools import cache
from operator import attrgetter
from types import FunctionType
from typing import Any, Callable, ClassVar, NamedTuple, TypeVar, dataclass_transform, get_origin, overload

__all__ = ["Record", "field_names", "record"]


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
    _specs: ClassVar[tuple[Any, ...]] = ()

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


def field_names(cls: type[Record]) -> tuple[str, ...]:
    """A record class's field names in order: `dataclasses.fields` without making dataclasses' view."""
    return cls._names


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


class _Spec(NamedTuple):
    """One field as `@record` reads it from the class body (a plain default or a `dataclasses.field`)."""

    name: str
    default: Any
    factory: Any
    compare: bool
    repr: bool
    kw_only: bool


def _is_classvar(hint: object) -> bool:
    # Annotations are strings under `from __future__ import annotations`; plait writes `ClassVar[...]`.
    if isinstance(hint, str):
        return hint.startswith(("ClassVar", "typing.ClassVar"))
    return hint is ClassVar or get_origin(hint) is ClassVar


def _make(cls: type[R], kw_only: bool) -> type[R]:
    own_fields: dict[str, Any] = {}
    specs: dict[str, _Spec] = {}
    for base in reversed(cls.__mro__[1:]):
        for spec in base.__dict__.get("_specs", ()):
            specs[spec.name] = spec
    inherited = set(specs)
    for name, hint in cls.__dict__.get("__annotations__", {}).items():
        if _is_classvar(hint):
            continue
        value = cls.__dict__.get(name, MISSING)
        own_fields[name] = value
        if isinstance(value, Field):
            if not value.init:
                raise TypeError(f"{cls.__name__}.{name}: every field of a record is set by its constructor")
            key_only = kw_only if value.kw_only is MISSING else bool(value.kw_only)
            specs[name] = _Spec(name, value.default, value.default_factory, value.compare, value.repr, key_only)
        else:
            specs[name] = _Spec(name, value, MISSING, True, True, kw_only)
    # The class again, with slots for its own fields and without their defaults (a slot and a class
    # attribute of one name cannot coexist), as `dataclass(slots=True)` does. Everything the record adds
    # goes into its namespace: set on the made class one by one, each assignment cost as much again.
    names = tuple(specs)
    namespace = {k: v for k, v in cls.__dict__.items() if k not in own_fields and k not in ("__dict__", "__weakref__")}
    namespace["__slots__"] = tuple(name for name in own_fields if name not in inherited)
    namespace["__match_args__"] = tuple(s.name for s in specs.values() if not s.kw_only)
    namespace["__qualname__"] = cls.__qualname__
    namespace["_specs"] = tuple(specs.values())
    namespace["_names"] = names
    namespace["_values"] = staticmethod(_getter(names))
    namespace["_key"] = staticmethod(_getter(tuple(s.name for s in specs.values() if s.compare)))
    namespace["_shown"] = tuple(s.name for s in specs.values() if s.repr)
    made_cell: list[Any] = []  # the made class, for what runs later (its `__init__` and dataclass view)
    namespace["__init__"] = _lazy_init(made_cell, cls.__qualname__)
    # What `dataclasses` reads (fields, replace, asdict, is_dataclass), made on first use: most
    # classes of a `plait check` are never introspected, and building them was most of their cost.
    namespace["__dataclass_fields__"] = _DataclassView(made_cell, own_fields, kw_only, "__dataclass_fields__")
    namespace["__dataclass_params__"] = _DataclassView(made_cell, own_fields, kw_only, "__dataclass_params__")
    if cls.__doc__ is None:
        namespace["__doc__"] = f"{cls.__name__}({', '.join(names)})"
    metaclass: Any = type(cls)
    made: Any = metaclass(cls.__name__, cls.__bases__, namespace)
    made_cell.append(made)
    return made


class _DataclassView:
    """`__dataclass_fields__` / `__dataclass_params__` of a record, from `dataclasses` itself on first read.

    `dataclass()` runs on a stand-in class with the record's bases and its own annotations and
    defaults, so the fields are exactly the ones `@dataclass` would make; both attributes are then
    set on the record, replacing these placeholders."""

    def __init__(self, made: list[type], own: dict[str, Any], kw_only: bool, attr: str) -> None:
        self.made, self.own, self.kw_only, self.attr = made, own, kw_only, attr

    def __get__(self, obj: object, owner: type | None = None) -> Any:
        cls: Any = self.made[0]
        # With a docstring, `dataclass()` does not make one from `inspect.signature`, which tokenizes
        # `object`'s text signature and so compiles tokenize's large pattern (~4 ms per process).
        namespace: dict[str, Any] = {"__module__": cls.__module__, "__qualname__": cls.__qualname__}
        namespace["__doc__"] = cls.__doc__
        namespace["__annotations__"] = cls.__dict__.get("__annotations__", {})
        namespace.update((name, value) for name, value in self.own.items() if value is not MISSING)
        stand_in: Any = dataclass(frozen=True, init=False, repr=False, eq=False, kw_only=self.kw_only)(
            type(cls.__name__, cls.__bases__, namespace)
        )
        for attr in ("__dataclass_fields__", "__dataclass_params__"):
            setattr(cls, attr, getattr(stand_in, attr))
        return getattr(cls, self.attr)


def _lazy_init(made: list[type], qualname: str) -> Callable[..., None]:
    """An `__init__` that writes the real one on the class (`made[0]`, once made) at its first call (most
    records of a run are never made, and writing one is an `exec`)."""

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        cls = made[0]
        init = _init(cls)
        cls.__init__ = init  # type: ignore[misc]  # replacing the method on the class is the point
        init(self, *args, **kwargs)

    __init__.__qualname__ = f"{qualname}.__init__"
    return __init__


def _getter(names: tuple[str, ...]) -> Callable[[Any], tuple]:
    """The values of `names` as a tuple (attrgetter of one name gives the value itself, of none fails)."""
    if not names:
        return lambda self: ()
    getter = attrgetter(*names)
    return getter if len(names) > 1 else lambda self: (getter(self),)


_FACTORY = object()


def _init(cls: Any) -> Callable[..., None]:
    """`__init__(self, a, b=default, *, c, ...)` setting each slot through its descriptor."""
    specs = cls._specs
    positional = [f for f in specs if not f.kw_only]
    keywords = [f for f in specs if f.kw_only]
    defaulted = [f.default is not MISSING for f in positional]
    if any(f.factory is not MISSING for f in specs) or defaulted != sorted(defaulted):
        return _written_init(cls)
    # The common shape (no factory; positional defaults trailing, as Python requires) needs no `compile`:
    # one closure per shape, renamed to the class's fields. Writing each `__init__` cost ~80 us, and a small
    # `plait check` makes about forty.
    ordered = (*positional, *keywords)
    made = _shape(len(ordered))(*(getattr(cls, f.name).__set__ for f in ordered))
    code = made.__code__.replace(
        co_argcount=1 + len(positional),
        co_kwonlyargcount=len(keywords),
        co_varnames=("self", *(f.name for f in ordered)),
        co_qualname=f"{cls.__qualname__}.__init__",
    )
    init: Callable[..., None] = FunctionType(
        code,
        made.__globals__,
        "__init__",
        tuple(f.default for f in positional if f.default is not MISSING) or None,
        made.__closure__,
    )
    init.__kwdefaults__ = {f.name: f.default for f in keywords if f.default is not MISSING} or None
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    return init


@cache
def _shape(count: int) -> Callable[..., Callable[..., None]]:
    """A maker of `__init__(self, a0, .., aN)` calling the setter it is given for each argument (which of
    them are keyword-only is set on the code object: one compile per field count, not per signature)."""
    params = ", ".join(["self", *(f"a{i}" for i in range(count))])
    body = "".join(f"        s{i}(self, a{i})\n" for i in range(count)) or "        pass\n"
    source = f"def make({', '.join(f's{i}' for i in range(count))}):\n    def __init__({params}):\n{body}"
    env: dict[str, Any] = {}
    exec(source + "    return __init__\n", env)  # noqa: S102 - made from a count alone
    return env["make"]


def _written_init(cls: Any) -> Callable[..., None]:
    """`_init` for a class with a default factory: its `__init__` written out and compiled."""
    env: dict[str, Any] = {"_FACTORY": _FACTORY}
    positional: list[str] = []
    keywords: list[str] = []
    body: list[str] = []
    for f in cls._specs:
        params = keywords if f.kw_only else positional
        env[f"_set_{f.name}"] = getattr(cls, f.name).__set__
        if f.factory is not MISSING:
            # As dataclasses does: a sentinel default, replaced by a fresh value from the factory per instance.
            env[f"_f_{f.name}"] = f.factory
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
