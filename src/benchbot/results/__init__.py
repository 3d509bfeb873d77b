"""The files a comparison writes, read back, split and merged.

``resultsdir`` writes the results directory (``results.json`` and its reports) atomically
and reads one back, checked against its schema (``schemacheck``, the fast check, and
``schemas/results.schema.json``); ``shards`` splits the workloads across runners and
``merging`` puts the shards' results back together and judges the whole again.
"""
