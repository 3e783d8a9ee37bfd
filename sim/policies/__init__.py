"""Scheduling policies, one module each, on the one name registry (:class:`sim.registry.Registry`).

A policy is a class with ``name``, a ``Params`` dataclass (parsed from ``--set key=value``) and
``declare(problem, params, seed)``, which returns either compiled admission rules
(:class:`sim.problem.Compiled`, run by the First-Fit engine) or Python hooks (:class:`sim.engine.loop.Hooks`, run
by the shared event loop); :func:`sim.api.run_policy` runs the declaration. ``run(problem, params, seed)``
is that dispatch for one policy. Its facts are class attributes, which ``register`` copies into the
policy's :class:`PolicyEntry`: ``description`` (one line), ``label`` (charts), ``inputs`` (what a run
reads besides the jobs and the capacity), ``warm`` (whether ``varcap warm`` runs it), ``compiled_modules`` (its own numba modules that run compiles) and
``auto_defaults`` (what a sentinel default stands for). Adding a policy is one module in this package that
calls ``register``: the modules are found on disk; ``get_policy`` imports only the named policy's module
(``ias-h1`` → ``ias``) before it imports them all.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import pkgutil
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

from sim.registry import Registry


class Policy(Protocol):
    name: str
    Params: type
    #: modules a run imports on first use (e.g. statsmodels to fit a survival model), which a worker
    #: process started ahead of its work imports early (:func:`warm_imports`)
    warm_imports: tuple[str, ...]

    def declare(self, problem: Any, params: Any, seed: int) -> Any: ...

    def run(self, problem: Any, params: Any, seed: int) -> Any: ...


class Dispatched:
    """Mixin: ``run`` = the dispatcher of :mod:`sim.api` on this policy's declaration, and the facts a
    policy that says nothing has (no description, its name as label, no inputs, not warmed)."""

    warm_imports: tuple[str, ...] = ()
    description: str = ""
    label: str = ""
    inputs: tuple[str, ...] = ()
    warm: bool = False
    warm_capacity: str = "walk"
    compiled_modules: tuple[str, ...] = ()
    auto_defaults: dict[str, str] = {}  # noqa: RUF012 (read only)
    #: its compiled admission rule is timed (:class:`sim.engine.admission.Rule`; IAS): the interpreted
    #: engine then visits machines every instant, which weighs in its choice (:func:`sim.api.engine_for`)
    timed_admission: bool = False

    def run(self, problem: Any, params: Any, seed: int) -> Any:
        from sim.api import run_policy

        return run_policy(self, problem, params, seed)


@dataclass(frozen=True)
class PolicyEntry:
    """A registered policy (or family of policies) with its facts."""

    #: the policy (None for a family: :attr:`resolve` builds its members)
    policy: Policy | None
    description: str
    #: the name charts show
    label: str
    #: what a run reads besides the jobs and the capacity trace (e.g. a carbon-intensity signal)
    inputs: tuple[str, ...] = ()
    #: ``varcap warm`` runs it (its compiled path is cached up front)
    warm: bool = False
    #: the capacity its warm-up runs on: ``walk`` (machines alive, a random walk) or ``harvest`` (cores per
    #: machine, harvest VMs with a change history long enough for the modelled passes: :mod:`sim.warmup`)
    warm_capacity: str = "walk"
    #: modules of numba functions of its own (outside the engine kernel) that its warm-up run compiles
    compiled_modules: tuple[str, ...] = ()
    #: parameter → what its sentinel default means (``lb=-1`` is "the trace's minimum alive / machines")
    auto_defaults: dict[str, str] = field(default_factory=dict)
    #: a family's name parser (``ias-h1+h3``): the member policy, or None if the name is not one
    resolve: Callable[[str], Policy | None] | None = None
    #: a family's names to list
    examples: tuple[str, ...] = ()


REGISTRY: Registry[PolicyEntry] = Registry("policy")


def _entry(policy: Any, **extra: Any) -> PolicyEntry:
    return PolicyEntry(
        policy=policy,
        description=getattr(policy, "description", ""),
        label=getattr(policy, "label", "") or policy.name,
        inputs=tuple(getattr(policy, "inputs", ())),
        warm=bool(getattr(policy, "warm", False)),
        warm_capacity=str(getattr(policy, "warm_capacity", "walk")),
        compiled_modules=tuple(getattr(policy, "compiled_modules", ())),
        auto_defaults=dict(getattr(policy, "auto_defaults", {})),
        **extra,
    )


def register(policy: Policy) -> Policy:
    """Register a policy instance under its ``name``, its facts read from its attributes (ValueError on a
    duplicate name)."""
    REGISTRY.register(policy.name, _entry(policy))
    return policy


def register_family(
    prefix: str, resolve: Callable[[str], Policy | None], examples: list[str], base: Policy | None = None
) -> None:
    """Register a family of policies whose names ``prefix`` or ``prefix-…`` are parsed by ``resolve`` (e.g.
    ``ias-h1+h3``); its facts are ``base``'s (default: ``resolve(prefix)``)."""
    e = _entry(base or resolve(prefix), resolve=resolve, examples=tuple(examples))
    REGISTRY.register(prefix, e)
    REGISTRY.register(f"{prefix}-<members>", e)


@functools.cache
def modules() -> tuple[str, ...]:
    """The policy modules of this package (every non-private module: a policy or a family each)."""
    return tuple(sorted(m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_")))


def _load() -> None:
    for m in modules():
        importlib.import_module(f"{__name__}.{m}")


def entries() -> list[tuple[str, PolicyEntry]]:
    """Every registered policy by name (a family by each of its example names), sorted by name."""
    _load()
    out: dict[str, PolicyEntry] = {}
    for name, e in REGISTRY.items():
        if e.resolve is None:
            out[name] = e
            continue
        for ex in e.examples:
            out[ex] = _member(e, ex)
    return sorted(out.items())


def _member(family: PolicyEntry, name: str) -> PolicyEntry:
    pol = family.resolve(name) if family.resolve else None
    if pol is None:
        raise KeyError(f"unknown policy {name!r}; known: {', '.join(available())}")
    base = family.policy is not None and pol.name == family.policy.name
    warm = family.warm and base  # `varcap warm` runs the family's base policy only
    label = family.label if base else pol.name.upper()
    description = family.description
    if not base and family.policy is not None:  # ias-h1+h3: "IAS with H1+H3 only (see ias)"
        part = pol.name.removeprefix(f"{family.policy.name}-").upper()
        description = f"{family.label} with {part} only (see {family.policy.name})"
    return dataclasses.replace(
        family, policy=pol, description=description, label=label, warm=warm, resolve=None, examples=()
    )


def available() -> list[str]:
    """Every policy name ``varcap policies`` lists (a family by its examples), sorted."""
    return [name for name, _ in entries()]


def listed(name: str) -> bool:
    """Whether ``name`` is one of :func:`available`'s names. A policy registered under exactly that name, or
    an example of a family, is found by importing its own module only (every module imports numba); any
    other name by loading every module."""
    _load_own(name)
    if name in REGISTRY.names() and REGISTRY.get(name).resolve is None:
        return True
    if name in REGISTRY and name in REGISTRY.get(name).examples:
        return True
    return name in available()


def _load_own(name: str) -> None:
    """Import the policy modules ``name`` may be registered in (``target-asap`` → target, ``ias-h1`` → ias)."""
    for own in dict.fromkeys((name.replace("-", "_"), name.split("-")[0])):
        if own in modules():
            importlib.import_module(f"{__name__}.{own}")


def entry(name: str) -> PolicyEntry:
    """The registry entry of policy ``name`` (a family's member: the family's facts with its policy).
    KeyError listing the known names."""
    _load_own(name)  # the policy's own module first: importing every one loads numba
    if name not in REGISTRY.names() and _own_family_member(name) is None:
        _load()  # neither a loaded name nor a member of a loaded family (``ias-h4``): every module
    try:
        _, e, _ = REGISTRY.resolve(name)
    except ValueError:
        raise KeyError(f"unknown policy {name!r}; known: {', '.join(available())}") from None
    return _member(e, name) if e.resolve is not None else e


def _own_family_member(name: str) -> Policy | None:
    """The member ``name`` of a family registered by the modules loaded so far (``ias-h4`` once ``ias`` is
    loaded), or None: then :func:`entry` loads every module (an exact name elsewhere wins over a pattern)."""
    try:
        _, e, _ = REGISTRY.resolve(name)
        return e.resolve(name) if e.resolve is not None else None
    except (ValueError, KeyError):
        return None


def get_policy(name: str) -> Policy:
    """The policy registered as ``name``. Raises KeyError listing the known names."""
    pol = entry(name).policy
    assert pol is not None
    return pol


def parse_params(policy: Policy, settings: dict[str, str] | None) -> Any:
    """Build ``policy.Params`` from string settings, converting to each field's type. Unknown keys fail
    (KeyError); a value that does not convert or lies outside its declared bound (:mod:`sim.bounds`) is a
    ValueError naming the policy, the setting, its value and the range. The checkpoint/restart settings
    every policy takes (:mod:`sim.checkpoint`) are checked and left out."""
    from sim.checkpoint import split_settings

    settings = split_settings(settings)[1]  # type: ignore[assignment]
    fields = {f.name: f for f in dataclasses.fields(policy.Params)}
    kwargs: dict[str, Any] = {}
    for k, v in (settings or {}).items():
        if k not in fields:
            raise KeyError(
                f"policy {policy.name!r} has no parameter {k!r}; parameters: {', '.join(fields) or 'none'}"
            )
        typ = fields[k].type if not isinstance(fields[k].type, str) else eval(fields[k].type)  # noqa: S307
        kwargs[k] = _convert(policy.name, k, v, typ)
    try:
        return policy.Params(**kwargs)
    except ValueError as e:
        msg = str(e.args[0]) if e.args else str(e)
        raise ValueError(msg if msg.startswith(f"{policy.name}:") else f"{policy.name}: {msg}") from e


_TRUE, _FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off")


def _convert(policy: str, key: str, value: object, typ: type) -> object:
    """``value`` as a ``typ`` setting; ValueError ``policy: key=value is not a …`` if it does not convert
    (an ``int`` accepts a whole number written as a float, ``1e3``)."""
    if isinstance(value, typ) and not (typ is int and isinstance(value, bool)):
        return value
    text = str(value).strip()
    if typ is bool:
        if text.lower() in _TRUE + _FALSE:
            return text.lower() in _TRUE
        raise ValueError(f"{policy}: {key}={value!r} is not a boolean (true/false, yes/no, on/off, 1/0)")
    try:
        if typ is int:
            f = float(text)
            if not f.is_integer():
                raise ValueError
            return int(f)
        return typ(text)
    except (ValueError, OverflowError, TypeError):
        raise ValueError(
            f"{policy}: {key}={value!r} is not a{'n' if typ is int else ''} {typ.__name__}"
        ) from None


def warm_imports(names: Iterable[str]) -> None:
    """Import what the policies ``names`` need on first use (their ``warm_imports``; ``()`` by default
    through :class:`Dispatched`), so that a worker process started ahead of its work does not pay it during
    its first run. Raises KeyError for an unknown policy."""
    for name in dict.fromkeys(names):
        for module in get_policy(name).warm_imports:
            importlib.import_module(module)
