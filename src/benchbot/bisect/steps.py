"""The bisect's search: which first-parent commit between good (0) and bad (n) carries
the change, as pure bookkeeping over a ``Lab`` (the seam that builds and compares
commits; ``bisect.search.RepoLab`` is the real one, tests plant outcomes). docs/verdict.md,
"Bisecting: many comparisons, one error"; docs/cli.md, "Bisect".

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

import math
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol

from benchbot.bisect.bisectdoc import Answer, Culprit, Range, Step, short
from benchbot.core.errors import BenchbotError
from benchbot.core.model import Outcome, ProfileTable
from benchbot.verdict import figures

CALLS: tuple[Outcome, ...] = ("slower", "faster")
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
    settled_by: str | None = None  # the verdict's signals (benchbot.verdict.figures)
    work: float | None = None  # the counts' ratio, where counted
    counts: str | None = None  # how they read
    # where the change is (benchbot.profiles.profiling): a step that can name a commit, called
    profile: ProfileTable | None = None


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
    profiles: dict[int, ProfileTable] = field(default_factory=dict)  # by step number
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
                skipped=tuple(self.shas[i] for i in range(left + 1, right)),
                settled_by=called.settled_by, work=called.work,
                profile=self.profiles.get(called.number)))
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
            self.notes.note(f"skipped {short(self.shas[index])}: {why}")

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
                        alpha=alpha, budget_s=round(budget, 3), runs_failed=got.runs_failed,
                        settled_by=got.settled_by, work=got.work, counts=got.counts)
            if got.profile is not None:
                self.profiles[number] = got.profile
            if got.outcome != "invalid":
                self.validated.update((left, right))
        self.steps.append(step)
        if self.notes is not None:
            self.notes.note(f"step {number}: {short(self.shas[left])}..{short(self.shas[right])}: "
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
        spans = ", ".join(f"{short(r.left)}..{short(r.right)}" for r in ranges)
        parts.append(f"{'Also, in' if culprits else 'In'} {spans} a change could not be placed "
                     "(see why below): bisect that range again with a larger --budget.")
    return " ".join(parts)


def _culprit_words(c: Culprit) -> str:
    said = figures.figure_text(figures.figure_from(c.outcome, settled_by=c.settled_by,
                                                   time=c.ratio, at_call=c.ratio, work=c.work))
    change = f" ({said})" if said is not None else ""
    where = short(c.sha) + change
    if c.skipped:
        where += " or at the skipped " + ", ".join(short(s) for s in c.skipped)
    return where
