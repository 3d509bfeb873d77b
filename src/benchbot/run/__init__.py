"""Runs of workloads, as the measuring asks for them, turned into records.

``runner`` makes one run of one arm (a workload's, or a suite's harness for many of its
benchmarks at once) and turns what came back into a record (time, counts, memory, a
failure and why); ``rounds`` puts runs into phases of interleaved pairs, rounds of
triplets and counted runs; ``machine`` describes the machine they were made on. Hands on:
records, for the suites and the measuring above.
"""
