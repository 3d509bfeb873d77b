"""Measuring a comparison: rounds, interleaving and the sequential loop.

``engine`` is ``benchbot compare``'s body: builds, the A/A check, the workloads, the
results; ``measuring`` runs the interleaved rounds, base and head alternating, each
workload until the verdict's rule stops it or the budget ends, in a ``context`` (the
config, spawner, clock and what was measured so far); ``counted`` is what it asks of the
counts (instructions apart from or beside the timed runs) and of the profiles after the
verdicts; ``lab`` is the repository laboratory that bisect and history share (a worktree
per tree, built once, compared); ``progress`` shows the phases on a terminal. Hands on: a
``Results`` document.
"""
