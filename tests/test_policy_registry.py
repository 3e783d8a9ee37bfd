"""Policies sit on the one name registry (:class:`sim.registry.Registry`) with their facts in the entry."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

import pytest

from sim import policies
from sim.registry import Registry

ROOT = Path(__file__).resolve().parents[1]


def test_policies_use_the_one_registry_and_every_module_on_disk() -> None:
    assert isinstance(policies.REGISTRY, Registry)
    on_disk = {p.stem for p in (ROOT / "sim" / "policies").glob("*.py") if not p.stem.startswith("_")}
    assert set(policies.modules()) == on_disk  # a new module is found: adding a policy is one file


def test_every_policy_states_its_facts() -> None:
    names = policies.available()
    assert {"ff", "ias", "ias-h1+h3", "target-asap", "slacksched-nodelay", "capsched", "defer"} <= set(names)
    for name, e in policies.entries():
        assert e.policy is not None and e.policy.name == name
        if not type(e.policy).__module__.startswith("sim.policies."):
            continue  # a test's own policy (tests/test_python_policy.py)
        assert e.description and "\n" not in e.description, name
        assert e.label, name
        fields = {f.name for f in dataclasses.fields(e.policy.Params)}
        assert set(e.auto_defaults) <= fields, name  # an explained default names a real parameter
    assert policies.entry("defer").inputs  # it reads a carbon signal
    assert policies.entry("ias").auto_defaults["lb"].startswith("the trace's minimum")


def test_warm_list_is_read_from_the_entries() -> None:
    from sim.warmup import CHECK_POLICIES, warm_policies

    warm = warm_policies()
    assert set(warm) == {n for n, e in policies.entries() if e.warm}
    assert {"ff", "ias", "target-asap", "slacksched-nodelay", "capsched"} <= set(warm)
    assert "ias-h1" not in warm and "target-stretch" not in warm  # a family's base, one Target* variant
    assert set(CHECK_POLICIES) <= set(warm)
    from sim.warmup import hook_modules

    hooks = hook_modules()
    assert hooks == {
        "sim.policies.target": "target-asap",
        "sim.harvest.loop": "slacksched-nodelay",
        "sim.harvest.passes": "slacksched-heartbeat",  # and slacksched (cold_hooks runs both)
        "sim.harmony.engine": "harmony",
        "sim.harmony.queueing": "harmony",
    }
    assert {n for n, e in policies.entries() if e.warm and e.warm_capacity == "harvest"} == {
        "capsched", "oracle", "slacksched", "slacksched-nodelay", "slacksched-heartbeat"
    }


def test_family_members_resolve_and_bad_names_fail() -> None:
    assert policies.get_policy("ias-h3+h1").heuristics == ("h1", "h3")
    assert policies.entry("ias-h1").label == "IAS-H1"
    with pytest.raises(KeyError, match="unknown IAS combination"):
        policies.get_policy("ias-h9")
    with pytest.raises(KeyError, match="unknown policy 'nope'"):
        policies.get_policy("nope")


def test_get_policy_imports_only_the_named_policy_module() -> None:
    probe = (
        "import sys\nfrom sim.policies import get_policy\nget_policy('ff')\n"
        "print(sorted(m for m in sys.modules if m.startswith('sim.policies.')), 'numba' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.split("]")[0] + "]" == "['sim.policies.ff']"
    assert out.stdout.strip().endswith("False")


def test_varcap_policies_shows_descriptions_and_real_defaults() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "pipelines.cli", "policies"],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
        env={"COLUMNS": "400", "PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)},
    )
    text = out.stdout
    assert "Interval-Aware Scheduler" in text and "carbon-intensity" in text
    assert "=-1.0" not in text  # IAS's sentinels are shown as what they stand for
    assert "lb=auto (the trace's minimum machines alive / machines)" in text
