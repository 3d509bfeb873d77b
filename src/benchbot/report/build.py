"""A results document made into the view model of view: one row per workload (its cells,
its note, what would settle it), the A/A check, the shards, the suites, the machine, and
the ever shorter versions of a report that must fit a limit (shortened). Reading only:
every figure comes from the document, nothing is judged again.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from benchbot.config.settings import (
    DEFAULT_PARITY,
    MAX_BUDGET_S,
    MAX_RUNS,
    ONLY_NAME,
    UNIT_LABEL,
    duration_words,
)
from benchbot.core.model import (
    OUTCOMES,
    Benchmark,
    Better,
    Counts,
    Environment,
    Machine,
    Outcome,
    PhaseRuns,
    Results,
    SuiteRecord,
)
from benchbot.report.profiles import profile_view
from benchbot.report.view import (
    ICONS,
    MEMORY_WORDS,
    NO_RUNS,
    OUTCOME_ORDER,
    AAView,
    CommandStyle,
    CountsView,
    Distribution,
    MemoryView,
    ReportView,
    Row,
    Settle,
    ShardGap,
    ShardsView,
    ShardView,
    SuiteView,
    Uncounted,
)
from benchbot.results.shards import suite_items
from benchbot.verdict.figures import figure_of
from benchbot.verdict.sequential import why as sequential_why

HISTOGRAM_BINS = 12


MIN_FOR_MODES = 20


# A unimodal normal sample of 30 to 200 values splits at best into halves about 3 to 4.6
# standard deviations apart (99.9th percentile, seeded simulation); two timing modes 13%
# apart with 1-2% spread each split 10 or more apart.
MODE_SEPARATION = 4.8


def build_view(doc: Results, *, run_url: str | None = None, command_style: CommandStyle = "cli",
               title: str = "benchbot", artifact: str | None = None) -> ReportView:
    """Turn a results document into the view every report format renders (``artifact``:
    the workflow run's artifact that holds the whole report, named where one is cut)."""
    ordered = sorted(doc.benchmarks, key=lambda b: (OUTCOME_ORDER[b.verdict.outcome], b.name))
    rows: list[Row] = []
    whys: dict[str, str] = {}  # why not counted -> its footnote letter
    for bench in ordered:
        counts = bench.counts
        if counts is not None and counts.method is None and counts.why not in whys:
            whys[counts.why] = chr(ord("a") + len(whys)) if len(whys) < 26 else f"z{len(whys)}"
        note = sum(1 for r in rows if r.note is not None) + 1 if _has_note(bench) else None
        rows.append(_row(bench, note, _settle(bench, doc, command_style), whys,
                         floor_kib=doc.environment.maxrss_floor_kib))
    env = doc.environment
    s = doc.settings
    return ReportView(
        title=title, counts={o: doc.summary.count(o) for o in OUTCOMES},
        geomean=doc.summary.geomean_ratio, conclusion=doc.summary.conclusion,
        fail_on=doc.status.fail_on, base=doc.base, head=doc.head, rows=tuple(rows),
        notes=tuple(r for r in rows if r.note is not None), aa=_aa_view(doc),
        environment=_environment(doc),
        load_before=env.load_before, load_after=env.load_after, other_cpu=env.other_cpu,
        warnings=env.warnings, runs=s.runs, warmup=s.warmup, order=s.order, seed=s.seed,
        sequential=any(b.measuring is not None and b.measuring.design == "triplets"
                       for b in doc.benchmarks),
        budget_s=s.budget_s, max_runs=s.max_runs,
        parity=s.parity, confirm=s.confirm, aa_on=s.aa,
        sandbox=doc.sandbox.description if doc.sandbox else None,
        run_url=run_url, bench_hint=command_style == "bench", created=doc.created,
        rule=doc.noise_model.rule, shards=_shards_view(doc),
        uncounted=tuple(Uncounted(letter=letter, why=why.removeprefix("not counted: "),  # the
                                  names=tuple(r.name for r in rows  # heading says so
                                              if r.counts is not None and r.counts.letter == letter))
                        for why, letter in whys.items()),
        suites=tuple(_suite_view(doc, s, rows) for s in doc.suites or ()),
        skipped=tuple(k.name for k in doc.skipped or ()), artifact=artifact, spent=doc.spent,
    )


def _suite_view(doc: Results, suite: SuiteRecord, rows: Sequence[Row]) -> SuiteView:
    members = [b for b in doc.benchmarks if b.name.startswith(suite.name + "/")]
    pairs = {b.measuring.pairs for b in members if b.measuring is not None}
    own = next((r for r in rows if r.name == suite.name and r.outcome == "invalid"), None)
    counting = suite.counting or ""
    # Runs were made (failed ones count too; a file written before counted those of the
    # benchmarks counted alone, and says "none counted" where all of them failed)
    made = bool(suite.counted_runs)
    wall = doc.spent.wall_s if doc.spent is not None else 0.0
    return SuiteView(name=suite.name, format=suite.format, compared=len(suite.benchmarks),
                     added=suite.added, removed=suite.removed, not_found=suite.not_found,
                     failure=suite.failure,
                     filter_hint=not suite.filtered and len(pairs) > 1,
                     counting=suite.counting, counted_runs=suite.counted_runs,
                     counting_s=suite.counting_s,
                     counted=sum(1 for b in members if b.counts is not None
                                 and b.counts.method is not None),
                     counting_share=(suite.counting_s or 0.0) / wall if wall > 0 else None,
                     stopped=counting.startswith("stopped: "),
                     # "none: why" names no recipe; nor does one no run followed
                     how=counting if made and not counting.startswith(("none: ", "stopped: "))
                     else None,
                     failure_note=own.note if own is not None and suite.failure else None)


def shortened(view: ReportView) -> list[ReportView]:
    """Ever shorter versions of ``view`` for a report that must fit a limit (a GitHub
    comment), each saying what it leaves out: without the table of every workload's runs;
    then without the notes on inconclusive workloads (their rows stay); then without the
    list of level workloads (the headline still counts them)."""
    out: list[ReportView] = []
    omitted: list[str] = []
    if view.rows and view.show_runs:
        omitted.append("the table of each workload's runs")
        view = replace(view, show_runs=False, omitted=tuple(omitted))
        out.append(view)
    unsure = [r for r in view.notes if r.outcome == "inconclusive"]
    if unsure:
        omitted.append(f"the notes on {len(unsure)} inconclusive workload"
                       f"{'' if len(unsure) == 1 else 's'} (what would settle each)")
        kept = [r.name for r in view.notes if r.outcome != "inconclusive"]
        number = {name: i for i, name in enumerate(kept, start=1)}  # numbered again, 1, 2, …
        rows = tuple(replace(r, note=number.get(r.name)) for r in view.rows)
        view = replace(view, rows=rows, notes=tuple(r for r in rows if r.name in kept),
                       omitted=tuple(omitted))
        out.append(view)
    if view.level_rows and view.show_level:
        omitted.append(f"the list of {len(view.level_rows)} level workloads")
        view = replace(view, show_level=False, omitted=tuple(omitted))
        out.append(view)
    return out


def _has_note(bench: Benchmark) -> bool:
    """A reason, a second signal that settled it, or a call on peak memory: a note says it."""
    v, memory = bench.verdict, bench.memory
    second = v.settled_by not in (None, "time") and bench.metric != "instructions"
    return bool(v.reason or second or bench.profile is not None
                or (memory is not None and memory.outcome in ("slower", "faster", "inconclusive")
                    and (memory.outcome != "inconclusive" or memory.reason)))


def _first_line(text: str, limit: int = 300) -> str:
    lines = text.strip().splitlines()
    line = lines[0] if lines else "no reason given"
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _environment(doc: Results) -> tuple[tuple[str, str], ...]:
    """The machine's rows; after a merge of shards measured on several machines, a row
    for each shard's machine with its own CPU, load and other processes' work."""
    env = doc.environment
    if _machines(doc) > 1:
        return tuple((f"shard {s.index}/{s.count}", _machine_words(s.machine, s.environment))
                     for s in doc.shards or ())
    rows = [("CPU", f"{env.cpu} ({env.cores} usable cores)"), ("kernel", env.kernel),
            ("Python", env.python), ("governor", env.governor or "not exposed")]
    if env.machine is not None:
        rows.append(("machine", env.machine.label))
    if env.maxrss_floor_kib:
        rows.append(("peak memory floor", f"{env.maxrss_floor_kib / 1024:.2f} MiB: no run's "
                     "peak RSS reads below what the process that started it held"))
    return tuple(rows)


def _machines(doc: Results) -> int:
    return len({s.machine for s in doc.shards or ()})


def _machine_words(machine: Machine | None, env: Environment) -> str:
    load = " / ".join(f"{v:.2f}" for v in env.load_before) or "–"
    after = " / ".join(f"{v:.2f}" for v in env.load_after) or "–"
    other = "not measured" if env.other_cpu is None else f"{env.other_cpu:.2f} CPUs"
    return (f"{machine.label if machine else 'unknown machine'}: {env.cpu} ({env.cores} usable "
            f"cores), {env.kernel}, Python {env.python}, governor {env.governor or 'not exposed'}; "
            f"load {load} → {after}; other processes {other}")


def _shards_view(doc: Results) -> ShardsView | None:
    """How the comparison was split, or None when it was not."""
    if doc.shard is not None:
        own = ShardView(index=doc.shard.index, count=doc.shard.count,
                        machine=doc.environment.machine.label if doc.environment.machine else None,
                        workloads=tuple(b.name for b in doc.benchmarks))
        # the config's workloads, and every benchmark (or failed suite) its suites discovered
        suites = len(suite_items(doc.suites or ()))
        return ShardsView(own=own, total=sum(len(p) for p in doc.shard.plan) + suites, reported=(),
                          machines=1, gaps=(), unmeasured=())
    if doc.shards is None:
        return None
    reported = tuple(ShardView(index=s.index, count=s.count,
                               machine=s.machine.label if s.machine else None,
                               workloads=s.workloads) for s in doc.shards)
    count = doc.shards[0].count if doc.shards else 0
    gaps = sorted([ShardGap(index=k, count=count, reason=None) for k in doc.missing_shards or ()]
                  + [ShardGap(index=f.index, count=count, reason=_first_line(f.reason))
                     for f in doc.failed_shards or ()], key=lambda g: g.index)
    unmeasured = doc.unmeasured or ()
    return ShardsView(own=None, total=len(doc.benchmarks) + len(unmeasured), reported=reported,
                      machines=_machines(doc), gaps=tuple(gaps), unmeasured=unmeasured)


def _row(bench: Benchmark, note: int | None, settle: Settle | None,
         whys: dict[str, str] | None = None, *, floor_kib: int | None = None) -> Row:
    v = bench.verdict
    counted = _counts_view(bench, (whys or {}).get(bench.counts.why) if bench.counts else None)
    by_count = bench.metric == "instructions"  # judged on counts alone: no time to show
    judged = [p for n, p in bench.phases.items()
              if n in ("ab", "confirm") and not (p.failure_code or p.failure) and not by_count]
    base_runs, head_runs = _series(judged, bench.better)
    pair_ratios = tuple(h / b for b, h in zip(base_runs, head_runs, strict=False) if b > 0)
    aa_phase = bench.phases.get("aa")
    aa_ok = aa_phase is not None and not (aa_phase.failure_code or aa_phase.failure)
    aa_base, aa_again = (_series([aa_phase], bench.better) if aa_phase and aa_ok and not by_count
                         else ((), ()))
    aa_ratios = tuple(a / b for b, a in zip(aa_base, aa_again, strict=False) if b > 0)
    base = float(np.median(base_runs)) if base_runs else None
    if by_count:
        base = counted.base if counted else None
    ratio, ci = (v.estimate, v.estimate_ci) if v.estimate is not None else (v.ratio, v.ci)
    called_at = bench.measuring.called_at if bench.measuring else None
    breaks, total = [], 0
    for phase in judged[:-1]:  # pairs, not runs: a phase's order holds two letters a pair
        total += len(_series([phase], bench.better)[0])
        breaks.append(total)
    return Row(
        name=bench.name, outcome=v.outcome, icon=ICONS[v.outcome], better=bench.better,
        base=base, head=_head(base, ratio, v.outcome, bench.better), unit=_unit(bench),
        ratio=ratio, ci=ci, best_ratio=None if by_count else v.best_ratio, tolerance=v.tolerance,
        best_tolerance=v.best_tolerance, spread=v.spread, parity=bench.parity,
        aa_ratio=bench.aa.ratio if bench.aa else None, aa_outcome=bench.aa.outcome if bench.aa else None,
        pairs=bench.measuring.pairs if bench.measuring else v.n,
        design=bench.measuring.design if bench.measuring else "pairs",
        stopped=bench.measuring.stopped if bench.measuring else None,
        stopped_why=_stopped_why(bench),
        reason=v.reason, reason_code=v.reason_code, settle=settle, note=note,
        ratios=distribution(pair_ratios), aa_ratios=distribution(aa_ratios),
        base_runs=distribution(base_runs), head_runs=distribution(head_runs),
        pair_ratios=pair_ratios, aa_pair_ratios=aa_ratios, base_series=base_runs,
        head_series=head_runs, phase_breaks=tuple(breaks), metric=bench.metric,
        settled_by=v.settled_by, called_at=called_at if v.estimate is not None else None,
        estimate_n=v.estimate_n if v.estimate is not None else None,
        counts=counted, memory=_memory_view(bench, floor_kib),
        timed_s=bench.measuring.timed_s if bench.measuring else None,
        counted_s=bench.measuring.counted_s if bench.measuring else None,
        figure=figure_of(v, bench.counts, metric=bench.metric, better=bench.better),
        profile=profile_view(bench.profile),
    )


def _stopped_why(bench: Benchmark) -> str | None:
    """Why measuring stopped, in words: as recorded, but a stop on an invalid verdict says
    what made it invalid (a benchmark too fast to time did not fail a run), also in a file
    written before the words did."""
    m = bench.measuring
    if m is None:
        return None
    if m.stopped == "failed":
        return sequential_why("failed", bench.verdict)
    return m.why


def _median(values: Sequence[float] | None) -> float | None:
    return float(np.median(values)) if values else None


def _counts_view(bench: Benchmark, letter: str | None) -> CountsView | None:
    """The counts as shown: per arm the counted runs' medians (valgrind's own runs, or with
    perf every measured run's count in the arms)."""
    c: Counts | None = bench.counts
    if c is None:
        return None
    if c.method is None:
        return CountsView(method=None, why=c.why, kind=None, letter=letter, ratio=None, base=None,
                          base_again=None, head=None, runs=(0, 0, 0), cycles_ratio=None,
                          user_share=c.user_share, reading=None, reading_why=c.reading_why)
    base, again, head = c.base, c.base_again, c.head
    if c.every_run and not (base or head):  # perf: every measured run's count, per phase
        base, again, head = (_counted(bench, phases, arm) for phases, arm in (
            (("ab", "confirm"), "base"), (("aa",), "base_again"), (("ab", "confirm"), "head")))
    exact = c.method == "perf" and c.every_run and not c.scaled
    kind = f"per {c.unit}" if c.unit else "exact" if exact else "sampled"
    runs = ((len(base), len(again), len(head)) if c.unit is None else
            tuple(sum(1 for r in c.runs or () if r.arm == arm) for arm in ARMS))
    return CountsView(method=c.method, why=c.why, kind=kind, letter=None,
                      ratio=c.ratio, base=_median(base), base_again=_median(again), head=_median(head),
                      runs=runs, cycles_ratio=c.cycles_ratio,  # type: ignore[arg-type]
                      user_share=c.user_share if c.unit is None else None, reading=c.reading,
                      reading_why=c.reading_why, unit=c.unit, units=c.units,
                      counted_s=c.counted_s,
                      misses_why=c.misses.reading_why if c.misses is not None else None,
                      misses_shown=_misses_shown(c))


def _misses_shown(c: Counts) -> float | None:
    """The misses' ratio where the cell shows it: where they keep the work from being the
    same (the instructions read the same or below parity), or from moving the way the
    instructions did (they moved by parity), as reading the counts decided
    (``Misses.holds_back``); else None, and only the details give them."""
    m = c.misses
    if m is None or m.ratio is None or c.reading is None:
        return None
    return m.ratio if m.holds_back else None


ARMS = ("base", "base_again", "head")


def _counted(bench: Benchmark, phases: Sequence[str], arm: str) -> tuple[int, ...]:
    """One arm's per-run instruction counts over the named phases, in measured order."""
    return tuple(n for name in phases if name in bench.phases
                 for n in bench.phases[name].arms.get(arm, NO_RUNS).instructions or ())


def _memory_view(bench: Benchmark, env_floor_kib: int | None) -> MemoryView | None:
    m = bench.memory
    if m is None:
        return None
    floor = float(env_floor_kib) if m.reason_code == "rss_floor" and env_floor_kib else None
    base = bench.arms["base"].maxrss_kib if "base" in bench.arms else ()
    head = bench.arms["head"].maxrss_kib if "head" in bench.arms else ()
    return MemoryView(outcome=m.outcome, word=MEMORY_WORDS[m.outcome], ratio=m.ratio, ci=m.ci,
                      tolerance=m.tolerance, base_kib=_median(base), head_kib=_median(head),
                      reason=m.reason, floor_kib=floor, harness=_harness_memory(bench))


def _harness_memory(bench: Benchmark) -> tuple[float, float, float, float] | None:
    """A suite's benchmark: the medians of the bytes and allocations per iteration its
    harness reported in base's and head's A/B runs (None: it reported none)."""
    ab = bench.phases.get("ab")
    if ab is None or "base" not in ab.arms or "head" not in ab.arms:
        return None
    base, head = ab.arms["base"], ab.arms["head"]
    figures = [_median(x) for x in (base.bytes_op, head.bytes_op, base.allocs_op, head.allocs_op)]
    if any(f is None for f in figures):
        return None
    return tuple(figures)  # type: ignore[return-value]


def _series(phases: Sequence[PhaseRuns], better: Better) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """Reference and candidate values over the phases, in measured order."""
    ref: list[float] = []
    cand: list[float] = []
    for phase in phases:
        a, b = phase.arms.values()
        if better == "higher":
            ref += a.values or ()
            cand += b.values or ()
        else:
            ref += a.samples_ns
            cand += b.samples_ns
    return tuple(ref), tuple(cand)


def _unit(bench: Benchmark) -> str:
    """How the row's figures are shown: a time, a bare reported value, or a value with the
    unit the config gave it; a label a results file brings that the config could not
    have given (the file may come from an untrusted job) is left out."""
    if bench.metric == "instructions":
        return "instructions"
    if bench.better != "higher":
        return "ns"
    if bench.unit == "reported" or not UNIT_LABEL.fullmatch(bench.unit):
        return "value"
    return bench.unit


def _head(base: float | None, ratio: float | None, outcome: Outcome, better: Better) -> float | None:
    """Head as the verdict sees it: base x ratio (for a throughput, base / ratio, since the
    ratio is of the reciprocals)."""
    if base is None or ratio is None or outcome == "invalid":
        return None
    return base / ratio if better == "higher" else base * ratio


def _settle(bench: Benchmark, doc: Results, style: CommandStyle) -> Settle | None:
    """The command that would settle this workload, with the settings it was measured
    with that the command must keep; None where nothing benchbot takes would (more pairs
    than MAX_RUNS, or more than a day of measuring: the reason says so)."""
    measuring = bench.measuring
    runs, budget, most = bench.verdict.suggested_runs, None, None
    if measuring is not None and measuring.design == "triplets":
        pairs = measuring.settle_pairs
        if measuring.stopped not in ("budget", "max_runs") or not pairs or pairs > MAX_RUNS:
            return None
        runs = None
        budget = _budget_for(bench, pairs)
        if budget > MAX_BUDGET_S:
            return None
        if measuring.stopped == "max_runs" or pairs > (doc.settings.max_runs or MAX_RUNS):
            most = min(MAX_RUNS, 10 * math.ceil(pairs / 10))
    if not runs and budget is None:
        return None
    parity = bench.parity if not math.isclose(bench.parity, DEFAULT_PARITY) else None
    aa_off = not doc.settings.aa
    argv = ["benchbot", "compare"]
    if doc.settings.repo:
        argv += ["--repo", doc.settings.repo]
    if doc.settings.config_file:
        argv += ["--config", doc.settings.config_file]
    argv += ["--base", doc.base.ref or doc.base.sha, "--head", doc.head.ref or doc.head.sha]
    argv += ["--runs", str(runs)] if budget is None else ["--budget", duration_words(budget)]
    if most is not None:
        argv += ["--max-runs", str(most)]
    if parity is not None:
        argv += ["--parity", f"{parity:g}"]
    if aa_off:
        argv += ["--no-aa"]
    # A suite's benchmark whose name only= cannot take is measured with its whole suite.
    name = bench.name if ONLY_NAME.fullmatch(bench.name) else bench.name.partition("/")[0]
    argv += [f"--only={name}"]  # one word: a name may start with "-"
    return Settle(style=style, runs=runs, budget_s=budget, max_runs=most, parity=parity,
                  aa_off=aa_off, name=name, argv=tuple(argv))


def _budget_for(bench: Benchmark, pairs: int) -> float:
    """A time budget that would carry this workload alone to ``pairs`` triplets: three runs
    a triplet at their median wall time (a second a run where none finished), a half again
    for builds and overhead, in whole minutes."""
    walls = [float(np.median(a.wall_ns)) for a in bench.arms.values() if a.wall_ns]
    triplet_s = 3 * (max(walls) if walls else 1e9) / 1e9 + 0.006
    return 60.0 * math.ceil(pairs * triplet_s * 1.5 / 60.0 + 0.5)


def _aa_view(doc: Results) -> AAView:
    readings = [(abs(math.log(b.aa.ratio)), b.name, b.aa.ratio) for b in doc.benchmarks
                if b.aa is not None and b.aa.ratio]
    worst = max(readings) if readings else None
    return AAView(status=doc.aa.status, failed=doc.aa.failed, aborted=doc.aa.aborted,
                  compared=len(readings), worst_name=worst[1] if worst else None,
                  worst_ratio=worst[2] if worst else None)


def distribution(values: Sequence[float]) -> Distribution | None:
    """The histogram (log-spaced bins), the 10th, 50th and 90th percentiles, and the
    number of modes of ``values``; None for fewer than 3 positive values."""
    data = np.asarray([v for v in values if v > 0 and math.isfinite(v)], dtype=np.float64)
    if data.size < 3:
        return None
    logs = np.log(data)
    lo, hi = float(logs.min()), float(logs.max())
    if hi - lo < 1e-12:
        hi = lo + 1e-12
    counts, _ = np.histogram(logs, bins=HISTOGRAM_BINS, range=(lo, hi))
    p10, p50, p90 = np.quantile(data, [0.1, 0.5, 0.9])
    return Distribution(counts=tuple(int(c) for c in counts), lo=math.exp(lo), hi=math.exp(hi),
                        p10=float(p10), p50=float(p50), p90=float(p90), n=int(data.size),
                        modes=_modes(logs))


def _modes(logs: np.ndarray) -> int:
    """2 when the values split into two groups, each of at least a fifth of them, whose
    means lie far apart for their spread (more than MODE_SEPARATION pooled standard
    deviations, the most a single normal sample reaches in one case in a thousand at
    that size); else 1. A picture for the reader, not a test."""
    n = logs.size
    if n < MIN_FOR_MODES:
        return 1
    x = np.sort(logs)
    x = x - x.mean()  # centred, so that the sums of squares below lose no precision
    threshold = MODE_SEPARATION if n >= 30 else MODE_SEPARATION + 0.7
    # Every split at once, from running sums (one split at a time, with numpy's mean and
    # var, took 5 ms a picture: 10 s for a report of 500 workloads).
    k = np.arange(max(2, int(0.2 * n)), int(0.8 * n) + 1)
    if k.size == 0:
        return 1
    s1 = np.concatenate(([0.0], np.cumsum(x)))
    s2 = np.concatenate(([0.0], np.cumsum(x * x)))
    left_mean = s1[k] / k
    right_mean = (s1[n] - s1[k]) / (n - k)
    # n · pooled variance: each side's sum of squares about its own mean
    spread = (s2[k] - k * left_mean**2) + ((s2[n] - s2[k]) - (n - k) * right_mean**2)
    pooled = np.sqrt(np.maximum(spread, 0.0) / n)
    # A spread of zero (each side one value) is no evidence: the sums leave a rounding
    # error there, a trillionth of the whole sum of squares at most, which counts as none.
    spread_ok = spread > 1e-12 * s2[n]
    apart = (right_mean - left_mean) > threshold * pooled
    return 2 if bool(np.any(apart & spread_ok)) else 1
