"""Studies: between the Dagster assets (above) and ``sim``/``analysis`` (below).

Imports only ``sim``, ``analysis`` and libraries — never ``assets`` or ``pipelines``. Importing a module
here registers nothing anywhere: every list is assembled where it is defined.

* generic: :mod:`studies.scenarios` (``Scenario``, the sweep studies, building a scenario's inputs),
  :mod:`studies.sweep` (scenario runner and result cache), :mod:`studies.claims` (profiles, ``Headline``,
  band rules), :mod:`studies.reproduction` (the papers' headlines as one table; running a profile),
  :mod:`studies.catalogue` (every named study);
* one package per seed paper (:data:`PAPERS`), each with its scenario sets, its claims and what its
  charts show of the paper.
"""

#: The seed papers' packages, in seed order (000 … 004).
PAPERS = ("thesis", "riskaware", "slacksched", "zhang_chien", "harmony")
#: The chapters beyond the papers, one package each (their studies; no headline).
BEYOND = ("beyond_carbon", "beyond_preemption")
