"""Finding and reading the config at a revision: the one way every entry point gets it.

``benchbot compare`` (without ``--config``), the gate and the measure step all read the
config from the base revision, never from the head, so that a pull request cannot
change how it is judged. ``--config FILE`` reads a file instead (``config.load_config``).
"""

from __future__ import annotations

from pathlib import Path

from benchbot.config.config import DEFAULT_PATHS, Config
from benchbot.config.load import parse_config_bytes
from benchbot.core.errors import ConfigError
from benchbot.git import gitops


def read_config(repo: Path, sha: str, path: str | None = None) -> Config:
    """The config at commit ``sha``: ``path`` (relative to the repository's root) if
    given, else the first of ``DEFAULT_PATHS`` found there."""
    if path:
        return _read_named(repo, sha, path.removeprefix("./"))
    for name, data in zip(DEFAULT_PATHS, gitops.show_files(repo, sha, DEFAULT_PATHS),
                          strict=True):
        if data is not None:
            return parse_config_bytes(data, path=name)
    raise ConfigError(
        f"no {' or '.join(DEFAULT_PATHS)} at the base revision {sha[:12]}: "
        "commit one there, or pass --config FILE"
    )


def _read_named(repo: Path, sha: str, path: str) -> Config:
    data = gitops.show_file(repo, sha, path)
    if data is None:
        raise ConfigError(
            f"{path}: not found at the base revision {sha[:12]}; benchbot reads its "
            "config from the base branch, so that a pull request cannot change how it is "
            "judged: commit it there first (the path is relative to the repository root)"
        )
    return parse_config_bytes(data, path=path)
