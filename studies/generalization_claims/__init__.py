"""Each paper's central claim on instances no study was built around (:mod:`studies.generalization`'s
generator): IAS vs First-Fit (thesis §6.2), TargetASAP vs FirstFitAware (paper 001 §6), SlackSched vs
random matching (paper 002 §4.2); the ``*-generalization`` rows and the per-instance table
(:mod:`studies.generalization_claims.claims`)."""

from studies.generalization_claims.claims import (
    EXPLANATIONS,
    HEADLINES,
    STUDY_BUILDERS,
    instance_table,
)

FIGURES: dict[str, dict] = {}

__all__ = ["EXPLANATIONS", "FIGURES", "HEADLINES", "STUDY_BUILDERS", "instance_table"]
