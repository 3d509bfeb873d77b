"""benchbot.yml and the settings put over it.

``config`` holds the dataclasses and the key tables, and reads a file into a ``Config``,
every mistake named by file, line and key (``yamlnode`` reads the YAML nodes and their
lines, refusing YAML 1.1's traps); ``find`` reads it at a git revision; ``settings`` is
``Overrides``, the command line's and ``/bench``'s options over it, with the value parsers
the three share; ``schemagen`` writes the config's JSON Schema from the key tables. Hands
on: one ``Config``, read once. A new key goes in ``config``'s tables.
"""
