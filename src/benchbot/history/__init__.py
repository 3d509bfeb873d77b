"""``benchbot history``: a line of commits measured step by step, and its drifts.

``walk`` records each step of a range through ``measure.lab``; ``historydoc`` is the store
of one file per commit; ``composed`` follows a store's line, puts each workload's steps
together and scans them for drifts (``verdict.trend``). The report is ``report.history``'s.
"""
