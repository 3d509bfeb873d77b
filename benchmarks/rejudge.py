"""Does the best-run check earn its cost? Stored phases re-judged with and without it.

verdict.md calls ``slower`` only when the paired ratio leaves ``tolerance`` *and* the
best-run ratio min(y)/min(x) leaves ``best_tolerance``. The check is meant for timing
modes. This module re-judges benchbot's stored samples phase by phase with
``stats.compare`` (so with the product's own figures and seeds) and derives the outcome
the same rule would give with the best-run condition dropped: ``slower`` / ``faster``
exactly when the paired ratio leaves its tolerance, everything else unchanged. The
engine's flow is replayed on top: the A/A check (a called A/A aborts a one-workload
run), the A/B phase, and confirmation by an independent phase.

Without the check, an A/B phase can be called where benchbot's was not, and then
benchbot ran no confirmation phase. The suite then measures an independent A/B phase
(A/A and confirmation off, a new seed) to stand in for it; ``confirm_source`` says which
was used.

The section ``biasedmodes`` runs the "biased modes" scenario with every method, and
benchbot alone (samples kept) on +3% and on the three null scenarios, and re-judges all.
It also reads the first-phase figures stored in earlier full runs.
"""

from __future__ import annotations

import json
import math
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from benchbot import stats
from benchbot.model import Rule, Verdict
from benchmarks import accuracy, methods, report, scenarios
from benchmarks.scenarios import Built, Scenario

CALLS = ("slower", "faster")
ARMS = {"aa": ("base", "base_again"), "ab": ("base", "head"), "confirm": ("base", "head")}


def without_best(v: Verdict) -> str:
    """The outcome of ``v`` under the same rule minus the best-run condition."""
    if v.outcome == "invalid" or v.reason_code == "few_runs" or v.ratio is None:
        return v.outcome
    assert v.tolerance is not None
    m, t = math.log(v.ratio), math.log1p(v.tolerance)
    if m > t:
        return "slower"
    if m < -t:
        return "faster"
    return v.outcome


def _phase(bench: Mapping[str, Any], name: str) -> tuple[list[float], list[float]] | None:
    phase = bench.get("phases", {}).get(name)
    if phase is None or phase.get("failure"):
        return None
    ref, cand = ARMS[name]
    return phase["arms"][ref]["samples_ns"], phase["arms"][cand]["samples_ns"]


def rejudge(bench: Mapping[str, Any], seed: int,
            extra: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Replay the engine on ``bench``'s stored phases, with and without the best-run check.

    ``seed`` is the engine's seed (A/A rule seed; A/B +1; confirmation +2). ``extra`` is
    an independent A/B phase (an engine entry) used as the confirmation where the rule
    without the check needs one and benchbot ran none. ``final`` is None ("unknown")
    when such a phase is needed and missing.
    """
    def rule(s: int) -> Rule:
        return Rule(parity=bench["parity"], floor_ns=bench["floor_ns"], seed=s,
                    better=bench.get("better", "lower"))

    def judge(samples: tuple[list[float], list[float]], s: int, aa: Verdict | None) -> Verdict:
        return stats.compare(samples[0], samples[1], rule=rule(s), aa_noise=stats.aa_noise_of(aa))

    aa_s, ab_s = _phase(bench, "aa"), _phase(bench, "ab")
    aa = judge(aa_s, seed, None) if aa_s else None
    out: dict[str, Any] = {"aa_ratio": aa.ratio if aa else None}
    for check in (True, False):
        def outcome(v: Verdict, check: bool = check) -> str:
            return v.outcome if check else without_best(v)

        key = "with" if check else "without"
        res: dict[str, Any] = {"aa": outcome(aa) if aa else None}
        if res["aa"] in CALLS or ab_s is None:  # the A/A check aborts a one-workload run
            out[key] = {**res, "first": "inconclusive", "final": "inconclusive",
                        "why": "aa_aborted"}
            continue
        ab = judge(ab_s, seed + 1, aa)
        first = outcome(ab)
        res.update(first=first, ratio=ab.ratio, best_ratio=ab.best_ratio,
                   tolerance=ab.tolerance, best_tolerance=ab.best_tolerance)
        if first not in CALLS:
            out[key] = {**res, "final": first}
            continue
        conf_s, source = _phase(bench, "confirm"), "benchbot"
        if conf_s is None and extra is not None:
            conf_s, source = _phase(extra, "ab"), "extra"
        if conf_s is None:
            out[key] = {**res, "final": None, "confirm_source": None}
            continue
        conf = outcome(judge(conf_s, seed + 2, aa))
        out[key] = {**res, "confirm": conf, "confirm_source": source,
                    "final": first if conf == first else "inconclusive"}
    got = bench.get("verdict", {}).get("outcome")
    first_got = (bench.get("ab") or {}).get("verdict", {}).get("outcome")
    out["reproduced"] = out["with"]["final"] == got and (
        first_got is None or out["with"]["first"] == first_got)
    return out


def needs_extra(judged: Mapping[str, Any]) -> bool:
    """The rule without the check called the A/B phase, and there is no confirmation."""
    w = judged["without"]
    return w.get("first") in CALLS and w.get("final") is None


def benchbot_rejudged(built: Built, *, runs: int, seed: int) -> dict[str, Any]:
    """benchbot on ``built`` (A/A, A/B, confirmation), its samples, and the re-judging."""
    calls, bench = accuracy.benchbot_run(built, runs=runs, seed=seed)
    return _with_rejudge(built, bench, runs=runs, seed=seed,
                         first=calls[accuracy.BENCHBOT_FIRST].outcome,
                         final=calls[accuracy.BENCHBOT].outcome)


def _with_rejudge(built: Built, bench: dict[str, Any], *, runs: int, seed: int, first: str,
                  final: str) -> dict[str, Any]:
    judged = rejudge(bench, seed)
    extra = None
    if needs_extra(judged):
        _, extra = accuracy.benchbot_run(built, runs=runs, seed=seed + 500, aa=False,
                                         confirm=False)
        judged = rejudge(bench, seed, extra)
    return {"seed": seed, "runs": runs, "first": first, "final": final,
            "reason": (bench.get("verdict") or {}).get("reason_code") or "",
            "ratio": (bench.get("verdict") or {}).get("ratio"), "rejudged": judged,
            "samples": _samples(bench), "extra_samples": _samples(extra) if extra else None}


def _samples(bench: Mapping[str, Any]) -> dict[str, list[list[float]]]:
    """Each phase's two arms, to re-judge later."""
    return {name: list(s) for name in ARMS if (s := _phase(bench, name)) is not None}


def run_section(root: Path, *, reps: int, runs: int, iterations: int, seed: int,
                hyperfine: str | None, log: Callable[[str], None],
                extra_runs: Sequence[int] = (100,)) -> dict[str, Any]:
    """Biased modes with every method; +3% and the nulls with benchbot alone; re-judged."""
    biased = scenarios.BIASED_MODES
    built = scenarios.make(biased, root / "bm", iterations=iterations, runs=runs)
    cal = accuracy.dilution(accuracy.calibrate(built, root))
    truth = scenarios.true_ratio(biased, cal["dilution"])
    expected = scenarios.expected_time_ratio(biased, cal["dilution"])
    log(f"biased modes: dilution {cal['dilution']:.3f}; per-run truth {truth:.4f}, "
        f"expected-time truth {expected:.4f}")
    out: dict[str, Any] = {"calibration": cal, "truth": truth, "expected_truth": expected,
                           "methods": [], "benchbot": []}
    with tempfile.TemporaryDirectory(prefix="bench-bm-") as tmp:
        for rep in range(reps):
            rep_seed = seed + 1000 * rep
            got = accuracy.run_rep(built, rep=rep, runs=runs, seed=rep_seed,
                                   scratch=Path(tmp), hyperfine=hyperfine)
            out["methods"] += accuracy.as_dicts(accuracy.records_of(biased, rep, got, truth))
            assert got.bench is not None
            row = _with_rejudge(built, got.bench, runs=runs, seed=rep_seed,
                                first=got.calls[accuracy.BENCHBOT_FIRST].outcome,
                                final=got.calls[accuracy.BENCHBOT].outcome)
            out["benchbot"].append({"scenario": biased.key, "rep": rep, **row})
            log(f"[{rep + 1}/{reps}] {accuracy.line_of(biased, rep, got)}  "
                f"without check: {row['rejudged']['without']['final']}")
    # benchbot alone, samples kept: biased modes at more pairs, +3%, and the nulls.
    alone = [(biased, n) for n in extra_runs]
    alone += [(Scenario("r1.03", "+3%", 1.03), n) for n in (runs, *extra_runs)]
    alone += [(s, runs) for s in scenarios.ACCURACY if s.work == 1.0]
    made = {biased.key: built}
    for s, _ in alone:
        if s.key not in made:
            made[s.key] = scenarios.make(s, root / "alone", iterations=iterations, runs=runs)
    for rep in range(reps):
        for index, (s, n) in enumerate(alone):
            start = time.monotonic()
            rep_seed = seed + 7 + 1000 * rep + 100 * index + n
            b = made[s.key]
            with scenarios.drifting(b, rep_seed):
                row = benchbot_rejudged(b, runs=n, seed=rep_seed)
            out["benchbot"].append({"scenario": s.key, "rep": rep, **row})
            w = row["rejudged"]["without"]
            log(f"  alone rep {rep + 1}/{reps} {s.label:>12} runs={n:<3d}: {row['final']} "
                f"{row['reason']}; without check: {w['first']} -> {w['final']} "
                f"[{time.monotonic() - start:.0f} s]")
    out["labels"] = {biased.key: biased.label, **{s.key: s.label for s, _ in alone}}
    return out


def stored_first_phase(paths: Sequence[Path]) -> list[dict[str, Any]]:
    """Earlier runs' first-phase figures: would the A/B phase have called without the check?

    The figures (ratio, tolerance) are stored per record, the samples are not, so only the
    first phase can be re-derived, and not the A/A check (an upper bound on calls).
    """
    rows = []
    for path in paths:
        if not path.exists():
            continue
        acc = json.loads(path.read_text()).get("accuracy", {})
        if not all(r.get("figures") for r in acc.get("records", [])
                   if r["method"] == accuracy.BENCHBOT_FIRST):
            continue  # an older run that did not keep the figures
        for key, label in acc.get("labels", {}).items():
            rs = [r for r in acc["records"]
                  if r["scenario"] == key and r["method"] == accuracy.BENCHBOT_FIRST]
            with_, without = 0, 0
            for r in rs:
                f = r.get("figures") or {}
                with_ += r["direction"] in CALLS
                if r["ratio"] and f.get("tolerance") is not None and r["outcome"] != "invalid":
                    left = abs(math.log(r["ratio"])) > math.log1p(f["tolerance"])
                    without += left or r["direction"] in CALLS
            rows.append({"run": path.stem, "scenario": label,
                         "kind": report.kind(acc["planted"][key]),
                         "n": len(rs), "with": with_, "without": without})
    return rows


def _tally(rows: Sequence[Mapping[str, Any]], field: str, key: str) -> str:
    vals = [r["rejudged"][key][field] for r in rows]
    slow = sum(v == "slower" for v in vals)
    fast = sum(v == "faster" for v in vals)
    unknown = sum(v is None for v in vals)
    text = f"{slow}/{fast}/{len(vals) - slow - fast - unknown}"
    return text + (f" (+{unknown} unconfirmed)" if unknown else "")


def markdown(sec: Mapping[str, Any], stored: Sequence[Mapping[str, Any]]) -> list[str]:
    """The section's tables."""
    labels = sec["labels"]
    recs = sec["methods"]
    names = [m for m in (accuracy.BENCHBOT, accuracy.BENCHBOT_FIRST, *methods.BLOCK_METHODS,
                         accuracy.HYPERFINE) if any(r["method"] == m for r in recs)]
    bench = [r for r in sec["benchbot"] if r["scenario"] == "biasedmodes"]
    runs = bench[0]["runs"] if bench else 0
    rows = []
    for m in names:
        rs = [r for r in recs if r["method"] == m]
        slow = sum(r["direction"] == "slower" for r in rs)
        fast = sum(r["direction"] == "faster" for r in rs)
        ratios = sorted(r["ratio"] for r in rs if r["ratio"] is not None)
        span = f"{ratios[0]:.3f}–{ratios[-1]:.3f}" if ratios else "–"
        outcomes = ""
        if m.startswith("benchbot"):
            outcomes = ", ".join(f"{w} {n}" for w, n in report.cell(rs, 1.0)["outcomes"].items())
        rows.append([m, f"{slow}/{fast}/{len(rs) - slow - fast}", span, outcomes])
    for label, field in (("benchbot without best-run check", "final"),
                         ("benchbot without check, 1st phase", "first")):
        rs = [r for r in bench if r["runs"] == runs]
        rows.append([label, _tally(rs, field, "without"), "", ""])
    out = [f"Biased modes, {sum(r['runs'] == runs for r in bench)} repetitions "
           f"at {runs} runs a side: true ratio per run {sec['truth']:.4f}, of the expected "
           f"time {sec['expected_truth']:.4f}. Slower / faster / no call:", "",
           report.markdown_table(["method", "slower/faster/none", "ratio estimates",
                                  "benchbot outcomes"], rows), ""]
    groups: dict[tuple[str, int], list[Mapping[str, Any]]] = {}
    for r in sec["benchbot"]:
        groups.setdefault((r["scenario"], r["runs"]), []).append(r)
    table = []
    for (key, n), rs in groups.items():
        same = sum(r["rejudged"]["reproduced"] for r in rs)
        extra = sum(r["rejudged"]["without"].get("confirm_source") == "extra" for r in rs)
        table.append([labels[key], str(n), _tally(rs, "first", "with"),
                      _tally(rs, "first", "without"), _tally(rs, "final", "with"),
                      _tally(rs, "final", "without"), f"{same}/{len(rs)}", str(extra)])
    out += ["benchbot's samples re-judged (slower / faster / no call), with and without the "
            "best-run check:", "",
            report.markdown_table(["scenario", "runs", "1st phase, with", "1st phase, without",
                                   "final, with", "final, without", "re-judging reproduced "
                                   "benchbot", "stand-in confirmations"], table)]
    if stored:
        out += ["", "First phase of earlier full runs, from stored figures (calls with / "
                "without the check; the A/A check is not replayed, so an upper bound):", "",
                report.markdown_table(
                    ["run", "scenario", "kind", "called with", "called without"],
                    [[r["run"], r["scenario"], r["kind"], f"{r['with']}/{r['n']}",
                      f"{r['without']}/{r['n']}"] for r in stored])]
    return out
