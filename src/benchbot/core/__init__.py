"""The plain data every stage passes on, and helpers that need nothing else of benchbot.

``model`` holds the results' dataclasses (a comparison's benchmarks, verdicts, counts), which
``codec`` turns to and from JSON; ``errors`` is every error benchbot raises on purpose;
``files`` writes atomically and reads with a size limit; ``logsafe`` escapes what the code
under test printed before it reaches a terminal or a log; ``trees`` removes a directory
whatever a run left in it; ``globs`` is the glob language of ``paths:`` and
``sandbox.build_only``. Every other package may import this one; it imports none of them.
"""
