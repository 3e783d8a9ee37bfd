"""Scheduling policies, one module each, behind a name registry.

A policy is a class with ``name``, a ``Params`` dataclass (parsed from ``--set key=value``) and
``declare(problem, params, seed)``, which returns either compiled admission rules
(:class:`sim.problem.Compiled`, run by the First-Fit engine) or Python hooks (:class:`sim.engine.loop.Hooks`, run
by the shared event loop); :func:`sim.api.run_policy` runs the declaration. ``run(problem, params, seed)``
is that dispatch for one policy. ``register`` adds a policy; ``get_policy`` looks one up.
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Callable, Iterable
from typing import Any, Protocol


class Policy(Protocol):
    name: str
    Params: type
    #: modules a run imports on first use (e.g. statsmodels to fit a survival model), which a worker
    #: process started ahead of its work imports early (:func:`warm_imports`)
    warm_imports: tuple[str, ...]

    def declare(self, problem: Any, params: Any, seed: int) -> Any: ...

    def run(self, problem: Any, params: Any, seed: int) -> Any: ...


class Dispatched:
    """Mixin: ``run`` = the dispatcher of :mod:`sim.api` on this policy's declaration."""

    warm_imports: tuple[str, ...] = ()

    def run(self, problem: Any, params: Any, seed: int) -> Any:
        from sim.api import run_policy

        return run_policy(self, problem, params, seed)


_REGISTRY: dict[str, Policy] = {}
_FAMILIES: dict[str, tuple[Callable[[str], Policy | None], list[str]]] = {}
_MODULES = ("ff", "ff_unaware", "ias", "oracle", "slacksched", "slacksched_heartbeat", "target", "capsched")
_MODULES += ("defer",)  # issue #27
_MODULES += ("ias_forecast",)  # issue #27: ias-forecast


def register(policy: Policy) -> Policy:
    """Register a policy instance under its ``name`` (error on a duplicate)."""
    if policy.name in _REGISTRY:
        raise ValueError(f"policy {policy.name!r} registered twice")
    _REGISTRY[policy.name] = policy
    return policy


def register_family(prefix: str, resolve: Callable[[str], Policy | None], examples: list[str]) -> None:
    """Register a family of policies whose names are parsed by ``resolve`` (e.g. ``ias-h1+h3``)."""
    _FAMILIES[prefix] = (resolve, examples)


def _load() -> None:
    for m in _MODULES:
        importlib.import_module(f"sim.policies.{m}")


def available() -> list[str]:
    _load()
    return sorted([*_REGISTRY, *(e for _, ex in _FAMILIES.values() for e in ex)])


def get_policy(name: str) -> Policy:
    """The policy registered as ``name``. Raises KeyError listing the known names."""
    own = name.replace("-", "_")  # a policy's own module first: importing every one loads numba
    if name not in _REGISTRY and own in _MODULES:
        importlib.import_module(f"sim.policies.{own}")
    if name in _REGISTRY:
        return _REGISTRY[name]
    _load()
    if name in _REGISTRY:
        return _REGISTRY[name]
    for resolve, _ in _FAMILIES.values():
        pol = resolve(name)
        if pol is not None:
            return pol
    raise KeyError(f"unknown policy {name!r}; known: {', '.join(available())}")


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
