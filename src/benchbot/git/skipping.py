"""Which workloads a change cannot affect: ``paths:`` globs against the files it touches. Pure.

A workload's ``paths`` names the files that can affect it (its sources, its build files,
its inputs). When the change between the base commit compared and the head touches none
of them, the workload is skipped: not built into the measuring, and recorded in the
results as ``skipped`` with the reason, so every report shows it. A workload without
``paths`` is always measured; ``--all`` and ``/bench all`` measure every workload whatever
its ``paths`` say (``config.Config.with_overrides`` drops them).

The globs themselves (their syntax, what they cover) are ``core.globs``'s.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol

from benchbot.core.globs import compiled
from benchbot.core.model import Skipped

NOT_AFFECTED = "not affected"


class HasPaths(Protocol):
    """A workload as skipping sees it (config.WorkloadConfig)."""

    @property
    def name(self) -> str: ...

    @property
    def paths(self) -> tuple[str, ...] | None: ...


def affects(globs: Iterable[str], changed: Iterable[str]) -> bool:
    """Whether any of the changed files is covered by any of the globs."""
    patterns = [compiled(g) for g in globs]
    return any(p.match(path) for path in changed for p in patterns)


def unaffected(workloads: Sequence[HasPaths], changed: Iterable[str]) -> tuple[Skipped, ...]:
    """The workloads with ``paths`` that none of the ``changed`` files touches, in the
    config's order; a workload without ``paths`` is never among them."""
    files = tuple(changed)
    return tuple(Skipped(name=w.name, why=NOT_AFFECTED, paths=w.paths) for w in workloads
                 if w.paths is not None and not affects(w.paths, files))
