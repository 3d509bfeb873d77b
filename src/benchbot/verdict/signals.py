"""The second signal: instruction counts read beside time, and peak memory judged on its
own (docs/verdict.md, "A second signal"). Pure: no I/O.

- ``read_counts`` fills in how a workload's counts read (head against base, against how
  far one build's counts vary by themselves).
- ``joint`` judges time and counts together. Time decides first and every call still
  needs time's central interval (at the look's share of alpha) to leave its tolerance, so
  the counts can only hold a call back, or let time's central estimate stand in for the
  best-run side that has not followed yet, or let an interval already inside the parity
  band settle ``level``; they never make a call against time.
- ``metric_instructions`` judges the counts alone (``metric: instructions``).
- The last-level cache misses, where counted beside the instructions, are read as the work
  with them (instructions + ``MISS_WEIGHT`` x misses: ``read_counts``'s ``misses``): the
  same instructions are the same work only where that is the same too
  (``memory_same``), and a move of the instructions is the work's only where it moved the
  same way (``memory_agrees``); docs/verdict.md, "Memory beside the instructions".
- ``memory`` judges peak RSS with the time rule's machinery, at its own parity.

Why one module of about 700 lines: every signal beside time (instructions, the misses at
their two weights, peak memory) is read with the same noise machinery, and the rule that a
second signal only settles or withholds, never overrules time, is seen in one place.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import replace

from benchbot.core.model import (
    ArmRuns,
    Counts,
    CountsReading,
    Misses,
    MissesAt,
    Outcome,
    PhaseRuns,
    Rule,
    Verdict,
)
from benchbot.verdict import stats

# Counts closer than this (log scale) read the same, whatever their noise says: valgrind's
# counts of a deterministic program are identical, but a program that reads the clock or
# hashes its addresses moves by a few instructions in a million.
SAME_FLOOR = 0.001
# Counts that move less than this many times their own noise are not a move.
NOISE_TIMES = 3.0
# Counts sampled from many processes (``_sampled``) read the same, or a move, only where
# their reading this many standard errors out is within parity, or past it: 3.3 keeps a
# change of exactly parity from reading the same in more than 0.13% of comparisons with
# both stages of sampling (suitecount.SAMPLES, SAMPLES_MORE), under the 0.2% that alpha / m
# spends on one benchmark of 25 (docs/verdict.md, "Counts that vary by themselves").
SAMPLED_TIMES = 3.3
# Time may move this far (either way) with the same instructions before a call is held
# back: code layout and timing modes move time by a few percent, rarely by ten.
LAYOUT_LIMIT = 0.10
# Layout-fragile: the same instructions, and base again (base's build from a place of its
# own: docs/verdict.md, "Placement") read at least this share of head's move: time moves by
# as much when only the placement changes, and the reason says so.
LAYOUT_AA_SHARE = 0.5
LAYOUT_WORDS = "layout: the same instructions; time moves by as much when only placement changes"
# Rule (b): time's move and the counts' must agree in size within this factor (log scale).
# A program whose work varies from process to process (a slow mode made of extra work)
# can give a few counted runs a move of +25% while time's median moves +4%: such counts
# do not account for what time saw, and may not stand in for the fast runs.
AGREE_WITHIN = 2.0
# A suite's benchmark whose own A/A stands out from the suite's pooled noise by more than
# this factor (and by more than OWN_PARITY_SHARE of parity) varies by itself from process
# to process: Go's maps hash with a seed drawn at each start, so a benchmark of map lookups
# reads up to 3% more or fewer instructions per iteration from one process to the next
# (benchmarks/README.md, section 10). Its noise then rests on one difference, which may
# understate it many times over (a 3x band lets a move through 20% of the time), so its
# counts are not used. For a benchmark that varies only as the harness does, own / pooled
# is sqrt(2) |z|: past 10 only at |z| > 7.
OWN_NOISE_TIMES = 10.0
OWN_PARITY_SHARE = 0.05
# Counts say something about time only where the runs spend most of it on user-space CPU.
USER_SHARE_MIN = 0.5
# The default parity of the peak-memory verdict (docs/verdict.md, "Peak memory").
MEMORY_PARITY = 0.03
# The instructions a last-level cache miss is taken for in the work (instructions + weight
# x misses), two prices (docs/verdict.md, "Memory beside the instructions"). A miss costs
# what a few instructions cost where a prefetcher streams it and what a thousand or more
# cost where nothing hides it: a chain of dependent loads over 32 MiB measured 104-116 ns
# a miss here against 7 instructions a ns (benchmarks/missprice.py: about 1,000
# instructions a miss), and the live suites' time moves read 900-3,600 under load
# (benchmarks/README.md, section 16). So the misses hold back a level or a call at the high
# price, MISS_WEIGHT (the same work needs the work with them within parity there too;
# a call on the instructions needs it to have moved their way by parity there too), and a
# time call with the same instructions stands as "memory, not layout" only where the work
# moved its way by parity at the low price, MISS_WEIGHT_LOW (cachegrind's and
# KCachegrind's cycle estimate): a claim made on the misses holds at every price between.
MISS_WEIGHT = 2000.0
MISS_WEIGHT_LOW = 100.0
CALLS = ("slower", "faster")
MIN_PAIRS = 10  # the fewest pairs any verdict rests on (docs/verdict.md, Defaults)


def new_misses(how: str, *, base: Sequence[float] = (), base_again: Sequence[float] = (),
               head: Sequence[float] = ()) -> Misses:
    """Misses counted beside the instructions, to be read at both weights (MISS_WEIGHT and
    MISS_WEIGHT_LOW)."""
    return Misses(how=how, weight=MISS_WEIGHT, base=tuple(base), base_again=tuple(base_again),
                  head=tuple(head), low=MissesAt(weight=MISS_WEIGHT_LOW))


def read_counts(counts: Counts, phases: Mapping[str, PhaseRuns], *, parity: float) -> Counts:
    """``counts`` with its ratio, noise, user share and reading filled in."""
    if counts.method is None:
        return counts
    base: Sequence[float]
    again: Sequence[float]
    head: Sequence[float]
    if counts.every_run and not counts.head:  # perf: the counts are the measured runs'
        base, again, head, ratios, aa_ratios = _per_run(phases)
    else:  # counted runs apart (valgrind's; perf's for metric: instructions)
        base, again, head = list(counts.base), list(counts.base_again), list(counts.head)
        ratios, aa_ratios = [], []
    user = _user_share(phases)
    bases = [*base, *again]
    if not bases or not head or min(bases + head) <= 0:
        return replace(counts, user_share=user, reading=None,
                       reading_why="no counted runs to read")
    if counts.samples and len(bases) >= 2 and len(head) >= 2:
        read = _sampled(counts, bases, head, user=user, parity=parity)
        return replace(read, misses=_read_misses(counts, phases, parity=parity))
    ratio = statistics.median(ratios) if ratios else statistics.median(head) / statistics.median(bases)
    aa_ratio = (statistics.median(aa_ratios) if aa_ratios
                else statistics.median(again) / statistics.median(base) if again and base else None)
    noise = max([abs(math.log(aa_ratio)) if aa_ratio else 0.0, counts.pooled_noise or 0.0]
                + [_arm_noise(arm) for arm in (base, again, head) if arm])
    cycles = _cycles_ratio(phases) if counts.every_run else None
    reading, why = _reading(ratio, noise, parity)
    own = abs(math.log(aa_ratio)) if aa_ratio else 0.0
    if reading != "unsteady" and _varies_by_itself(own, counts.pooled_noise, parity):
        reading, why = "unsteady", (
            f"base against base again moved {own * 100:.2f}%, "
            f"{own / (counts.pooled_noise or 1.0):.0f} times the suite's own noise: this "
            "benchmark's counts vary from one process to the next (a hash seed, an address), "
            "and one difference cannot say how far")
    if user is not None and user < USER_SHARE_MIN and counts.unit is None:
        why = (f"{why}; not used: the runs spend most of their time outside user-space CPU "
               f"work ({user * 100:.0f}% in it)")
    read = replace(counts, ratio=ratio, aa_ratio=aa_ratio, noise=noise, cycles_ratio=cycles,
                   user_share=user, reading=reading, reading_why=why,
                   misses=_read_misses(counts, phases, parity=parity))
    if read.misses is None or read.misses.ratio is None or reading is None:
        return read
    held = (not memory_agrees(read, parity) if reading in ("up", "down")
            else not memory_same(read, parity) if reading in ("same", "small") else False)
    return replace(read, misses=replace(read.misses, holds_back=held))


def _read_misses(counts: Counts, phases: Mapping[str, PhaseRuns], *,
                 parity: float) -> Misses | None:
    """The misses beside ``counts``' instructions with how the work reads with them, at the
    high weight and (``low``) at the low one: its ratio, noise and reading, as
    ``read_counts`` reads the instructions (base against base again for the noise, each
    arm's spread, the suite's pooled noise, samples). None where none were counted, or not
    for every counted run."""
    m = counts.misses
    if m is None:
        return None
    read = _work_at(counts, phases, m.weight, m.pooled_noise, parity=parity)
    if read is None:
        return None
    work, (base, again, head) = read
    low = m.low
    if low is not None:
        at = _work_at(counts, phases, low.weight, low.pooled_noise, parity=parity)
        low = None if at is None else replace(low, work_ratio=at[0].ratio, noise=at[0].noise,
                                              reading=at[0].reading)
    bases = [*base, *again]
    ratio = (statistics.median(head) / statistics.median(bases)
             if bases and head and statistics.median(bases) > 0 else None)
    return replace(m, ratio=ratio, work_ratio=work.ratio, noise=work.noise,
                   reading=work.reading, low=low,
                   reading_why=_misses_why(m, work, low, ratio, bases, head))


Arms = tuple[list[float], list[float], list[float]]


def _work_at(counts: Counts, phases: Mapping[str, PhaseRuns], weight: float,
             pooled: float | None, *, parity: float) -> tuple[Counts, Arms] | None:
    """The work instructions + ``weight`` x misses read as the instructions are, with the
    misses of each arm (base, base again, head); None where a counted run has none."""
    m = counts.misses
    assert m is not None
    alone = replace(counts, misses=None)
    if counts.every_run and not counts.head:  # perf: the runs' own misses
        with_misses = _work_phases(phases, weight)
        if with_misses is None:
            return None
        ints = _per_run(phases, "ll_misses")
        base, again, head = [list(map(float, arm)) for arm in ints[:3]]
        return read_counts(alone, with_misses, parity=parity), (base, again, head)
    base, again, head = list(m.base), list(m.base_again), list(m.head)
    if [len(base), len(again), len(head)] != [
            len(counts.base), len(counts.base_again), len(counts.head)] or not head:
        return None

    def weigh(instructions: Sequence[float], misses: Sequence[float]) -> tuple[float, ...]:
        return tuple(i + weight * x for i, x in zip(instructions, misses, strict=True))
    work = read_counts(replace(alone, base=weigh(counts.base, base),
                               base_again=weigh(counts.base_again, again),
                               head=weigh(counts.head, head),
                               pooled_noise=pooled or counts.pooled_noise),
                       phases, parity=parity)
    return work, (base, again, head)


def _misses_why(m: Misses, work: Counts, low: MissesAt | None, ratio: float | None,
                bases: Sequence[float], head: Sequence[float]) -> str:
    moved = (f"{_pct(ratio)} ({_count(statistics.median(bases))} → "
             f"{_count(statistics.median(head))})" if ratio is not None and bases and head
             else f"{_count(statistics.median(bases) if bases else 0)} → "
                  f"{_count(statistics.median(head) if head else 0)}")
    said = {"same": "the same work with them", "up": "more work with them",
            "down": "less work with them", "small": "a move of the work below parity with them",
            "unsteady": "the work with them varies too much to judge by"}
    word = said.get(work.reading or "", "not read")
    at_low = (f"; {_pct(low.work_ratio)} at {low.weight:,.0f}" if low is not None else "")
    return (f"last-level misses {moved}; {word} ({_pct(work.ratio)}, a miss taken for "
            f"{m.weight:,.0f} instructions{at_low}; {m.how})")


def _count(value: float) -> str:
    """A count in words a reader takes in at once: 1,020; 4.5 M."""
    if abs(value) >= 1e6:
        return f"{value / 1e6:.1f} M"
    return f"{value:,.0f}" if abs(value) >= 10 else f"{value:.2g}"


def _work_phases(phases: Mapping[str, PhaseRuns], weight: float) -> dict[str, PhaseRuns] | None:
    """perf's phases with each run's instructions + ``weight`` x its misses in place of its
    instructions; None where a counted arm has no misses for every run."""
    out = {}
    for name, phase in phases.items():
        arms = {}
        for arm, runs in phase.arms.items():
            if runs.instructions is None:
                arms[arm] = runs
                continue
            if runs.ll_misses is None or len(runs.ll_misses) != len(runs.instructions):
                return None
            arms[arm] = replace(runs, instructions=tuple(
                round(i + weight * x) for i, x in zip(runs.instructions, runs.ll_misses, strict=True)))
        out[name] = replace(phase, arms=arms)
    return out


def memory_same(counts: Counts | None, parity: float) -> bool:
    """The work with the misses in it is the same within parity: at the low weight for
    sure (its move and its band of noise inside parity; a sample's reading ``same`` says as
    much), and at the high weight by its move (the misses' own noise, a runtime's collector
    touching memory, is held to parity at the low weight; at the high one it would take
    every level from a benchmark whose misses vary by one a unit). Files from before, with
    one weight: sure at it. True where no misses were counted, as before they were."""
    m = counts.misses if counts is not None else None
    if m is None:
        return True
    if m.reading is None:  # counted, and not to be read: nothing can be said of them
        return False
    if m.low is None:  # one weight (a file from before): the whole test at it
        return _same_for_sure(counts, m.reading, m.work_ratio, m.noise, parity)
    return (_same_for_sure(counts, m.low.reading, m.low.work_ratio, m.low.noise, parity)
            and m.work_ratio is not None
            and abs(math.log(m.work_ratio)) < math.log1p(parity))


def _same_for_sure(counts: Counts | None, reading: CountsReading | None,
                   work_ratio: float | None, noise: float | None, parity: float) -> bool:
    if counts is not None and counts.samples:
        return reading == "same"
    if reading not in ("same", "small") or work_ratio is None:
        return False
    band = max(SAME_FLOOR, NOISE_TIMES * (noise or 0.0))
    return abs(math.log(work_ratio)) + band <= math.log1p(parity)


def memory_agrees(counts: Counts | None, parity: float) -> bool:
    """The work with the misses in it moved the way the instructions did (they read ``up``
    or ``down``): by parity beyond its noise at the low weight, as the instructions moved;
    and at the high one, unless the misses moved the other way and take the move back
    there for sure (its move and its band of noise short of parity that way). Misses that
    stayed put only dilute the move at 2,000 (a harness's own misses per call beside a small
    benchmark), misses that vary by themselves are not sure: neither holds a call back.
    True where no misses were counted."""
    m = counts.misses if counts is not None else None
    if m is None:
        return True
    if counts is None or m.reading is None:
        return False
    if m.low is None:  # one weight (a file from before)
        return m.reading == counts.reading
    if m.low.reading != counts.reading or m.work_ratio is None:
        return False
    way = 1 if counts.reading == "up" else -1
    if m.ratio is None or (m.ratio - 1) * way >= 0:  # the misses moved with it, or not at all
        return True
    band = max(SAME_FLOOR, NOISE_TIMES * (m.noise or 0.0))
    return math.log(m.work_ratio) * way + band >= math.log1p(parity)


def memory_moved(counts: Counts | None) -> CountsReading | None:
    """``up`` or ``down`` where the work with the misses moved by parity at the low weight
    (and so at every higher one: the instructions the same, the work moves further the
    more a miss weighs, though its noise may hide that), else None: what lets a call of
    time's stand as memory."""
    m = counts.misses if counts is not None else None
    if m is None:
        return None
    reading = m.low.reading if m.low is not None else m.reading
    return reading if reading in ("up", "down") else None


def misses_to_confirm(m: Misses | None, parity: float) -> bool:
    """The work with the misses read a move that one process pair may not show for sure (a
    suite's benchmark then counts base again and head again, suitecount._to_confirm): a
    move at the low weight, or at the high one past parity (which holds a level back)."""
    if m is None:
        return False
    if m.low is None:
        return m.reading in ("up", "down", "small")
    return m.low.reading in ("up", "down", "small") or (
        m.work_ratio is not None and abs(math.log(m.work_ratio)) >= math.log1p(parity))


def misses_words(counts: Counts) -> str:
    """The misses' move in words, for a reason: "the last-level misses +340% (the work
    with them +12.0% at 2,000 instructions a miss, +0.6% at 100)"."""
    m = counts.misses
    if m is None:
        return ""
    if m.reading == "unsteady" and m.low is None:
        return (f"the last-level misses {_pct(m.ratio)}, and the work with them varies by "
                f"{(m.noise or 0) * 100:.2g}%")
    low = f", {_pct(m.low.work_ratio)} at {m.low.weight:,.0f}" if m.low is not None else ""
    at = f" at {m.weight:,.0f} instructions a miss" if m.low is not None else ""
    return f"the last-level misses {_pct(m.ratio)} (the work with them {_pct(m.work_ratio)}{at}{low})"


def misses_aside(counts: Counts | None) -> str:
    """The misses' move beside a reason that rests on the same work, so that a level on the
    counts never quotes the instructions alone where the misses moved: ", the last-level
    misses +12% (the work with them +0.3% at 2,000 instructions a miss, +0.0% at 100)";
    "" where none were counted, where they stayed within 1%, or where they moved the work
    at the high weight by less than SAME_FLOOR (a few misses about none, whose ratio says
    nothing)."""
    m = counts.misses if counts is not None else None
    if (counts is None or m is None or m.ratio is None or abs(m.ratio - 1) < 0.01
            or m.work_ratio is None or abs(math.log(m.work_ratio)) < SAME_FLOOR):
        return ""
    return f", {misses_words(counts)}"


def _sampled(counts: Counts, bases: Sequence[float], head: Sequence[float], *,
             user: float | None, parity: float) -> Counts:
    """The counts of a benchmark whose work varies from process to process, each arm a
    sample of processes: the difference of their mean logs, within SAMPLED_TIMES standard
    errors. ``same`` where all of that lies within parity (an equivalence test: a change
    of parity reads ``same`` with the one-sided chance of SAMPLED_TIMES errors), ``up`` or
    ``down`` where all of it lies beyond, ``unsteady`` where it straddles parity."""
    lb, lh = [math.log(v) for v in bases], [math.log(v) for v in head]
    moved = statistics.fmean(lh) - statistics.fmean(lb)
    error = max(math.sqrt(statistics.variance(lb) / len(lb) + statistics.variance(lh) / len(lh)),
                (counts.pooled_noise or 0.0) * math.sqrt(1 / len(lb) + 1 / len(lh)))
    spread = math.sqrt((statistics.variance(lb) + statistics.variance(lh)) / 2)
    ratio, band, limit = math.exp(moved), SAMPLED_TIMES * error, math.log1p(parity)
    told = (f"{len(lb)} processes of base's build and {len(lh)} of head's, whose counts vary "
            f"by {spread * 100:.2f}% from one to the next, read {_pct(ratio)} "
            f"± {math.expm1(band) * 100:.2f}%")
    reading: CountsReading
    if abs(moved) + band <= limit:
        reading, why = "same", f"the same work within the {parity * 100:g}% parity: {told}"
    elif abs(moved) - band >= limit:
        reading, why = ("up" if moved > 0 else "down"), f"the instructions moved: {told}"
    else:
        reading, why = "unsteady", f"{told}, neither inside the {parity * 100:g}% parity nor past it"
    aa_ratio = (statistics.median(counts.base_again) / statistics.median(counts.base)
                if counts.base and counts.base_again else None)
    return replace(counts, ratio=ratio, aa_ratio=aa_ratio, noise=error, cycles_ratio=None,
                   user_share=user, reading=reading, reading_why=why)


def usable(counts: Counts | None) -> bool:
    """The counts were read and may speak beside time."""
    return (counts is not None and counts.method is not None and counts.reading is not None
            and counts.reading != "unsteady"
            and (counts.user_share is None or counts.user_share >= USER_SHARE_MIN))


def joint(time: Verdict, counts: Counts | None, *, parity: float,
          whole: Verdict | None = None) -> Verdict:
    """Time's verdict with the counts beside it (docs/verdict.md, "A second signal").

    ``whole``: time judged again on the same pairs at the workload's whole alpha (not
    split over looks): what rule (c) asks of its interval. None: ``time``'s own.
    Not counted (None, or no method): ``time`` itself, unchanged.
    """
    if counts is None or counts.method is None:
        return time
    if time.outcome in CALLS:
        return _a_call(time, counts)
    if time.outcome == "level":
        return replace(time, settled_by="time")
    if time.outcome != "inconclusive" or not usable(counts):
        return time
    assert counts.ratio is not None
    if _pending_with_counts(time, counts, parity) and not memory_agrees(counts, parity):
        return replace(time, reason_code="misses_disagree",
                       reason=f"the runs read {_pct(time.ratio)} and the instructions "
                       f"{_pct(counts.ratio)}, but {misses_words(counts)}: the instructions "
                       f"alone cannot stand in for the fast runs ({time.reason})")
    if _pending_with_counts(time, counts, parity):
        outcome: Outcome = "slower" if (time.ratio or 1.0) > 1 else "faster"
        return replace(time, outcome=outcome, reason_code=None, suggested_runs=None,
                       settled_by="time and instructions",
                       reason=f"the runs read {_pct(time.ratio)} and the instructions "
                       f"{_pct(counts.ratio)}: the fast runs have not followed yet, the "
                       "instructions moved the same way")
    if (counts.reading == "same" and time.reason_code in ("spread", "few_runs")
            and not memory_same(counts, parity)):
        return replace(time, reason_code="misses_moved",
                       reason=f"the same instructions ({_pct(counts.ratio)}), but "
                       f"{misses_words(counts)}: not level on the counts; time decides "
                       f"({time.reason})")
    if (counts.reading == "same" and time.reason_code in ("spread", "few_runs")
            and _level_with_counts(whole or time, parity)):
        return replace(whole or time, outcome="level", reason_code=None, suggested_runs=None,
                       settled_by="time and instructions",
                       reason=f"the same instructions ({_pct(counts.ratio)})"
                       f"{misses_aside(counts)}, and time's "
                       f"interval ({_interval(whole or time)}) holds no change beyond the "
                       f"{parity * 100:g}% parity")
    if (counts.reading == "same" and time.ratio is not None
            and abs(math.log(time.ratio)) > math.log1p(parity) and layout_fragile(time)):
        return replace(time, reason_code="layout", reason=_layout_reason(time))
    return time


def layout_fragile(time: Verdict) -> bool:
    """Base again, from a place of its own, read at least LAYOUT_AA_SHARE of head's move:
    what head's time did, a change of placement alone does nearly as much."""
    if time.ratio is None or time.ratio == 1.0:
        return False
    return time.aa_noise >= LAYOUT_AA_SHARE * (max(time.ratio, 1 / time.ratio) - 1)


def _layout_reason(time: Verdict) -> str:
    return (f"{LAYOUT_WORDS} (the runs read {_pct(time.ratio)}, base against itself from "
            f"another place {time.aa_noise * 100:.1f}% either way)")


def _a_call(time: Verdict, counts: Counts) -> Verdict:
    """Rule (a) and (d) for a call of time's."""
    called = replace(time, settled_by="time")
    if not usable(counts):
        return called
    assert time.ratio is not None and counts.ratio is not None
    moved = math.log(time.ratio)
    if counts.reading == "same" and memory_moved(counts) == ("up" if moved > 0 else "down"):
        return replace(called, reason=f"the runs read {_pct(time.ratio)} with the same "
                       f"instructions ({_pct(counts.ratio)}), and {misses_words(counts)}: "
                       "memory, not layout")
    if counts.reading == "same":
        if abs(moved) <= math.log1p(LAYOUT_LIMIT) and layout_fragile(time):
            return replace(time, outcome="inconclusive", reason_code="layout", settled_by=None,
                           suggested_runs=None, reason=_layout_reason(time))
        if abs(moved) <= math.log1p(LAYOUT_LIMIT):
            return replace(time, outcome="inconclusive", reason_code="same_counts",
                           settled_by=None, suggested_runs=None,
                           reason=f"same instructions: layout, environment or timing modes "
                           f"(the runs read {_pct(time.ratio)}, the instructions "
                           f"{_pct(counts.ratio)})")
        return replace(called, reason=f"the runs read {_pct(time.ratio)} with the same "
                       f"instructions ({_pct(counts.ratio)}): more than layout moves time")
    if counts.reading in ("up", "down") and (counts.reading == "up") != (moved > 0):
        return replace(called, reason_code="counts_disagree",
                       reason=f"the runs read {_pct(time.ratio)} while the instructions read "
                       f"{_pct(counts.ratio)}: time decides")
    return called


def _pending_with_counts(time: Verdict, counts: Counts, parity: float) -> bool:
    """Rule (b): the median left its tolerance, only the fast runs (or the pairs they
    need) have not followed, and the counts moved the same way by at least parity."""
    if time.reason_code not in ("best_disagree", "timing_modes", "few_runs"):
        return False
    if time.n < MIN_PAIRS:  # fewer than 10 a side are refused, whatever the counts say
        return False
    if time.ratio is None or time.tolerance is None or counts.ratio is None:
        return False
    central = math.log(time.ratio)
    if abs(central) <= math.log1p(time.tolerance):
        return False
    if counts.reading != ("up" if central > 0 else "down"):
        return False
    counted = math.log(counts.ratio)
    if abs(counted) < math.log1p(parity):
        return False
    if not 1 / AGREE_WITHIN <= central / counted <= AGREE_WITHIN:
        return False  # the counts do not account for what time saw (a mode made of work?)
    best = time.low_ratio if time.low_ratio is not None else time.best_ratio
    return best is not None and (best > 1) == (central > 0) and best != 1


def _level_with_counts(time: Verdict, parity: float) -> bool:
    """Rule (c): the A/A noise and the floor within parity, and the interval (at the whole
    alpha) either inside the parity band, or holding no change and no wider than parity
    each way: with the instructions the same, a measurement that would have seen a change
    of twice parity and saw none."""
    if time.ci is None or time.floor_med is None or time.ratio is None:
        return False
    if time.aa_noise > parity or time.floor_med > parity:
        return False
    p = math.log1p(parity)
    lo, hi, m = math.log(time.ci[0]), math.log(time.ci[1]), math.log(time.ratio)
    inside = lo >= -p and hi <= p
    narrow = lo <= 0.0 <= hi and max(hi - m, m - lo) <= p
    return inside or narrow


def metric_instructions(counts: Counts | None, *, parity: float) -> Verdict:
    """The verdict of a workload judged on its instruction counts alone (already read)."""
    if counts is None or counts.method is None:
        why = counts.why if counts is not None else "not counted"
        return stats.invalid("no_metric", f"metric: instructions, but no counts: {why}")
    if counts.reading is None or counts.ratio is None:
        return stats.invalid("no_metric", f"metric: instructions, but {counts.reading_why}")
    pct = _pct(counts.ratio)
    if counts.reading in ("up", "down") and not memory_agrees(counts, parity):
        return _counted(counts, parity, "inconclusive", "misses_disagree",
                        f"the instructions read {pct}, but {misses_words(counts)}: the "
                        "instructions alone cannot call it")
    if counts.reading in ("up", "down"):
        outcome: Outcome = "slower" if counts.reading == "up" else "faster"
        return _counted(counts, parity, outcome, None, f"the instructions read {pct}")
    if counts.reading in ("same", "small") and not memory_same(counts, parity):
        return _counted(counts, parity, "inconclusive", "misses_moved",
                        f"the instructions read {pct}, but {misses_words(counts)}: not the "
                        "same work")
    if counts.reading == "same":
        return _counted(counts, parity, "level", None,
                        f"the same instructions ({pct}){misses_aside(counts)}")
    if counts.reading == "small" and abs(math.log(counts.ratio)) < math.log1p(parity):
        return _counted(counts, parity, "level", "below_parity", f"the instructions read "
                        f"{pct}{misses_aside(counts)}: real, but below the "
                        f"{parity * 100:g}% that matters")
    return _counted(counts, parity, "inconclusive", "spread",
                    f"the instructions read {pct}, but one build's counts vary by "
                    f"{(counts.noise or 0) * 100:.2f}%")


def _counted(counts: Counts, parity: float, outcome: Outcome, code: str | None,
             reason: str) -> Verdict:
    return Verdict(outcome=outcome, reason_code=code, reason=reason, n=len(counts.head),
                   ratio=counts.ratio, noise=counts.noise,
                   tolerance=max(parity, counts.noise or 0.0),
                   aa_noise=abs((counts.aa_ratio or 1.0) - 1.0),
                   settled_by=None if outcome == "inconclusive" else "instructions")


def memory(phases: Mapping[str, PhaseRuns], *, parity: float, alpha: float,
           look_alpha: float | None, seed: int, triplets: bool,
           floor_kib: int | None = None) -> Verdict | None:
    """Peak RSS of head against base, judged with the time rule at ``parity`` (no floor,
    no best-run side: a call rests on the central interval, as time's error control does),
    the A/A noise from base against base again. None where the runs cannot be judged."""
    if "aa" not in phases or "ab" not in phases:
        return None
    if any(phases[p].failure_code for p in phases):
        return None
    rule = Rule(parity=parity, alpha=alpha, floor_ns=0.0, seed=seed, look_alpha=look_alpha,
                best_check=False)
    base = phases["aa"].arms["base"].maxrss_kib
    again = phases["aa"].arms["base_again"].maxrss_kib
    second: Sequence[float] | None = None  # triplets: head against both base runs
    if triplets:
        head = phases["ab"].arms["head"].maxrss_kib
        ref: Sequence[float] = base
        second = again
    else:
        ab = [phases[p] for p in ("ab", "confirm") if p in phases]
        ref = [v for p in ab for v in p.arms["base"].maxrss_kib]
        head = tuple(v for p in ab for v in p.arms["head"].maxrss_kib)
    if not base or not again or not head or min((*base, *again, *head)) <= 0:
        return None
    if floor_kib:
        hidden = _under_floor(base, head, floor_kib, parity)
        if hidden is not None:
            return hidden
    aa = stats.compare(base, again, rule=rule)
    verdict = stats.compare(ref, head, rule=rule, aa_noise=stats.aa_noise_of(aa), again=second)
    if aa.outcome in CALLS:
        verdict = stats.force_aa_failed(verdict, aa)
    if verdict.outcome in ("slower", "faster", "level"):
        verdict = replace(verdict, settled_by="peak memory")
    return verdict


def _under_floor(base: Sequence[int], head: Sequence[int], floor_kib: int,
                 parity: float) -> Verdict | None:
    """Invalid where either build's median peak is within parity of the floor: the
    spawner's own peak RSS, which every run's reads at least (Linux keeps the replaced
    address space's high-water mark at exec), hides a run's own peak there."""
    low = min(statistics.median(base), statistics.median(head))
    if low > floor_kib * (1 + parity):
        return None
    return stats.invalid(
        "rss_floor", f"peak RSS {low / 1024:.1f} MiB is within {parity * 100:g}% of the "
        f"{floor_kib / 1024:.1f} MiB the measuring process itself held when it started the "
        "runs: no run's peak reads below that, so a change under it cannot be seen")


def _per_run(phases: Mapping[str, PhaseRuns], field: str = "instructions"
             ) -> tuple[list[int], list[int], list[int], list[float], list[float]]:
    """perf's counts of every measured run (``field``: instructions, or ll_misses): base,
    base again, head, and the per-round (per-pair) ratios head over base and base again
    over base."""
    def of(phase: str, arm: str) -> list[int]:
        got: ArmRuns | None = phases[phase].arms.get(arm) if phase in phases else None
        return list(getattr(got, field) or ()) if got is not None else []

    base, again = of("aa", "base"), of("aa", "base_again")
    ab_base = of("ab", "base") + of("confirm", "base")
    head = of("ab", "head") + of("confirm", "head")
    if again and len(again) == len(base) and len(head) == len(base) and ab_base == base:
        ratios = [h / math.sqrt(b * a) for b, a, h in zip(base, again, head, strict=True)
                  if b > 0 and a > 0]  # triplets: head over both base runs of its round
    else:
        ratios = [h / b for b, h in zip(ab_base, head, strict=False) if b > 0]
        base = ab_base or base
    aa_ratios = [a / b for b, a in zip(of("aa", "base"), again, strict=False) if b > 0]
    return base, again, head, ratios, aa_ratios


def _cycles_ratio(phases: Mapping[str, PhaseRuns]) -> float | None:
    if "ab" not in phases:
        return None
    base = phases["ab"].arms["base"].cycles or ()
    head = phases["ab"].arms["head"].cycles or ()
    if not base or not head or min(*base, *head) <= 0:
        return None
    return statistics.median(head) / statistics.median(base)


def _user_share(phases: Mapping[str, PhaseRuns]) -> float | None:
    phase = phases.get("aa") or phases.get("ab")
    if phase is None:
        return None
    arm = phase.arms["base"]
    shares = [c / w for c, w in zip(arm.cpu_ns, arm.wall_ns, strict=False) if w > 0]
    return statistics.median(shares) if shares else None


def _arm_noise(values: Sequence[float]) -> float:
    """How far one arm's counts vary: the relative range of a few, the IQR/median of many."""
    mid = statistics.median(values)
    if len(values) < 5:
        return (max(values) - min(values)) / mid
    q1, _, q3 = statistics.quantiles(values, n=4, method="inclusive")
    return (q3 - q1) / mid


def _varies_by_itself(own: float, pooled: float | None, parity: float) -> bool:
    """A suite's benchmark whose own A/A (``own``, log scale) the suite's pooled noise
    cannot account for (OWN_NOISE_TIMES)."""
    return (pooled is not None and own > OWN_NOISE_TIMES * pooled
            and own > OWN_PARITY_SHARE * math.log1p(parity))


def _reading(ratio: float, noise: float, parity: float) -> tuple[CountsReading, str]:
    moved = abs(math.log(ratio))
    pct, spread = _pct(ratio), f"{noise * 100:.3g}%"
    if noise > parity / 2:
        return "unsteady", f"one build's counts vary by {spread}, too much to judge by"
    if moved <= max(SAME_FLOOR, NOISE_TIMES * noise):
        return "same", f"the same instructions ({pct}; one build's vary by {spread})"
    if moved >= math.log1p(parity) and moved > NOISE_TIMES * noise:
        return ("up" if ratio > 1 else "down"), f"the instructions moved {pct}"
    return "small", f"the instructions moved {pct}, less than parity"


def _pct(ratio: float | None) -> str:
    return "?" if ratio is None else f"{(ratio - 1) * 100:+.1f}%"


def _interval(verdict: Verdict) -> str:
    if verdict.ci is None:
        return "?"
    lo, hi = verdict.ci
    return f"{(lo - 1) * 100:+.1f}% … {(hi - 1) * 100:+.1f}%"
