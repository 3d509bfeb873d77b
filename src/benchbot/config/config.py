"""What a benchbot.yml says, as frozen dataclasses with their defaults: ``Config`` and its
sections (``WorkloadConfig``, ``SuiteConfig``, ``AAConfig``, ``StatusConfig``,
``GithubConfig``, ``SandboxConfig``), and the bounds their keys share.

Every key is declared once, in ``keys``' tables (its kind of value from ``kinds``, the
field here that it fills, its help); ``load`` reads a file through those tables, and
``python -m benchbot.config.schemagen`` writes ``schemas/config.schema.json`` from them.
Reading the YAML nodes themselves (shapes, lines, YAML 1.1's traps) is ``yamlnode``'s job.

Workloads are indexed from 0 in key paths, like the list they are in. YAML 1.1 reads
``on``/``off``/``yes``/``no`` as booleans; switches accept those and their quoted
spellings alike.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import Literal, get_args

from benchbot.config.settings import (
    DEFAULT_PARITY,
    Overrides,
)
from benchbot.config.yamlnode import suggest
from benchbot.core.errors import ConfigError
from benchbot.core.model import Better, CountsMode, Metric, Order, Outcome, ProfileMode

__all__ = ["DEFAULT_PATHS", "AAConfig", "Config", "GithubConfig", "SandboxConfig",
           "StatusConfig", "SuiteConfig", "WorkloadConfig"]

DEFAULT_PATHS = (".github/benchbot.yml", "benchbot.yml")
MAX_TIMEOUT_S = 86_400.0  # a day per run
MAX_WARMUP = 100
MAX_WEIGHT = 1e9  # a weight is relative: a billion to one is more than any split needs
MAX_SEED = 2**63 - 1
ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# Floors of process timing (docs/verdict.md, Defaults).
_FLOOR_WALL_NS = 25_000.0
_FLOOR_REPORTED_NS = 1_000.0

ORDERS: tuple[Order, ...] = get_args(Order)
METRICS: tuple[Metric, ...] = get_args(Metric)
BETTERS: tuple[Better, ...] = get_args(Better)
COUNTS_MODES: tuple[CountsMode, ...] = get_args(CountsMode)
# The peak-RSS verdict's parity (docs/verdict.md): a placeholder until measured.
DEFAULT_MEMORY_PARITY = 0.03  # signals.MEMORY_PARITY: peak RSS varies by under 1% (docs/verdict.md)
# Settings that may also be given at the top level of the file, for every workload
# (``defaults`` and a workload's own win over them).
TOP_SETTINGS = ("counts", "memory_parity")
BASES: tuple[Literal["merge-base", "tip"], ...] = ("merge-base", "tip")
STDOUTS: tuple[Literal["capture", "discard"], ...] = ("capture", "discard")
SANDBOX_MODES: tuple[Literal["auto", "on", "off"], ...] = ("auto", "on", "off")


# --- the dataclasses (and their defaults) ---------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class WorkloadConfig:
    """One program to time: its argv and the settings it is measured and judged with."""

    name: str
    run: tuple[str, ...]
    runs: int | None = None  # a fixed number of pairs per phase; None: measure sequentially
    max_runs: int = 1000  # sequential: the most pairs
    warmup: int = 1
    parity: float = DEFAULT_PARITY
    floor_ns: float | None = None
    timeout_s: float = 60.0
    order: Order = "alternate"
    metric: Metric = "wall"
    pattern: str | None = None
    expect: str | None = None
    env: tuple[tuple[str, str], ...] = ()
    cwd: str | None = None
    pin: tuple[int, ...] | None = None
    better: Better = "lower"
    stdout: Literal["capture", "discard"] = "capture"
    unit: str | None = None  # better: higher: what the reported figure counts, e.g. MB/s
    # Expected cost relative to the other workloads, for splitting them over shards (a
    # cost measured in an earlier results file wins over it).
    weight: float = 1.0
    # How instructions are counted (benchbot.sandbox.counting): auto, perf, valgrind or off.
    counts: CountsMode = "auto"
    memory_parity: float = DEFAULT_MEMORY_PARITY  # the peak-RSS verdict's parity
    # Globs of the files that can affect the workload (benchbot.git.skipping): a change that
    # touches none of them skips it. None: always measured.
    paths: tuple[str, ...] | None = None
    line: int = 0
    # One benchmark of a suite (benchbot.suites.listing): the suite's name and the harness's own name
    # for it, and what selects it in the harness's filter. None for a workload of its own.
    suite: str | None = None
    bench: str | None = None
    select: str | None = None

    @property
    def keeps_stdout(self) -> bool:
        """Whether a run's stdout is kept: only when a pattern must be read from it, and
        ``stdout: discard`` does not say that the patterns are found in stderr."""
        return self.stdout == "capture" and bool(
            self.expect or (self.metric == "reported" and self.pattern))

    @property
    def effective_floor_ns(self) -> float:
        """The floor of timing for this workload: as configured, else the default for its metric."""
        if self.floor_ns is not None:
            return self.floor_ns
        return _FLOOR_WALL_NS if self.metric == "wall" else _FLOOR_REPORTED_NS


@dataclass(frozen=True, slots=True, kw_only=True)
class SuiteConfig:
    """A benchmark harness run as one command that reports many benchmarks (``suites``):
    each becomes a workload ``<name>/<benchmark>`` measured with ``settings``."""

    name: str
    run: tuple[str, ...]
    format: str  # harness.FORMATS
    # Appended to ``run`` for a round that measures only some of its benchmarks: an element
    # holding {regex} once, one holding {name} once per benchmark (suites.filter_argv).
    filter: tuple[str, ...] | None = None
    # The per-workload settings its benchmarks are measured with (metric: reported, the
    # better and unit each benchmark's report says; name and run are the suite's).
    settings: WorkloadConfig
    line: int = 0
    only: tuple[str, ...] | None = None  # /bench only=suite/benchmark: just these (None: all)


@dataclass(frozen=True, slots=True, kw_only=True)
class AAConfig:
    """The A/A check: base against itself, to measure what the method invents."""

    enabled: bool = True
    runs: int | None = None
    abort_fraction: float = 0.25


@dataclass(frozen=True, slots=True, kw_only=True)
class StatusConfig:
    """The check run: its name and the outcomes that make it fail."""

    fail_on: tuple[Outcome, ...] = ("slower",)
    name: str = "benchbot"


@dataclass(frozen=True, slots=True, kw_only=True)
class GithubConfig:
    """What benchbot may do on GitHub: fork pull requests and the sticky comment."""

    forks: bool = False
    fork_label: str | None = None
    # The base branches (names or shell patterns) whose config, workflow and action may
    # run a fork's code; empty: the repository's default branch (from the event).
    fork_bases: tuple[str, ...] = ()
    comment: bool = True


@dataclass(frozen=True, slots=True, kw_only=True)
class SandboxConfig:
    """How the code under test is confined (benchbot.sandbox.bwrap)."""

    mode: Literal["auto", "on", "off"] = "auto"
    read_only: tuple[str, ...] = ()  # directories the sandbox shows besides its own, read-only
    writable: tuple[str, ...] = ()  # directories besides the worktrees the code may write
    build_network: bool = False  # the build reaches the host's network (else loopback only)
    # Globs of the worktree's files that only the build reads: the measured runs are not
    # shown them, and bisect and history leave their bytes out of what makes two commits
    # identical (benchbot.sandbox.hidden). Only in bubblewrap, which enforces it.
    build_only: tuple[str, ...] = ()
    writable_line: int = 0  # where the config says `writable:` (for the gate's refusal)


@dataclass(frozen=True, slots=True, kw_only=True)
class Config:
    """A whole benchbot.yml, validated."""

    path: str
    version: int = 1
    build: str | tuple[str, ...] | None = None
    parallel_builds: bool = True  # build base and head at once (false: one after the other)
    workloads: tuple[WorkloadConfig, ...] = ()
    suites: tuple[SuiteConfig, ...] = ()
    aa: AAConfig = AAConfig()
    confirm: bool = True
    alpha: float = 0.05
    base: Literal["merge-base", "tip"] = "merge-base"
    status: StatusConfig = StatusConfig()
    github: GithubConfig = GithubConfig()
    seed: int | None = None
    sandbox: SandboxConfig = SandboxConfig()
    pass_env: tuple[str, ...] = ()  # environment variables passed to the build and workloads
    budget_s: float = 600.0  # sequential measuring: wall time for the whole comparison
    # For every workload, unless ``defaults`` or the workload says otherwise.
    counts: CountsMode = "auto"
    memory_parity: float = DEFAULT_MEMORY_PARITY
    # Which workloads are profiled after the verdicts (benchbot.profiles.profiling): those
    # called slower or faster, every one (--profile, /bench profile), or none.
    profile: ProfileMode = "called"

    def with_overrides(self, over: Overrides) -> Config:
        """This config with ``over`` put over it. ``runs`` measures every workload a fixed
        number of pairs; a ``budget`` or ``max_runs`` without it measures every workload
        sequentially, also those the config gives ``runs``. ``only`` names workloads,
        suites (all their benchmarks) or ``suite/benchmark``; ``all`` drops every
        workload's and suite's ``paths``, so that none is skipped as not affected."""
        workloads, suites = (self.workloads, self.suites) if over.only is None \
            else self._only(over.only)
        keep_runs = over.runs is None and not over.sequential

        def overridden(w: WorkloadConfig) -> WorkloadConfig:
            return dataclasses.replace(
                w, runs=w.runs if keep_runs else over.runs,
                parity=w.parity if over.parity is None else over.parity,
                max_runs=w.max_runs if over.max_runs is None else over.max_runs,
                paths=None if over.all else w.paths)

        return dataclasses.replace(
            self, workloads=tuple(overridden(w) for w in workloads),
            suites=tuple(dataclasses.replace(s, settings=overridden(s.settings)) for s in suites),
            confirm=self.confirm if over.confirm is None else over.confirm,
            aa=self.aa if over.aa is None else dataclasses.replace(self.aa, enabled=over.aa),
            status=self.status if over.fail_on is None
            else dataclasses.replace(self.status, fail_on=over.fail_on),
            seed=self.seed if over.seed is None else over.seed,
            budget_s=self.budget_s if over.budget is None else over.budget,
            profile=self.profile if over.profile is None else over.profile,
        )

    def _only(self, names: tuple[str, ...]) -> tuple[tuple[WorkloadConfig, ...],
                                                     tuple[SuiteConfig, ...]]:
        known = [w.name for w in self.workloads] + [s.name for s in self.suites]
        suites = {s.name: s for s in self.suites}
        chosen: dict[str, set[str] | None] = {}  # suite: its benchmarks named (None: all)
        for name in names:
            suite, _, bench = name.partition("/")
            if bench and suite in suites:
                picked = chosen.setdefault(suite, set())
                if picked is not None:
                    picked.add(bench)
            elif name in suites:
                chosen[name] = None
            elif name not in known:
                what = "workload or suite" if self.suites else "workload"
                raise ConfigError(f"only: no {what} named {name!r} in {self.path} "
                                  f"(known: {', '.join(known)}){suggest(name, known)}")
        return (tuple(w for w in self.workloads if w.name in set(names)),
                tuple(dataclasses.replace(s, only=None if chosen[s.name] is None
                                          else tuple(sorted(chosen[s.name] or ())))
                      for s in self.suites if s.name in chosen))

    @property
    def measured(self) -> tuple[str, ...]:
        """The names of what is measured: every workload and every suite."""
        return (*(w.name for w in self.workloads), *(s.name for s in self.suites))
