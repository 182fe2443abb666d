"""`plait.core.record`: what the graph and type records rely on beyond the AST's use of it —
per-instance default factories, fields left out of equality and `repr`, and positional records."""

from __future__ import annotations

import dataclasses
import pickle

import pytest

from plait.core.record import Record, record


@record
class _Holder(Record):
    name: str
    tags: dict[str, str] = dataclasses.field(default_factory=dict)
    note: str | None = dataclasses.field(default=None, compare=False, repr=False)


@record(kw_only=False)
class _Pair(Record):
    left: str
    right: int = 0


def test_a_default_factory_gives_each_instance_its_own_value():
    one, two = _Holder(name="a"), _Holder(name="b")
    assert one.tags == {} and one.tags is not two.tags
    given = {"k": "v"}
    assert _Holder(name="c", tags=given).tags is given


def test_a_field_with_compare_false_is_left_out_of_equality_hashing_and_repr_if_asked():
    one, two = _Holder(name="a", note="x"), _Holder(name="a", note="y")
    assert one == two
    assert _Holder(name="a") != _Holder(name="a", tags={"k": "v"})
    assert repr(one) == "_Holder(name='a', tags={})"
    assert one.note == "x"


def test_a_positional_record_takes_arguments_in_field_order_and_stays_frozen():
    pair = _Pair("a", 2)
    assert pair == _Pair(left="a", right=2) and hash(pair) == hash(_Pair("a", 2))
    assert _Pair("b").right == 0
    assert pair.__match_args__ == ("left", "right")
    with pytest.raises(dataclasses.FrozenInstanceError):
        pair.left = "c"  # type: ignore[misc]  # assigning is what the test checks fails
    assert pickle.loads(pickle.dumps(pair)) == pair
    assert dataclasses.replace(pair, right=3) == _Pair("a", 3)


def test_a_keyword_only_record_refuses_positional_arguments():
    with pytest.raises(TypeError):
        _Holder("a")  # type: ignore[misc]  # the call the test checks is refused


def _all_records() -> list[type]:
    import plait.compiler.flow  # noqa: F401 - imported for their record classes
    import plait.core.diagnostics  # noqa: F401
    import plait.core.graph  # noqa: F401
    import plait.core.redact  # noqa: F401
    import plait.dsl.ast  # noqa: F401

    found, todo = [], list(Record.__subclasses__())
    while todo:
        cls = todo.pop()
        # The class statement's own class, which `@record` rebuilt with slots, may linger until collected.
        if "_specs" in cls.__dict__:
            found.append(cls)
        todo.extend(cls.__subclasses__())
    return found


def test_the_dataclass_view_made_on_first_use_agrees_with_what_records_are_built_from():
    # `dataclasses.fields` comes from dataclasses itself, on first use; the constructor, equality and
    # slots come from the record's own reading of the class body: the two must name the same fields.
    records = _all_records()
    assert len(records) > 60
    for cls in records:
        view = dataclasses.fields(cls)
        assert tuple(f.name for f in view) == cls._names, cls
        assert dataclasses.is_dataclass(cls)
        for f, spec in zip(view, cls._specs):
            assert (f.default, f.default_factory, f.compare, f.kw_only) == (
                spec.default,
                spec.factory,
                spec.compare,
                spec.kw_only,
            ), (cls, f.name)


def test_a_record_is_built_without_running_dataclasses_until_something_asks():
    @record
    class Lazy(Record):
        a: int
        b: str = "x"

    assert not isinstance(Lazy.__dict__["__dataclass_fields__"], dict)  # not made yet
    made = Lazy(a=1)
    assert (made.a, made.b) == (1, "x") and not hasattr(made, "__dict__")
    assert [f.name for f in dataclasses.fields(made)] == ["a", "b"]
    assert dataclasses.replace(made, b="y") == Lazy(a=1, b="y")
    assert dataclasses.asdict(made) == {"a": 1, "b": "x"}
