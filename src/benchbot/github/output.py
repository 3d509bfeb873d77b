"""What a step leaves in the job: lines in its log, step outputs, the job summary, and the
names of the files in the results directory."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import TextIO

from benchbot.core.errors import OutputError
from benchbot.github.limits import fit, too_long_note
from benchbot.report.escape import Markdown, require

# What benchbot appends to one step's job summary, in bytes: GitHub refuses a step's whole
# summary over 1024 KiB ("$GITHUB_STEP_SUMMARY upload aborted, supports content up to a
# size of 1024k"), so this keeps well clear of that, whatever else the step wrote.
STEP_SUMMARY_LIMIT = 1_000_000
DEFAULT_ARTIFACT = "benchbot-results"  # the results directory's name as an artifact
# The results directory, uploaded as the measure job's artifact and read by the publish step.
RESULTS = "results.json"
REPORT = "report.md"
ERROR = "error.json"  # why the comparison did not finish, where it did not
BISECT = "bisect.json"  # a /bench bisect's document (its artifact: ``<artifact>-bisect``)
BISECT_REPORT = "bisect.md"


class Log:
    """Lines for the job's log. Text in them may come from the code under test, so inside
    Actions the stream escapes workflow commands (``logsafe``); ``notice`` is benchbot's
    own command and goes around that."""

    def __init__(self, err: TextIO) -> None:
        self.err = err

    def line(self, text: str) -> None:
        self.err.write(f"benchbot: {text}\n")
        self.err.flush()

    def notice(self, text: str) -> None:
        command = getattr(self.err, "command", None)
        line = f"::notice title=benchbot::{_command_data(text)}"
        if callable(command):
            command(line)
        else:
            self.err.write(line + "\n")
        self.err.flush()


def _command_data(text: str) -> str:
    """A workflow command's data, escaped as the runner expects (%, CR, LF)."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def append_summary(path: Path | None, text: Markdown, *, artifact: str = DEFAULT_ARTIFACT,
                   run_url: str | None = None) -> None:
    """Add markdown to the job summary (GITHUB_STEP_SUMMARY), cut with a pointer to the
    artifact where the summary would pass ``STEP_SUMMARY_LIMIT`` bytes; only ``Markdown``
    (``escape.py``): every value in it escaped."""
    require(text, "the job summary")
    if path is None:
        return
    room = STEP_SUMMARY_LIMIT - _size(path) - 1  # 1: the line end after a pointer
    tail = too_long_note("a job summary", STEP_SUMMARY_LIMIT, artifact, run_url, "bytes")
    text = fit(text, room, tail, unit="bytes")
    _append(path, "GITHUB_STEP_SUMMARY", text if text.endswith("\n") else text + Markdown("\n"))


def _size(path: Path) -> int:
    """The bytes a file holds already (0 for a missing file; a pipe reports 0 too)."""
    try:
        return path.stat().st_size
    except OSError:
        return 0


def write_outputs(path: Path | None, values: Mapping[str, str]) -> None:
    """Append step outputs in the delimiter form, safe for any value (GITHUB_OUTPUT)."""
    blocks = []
    for name, value in values.items():
        delimiter = f"ghadelimiter_{uuid.uuid4()}"
        blocks.append(f"{name}<<{delimiter}\n{value}\n{delimiter}\n")
    _append(path, "GITHUB_OUTPUT", "".join(blocks))


def _append(path: Path | None, variable: str, text: str) -> None:
    if path is None:
        return
    try:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(text)
    except OSError as exc:
        raise OutputError(f"cannot write {variable} {path}: {exc.strerror or exc}") from None


def first_line(message: str) -> str:
    """The first line of a message, for a check's title or a status."""
    lines = message.strip().splitlines()
    return lines[0] if lines else "error"
