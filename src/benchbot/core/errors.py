"""The exception tree. cli.main turns a BenchbotError into one line on stderr and an exit code."""

from __future__ import annotations


class BenchbotError(Exception):
    """Base class of every error benchbot reports to the user."""

    exit_code = 1


class ConfigError(BenchbotError):
    """A configuration file is wrong; the message names file, line and key."""


class GitError(BenchbotError):
    """A git command failed or a revision does not exist; the message names the revision."""


class BuildError(BenchbotError):
    """The build command failed in one worktree; carries the side and the log's tail."""

    def __init__(self, side: str, command: str, returncode: int, log_tail: str, *,
                 hint: str | None = None) -> None:
        self.side = side
        self.command = command
        self.returncode = returncode
        self.log_tail = log_tail
        after = f"\n--- what may have gone wrong ---\n{hint}" if hint else ""
        super().__init__(
            f"build of {side} failed (exit {returncode}): {command}\n--- last lines of the build log ---\n{log_tail}{after}"
        )


class ResultsError(BenchbotError):
    """A results file cannot be read or does not match the schema."""


class GithubError(BenchbotError):
    """A call to the GitHub API failed; the message names the call, ``status`` is its HTTP status."""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class UsageError(BenchbotError):
    """The command line is wrong."""

    exit_code = 2


class CleanupError(BenchbotError):
    """What the code under test left (in a worktree, in scratch) could not be removed; the
    message names it."""


class OutputError(BenchbotError):
    """A file benchbot was asked to write could not be written; the message names it."""
