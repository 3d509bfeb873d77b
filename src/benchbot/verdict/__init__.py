"""The statistical rule: from runs to a verdict (docs/verdict.md).

``stats`` holds the estimators and intervals (per-pair ratios, the best-run ratio, the A/A
tolerance); ``sequential`` decides at each look whether to stop; ``signals`` reads the
second signals beside time (instruction counts, cache misses, memory), ``benchsignals``
a suite's; ``judge`` combines them into one verdict per workload; ``figures`` says which
figure a verdict shows (the signal that settled it); ``trend`` finds drifts along a
history. A new verdict rule goes here. Pure: numbers in, verdicts out.
"""
