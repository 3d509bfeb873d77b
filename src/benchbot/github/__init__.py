"""benchbot on GitHub: the Actions environment, the /bench command, the PyGithub adapter.

``event`` reads the environment and the payload, ``command`` parses ``/bench``,
``api`` is the only module that imports PyGithub, ``publish`` decides what is written
where, ``fetch`` brings the pull request's commits into the clone, and ``action`` wires
them for ``benchbot github``.
"""
