"""One run of a workload, from its config to its record.

``runner`` turns a workload (or a suite's harness) into spawn requests and what came
back into run records (time, counts, memory, failures); ``machine`` describes the machine
the runs were made on. Hands on: runs, for the suites and the measuring above.
"""
