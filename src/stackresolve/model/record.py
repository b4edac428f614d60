"""`@record`: a frozen dataclass, defined at a fraction of the cost.

`dataclass(frozen=True)` writes the source of `__init__`, `__repr__`, `__eq__`, `__hash__`, `__setattr__` and
`__delattr__` for each class and compiles it with `exec` when the module is imported: about 0.4 ms a class on a
quiet machine, 17 ms for the 40 records a plan imports (12.6 ms of it compiling). A record is still a dataclass
(`dataclasses.fields`, `replace`, `is_dataclass` and the knowledge snapshot see the same fields, defaults, factories
and metadata), but its methods are the few generic functions below, compiled once with this module and driven by
a table of field names made per class. For a plain class of string annotations (every record here) the fields
are read by `_read_fields` below, as dataclass() reads them but without its ClassVar/InitVar/KW_ONLY pattern
tests; defining the 11 records of model/stack.py takes 0.9 ms instead of 7.9 ms as frozen dataclasses (min of 15
on the loaded 2-core machine).

The methods behave as the dataclass's would: `__init__` takes the same positional and keyword arguments (fields
with `init=False` get their default or factory) and calls `__post_init__`; two records are equal when they are of
the same class and their compared fields are; the hash is that of the compared (or `hash=True`) fields; the repr
is `Name(field=value, ...)`; assigning or deleting an attribute raises `FrozenInstanceError`. `eq=False` leaves
equality and hashing to identity, and `repr=False` leaves the class's own `__repr__`, as with dataclasses."""

from __future__ import annotations

import dataclasses
import reprlib
from dataclasses import MISSING, Field, FrozenInstanceError, dataclass, field, fields
from operator import attrgetter


class _Spec:
    """What the generic methods need to know about one record class."""

    __slots__ = ("names", "keywords", "required", "defaults", "factories", "fixed", "fixed_factories",
                 "post_init", "compared", "hashed", "shown")

    def __init__(self, cls: type):
        own = fields(cls)
        self.names = tuple(f.name for f in own if f.init)  # the parameters, in order
        self.keywords = frozenset(self.names)
        self.required = tuple(f.name for f in own if f.init and f.default is MISSING
                              and f.default_factory is MISSING)
        if self.required and self.names.index(self.required[-1]) >= len(self.required):
            raise TypeError(f"{cls.__qualname__}: non-default argument {self.required[-1]!r} follows default argument")
        self.defaults = {f.name: f.default for f in own if f.default is not MISSING}
        self.factories = tuple((f.name, f.default_factory) for f in own if f.default_factory is not MISSING)
        # What the fields no parameter sets (init=False) start as: their defaults, and their factories
        self.fixed = {f.name: f.default for f in own if not f.init and f.default is not MISSING}
        self.fixed_factories = tuple((name, make) for name, make in self.factories if name not in self.keywords)
        self.post_init = hasattr(cls, "__post_init__")
        self.compared = _values_of(tuple(f.name for f in own if f.compare))
        self.hashed = _values_of(tuple(f.name for f in own if (f.compare if f.hash is None else f.hash)))
        self.shown = tuple(f.name for f in own if f.repr)


def _values_of(names: tuple[str, ...]):
    """A function giving the tuple of a record's values of `names` (operator.attrgetter, a tuple always)."""
    if len(names) > 1:
        return attrgetter(*names)
    if len(names) == 1:
        one = attrgetter(names[0])
        return lambda record: (one(record),)
    return lambda record: ()


def record(cls=None, /, *, eq: bool = True, repr: bool = True):
    """`@record`, `@record(eq=False)`, `@record(eq=False, repr=False)`: as `@dataclass(frozen=True, ...)`."""

    def define(cls: type) -> type:
        if not _read_fields(cls):
            undocumented = not cls.__doc__
            if undocumented:  # else dataclass writes the signature as the docstring (inspect compiles it: ~0.5 ms)
                cls.__doc__ = cls.__name__
            dataclass(init=False, repr=False, eq=False)(cls)  # the fields only: no generated code
            if undocumented:
                cls.__doc__ = None
        cls.__record__ = _Spec(cls)
        own = cls.__dict__
        if "__init__" not in own:
            cls.__init__ = _init
        if repr and "__repr__" not in own:
            cls.__repr__ = _repr
        if eq:
            if "__eq__" not in own:
                cls.__eq__ = _eq
            explicit_hash = own.get("__hash__", MISSING)
            if explicit_hash is MISSING or (explicit_hash is None and "__eq__" in own):
                cls.__hash__ = _hash
        cls.__setattr__ = _setattr
        cls.__delattr__ = _delattr
        return cls

    return define if cls is None else define(cls)


@dataclass(init=False, repr=False, eq=False)
class _FieldsOnly:
    """Its `__dataclass_params__` are those every record's fields are read with (a dataclass deriving from a record
    reads them)."""


def _read_fields(cls: type) -> bool:
    """Give `cls` its dataclass fields as `dataclass()` would for a plain class: one `Field` per annotation, in
    order, its default from the class (a `field(...)` replaced by its default, or removed). False, and nothing
    done, for anything else (a base class with fields, a ClassVar, InitVar or KW_ONLY annotation, a Python whose
    dataclasses module differs): then dataclass() reads them. Reading them here skips what costs most in
    dataclass() for a class of string annotations: three regular-expression tests per field for ClassVar, InitVar
    and KW_ONLY (0.2 ms for a ten-field class)."""
    kind = getattr(dataclasses, "_FIELD", None)
    annotations = cls.__dict__.get("__annotations__", {})
    if kind is None or any(hasattr(base, "__dataclass_fields__") for base in cls.__mro__[1:]) or any(
            type(a) is not str or "ClassVar" in a or "InitVar" in a or "KW_ONLY" in a for a in annotations.values()):
        return False
    own = {}
    for name, annotation in annotations.items():
        default = getattr(cls, name, MISSING)
        if isinstance(default, Field):
            made = default
            if made.default is MISSING:
                delattr(cls, name)
            else:
                setattr(cls, name, made.default)
        else:
            made = field(default=default)
        if made.default is not MISSING and made.default.__class__.__hash__ is None:
            raise ValueError(f"mutable default {type(made.default)} for field {name} is not allowed: use "
                             f"default_factory")
        made.name, made.type, made._field_type = name, annotation, kind
        if made.kw_only is MISSING:
            made.kw_only = False
        own[name] = made
    cls.__dataclass_fields__ = own
    cls.__dataclass_params__ = _FieldsOnly.__dataclass_params__
    if "__match_args__" not in cls.__dict__:
        cls.__match_args__ = tuple(name for name, made in own.items() if made.init)
    return True


def _init(self, *args, **kwargs) -> None:
    spec = self.__record__
    names = spec.names
    state = self.__dict__
    if not kwargs and len(args) == len(names):  # every parameter given in order: the common call, made short
        if spec.fixed:
            state.update(spec.fixed)
        for name, factory in spec.fixed_factories:
            state[name] = factory()
        state.update(zip(names, args))
    else:
        if len(args) > len(names):
            raise TypeError(f"{type(self).__qualname__}() takes {len(names)} arguments but {len(args)} were given")
        if spec.defaults:
            state.update(spec.defaults)
        for name, factory in spec.factories:
            state[name] = factory()
        state.update(zip(names, args))
        if kwargs:
            if not spec.keywords.issuperset(kwargs):
                unknown = kwargs.keys() - spec.keywords
                raise TypeError(f"{type(self).__qualname__}() got an unexpected keyword argument {min(unknown)!r}")
            if args and not kwargs.keys().isdisjoint(names[:len(args)]):
                twice = kwargs.keys() & names[:len(args)]
                raise TypeError(f"{type(self).__qualname__}() got multiple values for argument {min(twice)!r}")
            state.update(kwargs)
        if len(args) < len(spec.required):  # the required parameters come first: the rest were given by keyword
            missing = [name for name in spec.required[len(args):] if name not in kwargs]
            if missing:
                raise TypeError(f"{type(self).__qualname__}() missing required argument(s): "
                                + ", ".join(map(repr, missing)))
    if spec.post_init:
        self.__post_init__()


def replace(obj, /, **changes):
    """`dataclasses.replace`, for a record made through its own `__init__`'s short path (every parameter in
    order): a matrix derives a request per cell. Anything else, and its errors, go to `dataclasses.replace`."""
    cls = type(obj)
    spec = cls.__dict__.get("__record__")
    if spec is None or cls.__init__ is not _init or not spec.keywords.issuperset(changes):
        return dataclasses.replace(obj, **changes)
    state = obj.__dict__
    return cls(*[changes[name] if name in changes else state[name] for name in spec.names])


@reprlib.recursive_repr()
def _repr(self) -> str:
    values = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__record__.shown)
    return f"{type(self).__qualname__}({values})"


def _eq(self, other):
    if other.__class__ is not self.__class__:
        return NotImplemented
    compared = self.__record__.compared
    return compared(self) == compared(other)


def _hash(self) -> int:
    return hash(self.__record__.hashed(self))


def _setattr(self, name: str, value) -> None:
    raise FrozenInstanceError(f"cannot assign to field {name!r}")


def _delattr(self, name: str) -> None:
    raise FrozenInstanceError(f"cannot delete field {name!r}")
