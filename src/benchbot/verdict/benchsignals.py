"""The second signals of a suite's benchmark: its work per unit counted beside time, and
the memory its harness reports (docs/verdict.md, "Counts per benchmark"). Pure: no I/O.

- ``joint`` judges time and the counts per unit of work together. A suite's benchmark on
  a shared runner spreads so much from run to run that time alone settles almost nothing
  in ten minutes; its instructions per unit of work are deterministic, so they carry the
  weight and time keeps a veto: a level needs the same work and a time interval that
  holds no change (and no wider than ``LEVEL_TIME_LIMIT``); a call needs the work to have
  moved by parity and time to point the same way without excluding the move; time that
  excludes what the counts say makes it ``inconclusive``. Where the last-level cache misses
  were counted beside the instructions, the same instructions are the same work only where
  the work with the misses is the same too, and a move of the instructions settles a call
  only where the work with the misses moved the same way (``signals.memory_same``,
  ``memory_agrees``): otherwise time decides alone.
- ``memory`` judges the bytes and allocations per iteration a harness reports (Go's
  ``-benchmem``), with the time rule's machinery at ``memory_parity``.

The counts must have been read (``signals.read_counts``); time's verdict is the one the
rule of docs/verdict.md gives at the look (``time``) and again at the workload's whole
alpha (``whole``, sequential measuring only). The share of a harness run spent on CPU work
(``signals.USER_SHARE_MIN``) is not asked: it is the whole process's, mostly its start,
and says nothing of one benchmark's loop; a loop that waits retires the same instructions
and time's veto is what stands against it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import replace

from benchbot.core.model import Counts, Outcome, PhaseRuns, Rule, Verdict
from benchbot.verdict import signals, stats

# A level on the same work needs time's interval (at alpha / m) to hold no change and to
# reach no further than this each way: a change of time with the same instructions within
# it (code layout, memory effects) is not told apart from none, which the reason says with
# the reach. docs/verdict.md, "Counts per benchmark", has the arithmetic and the choice (a
# suite's benchmark spreading ±20-40% a run reaches ±50% at 10-15 pairs, ±25% at 22-34).
LEVEL_TIME_LIMIT = 0.5
# The counts' "same" band (max(SAME_FLOOR, NOISE_TIMES x their noise)) must stay within this
# share of parity for a level: a band as wide as parity would call a change of parity the
# same work.
SAME_BAND_SHARE = 0.5
# A call on the counts needs time's central estimate to point the same way and to have
# moved at least this share of the counts' move (log scale): 0, the same side is enough.
# benchmarks/suitestats.py weighs the alternatives.
TIME_SHARE = 0.0
# Where time's interval stops short of the work's move on the near side and time called the
# work's way by its own rule, that call stands, settled by time (``_moved``). False: such a
# benchmark is inconclusive, as before (benchmarks/suitestats.py weighs both).
TIME_CALLS_SHORT = True
CALLS = ("slower", "faster")
# Time's verdicts the counts do not override: the A/A check failed or aborted, the floor.
_TIME_FINAL = ("aa_failed", "aa_aborted", "floor")


def joint(time: Verdict, counts: Counts | None, *, parity: float,
          whole: Verdict | None = None, limit: float | None = None) -> Verdict:
    """Time's verdict with the counts per unit beside it (module docstring). Not counted
    per unit (None, no method, or whole-run counts): ``time`` itself. ``limit``: the reach
    a level allows time's interval (None: ``LEVEL_TIME_LIMIT``)."""
    if counts is None or counts.method is None or counts.unit is None:
        return time
    if time.outcome == "invalid" or time.reason_code in _TIME_FINAL:
        return time
    if counts.reading is None or counts.reading == "unsteady":
        return _by_time(time)
    assert counts.ratio is not None
    if (counts.reading == "same" or _below_parity(counts, parity)) and \
            not signals.memory_same(counts, parity):
        return _memory_moved(time, counts)
    if counts.reading == "same" or _below_parity(counts, parity):
        return _same(time, counts, parity=parity, whole=whole or time,
                     limit=LEVEL_TIME_LIMIT if limit is None else limit)
    if counts.reading in ("up", "down") and not signals.memory_agrees(counts, parity):
        return _memory_disagrees(time, counts)
    if counts.reading in ("up", "down"):
        return _moved(time, counts)
    if time.outcome in CALLS and (counts.ratio > 1) != (time.outcome == "slower"):
        # a move below parity, the other way from time's call: they disagree
        return replace(time, outcome="inconclusive", reason_code="counts_disagree",
                       settled_by=None, suggested_runs=None,
                       reason=f"time reads {_pct(time.ratio)} while the work per "
                       f"{counts.unit} moved {_pct(counts.ratio)}, the other way")
    return _by_time(time)


def too_wide(counts: Counts, parity: float) -> bool:
    """Deterministic counts that read no move, or a move below parity, whose band of noise
    is too wide for them to settle anything (``_same``'s and ``_below_parity``'s tests):
    judged on time alone unless sampled (suitecount._to_sample)."""
    if counts.samples or counts.reading not in ("same", "small"):
        return False
    if counts.reading == "small":
        return not _below_parity(counts, parity)
    band = max(signals.SAME_FLOOR, signals.NOISE_TIMES * (counts.noise or 0.0))
    return band > SAME_BAND_SHARE * math.log1p(parity)


def _below_parity(counts: Counts, parity: float) -> bool:
    """A move of the work below parity (``small``) whose band of noise stays inside it: the
    work changed, by less than what matters, for sure."""
    if counts.reading != "small" or counts.ratio is None:
        return False
    band = max(signals.SAME_FLOOR, signals.NOISE_TIMES * (counts.noise or 0.0))
    return abs(math.log(counts.ratio)) + band <= math.log1p(parity)


def _by_time(time: Verdict) -> Verdict:
    return replace(time, settled_by="time") if time.outcome in (*CALLS, "level") else time


def _same(time: Verdict, counts: Counts, *, parity: float, whole: Verdict,
          limit: float) -> Verdict:
    """The same work per unit: a time call within the layout limit is held back; a level
    needs time's interval at alpha / m to hold 1, within ``limit`` each way."""
    unit = counts.unit or "unit"
    if time.outcome in CALLS:  # the same work: a call would rest on time alone
        return replace(time, outcome="inconclusive", reason_code="same_counts",
                       settled_by=None, suggested_runs=None,
                       reason=f"the work per {unit} moved {_pct(counts.ratio)}, less than "
                       f"parity, while time reads {_pct(time.ratio)}: code layout, memory or "
                       "the machine, which a suite's benchmark is not called on alone")
    if time.outcome == "level":
        return replace(time, settled_by="time")
    band = max(signals.SAME_FLOOR, signals.NOISE_TIMES * (counts.noise or 0.0))
    if not counts.samples and band > SAME_BAND_SHARE * math.log1p(parity):
        # (sampled counts read the same only where their whole band lies within parity)
        return replace(time, reason=f"{time.reason}; the counts per {unit} vary by "
                       f"{(counts.noise or 0) * 100:.2f}%, too much to call the work the same "
                       f"within the {parity * 100:g}% parity")
    if whole.ci is None or whole.ratio is None:
        return time
    lo, hi = (math.log(edge) for edge in whole.ci)
    small = counts.reading == "small"
    same = (f"the work per {unit} moved {_pct(counts.ratio)}: real, but below the "
            f"{parity * 100:g}% parity" if small else
            f"the same work per {unit} within parity ({_pct(counts.ratio)} "
            f"± {math.expm1(signals.SAMPLED_TIMES * (counts.noise or 0.0)) * 100:.1f}%, "
            f"{counts.samples} processes a build)"
            if counts.samples else f"the same work per {unit} ({_pct(counts.ratio)})"
            ) + signals.misses_aside(counts)
    if time.ci is not None and (time.ci[0] > 1 or time.ci[1] < 1):
        # time moved at the look's own error (what a call of time's would spend): stop
        return replace(time, outcome="inconclusive", reason_code="same_counts",
                       suggested_runs=None, settled_by=None,
                       reason=f"{same}, but time moved ({_interval(time)}): code layout, "
                       "memory or timing modes, which counts cannot see")
    reach = max(hi, -lo)
    if lo <= 0 <= hi and reach <= math.log1p(limit):
        return replace(whole, outcome="level", reason_code="below_parity" if small else None,
                       suggested_runs=None, settled_by="instructions and time",
                       reason=f"{same}; time: no change beyond ±{math.expm1(reach) * 100:.1f}% "
                       f"(its interval {_interval(whole)})")
    if lo > 0 or hi < 0:
        return replace(time, outcome="inconclusive", reason_code="spread", suggested_runs=None,
                       settled_by=None,
                       reason=f"{same}; time's interval {_interval(whole)} leaves out no change "
                       "at the workload's whole error, though not yet a move at the look's: "
                       "more pairs will tell")
    need = math.ceil(whole.n * (reach / math.log1p(limit)) ** 2)
    runs = need if need <= stats.MAX_SUGGESTED_RUNS else None
    return replace(time, outcome="inconclusive", reason_code="spread", suggested_runs=runs,
                   settled_by=None,
                   reason=f"{same}; time's interval {_interval(whole)} reaches further than "
                   f"the ±{limit * 100:g}% a level on the same work allows: about {need} "
                   "pairs would settle it")


def _memory_moved(time: Verdict, counts: Counts) -> Verdict:
    """The same instructions per unit, but the work with the misses in it did not stay within
    parity: no level rests on the counts. A call of time's the way the misses moved stands
    (memory explains it), one the other way or beside misses too unsteady to tell is held
    back as any same-work call is; otherwise time decides, and measuring goes on."""
    unit = counts.unit or "unit"
    said = (f"the same instructions per {unit} ({_pct(counts.ratio)}), but "
            f"{signals.misses_words(counts)}")
    moved = signals.memory_moved(counts)
    if time.outcome in CALLS and moved == ("up" if time.outcome == "slower" else "down"):
        return replace(time, settled_by="time",
                       reason=f"{said}: time reads {_pct(time.ratio)} ({_interval(time)}), "
                       "the same way")
    if time.outcome in CALLS:
        code = "counts_disagree" if moved is not None else "same_counts"
        return replace(time, outcome="inconclusive", reason_code=code, settled_by=None,
                       suggested_runs=None,
                       reason=f"{said}, while time reads {_pct(time.ratio)}: a suite's "
                       "benchmark is not called on time alone against its counts")
    if time.outcome == "level":
        return replace(time, settled_by="time")
    return replace(time, reason_code="misses_moved",
                   reason=f"{said}: not level on the counts; time decides "
                   f"({time.reason or _interval(time)})")


def _memory_disagrees(time: Verdict, counts: Counts) -> Verdict:
    """The instructions per unit moved by parity, the work with the misses in it did not
    move the same way by parity: the counts call nothing; a call of time's own the
    instructions' way stands."""
    unit = counts.unit or "unit"
    said = (f"the instructions per {unit} moved {_pct(counts.ratio)}, but "
            f"{signals.misses_words(counts)}")
    if time.outcome in CALLS and (time.outcome == "slower") == (counts.reading == "up"):
        return replace(time, settled_by="time", reason=f"{said}; time reads "
                       f"{_pct(time.ratio)} ({_interval(time)}) by itself")
    return replace(time, outcome="inconclusive", reason_code="misses_disagree",
                   settled_by=None, suggested_runs=None,
                   reason=f"{said}: the instructions alone cannot call it; time reads "
                   f"{_pct(time.ratio)} ({_interval(time)})")


def _moved(time: Verdict, counts: Counts) -> Verdict:
    """The work per unit moved by parity or more: a call where time points the same way
    and its interval (at the look's error) reaches the counts' ratio (holds it, or lies
    beyond it: time moved more than the work); time's own call where its interval stops
    short of the move on the near side and time called the work's way by itself (while
    time's interval excludes no change on the work's side without its own call yet:
    inconclusive, counts_ahead, measuring goes on); inconclusive where it stops short
    otherwise (counts_disagree: measuring stops), or while time points the other way."""
    assert counts.ratio is not None
    unit = counts.unit or "unit"
    moved = f"the work per {unit} moved {_pct(counts.ratio)}"
    if time.ci is None or time.ratio is None or time.n < signals.MIN_PAIRS:
        return time
    lo, hi = time.ci
    up = counts.ratio > 1
    if (hi < counts.ratio) if up else (lo > counts.ratio):
        # time's interval lies short of the work's move, toward no change or past it
        if TIME_CALLS_SHORT and time.outcome == ("slower" if up else "faster"):
            # time called the work's way by itself, by less than the work moved (caches,
            # instructions that overlap): the call is time's own, with its error control
            return replace(time, settled_by="time",
                           reason=f"{moved}; time reads {_pct(time.ratio)} "
                           f"({_interval(time)}), less than the work, and calls it by itself")
        if TIME_CALLS_SHORT and ((lo > 1) if up else (hi < 1)):
            # time moved the work's way for sure, by less, and has not called it itself
            # yet: more pairs may let it (the budget gives it rounds first, as counts_ahead)
            return replace(time, outcome="inconclusive", reason_code="counts_ahead",
                           suggested_runs=None, settled_by=None,
                           reason=f"{moved}; time reads {_pct(time.ratio)} ({_interval(time)}), "
                           "the same way by less: not yet a call of time's own")
        return replace(time, outcome="inconclusive", reason_code="counts_disagree",
                       suggested_runs=None, settled_by=None,
                       reason=f"{moved}, but time's interval {_interval(time)} stops short of "
                       "it: time decides nothing against the counts, nor they against time")
    central, counted = math.log(time.ratio), math.log(counts.ratio)
    if central * counted > 0 and central / counted >= TIME_SHARE:
        outcome: Outcome = "slower" if counted > 0 else "faster"
        called_by_time = time.outcome == outcome
        return replace(time, outcome=outcome, reason_code=None, suggested_runs=None,
                       settled_by="time and instructions" if called_by_time
                       else "instructions and time",
                       reason=f"{moved}; time reads {_pct(time.ratio)} ({_interval(time)}), "
                       "the same way")
    return replace(time, outcome="inconclusive", reason_code="counts_ahead",
                   suggested_runs=None, settled_by=None,
                   reason=f"{moved}; time reads {_pct(time.ratio)} ({_interval(time)}), not "
                   "yet the same way")


# --- memory a harness reports ---------------------------------------------------------

FIGURES = (("bytes_op", "B/op"), ("allocs_op", "allocs/op"))


def memory(phases: Mapping[str, PhaseRuns], *, parity: float, alpha: float,
           look_alpha: float | None, seed: int, triplets: bool) -> Verdict | None:
    """Bytes and allocations per iteration as the harness reported them in every timed run,
    head against base, each judged with the time rule (no floor, no best-run side) on
    value + 1 (so that none allocated is a value), the A/A comparison from base again; the
    verdict is a call where either is and the other does not call the other way, level
    where both are. None where the harness reported no memory."""
    verdicts: list[tuple[str, Verdict]] = []
    for attr, label in FIGURES:
        arms = _arms(phases, attr, triplets)
        if arms is None:
            return None
        base, again, ref, head, second = arms
        exact = _exact(base, again, head, parity)
        if exact is not None:
            verdicts.append((label, exact))
            continue
        rule = Rule(parity=parity, alpha=alpha, floor_ns=0.0, seed=seed, look_alpha=look_alpha,
                    best_check=False)
        aa = stats.compare(base, again, rule=rule)
        verdict = stats.compare(ref, head, rule=rule, aa_noise=stats.aa_noise_of(aa),
                                again=second)
        if aa.outcome in CALLS:
            verdict = stats.force_aa_failed(verdict, aa)
        verdicts.append((label, verdict))
    return _combined(verdicts)


def _exact(base: Sequence[float], again: Sequence[float], head: Sequence[float],
           parity: float) -> Verdict | None:
    """The verdict of figures that did not vary at all (Go's B/op of a benchmark that
    allocates the same every iteration): each arm one value, base's in both base arms.
    There is nothing to estimate, and no interval to wait for at the first looks (where an
    interval of a few pairs at a look's error is not yet finite). None where they varied."""
    values = {*base, *again}
    if len(values) != 1 or len(set(head)) != 1:
        return None
    ratio = head[0] / base[0]
    moved = abs(math.log(ratio))
    if moved > math.log1p(parity):
        outcome: Outcome = "slower" if ratio > 1 else "faster"
        code = None
    else:
        outcome, code = "level", ("below_parity" if moved > 0 else None)
    return Verdict(outcome=outcome, reason_code=code, n=len(head), ratio=ratio, ci=(ratio, ratio),
                   median_ratio=ratio, noise=0.0, tolerance=parity, aa_noise=0.0,
                   reason="the same in every run")


def _arms(phases: Mapping[str, PhaseRuns], attr: str, triplets: bool
          ) -> tuple[list[float], list[float], list[float], list[float], list[float] | None] | None:
    """Base, base again, the reference (base's runs in the phases head was compared in),
    head, and the second reference of a triplet (base again; None in pairs), each value + 1;
    None where a phase or the figure is missing."""
    if "aa" not in phases or "ab" not in phases or any(p.failure_code for p in phases.values()):
        return None
    def of(phase: str, arm: str) -> list[float] | None:
        got = getattr(phases[phase].arms[arm], attr) if phase in phases else None
        return None if got is None else [v + 1.0 for v in got]
    base, again = of("aa", "base"), of("aa", "base_again")
    if base is None or again is None:
        return None
    second: list[float] | None = None
    if triplets:
        head = of("ab", "head")
        ref, second = base, again
    else:
        parts = [p for p in ("ab", "confirm") if p in phases]
        heads = [of(p, "head") for p in parts]
        refs = [of(p, "base") for p in parts]
        if any(h is None for h in heads) or any(r is None for r in refs):
            return None
        head = [v for h in heads for v in h or ()]
        ref = [v for r in refs for v in r or ()]
    if head is None or not head or not base or not again:
        return None
    return base, again, ref, head, second


def _combined(verdicts: Sequence[tuple[str, Verdict]]) -> Verdict:
    """One memory verdict of the B/op and allocs/op ones (``memory``)."""
    said = "; ".join(f"{label} {_pct(v.ratio)}" for label, v in verdicts)
    calls = {v.outcome for _, v in verdicts if v.outcome in CALLS}
    lead = next(v for _, v in verdicts)
    if len(calls) > 1:
        return replace(lead, outcome="inconclusive", reason_code="best_disagree",
                       settled_by=None, reason=f"{said}: they disagree")
    if calls:
        label, call = next((label, v) for label, v in verdicts if v.outcome in CALLS)
        return replace(call, settled_by=f"{label} as the harness reports it", reason=said)
    if all(v.outcome == "level" for _, v in verdicts):
        return replace(lead, settled_by="B/op and allocs/op as the harness reports them",
                       reason=None)
    worst = next(v for _, v in verdicts if v.outcome != "level")
    return replace(worst, reason=f"{said}: {worst.reason}")


# The figures in words, as the workload's own counts reasons give them.
_pct = signals._pct
_interval = signals._interval
