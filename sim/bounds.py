"""Declared bounds of numeric settings: one :class:`Bound` per setting, one checker.

A policy's ``Params`` dataclass declares its numeric settings' bounds with the :func:`bounded` class
decorator (checked whenever the dataclass is built, before any run); a capacity kind's
:class:`sim.capacity.kinds.Param` and a workload's :class:`sim.workloads.registry.WorkloadSpec` carry
theirs. Every check refuses NaN and ±inf, and says in one line the setting, its value and the range.

A bound may mark a setting as a time step (``step_s``: seconds per unit): a run then has about
``horizon / (value × step_s)`` steps of it, which :mod:`sim.estimate` counts before the run.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class Bound:
    """The valid values of one numeric setting: finite and in ``[lo, hi]`` (``lo_open``/``hi_open``: the
    end itself excluded), or — when ``auto`` says what it means — any negative value (the automatic
    choice). ``units`` names the unit in messages; ``step_s`` (seconds per unit) marks a time step (about
    ``horizon / (value × step_s)`` of them in a run), ``per_s`` a rate (``horizon × value × per_s``)."""

    def steps(self, value: float, horizon_s: float) -> float:
        """How many steps or changes a run of ``horizon_s`` has with this setting at ``value`` (0 when it is
        neither a time step nor a rate, or the automatic choice)."""
        if not self.ok(value) or (self.auto and value < 0):
            return 0.0
        if self.step_s and value > 0:
            return horizon_s / (value * self.step_s)
        return horizon_s * value * self.per_s

    lo: float = -math.inf
    hi: float = math.inf
    units: str = ""
    lo_open: bool = False
    hi_open: bool = False
    auto: str = ""  # e.g. "the trace's change period": a negative value selects it
    step_s: float = 0.0
    per_s: float = 0.0
    max_steps: float = 1e6  # most steps a run may have (checked against the horizon: check_steps)
    what: str = "steps"  # what one step is, in messages ("refits", "periods")

    def describe(self) -> str:
        """The range in words, e.g. ``in (0, 1e+06] hours, or < 0 for the trace's change period``."""
        lo = "(" if self.lo_open else "["
        hi = ")" if self.hi_open else "]"
        top = "∞)" if self.hi == math.inf else f"{self.hi:g}{hi}"
        rng = f"{lo}{self.lo:g}, {top}"
        rng = "any finite number" if self.lo == -math.inf and self.hi == math.inf else f"in {rng}"
        unit = f" {self.units}" if self.units else ""
        auto = f", or < 0 for {self.auto}" if self.auto else ""
        return f"{rng}{unit}{auto}"

    def ok(self, value: float) -> bool:
        """Whether ``value`` is valid (finite, in range or negative when ``auto``)."""
        if not math.isfinite(value):
            return False
        if self.auto and value < 0:
            return True
        above = value > self.lo if self.lo_open else value >= self.lo
        below = value < self.hi if self.hi_open else value <= self.hi
        return above and below

    def check(self, name: str, value: Any, owner: str = "") -> None:
        """ValueError ``[owner: ]name=value is out of range: name must be <range>`` unless valid; a value
        that is not a number (a bool included) is refused the same way."""
        where = f"{owner}: " if owner else ""
        if isinstance(value, bool) or not isinstance(value, numbers.Real):  # numpy numbers are Real
            raise ValueError(f"{where}{name}={value!r} is not a number; {name} must be {self.describe()}")
        if not self.ok(float(value)):
            raise ValueError(f"{where}{name}={value!r} is out of range; {name} must be {self.describe()}")


def check_all(values: Mapping[str, Any], bounds: Mapping[str, Bound], owner: str = "") -> None:
    """Check each ``values[name]`` that has a bound (ValueError for the first bad one)."""
    for name, b in bounds.items():
        if name in values:
            b.check(name, values[name], owner)


def check_steps(
    values: Mapping[str, Any], bounds: Mapping[str, Bound], horizon_s: float, owner: str = ""
) -> None:
    """ValueError naming the setting if a time step (or rate) gives a run of ``horizon_s`` more than its
    bound's ``max_steps`` steps, with the least (or most) value that fits — so that no step setting can
    make a run spin for hours."""
    where = f"{owner}: " if owner else ""
    for name, b in bounds.items():
        v = values.get(name)
        if not isinstance(v, numbers.Real) or isinstance(v, bool) or not (b.step_s or b.per_s):
            continue
        n = b.steps(float(v), horizon_s)
        if n > b.max_steps:
            if b.step_s:
                fix = f"{name} ≥ {horizon_s / (b.max_steps * b.step_s):.3g}"
            else:
                fix = f"{name} ≤ {b.max_steps / (horizon_s * b.per_s):.3g}"
            unit = f" {b.units}" if b.units else ""
            raise ValueError(
                f"{where}{name}={v!r}{unit} gives {n:,.0f} {b.what} over the {horizon_s:g} s horizon; at most "
                f"{b.max_steps:,.0f} are supported ({fix} for this horizon)"
            )


def changed(params: Any) -> dict[str, Any]:
    """The settings of a Params dataclass that differ from their defaults (what :func:`check_steps` checks:
    a default step applies only where its feature is on, e.g. the acquirer's period)."""
    out = {}
    for f in dataclasses.fields(params):
        v = getattr(params, f.name)
        if f.default is dataclasses.MISSING or v != f.default:
            out[f.name] = v
    return out


def bounds_of(cls: type) -> dict[str, Bound]:
    """The bounds a (``bounded``) Params class declares, its bases' included."""
    out: dict[str, Bound] = {}
    for c in reversed(cls.__mro__):
        out.update(c.__dict__.get("__bounds__", {}))
    return out


def numeric_fields(cls: type) -> list[str]:
    """The ``int``/``float`` fields of a dataclass (the settings that need a bound)."""
    out = []
    for f in dataclasses.fields(cls):
        typ = f.type if not isinstance(f.type, str) else {"int": int, "float": float}.get(f.type)
        if typ in (int, float):
            out.append(f.name)
    return out


def bounded(**bounds: Bound) -> Callable[[type[T]], type[T]]:
    """Class decorator (above ``@dataclass``): declare ``bounds`` of the Params' numeric settings; the
    dataclass then checks every bound of it and its bases when built (before its own ``__post_init__``).
    TypeError at import for a bound naming no field."""

    def wrap(cls: type[T]) -> type[T]:
        names = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
        unknown = sorted(set(bounds) - names)
        if unknown:
            raise TypeError(f"{cls.__name__}: bounds for unknown settings {unknown}")
        cls.__bounds__ = dict(bounds)  # type: ignore[attr-defined]
        own = cls.__dict__.get("__post_init__")
        called = hasattr(cls, "__post_init__")  # else the dataclass' __init__ never calls one

        def __post_init__(self: Any) -> None:  # noqa: N807
            check_all(dataclasses.asdict(self), bounds_of(type(self)))
            if own is not None:
                own(self)
            else:
                parent = super(cls, self)  # type: ignore[arg-type]
                if hasattr(parent, "__post_init__"):
                    parent.__post_init__()

        cls.__post_init__ = __post_init__  # type: ignore[attr-defined]
        __post_init__._bounded = True  # type: ignore[attr-defined]

        def __init_subclass__(sub: type, **kw: Any) -> None:  # noqa: N807
            # a subclass' own __post_init__ (FFParams' termination check) need not call this one: the
            # bounds are checked before it all the same
            super(cls, sub).__init_subclass__(**kw)  # type: ignore[misc]
            mine = sub.__dict__.get("__post_init__")
            if mine is not None and not getattr(mine, "_bounded", False):

                def checked(self: Any) -> None:
                    check_all(dataclasses.asdict(self), bounds_of(type(self)))
                    mine(self)

                checked._bounded = True  # type: ignore[attr-defined]
                sub.__post_init__ = checked  # type: ignore[attr-defined]

        cls.__init_subclass__ = classmethod(__init_subclass__)  # type: ignore[assignment]
        if not called:
            init = cls.__init__

            def __init__(self: Any, *args: Any, **kwargs: Any) -> None:  # noqa: N807
                init(self, *args, **kwargs)
                self.__post_init__()

            cls.__init__ = __init__  # type: ignore[misc]
        return cls

    return wrap
