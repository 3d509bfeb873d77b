"""A harness's benchmarks found, and each counted on its own.

``listing`` runs a suite's harness to list its benchmarks and turns each into a workload;
``fixedwork`` makes a harness do a fixed, small amount of work (and probes whether it
does what it was asked); ``suitecount`` counts each benchmark's instructions with it, or,
for a google-benchmark suite, ``gbsplit``'s way: one process per build, split at each
benchmark's loop.
Hands on: the suite's benchmarks as workloads, with their counts.
"""
