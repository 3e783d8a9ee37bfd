"""Study catalogue and sweep runner: between the Dagster assets (above) and ``sim``/``analysis`` (below).

Imports only ``sim``, ``analysis`` and libraries — never ``assets`` or ``pipelines``.
"""
