"""benchbot's performance benchmark suite: verdict accuracy, resolution, overhead.

Run ``python benchmarks/run.py --quick`` (minutes) or ``python benchmarks/run.py`` (the
full run, about an hour on 2 cores). Not part of the test suite's pass/fail.
"""
