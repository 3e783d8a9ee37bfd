"""The harvest-VM family (SlackSched's platform, paper 002): nodes whose cores change under running work.

* :mod:`sim.harvest.cluster` — ``Cluster``, the hooks of every harvest-VM policy on the Python event loop
  (placements, the Acquirer, kill order): the semantics, and the test oracle of the compiled loop;
* :mod:`sim.harvest.passes` — compiled schedule passes (eq. 2 costs, the per-machine Oracle, heartbeats);
* :mod:`sim.harvest.loop` — the whole harvest loop compiled (``harvest_run``), bit-identical to the
  Python loop, for ``slacksched-nodelay``, ``capsched``, waiting ``slacksched``, ``ff``, ``oracle`` and
  ``slacksched-heartbeat``, with ``nodes`` and the Acquirer (not: checkpointing).
"""
