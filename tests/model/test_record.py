"""model/record.py: `@record` behaves as `@dataclass(frozen=True)` (the reference the tests hold it to: the same
class written both ways must construct, compare, hash, print, refuse assignment and `replace` alike), without
generating code per class."""

from __future__ import annotations

import dataclasses
from dataclasses import FrozenInstanceError, dataclass, field
from functools import cached_property
from typing import ClassVar

import pytest

from stackresolve.model.record import record, replace


def pair(**options):
    """The same class as a frozen dataclass and as a record."""

    def make(decorate):
        @decorate
        class Pin:
            name: str
            version: str
            extras: tuple[str, ...] = ()
            notes: list = field(default_factory=list, compare=False)
            cached: dict = field(default_factory=dict, init=False, repr=False, compare=False)
            index: str | None = None

            @cached_property
            def label(self) -> str:
                return f"{self.name}=={self.version}"

        return Pin

    return make(dataclass(frozen=True, **options)), make(record(**options))


def test_construction_positional_keyword_defaults_and_factories_as_a_dataclass():
    for cls in pair():
        pin = cls("tensorflow", "2.15.0", index="https://index.invalid/simple")
        assert (pin.name, pin.version, pin.extras, pin.notes, pin.cached, pin.index) == \
            ("tensorflow", "2.15.0", (), [], {}, "https://index.invalid/simple")
        assert pin.notes is not cls("a", "b").notes  # a fresh list each
        assert pin.label == "tensorflow==2.15.0"  # cached_property still writes the instance's dict


@pytest.mark.parametrize("args,kwargs", [(("a",), {}), (("a", "b", (), [], None, "x"), {}), (("a", "b"), {"nope": 1}),
                                         (("a", "b"), {"name": "c"}), (("a", "b"), {"cached": {}})])
def test_wrong_arguments_raise_type_error_as_a_dataclass(args, kwargs):
    for cls in pair():
        with pytest.raises(TypeError):
            cls(*args, **kwargs)


def test_equality_hash_and_repr_as_a_dataclass():
    reference, ours = pair()
    for a, b in [(("a", "1"), ("a", "1")), (("a", "1"), ("a", "2"))]:
        assert (reference(*a) == reference(*b)) == (ours(*a) == ours(*b))
        assert (hash(reference(*a)) == hash(reference(*b))) == (hash(ours(*a)) == hash(ours(*b)))
    assert ours("a", "1", notes=[1]) == ours("a", "1", notes=[2])  # compare=False is not compared
    assert ours("a", "1") != reference("a", "1")  # another class: never equal
    assert repr(ours("a", "1", ("x",))) == repr(reference("a", "1", ("x",)))
    assert hash(ours("a", "1")) == hash(("a", "1", (), None))  # the compared fields, as a dataclass hashes them


def test_identity_equality_with_eq_false():
    reference, ours = pair(eq=False)
    assert ours("a", "1") != ours("a", "1")
    one = ours("a", "1")
    assert one == one and hash(one) == object.__hash__(one)
    assert reference.__hash__ is object.__hash__ and ours.__hash__ is object.__hash__


def test_frozen_replace_and_fields_as_a_dataclass():
    for cls in pair():
        pin = cls("a", "1")
        with pytest.raises(FrozenInstanceError):
            pin.name = "b"
        with pytest.raises(FrozenInstanceError):
            del pin.name
        changed = dataclasses.replace(pin, version="2")
        assert (changed.name, changed.version) == ("a", "2") and type(changed) is cls
        assert dataclasses.is_dataclass(cls)
        assert [f.name for f in dataclasses.fields(cls)] == ["name", "version", "extras", "notes", "cached", "index"]


@pytest.mark.parametrize("changes", [{}, {"version": "2"}, {"extras": ("x",), "index": "i"}, {"name": "b", "notes": [1]}])
def test_record_replace_is_dataclasses_replace(changes):
    reference, ours = pair()
    made = {cls: replace(cls("a", "1", notes=[0]), **changes) for cls in (reference, ours)}
    assert type(made[ours]) is ours
    for name in ("name", "version", "extras", "notes", "cached", "index"):
        assert getattr(made[ours], name) == getattr(made[reference], name)
    pin = ours("a", "1")
    assert pin.label == "a==1"
    assert replace(pin, version="2").label == "a==2"  # a cached value is not carried over


@pytest.mark.parametrize("changes,error", [({"cached": {}}, ValueError), ({"nope": 1}, TypeError)])
def test_record_replace_raises_as_dataclasses_replace(changes, error):
    for cls in pair():
        with pytest.raises(error):
            replace(cls("a", "1"), **changes)


def test_post_init_runs_and_may_set_through_object():
    @record
    class Normalised:
        text: str

        def __post_init__(self):
            object.__setattr__(self, "text", self.text.strip())

    assert Normalised(" a ").text == "a"
    assert dataclasses.replace(Normalised("a"), text=" b ").text == "b"
    assert replace(Normalised("a"), text=" b ").text == "b"


def test_a_class_keeps_its_own_methods():
    @record
    class Own:
        value: int

        def __repr__(self) -> str:
            return "own"

        def __eq__(self, other):
            return True

        def __hash__(self):
            return 7

    assert repr(Own(1)) == "own" and Own(1) == Own(2) and hash(Own(1)) == 7


def test_no_code_is_generated_per_class():
    """The methods are shared functions, not ones compiled for the class (that is the point)."""
    reference, ours = pair()
    assert ours.__init__ is pair()[1].__init__
    assert reference.__init__ is not pair()[0].__init__


def test_the_fields_are_those_dataclass_reads():
    reference, ours = pair()
    attributes = ("name", "type", "default", "default_factory", "init", "repr", "hash", "compare", "metadata",
                  "kw_only", "_field_type")
    assert [[getattr(f, a) for a in attributes] for f in dataclasses.fields(ours)] == \
        [[getattr(f, a) for a in attributes] for f in dataclasses.fields(reference)]
    assert ours.__match_args__ == reference.__match_args__
    assert ours.extras == reference.extras == () and not hasattr(ours, "notes")  # class defaults as dataclass leaves them


def test_a_class_var_or_a_base_with_fields_goes_through_dataclass():
    @record
    class Counted:
        limit: ClassVar[int] = 3
        value: int = 0

    assert [f.name for f in dataclasses.fields(Counted)] == ["value"] and Counted(2).value == 2

    @record
    class Base:
        a: int

    @record
    class Derived(Base):
        b: int = 1

    assert [f.name for f in dataclasses.fields(Derived)] == ["a", "b"] and Derived(5).a == 5


def test_definition_errors_as_a_dataclass():
    with pytest.raises(ValueError):
        @record
        class MutableDefault:
            items: list = []  # noqa: RUF012

    with pytest.raises(TypeError):
        @record
        class Order:
            a: int = 0
            b: int
