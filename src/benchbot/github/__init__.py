"""benchbot on GitHub: the Action's three steps and what they stand on (docs/architecture.md).

``action`` runs the mode's step: ``gate`` (decide, pin, open the check and the comment),
``measure`` (build and measure the pinned commits) and ``publish`` (the results where
the gate left its marks). Below them: ``env`` reads the Action's environment, ``event``
the webhook payload, ``command`` parses ``/bench``, ``job`` is the hand-over between
steps, ``fetch`` brings the pull request's commits into the clone, ``post`` writes the
comment, the check, reactions and replies, ``api`` is the only module that imports
PyGithub, ``output`` is what a step leaves in the job (log, outputs, summary) and
``limits`` cuts markdown to GitHub's limits. ``rescue`` stands alone: the action runs it
with the standard library only, when benchbot itself could not complete its check.
"""
