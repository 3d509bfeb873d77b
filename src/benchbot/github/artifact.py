"""Everything the publish step reads of a measure job's artifact, read here and only here.

The artifact comes from the machine that ran the pull request's code (or the pushed
code), so each of its files is untrusted input, and each is read the same way:

- through ``results.read_json``, that is ``files.read_bounded``: only a regular file,
  its size looked at before a byte is read, refused above the limit of its kind below (a
  file of more costs nothing: before, a 100 MiB file cost publish 200 MiB and more);
- every way its parsing can fail (not UTF-8, not JSON, nested too deeply for the parser,
  not the schema) is one ``ResultsError`` line naming the file, which the caller turns
  into a completed check with that reason;
- then checked against its schema (``results.parse``, ``bisectdoc.parse``,
  ``historydoc.parse``); what it must name (the pinned commits, the shard, the workload)
  the caller checks.

``tests/security/test_artifact_reads.py`` enumerates every read of a file in
``benchbot.github`` and fails on one outside this module that its allow-list does not
name (the event payload GitHub wrote, the history branch's archive held in memory).
"""

from __future__ import annotations

from pathlib import Path

from benchbot.bisect import bisectdoc
from benchbot.core.errors import ResultsError
from benchbot.core.model import Results
from benchbot.history import historydoc
from benchbot.results import resultsdir

# The most bytes read of each file of an artifact (``results.READ_LIMIT``: the results
# file's, about 900 workloads' runs at 1,000 pairs). A bisect's document and a history
# record hold figures, not runs (a few hundred bytes a workload); an error file holds one
# message, which publish cuts to 20,000 characters anyway.
RESULTS_LIMIT = resultsdir.READ_LIMIT
BISECT_LIMIT = 16 * 1024 * 1024
RECORD_LIMIT = 16 * 1024 * 1024
ERROR_LIMIT = 1024 * 1024
MESSAGE_LIMIT = 20_000  # characters of an error file's message kept


def results_file(path: Path) -> Results:
    """A results file, checked against the schema."""
    return resultsdir.parse(resultsdir.read_json(path, "a results file", limit=RESULTS_LIMIT),
                         where=str(path))


def bisect_file(path: Path) -> bisectdoc.BisectResults:
    """A bisect's document, checked against its schema."""
    return bisectdoc.parse(resultsdir.read_json(path, "a bisect file", limit=BISECT_LIMIT),
                           where=str(path))


def history_record(path: Path, *, where: str) -> historydoc.CommitRecord:
    """A push's history record, checked against the store's schema (``where``: its name
    in messages)."""
    return historydoc.parse(resultsdir.read_json(path, "a history file", limit=RECORD_LIMIT),
                            where=where)


def error_file(path: Path) -> tuple[str, str]:
    """The message and the kind (``error``, ``cancelled``) of the error file a measure job
    leaves when it did not finish; ResultsError (one line) for one that is not that."""
    data = resultsdir.read_json(path, "an error file", limit=ERROR_LIMIT)
    if not isinstance(data, dict) or not isinstance(data.get("message"), str):
        raise ResultsError(f"{path}: not an error file (no message)")
    kind = data.get("kind")
    return data["message"][:MESSAGE_LIMIT], kind if isinstance(kind, str) else "error"
