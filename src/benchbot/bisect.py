"""Which commit carries the change: a search of the first-parent commits between a good
and a bad revision, every step a whole comparison under the same rule (docs/verdict.md,
"Bisecting: many comparisons, one error").

The search (``Search``) is pure bookkeeping over a ``Lab``, the seam that builds commits
and compares them: ``RepoLab`` does it for real through ``engine.compare_built`` (one
worktree per distinct tree, built once), tests plant outcomes. ``bisect`` wires the two
and returns the document (``bisectdoc``). The GitHub layer calls ``bisect`` with a pull
request's base and head.

1. Good against bad. ``level``: no commit carries a change. ``inconclusive`` or
   ``invalid``: said, and the answer is the whole range. Otherwise:
2. A segment [l, r] known to carry a change is split at a commit m near its middle; l
   against m and m against r are compared, and each half that carries a change is
   searched the same way (breadth first, so the budget is shared fairly); an
   inconclusive half is left as a range; two level halves leave [l, r] as a range (a
   change spread too thinly over it for either half to show).
3. A culprit is named only by a comparison against its parent (the adjacent pair), or
   against its nearest ancestor that could be built, the commits between being skipped:
   the culprit is then "X or the skipped Y".

Step k (of those measured) may err with probability alpha · 6 / (π² k²); these sum to
alpha over any number of steps, so the chance that any step of the bisect made a false
call is at most alpha by the union bound.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
import secrets
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol

from benchbot import gitops, machine
from benchbot.bisectdoc import (
    Answer,
    BisectResults,
    BisectSettings,
    Commit,
    Culprit,
    Range,
    Step,
    build_document,
)
from benchbot.config import Config, load_config
from benchbot.errors import BenchbotError, BuildError, ConfigError, GitError
from benchbot.findconfig import read_config
from benchbot.model import Outcome, Revision, SandboxInfo
from benchbot.runner import target
from benchbot.settings import Overrides

if TYPE_CHECKING:
    from benchbot.engine import Bench, Reporter

CALLS: tuple[Outcome, ...] = ("slower", "faster")
BUDGET_FACTOR = 3  # the default bisect budget: this many times the config's budget
MIN_STEP_S = 2.0  # a step is not started with less than this left to it
IDENTICAL = "identical build output: not measured"


class EndError(BenchbotError):
    """The good or the bad commit cannot be built: there is nothing to search between."""


def step_alpha(alpha: float, k: int) -> float:
    """The error measured step ``k`` (1, 2, …) may spend: alpha · 6 / (π² k²), a series
    whose sum over all k is alpha."""
    return alpha * 6.0 / (math.pi**2 * k * k)


@dataclass(frozen=True, slots=True, kw_only=True)
class Found:
    """What one comparison of two commits found (a ``Lab``'s answer)."""

    outcome: Outcome
    reason: str | None = None
    ratio: float | None = None
    ci: tuple[float, float] | None = None
    pairs: int = 0
    runs_failed: bool = False  # invalid because a run of the workload failed


class Lab(Protocol):
    """Builds commits and compares them: the seam between the search and the machine."""

    def prepare(self, index: int) -> str | None:
        """Build commit ``index`` (once per tree); None when it is ready, else why not."""

    def output_hash(self, index: int) -> str | None:
        """A hash of what the workload runs at commit ``index`` (None: cannot tell)."""

    def compare(self, left: int, right: int, *, alpha: float, budget_s: float,
                number: int, estimate: bool = True) -> Found:
        """Compare commit ``left`` (reference) against ``right`` with this error and time
        (``estimate`` False: a call ends the step; its figure is not measured on)."""


class Notes(Protocol):
    def note(self, message: str) -> None: ...


@dataclass(slots=True)
class Search:
    """The search over commits 0 (good) … n (bad): steps, skips and the answer."""

    lab: Lab
    shas: Sequence[str]
    alpha: float
    deadline: float
    step_cap_s: float  # no step gets more than this (the config's budget per comparison)
    clock: Callable[[], float] = time.monotonic
    notes: Notes | None = None
    steps: list[Step] = field(default_factory=list)
    skipped: dict[int, str] = field(default_factory=dict)
    ready: set[int] = field(default_factory=set)
    validated: set[int] = field(default_factory=set)  # its runs worked in a measured step
    culprits: list[Culprit] = field(default_factory=list)
    ranges: list[Range] = field(default_factory=list)
    measured: int = 0
    _splitting: tuple[int, int, bool] | None = None  # the segment split now, its lower half done
    _queue: deque[tuple[int, int, Step]] = field(default_factory=deque)

    # --- the answer ------------------------------------------------------------------------

    def run(self) -> Answer:
        """Search, and say what was found."""
        n = len(self.shas) - 1
        for end in (0, n):
            why = self.lab.prepare(end)
            if why is not None:
                which = "good" if end == 0 else "bad"
                raise EndError(f"{which} ({self.shas[end][:12]}) cannot be measured: {why}; "
                               "a bisect needs both ends built")
            self.ready.add(end)
        if n == 0:
            return Answer(kind="no_change", sentence="good and bad are the same commit: "
                                                     "nothing to search")
        first = self._step(0, n)
        if first.outcome == "level":
            why = "identical build output" if not first.measured else "level"
            return Answer(kind="no_change", sentence=f"No commit carries a change: good against "
                          f"bad is {why} for this workload.")
        if first.outcome not in CALLS:
            self.ranges.append(Range(left=self.shas[0], right=self.shas[n],
                                     why=f"good against bad is {first.outcome}: "
                                     f"{first.reason or 'no change could be told from noise'}"))
            return self._answer()
        self._queue.append((0, n, first))
        while self._queue:
            left, right, called = self._queue.popleft()
            self._search(left, right, called)
        return self._answer()

    def _answer(self) -> Answer:
        culprits = tuple(sorted(self.culprits, key=lambda c: self.shas.index(c.sha)))
        ranges = tuple(sorted(self.ranges, key=lambda r: self.shas.index(r.left)))
        kind: Literal["culprits", "range", "partial"] = (
            "partial" if culprits and ranges else "culprits" if culprits else "range")
        return Answer(kind=kind, culprits=culprits, ranges=ranges,
                      sentence=_sentence(culprits, ranges))

    # --- one segment -----------------------------------------------------------------------

    def _search(self, left: int, right: int, called: Step) -> None:
        """[left, right] carries a change (``called`` says so): name it or split it."""
        between = [i for i in range(left + 1, right) if i not in self.skipped]
        if not between:  # adjacent, or only skipped commits between: confirmed by ``called``
            self.culprits.append(Culprit(
                sha=self.shas[right], parent=self.shas[left], outcome=called.outcome,
                ratio=called.ratio, ci=called.ci, step=called.number,
                skipped=tuple(self.shas[i] for i in range(left + 1, right))))
            return
        middle = self._middle(left, right)
        if middle is None:
            self._search(left, right, called)  # every commit between is skipped now
            return
        if self._out_of_time():
            self.ranges.append(Range(left=self.shas[left], right=self.shas[right],
                                     why="the budget was spent"))
            return
        self._splitting = (left, right, False)
        lower = self._step(left, middle)
        self._splitting = (left, right, True)
        if lower.outcome == "invalid" and lower.runs_failed and middle not in self.validated:
            self._skip(middle, f"its workload's runs failed: {lower.reason or 'invalid'}")
            self._splitting = None
            self._search(left, right, called)
            return
        upper = self._step(middle, right)
        self._splitting = None
        halves = ((left, middle, lower), (middle, right, upper))
        for a, b, step in halves:
            if step.outcome in CALLS:
                self._queue.append((a, b, step))
            elif step.outcome != "level":
                self.ranges.append(Range(left=self.shas[a], right=self.shas[b],
                                         why=f"{step.outcome}: {step.reason or 'undecided'}"))
        if lower.outcome == "level" and upper.outcome == "level":
            self.ranges.append(Range(
                left=self.shas[left], right=self.shas[right],
                why="both halves are level: the change is spread over these commits in parts "
                    "too small for either half to show"))

    def _middle(self, left: int, right: int) -> int | None:
        """The commit nearest the middle of (left, right) that builds (skipping those that
        do not, nearest first), or None when none between does."""
        centre = (left + right) / 2
        order = sorted((i for i in range(left + 1, right) if i not in self.skipped),
                       key=lambda i: (abs(i - centre), i))
        for i in order:
            if i in self.ready:
                return i
            why = self.lab.prepare(i)
            if why is None:
                self.ready.add(i)
                return i
            self._skip(i, why)
        return None

    def _skip(self, index: int, why: str) -> None:
        self.skipped[index] = why
        self.ready.discard(index)
        if self.notes is not None:
            self.notes.note(f"skipped {self.shas[index][:12]}: {why}")

    def _out_of_time(self) -> bool:
        return self.deadline - self.clock() < MIN_STEP_S

    # --- one step --------------------------------------------------------------------------

    def _step(self, left: int, right: int) -> Step:
        a, b = self.lab.output_hash(left), self.lab.output_hash(right)
        number = len(self.steps) + 1
        if a is not None and a == b:
            step = Step(number=number, left=self.shas[left], right=self.shas[right],
                        outcome="level", measured=False, reason=IDENTICAL)
        elif self._out_of_time():
            step = Step(number=number, left=self.shas[left], right=self.shas[right],
                        outcome="inconclusive", measured=False, reason="the budget was spent")
        else:
            self.measured += 1
            alpha = step_alpha(self.alpha, self.measured)
            budget = self._share()
            started = self.clock()
            # Only a step that can name a commit (nothing buildable between) is measured on
            # after its call, for the culprit's figure; the others need the call alone.
            names = all(i in self.skipped for i in range(left + 1, right))
            got = self.lab.compare(left, right, alpha=alpha, budget_s=budget, number=number,
                                   estimate=names)
            step = Step(number=number, left=self.shas[left], right=self.shas[right],
                        outcome=got.outcome, measured=True, reason=got.reason, ratio=got.ratio,
                        ci=got.ci, pairs=got.pairs, wall_s=round(self.clock() - started, 3),
                        alpha=alpha, budget_s=round(budget, 3), runs_failed=got.runs_failed)
            if got.outcome != "invalid":
                self.validated.update((left, right))
        self.steps.append(step)
        if self.notes is not None:
            self.notes.note(f"step {number}: {self.shas[left][:8]}..{self.shas[right][:8]}: "
                            f"{step.outcome}" + (f" ({step.reason})" if step.reason else ""))
        return step

    def _share(self) -> float:
        """This step's time: what is left, shared among the steps still expected (this one,
        the other half of the segment being split, two per halving of the half that will
        carry the change and of every segment waiting), at most ``step_cap_s``."""
        expected = 1 + sum(_steps_to_name(b - a) for a, b, _ in self._queue)
        if self._splitting is not None:
            width = self._splitting[1] - self._splitting[0]
            expected += _steps_to_name(width) - 1 - (1 if self._splitting[2] else 0)
        left = max(0.0, self.deadline - self.clock())
        return max(MIN_STEP_S, min(self.step_cap_s, left / expected))


def _steps_to_name(width: int) -> int:
    """The steps a segment of ``width`` commits known to carry one change still needs: two
    per halving."""
    return 2 * math.ceil(math.log2(max(width, 2)))


def _sentence(culprits: Sequence[Culprit], ranges: Sequence[Range]) -> str:
    """What a human can act on, in a sentence or two (details stay in the tables)."""
    parts = []
    if len(culprits) == 1:
        parts.append(f"The change is at {_culprit_words(culprits[0])}: look there first.")
    elif culprits:
        parts.append("The change is spread over several commits: "
                     f"{', '.join(_culprit_words(c) for c in culprits)}.")
    if ranges:
        spans = ", ".join(f"{r.left[:8]}..{r.right[:8]}" for r in ranges)
        parts.append(f"{'Also, in' if culprits else 'In'} {spans} a change could not be placed "
                     "(see why below): bisect that range again with a larger --budget.")
    return " ".join(parts)


def _culprit_words(c: Culprit) -> str:
    change = f" ({(c.ratio - 1) * 100:+.1f}%)" if c.ratio is not None else ""
    where = c.sha[:8] + change
    if c.skipped:
        where += " or at the skipped " + ", ".join(s[:8] for s in c.skipped)
    return where


# --- the real laboratory -------------------------------------------------------------------


def output_hash(config: Config, root: Path) -> str | None:
    """A hash of what the workload runs in the worktree ``root``: its program file (resolved
    as ``runner.target`` does) and every argument that names a file in the worktree (the
    script an interpreter runs). None when none of them is a file in the worktree: the
    commit is then always measured."""
    [w] = config.workloads
    tgt = target(w, root)
    top = root.resolve()
    digest = hashlib.sha256()
    found = False
    for arg in tgt.argv:
        path = Path(arg) if Path(arg).is_absolute() else tgt.cwd / arg
        try:
            real = path.resolve()
            inside = real.is_relative_to(top) and real.is_file()
        except (OSError, ValueError):
            inside = False
        if inside:  # by its place in the worktree (each worktree has a path of its own)
            found = True
            digest.update(f"file\0{real.relative_to(top)}\0".encode())
            digest.update(real.read_bytes())
        else:
            digest.update(f"arg\0{arg}\0".encode("utf-8", "surrogateescape"))
    return digest.hexdigest() if found else None


class RepoLab:
    """Commits of a repository built in worktrees, one per distinct tree, each built once
    and kept until the bisect ends, compared through ``engine.compare_built``."""

    def __init__(self, commits: Sequence[tuple[str, str, str]], config: Config, *,
                 where: Bench, pool: gitops.WorktreePool, seed: int, reporter: Reporter,
                 clock: Callable[[], float], repository: str | None = None) -> None:
        from benchbot import engine

        self.engine = engine
        self.commits, self.config, self.pool, self.seed = commits, config, pool, seed
        self.where, self.reporter = where, reporter
        self.clock, self.repository = clock, repository
        self.built: dict[str, str | None] = {}  # tree: None when built, else why not
        self.hashes: dict[str, str | None] = {}

    def _tree(self, index: int) -> str:
        return self.commits[index][1]

    def checkout(self, index: int) -> gitops.Checkout:
        sha, tree, _ = self.commits[index]
        return self.pool.add(tree[:16], sha)

    def prepare(self, index: int) -> str | None:
        tree = self._tree(index)
        if tree not in self.built:
            sha = self.commits[index][0]
            self.reporter.building(f"commit {index}", sha)
            try:
                co = self.checkout(index)
                self.engine.build_checkout(self.where, self.config, co)
            except BuildError as exc:
                self.built[tree] = _build_why(exc)
            except GitError as exc:
                self.built[tree] = f"could not be checked out: {exc}"
            else:
                self.built[tree] = None
                self.hashes[tree] = output_hash(self.config, co.path)
        return self.built[tree]

    def output_hash(self, index: int) -> str | None:
        return self.hashes.get(self._tree(index))

    def compare(self, left: int, right: int, *, alpha: float, budget_s: float,
                number: int, estimate: bool = True) -> Found:
        config = dataclasses.replace(self.config, alpha=alpha, budget_s=budget_s)
        doc = self.engine.compare_built(
            self.where, config, self.checkout(left), self.checkout(right),
            seed=self.seed + 10 * number, reporter=self.reporter,
            deadline=self.clock() + budget_s, clock=self.clock, repository=self.repository,
            estimate=estimate)
        [bench] = doc.benchmarks
        v = bench.verdict
        failed = any(p.failure is not None for p in bench.phases.values())
        return Found(outcome=v.outcome, reason=v.reason, ratio=v.ratio, ci=v.ci,
                        pairs=bench.measuring.pairs if bench.measuring else v.n,
                        runs_failed=failed)

    def commit_records(self, search: Search) -> tuple[Commit, ...]:
        out = []
        for i, (sha, tree, subject) in enumerate(self.commits):
            state = self.built.get(tree, "not built")
            if i in search.skipped:
                build, why = "skipped", search.skipped[i]
            elif state is None:
                build, why = "ok", None
            else:
                build, why = "not_built", None if state == "not built" else state
                if state != "not built":
                    build = "skipped"
            out.append(Commit(sha=sha, subject=subject, tree=tree, build=build,  # type: ignore[arg-type]
                              why=why, output_hash=self.hashes.get(tree)))
        return tuple(out)


def _build_why(exc: BuildError) -> str:
    tail = [line for line in (exc.log_tail or "").splitlines() if line.strip()]
    last = tail[-1].strip()[:200] if tail else ""
    return f"the build failed (exit {exc.returncode})" + (f": {last}" if last else "")


# --- the whole bisect ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class Request:
    """What to bisect: the command line, or a /bench bisect comment (base and head of the
    pull request as good and bad)."""

    repo: Path
    good: str
    bad: str
    workload: str
    budget_s: float | None = None  # the whole bisect (None: BUDGET_FACTOR × the config's)
    config_path: Path | None = None
    config: Config | None = None  # read already (the GitHub layer: at the base)
    seed: int | None = None
    repository: str | None = None
    require_sandbox: bool = False


def bisect(request: Request, *, reporter: Reporter | None = None,
           source_env: Mapping[str, str] | None = None,
           clock: Callable[[], float] = time.monotonic) -> BisectResults:
    """Search good..bad for the commit(s) carrying the workload's change; the document.

    Every worktree is removed on the way out, also on an error or Ctrl-C."""
    from benchbot import engine

    started = clock()
    notes = reporter or engine.Reporter()
    repo = gitops.toplevel(request.repo)
    good, bad = gitops.resolve_all(repo, [request.good, request.bad])
    commits = _commits(repo, request, good, bad)
    config = _config(request, repo, good)
    budget_s = request.budget_s if request.budget_s is not None else BUDGET_FACTOR * config.budget_s
    seed = request.seed if request.seed is not None else (
        config.seed if config.seed is not None else secrets.randbits(32))
    engine.check_pins(config)
    before = machine.snapshot()
    with engine.bench(repo, config, source_env=source_env, reporter=notes,
                      require_sandbox=request.require_sandbox) as where, \
            gitops.WorktreePool(repo) as pool:
        lab = RepoLab(commits, config, where=where, pool=pool, seed=seed, reporter=notes,
                      clock=clock, repository=request.repository)
        search = Search(lab=lab, shas=[c[0] for c in commits], alpha=config.alpha,
                        deadline=started + budget_s, step_cap_s=config.budget_s, clock=clock,
                        notes=notes)
        answer = search.run()
        records = lab.commit_records(search)
        box = SandboxInfo(kind=where.box.kind, description=where.box.description)
    [w] = config.workloads
    return build_document(
        good=Revision(ref=request.good, sha=good), bad=Revision(ref=request.bad, sha=bad),
        workload=w.name, commits=records, steps=tuple(search.steps), answer=answer,
        settings=BisectSettings(alpha=config.alpha, parity=w.parity, budget_s=budget_s,
                                step_budget_s=config.budget_s, seed=seed, config=config.path,
                                runs=w.runs, max_runs=w.max_runs),
        environment=machine.finish(before), sandbox=box, repository=request.repository,
        wall_s=round(clock() - started, 3))


def _commits(repo: Path, request: Request, good: str, bad: str) -> list[tuple[str, str, str]]:
    """good and the first-parent commits after it up to bad, or GitError saying why not."""
    if not gitops.is_ancestor(repo, good, bad):
        raise GitError(f"--good {request.good} is not an ancestor of --bad {request.bad}: "
                       "nothing lies between them to search")
    commits = gitops.first_parent_commits(repo, good, bad)
    if len(commits) > 1 and gitops.git(repo, "rev-parse", f"{commits[1][0]}^1") != good:
        raise GitError(f"--good {request.good} is not on the first-parent line of --bad "
                       f"{request.bad} (it was merged in): name a commit on that line")
    return commits


def _config(request: Request, repo: Path, good: str) -> Config:
    """The config read at good (or as given) with only the workload, measured as it says."""
    over = Overrides(only=(request.workload,))
    if request.config is not None:
        config = request.config.with_overrides(over)
    elif request.config_path is not None:
        config = load_config(request.config_path).with_overrides(over)
    else:
        config = read_config(repo, good).with_overrides(over)
    if config.suites or len(config.workloads) != 1:
        raise ConfigError(f"{config.path}: bisect follows one workload of its own; "
                          f"{request.workload!r} is a suite's (give one of its own workloads)")
    return config
