"""Studies: between the Dagster assets (above) and ``sim``/``analysis`` (below).

Imports only ``sim``, ``analysis`` and libraries — never ``assets`` or ``pipelines``. Importing a module
here registers nothing anywhere: every list is assembled where it is defined.

* generic: :mod:`studies.scenarios` (``Scenario``, building a scenario's inputs, the smoke study),
  :mod:`studies.signals` (the hourly signals a scenario reads, the grid months), :mod:`studies.sweep`
  (scenario runner and result cache; its cache key's code part in :mod:`studies.code_version`),
  :mod:`studies.claims` (profiles, ``Headline``, band rules), :mod:`studies.reproduction` (the papers'
  headlines as one table; running a profile), :mod:`studies.catalogue` (every named study);
* one package per paper and per chapter beyond the papers, each listed once in :mod:`studies.papers`
  (``PAPERS``), with its studies, its claims, what its charts show of the paper and its chapters.
"""
