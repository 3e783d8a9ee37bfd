"""The one-run speed-target benchmark's verdicts, and the process measurement every benchmark shares."""

import sys

import pytest

from sim.bench.machine import STUDY_CPU_S, figures, table
from sim.bench.process import measured_process

REF = {"jobs": 6_000_000, "varcap_s": 3.0, "ref_s": 1.5, "whole": {"cpu_s": 7.5, "rss_mb": 990.0}}
SMALL = {"varcap simulate": {"cpu_s": 0.3}, "heapq script": {"cpu_s": 0.02}}
SWEEP = {"study_cpu_s": 600.0, "scenarios": 2000.0, "wall_s": 320.0, "per_scenario_s": 0.02, "fixed_cpu_s": 1.0}


def test_every_target_is_judged_against_its_ceiling():
    figs = figures(REF, SMALL, SWEEP)
    assert [f.met for f in figs] == [True] * 7
    assert figs[0].value == pytest.approx(0.5) and "2.00×" in figs[0].against
    slow = figures({**REF, "whole": {"cpu_s": 8.5, "rss_mb": 1100.0}}, SMALL, {**SWEEP, "fixed_cpu_s": 2.5})
    assert [f.name for f in slow if not f.met] == [
        "varcap simulate, 6,000,000 jobs, whole process",
        "varcap simulate, 6,000,000 jobs, peak RSS",
        "varcap sweep, fixed cost (cached smoke study)",
    ]
    assert table(slow).count("**NOT met**") == 3


def test_a_smaller_study_is_judged_pro_rata():
    figs = figures(REF, SMALL, {**SWEEP, "scenarios": 200.0, "study_cpu_s": 100.0})
    study = next(f for f in figs if "deferral study" in f.name)
    assert study.target == pytest.approx(STUDY_CPU_S / 10) and study.met is False
    assert "pro rata" in study.against


def test_measured_process_reports_the_commands_own_usage_and_output():
    burn = "import sys; b = bytearray(60 * 2**20); print('done', len(b))"
    r = measured_process([sys.executable, "-c", burn])
    assert r["out"].strip() == "done 62914560"
    assert 60 <= r["rss_mb"] < 200 and r["cpu_s"] > 0
    with pytest.raises(RuntimeError, match="boom"):
        measured_process([sys.executable, "-c", "raise SystemExit('boom')"])
