"""Where a called change is: the functions that carry it.

``profiling`` runs base, base again and head once more under callgrind after the verdicts,
for each workload or suite benchmark called (or every one, on request), in the counted
runs' watched place (``sandbox.callgrind`` reads what valgrind wrote); ``profile`` compares the
three function by function, naming only those that moved beyond their own noise, and folds
each run into stacks for the flame graph. ``timeprofile`` samples time with perf around
the sandboxed runs, for a change of time with the same instructions; ``timing`` makes
that profile for a call whose work profile named nothing. Hands on: a ``ProfileTable``
per profiled workload (with its ``time`` where it was profiled for time), which the
report shows.
"""
