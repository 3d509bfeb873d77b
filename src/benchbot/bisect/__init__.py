"""``benchbot bisect``: the commit that carries a change, found with one error for the search.

``steps`` is the search (which step to compare next, when to stop); ``search`` runs it on a
repository's commits through ``measure.lab``; ``bisectdoc`` is the document it writes.
"""
