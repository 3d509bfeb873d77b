"""Every process of the code under test: how it is started, fenced and counted.

``spawn`` starts one timed run and says what it did (``RawRun``), through ``forkserver``
(a small C program, ``forkserver.c``, that forks each run from a quiet process) and, when
sandboxed, through ``worker`` inside bubblewrap (``bwrap``: the namespaces, the clean
environment, the mounts that ``fsview`` decides and ``hidden`` covers, the ``seccomp``
filter). ``counting`` counts a run's instructions (valgrind in a place the run cannot reach,
or perf's counters); ``procs`` follows process trees; ``secret`` keeps the token out of
every child. Hands on: raw runs. Knows nothing of benchbot.yml.
"""
