"""Decisive verdicts: the sequential design against the fixed one it replaces, side by side.

For every scenario and repetition the real engine compares the same two builds twice, in
an order that alternates per repetition:

- **fixed** (today's design before sequential measuring, still ``--runs 30``): an A/A
  phase, an A/B phase and a confirmation of standouts, 30 pairs each;
- **sequential** (the new default): rounds of triplets judged at looks until settled,
  within the default budget of 10 minutes.

Scenarios: identical builds; +3% and -4% of work planted; drift (the machine's speed
changing under the run); timing modes (random slow runs in both); biased modes (head
lands in the slow mode more often: no per-run difference); and identical builds under
load (a busy loop on the other core). Each record keeps the outcome, the reason, the
ratio, the pairs the verdict rests on, why measuring stopped, the wall time and the
summed time of the measured runs.

Then, on the sequential recordings, ``judge`` again at their last look with the rule
varied (the best-run side as the fastest run, the 10th percentile as shipped, the 25th,
or no best-run check), and the A/B interval with one base run per triplet against the
geometric mean of both. And the budget: sequential comparisons with a small budget on
work that does not settle, wall time against the budget.
"""

from __future__ import annotations

import contextlib
import statistics
import subprocess
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

from benchbot.config.settings import Overrides
from benchbot.core.model import Benchmark, Results, Rule
from benchbot.measure import engine
from benchbot.verdict import stats
from benchbot.verdict.judge import Policy, Workload, judge
from benchmarks import scenarios
from benchmarks.scenarios import Built, Scenario

FIXED, SEQUENTIAL = "fixed (30 pairs a phase)", "sequential (budget 10m)"
DESIGNS = {FIXED: Overrides(runs=30), SEQUENTIAL: Overrides()}
LOAD = Scenario("load", "identical, under load")
SCENARIOS: tuple[Scenario, ...] = (
    Scenario("aa", "identical"),
    Scenario("p3", "+3%", 1.03),
    Scenario("m4", "-4%", 0.96),
    Scenario("drift", "drift, identical", drift=True),
    Scenario("modes", "modes, identical", modes=True),
    scenarios.BIASED_MODES,
    LOAD,
)
NULLS = ("aa", "drift", "modes", "biasedmodes", "load")
VARIANTS: dict[str, dict[str, Any]] = {
    "fastest run": {"low_quantile": 0.0},
    "10th percentile (shipped)": {},
    "25th percentile": {"low_quantile": 0.25},
    "no best-run check": {"rule_changes": {"best_check": False}},
}


@dataclass(frozen=True, slots=True)
class Record:
    """One design's verdict on one repetition of one scenario."""

    scenario: str
    rep: int
    design: str
    outcome: str
    reason: str
    ratio: float | None
    low_ratio: float | None
    best_ratio: float | None
    pairs: int
    stopped: str
    wall_s: float
    measured_s: float
    runs: int
    variants: dict[str, str]
    narrower: float | None  # triplets: the interval with both base runs over with one


@contextlib.contextmanager
def busy_core(on: bool) -> Iterator[None]:
    """A busy loop on the machine while the block runs (the 'under load' scenario)."""
    if not on:
        yield
        return
    hog = subprocess.Popen(["sh", "-c", "while :; do :; done"], start_new_session=True)
    try:
        yield
    finally:
        hog.kill()
        hog.wait()


def compare(built: Built, design: str, *, seed: int) -> tuple[Results, float]:
    """One comparison by the real engine; its results and its wall time."""
    start = time.monotonic()
    doc = engine.compare(engine.Request(repo=built.repo, base="base", head="HEAD",
                                        overrides=replace(DESIGNS[design], seed=seed)))
    return doc, time.monotonic() - start


def measured(bench: Benchmark) -> tuple[float, int]:
    """Seconds and count of the runs a workload's verdict was measured with (each run once)."""
    seen: list[tuple[int, ...]] = []
    for name, phase in bench.phases.items():
        for arm, runs in phase.arms.items():
            if name == "ab" and arm == "base" and "aa" in bench.phases and bench.measuring \
                    and bench.measuring.design == "triplets":
                continue  # a triplet's first base run is in both phases
            seen.append(runs.wall_ns)
    return sum(sum(s) for s in seen) / 1e9, sum(len(s) for s in seen)


def variants(doc: Results) -> tuple[dict[str, str], float | None]:
    """The sequential recording judged again at its last look with the rule varied, and
    how much narrower the A/B interval is with both base runs than with the first alone."""
    bench = doc.benchmarks[0]
    if bench.measuring is None or bench.measuring.design != "triplets" or "ab" not in bench.phases:
        return {}, None
    w = Workload(name=bench.name, parity=bench.parity, floor_ns=bench.floor_ns,
                 better=bench.better, phases=bench.phases, design="triplets",
                 looks=max(1, len(bench.measuring.looks)))
    base = Policy(alpha=doc.settings.alpha, aa=doc.settings.aa, seed=doc.settings.seed)
    out: dict[str, str] = {}
    for name, change in VARIANTS.items():
        verdict = judge([w], replace(base, **change)).workloads[w.name].final
        out[name] = verdict.outcome if verdict else "none"
    b1 = bench.phases["aa"].arms["base"].samples_ns
    b2 = bench.phases["aa"].arms["base_again"].samples_ns
    head = bench.phases["ab"].arms["head"].samples_ns
    narrower = None
    if len(head) >= 10:
        rule = Rule(parity=bench.parity, floor_ns=bench.floor_ns, look_alpha=0.05)
        one = stats.compare(b1, head, rule=rule)
        both = stats.compare([(a * b) ** 0.5 for a, b in zip(b1, b2, strict=False)], head, rule=rule)
        if one.ci_half and both.ci_half:
            narrower = both.ci_half / one.ci_half
    return out, narrower


def record(s: Scenario, rep: int, design: str, doc: Results, wall_s: float) -> Record:
    bench = doc.benchmarks[0]
    v = bench.verdict
    secs, runs = measured(bench)
    found, narrower = variants(doc) if design == SEQUENTIAL else ({}, None)
    return Record(
        scenario=s.key, rep=rep, design=design, outcome=v.outcome, reason=v.reason_code or "",
        ratio=v.ratio, low_ratio=v.low_ratio, best_ratio=v.best_ratio,
        pairs=bench.measuring.pairs if bench.measuring else v.n,
        stopped=bench.measuring.stopped if bench.measuring else "fixed", wall_s=wall_s,
        measured_s=secs, runs=runs, variants=found, narrower=narrower,
    )


def run_section(built: Mapping[str, Built], *, reps: int, seed: int,
                log: Callable[[str], None]) -> list[dict[str, Any]]:
    """Every scenario ``reps`` times, both designs each time (repetitions outermost)."""
    out: list[dict[str, Any]] = []
    designs = list(DESIGNS)
    for rep in range(reps):
        for index, s in enumerate(SCENARIOS):
            b = built[s.key]
            order = designs if (rep + index) % 2 == 0 else designs[::-1]
            line = []
            with scenarios.drifting(b, seed + rep), busy_core(s.key == LOAD.key):
                for design in order:
                    doc, wall = compare(b, design, seed=seed + 1000 * rep + 10 * index)
                    r = record(s, rep, design, doc, wall)
                    out.append(asdict(r))
                    line.append(f"{design.split()[0]}={r.outcome}({r.reason or r.stopped},"
                                f" {r.pairs}p, {r.wall_s:.0f}s)")
            log(f"  decisive rep {rep + 1}/{reps} {s.label:>22}: " + "  ".join(line))
    return out


def budget_check(built: Built, *, budgets: Sequence[float], seed: int,
                 log: Callable[[str], None]) -> list[dict[str, Any]]:
    """Sequential comparisons with small budgets on work that does not settle soon."""
    out = []
    for i, budget in enumerate(budgets):
        start = time.monotonic()
        doc = engine.compare(engine.Request(repo=built.repo, base="base", head="HEAD",
                                            overrides=Overrides(budget=budget, seed=seed + i)))
        wall = time.monotonic() - start
        bench = doc.benchmarks[0]
        out.append({"budget_s": budget, "wall_s": wall, "over": wall / budget - 1,
                    "pairs": bench.measuring.pairs if bench.measuring else 0,
                    "stopped": bench.measuring.stopped if bench.measuring else "",
                    "outcome": bench.verdict.outcome})
        log(f"  budget {budget:.0f} s: took {wall:.1f} s ({(wall / budget - 1) * 100:+.1f}%), "
            f"{out[-1]['pairs']} pairs, {out[-1]['stopped']}")
    return out


# --- tables ---------------------------------------------------------------------------------


def _count(rows: Sequence[Mapping[str, Any]], outcomes: Sequence[str], not_: str = "") -> str:
    """How many of ``rows`` came out one of ``outcomes`` (other than ``not_``), of how many."""
    hits = sum(1 for r in rows if r["outcome"] in outcomes and r["outcome"] != not_)
    return f"{hits}/{len(rows)}"


def summary_rows(records: Sequence[Mapping[str, Any]]) -> list[list[str]]:
    """Per scenario and design: outcomes, false or wrong calls, pairs, wall time."""
    rows = []
    for s in SCENARIOS:
        for design in DESIGNS:
            rs = [r for r in records if r["scenario"] == s.key and r["design"] == design]
            if not rs:
                continue
            truth = "slower" if s.work > 1 else "faster" if s.work < 1 else "none"
            calls = {o: _count(rs, (o,)) for o in ("slower", "faster", "level", "inconclusive")}
            wrong = _count(rs, ("slower", "faster"), not_=truth)
            rows.append([
                s.label, design, calls["slower"], calls["faster"], calls["level"],
                calls["inconclusive"], wrong,
                f"{statistics.median(r['pairs'] for r in rs):.0f}",
                f"{statistics.median(r['wall_s'] for r in rs):.1f}",
            ])
    return rows


def markdown(records: Sequence[Mapping[str, Any]], budget: Sequence[Mapping[str, Any]]) -> list[str]:
    """The section's tables for benchmarks/README.md and the closing note."""
    from benchmarks.report import markdown_table

    head = ["scenario", "design", "slower", "faster", "level", "inconclusive",
            "false or wrong", "median pairs", "median wall s"]
    lines = ["### Decisive verdicts: sequential against fixed", "",
             markdown_table(head, summary_rows(records)), ""]
    for design in DESIGNS:
        rs = [r for r in records if r["design"] == design]
        if rs:
            walls = sorted(r["wall_s"] for r in rs)
            lines.append(f"- {design}: median wall time {statistics.median(walls):.1f} s over "
                         f"{len(rs)} comparisons; runs' own time is "
                         f"{statistics.median(r['measured_s'] / r['wall_s'] for r in rs if r['wall_s']):.0%} "
                         "of it (median)")
    seq = [r for r in records if r["design"] == SEQUENTIAL and r["variants"]]
    if seq:
        lines += ["", "Sequential recordings judged again at their last look, the best-run side varied "
                  "(slower / faster / level / inconclusive):", ""]
        vhead = ["scenario", *VARIANTS]
        vrows = []
        for s in SCENARIOS:
            rs = [r for r in seq if r["scenario"] == s.key]
            if rs:
                vrows.append([s.label, *(
                    "/".join(str(sum(1 for r in rs if r["variants"].get(v) == o))
                             for o in ("slower", "faster", "level", "inconclusive"))
                    for v in VARIANTS)])
        lines += [markdown_table(vhead, vrows), ""]
        widths = {s.label: [r["narrower"] for r in seq if r["narrower"] and r["scenario"] == s.key]
                  for s in SCENARIOS}
        said = ", ".join(f"{label} {statistics.median(w):.2f}x" for label, w in widths.items() if w)
        if said:
            lines.append("- The A/B interval (95%, distribution-free) with both base runs of a "
                         "triplet (their geometric mean) against the one with the first base run "
                         f"alone, median width ratio per scenario: {said}.")
    if budget:
        worst = max(b["over"] for b in budget)
        budgets = ", ".join(f"{b['budget_s']:.0f}" for b in budget)
        lines.append(f"- Budget: {len(budget)} comparisons with budgets of {budgets} s took at most "
                     f"{worst:+.1%} of their budget.")
    return lines
