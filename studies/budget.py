"""Scenarios over the time budget: recorded once, not tried again, reported as "not run (over budget)".

A sweep gives each scenario a budget of seconds (``$VARCAP_SCENARIO_TIMEOUT_S``,
:func:`studies.sweep.scenario_timeout_s`). A scenario that runs past it is ended by its worker's watchdog
(:func:`studies.sweep.run_many`); :func:`record` then writes ``over_budget.json`` in the scenario's run
directory with the budget and the code and input versions it was tried under. Until the code or inputs
change, or a sweep is given a larger budget, :func:`over_budget` says so and the sweep does not simulate
it again: the study asset records the partition as "not run: over budget" and the reproduction leaves the
scenario out of every share and mean, counting it in ``n_not_run`` — never as a result, never as a
degenerate run. A run directory with a valid ``run.json`` is a result whatever its marks say.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from studies.scenarios import Scenario

MARK = "over_budget.json"
#: the text :func:`studies.sweep.run_many` gives a scenario its watchdog ended (``<id> <label>: <type>: …``)
TIMEOUT_ERROR = ": ScenarioTimeout: "


def is_timeout(error: str | None) -> bool:
    """``error`` (one of :func:`studies.sweep.run_many`'s failure messages) says the scenario ran past
    its budget."""
    return bool(error) and TIMEOUT_ERROR in str(error)


def _versions(sc: Scenario, inputs: Path | None) -> tuple[str, str]:
    from studies import sweep

    return sweep.code_version(), sweep.scenario_inputs_version(sc, inputs or sweep.inputs_dir())


def record(sc: Scenario, budget_s: float, inputs: Path | None = None, out: Path | None = None) -> Path:
    """Mark ``sc`` as over a budget of ``budget_s`` seconds under the current code and inputs; returns the
    mark's path. A larger budget recorded before for the same versions is kept."""
    from studies import sweep

    d = (out or sweep.runs_dir()) / sc.id
    cv, iv = _versions(sc, inputs)
    old = _read(d / MARK)
    if old and old.get("code_version") == cv and old.get("inputs_version") == iv:
        budget_s = max(budget_s, float(old.get("budget_s", 0.0)))
    d.mkdir(parents=True, exist_ok=True)
    row = {
        "scenario_id": sc.id,
        "label": sc.label(),
        "budget_s": float(budget_s),
        "code_version": cv,
        "inputs_version": iv,
        "at": datetime.now(UTC).isoformat(),
    }
    sweep.write_json_atomic(row, d / MARK, sort_keys=True)
    return d / MARK


def _read(path: Path) -> dict[str, Any] | None:
    try:
        row = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return row if isinstance(row, dict) else None


def over_budget(
    sc: Scenario, budget_s: float | None = None, inputs: Path | None = None, out: Path | None = None
) -> float | None:
    """The budget (s) ``sc`` ran past under the current code and inputs, if it has no valid result and
    that budget is at least ``budget_s`` (any, if None); else None (not marked, stale, or a larger budget
    is asked for: try it again)."""
    from studies import sweep

    d = (out or sweep.runs_dir()) / sc.id
    row = _read(d / MARK)
    if row is None:
        return None
    try:
        cv, iv = _versions(sc, inputs)
    except OSError:
        return None
    if row.get("code_version") != cv or row.get("inputs_version") != iv:
        return None
    b = float(row.get("budget_s", 0.0))
    if budget_s is not None and b < budget_s:
        return None
    if sweep.cached_result(sc, inputs, out) is not None:
        return None
    return b


def not_run_reason(budget_s: float) -> str:
    """The reproduction's reason for a scenario over a budget of ``budget_s`` seconds."""
    return f"not run: over the {budget_s:g} s scenario budget"
