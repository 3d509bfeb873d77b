"""Turns the suite's records into figures and markdown tables (section by section).

Kinds of truth: ``null`` (no difference planted: any slower/faster is a false verdict),
``near`` (planted at or below parity, 2%: what a method calls is shown, not scored),
``real`` (planted beyond parity: no call in the true direction is a miss, the other
direction is a wrong direction).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

PARITY = 0.02


def kind(planted: float) -> str:
    """null, near or real: how a planted work ratio is scored."""
    if planted == 1.0:
        return "null"
    return "near" if abs(math.log(planted)) <= math.log1p(PARITY) + 1e-12 else "real"


def cell(records: Sequence[Mapping[str, Any]], planted: float) -> dict[str, Any]:
    """One method's figures on one scenario over its repetitions."""
    n = len(records)
    slower = sum(r["direction"] == "slower" for r in records)
    faster = sum(r["direction"] == "faster" for r in records)
    errors = [abs(r["ratio"] - r["truth"]) for r in records if r["ratio"] is not None]
    k = kind(planted)
    right, wrong = ("slower", "faster") if planted >= 1 else ("faster", "slower")
    hits = sum(r["direction"] == right for r in records)
    return {
        "n": n, "slower": slower, "faster": faster, "none": n - slower - faster, "kind": k,
        "false": slower + faster if k == "null" else None,
        "miss": n - hits - sum(r["direction"] == wrong for r in records) if k == "real" else None,
        "wrong": sum(r["direction"] == wrong for r in records) if k != "null" else None,
        "error": statistics.median(errors) if errors else None,
        "estimates": len(errors),
        "outcomes": _tally(r["outcome"] + (f" ({r['detail']})" if r.get("detail") and
                                                r["method"].startswith("benchbot") else "")
                           for r in records),
    }  # fmt: skip


def _tally(words: Iterable[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for w in words:
        out[w] = out.get(w, 0) + 1
    return dict(sorted(out.items(), key=lambda kv: -kv[1]))


def summarize(records: Sequence[Mapping[str, Any]], planted: Mapping[str, float],
              methods: Sequence[str]) -> dict[str, dict[str, dict[str, Any]]]:
    """method -> scenario -> cell."""
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for m in methods:
        out[m] = {}
        for key, work in planted.items():
            rs = [r for r in records if r["method"] == m and r["scenario"] == key]
            if rs:
                out[m][key] = cell(rs, work)
    return out


def totals(cells: Mapping[str, Mapping[str, Any]], records: Sequence[Mapping[str, Any]],
           method: str) -> dict[str, Any]:
    """One method's headline: false verdicts, misses, wrong directions, ratio error."""
    def count(field: str, kinds: tuple[str, ...]) -> tuple[int, int]:
        cs = [c for c in cells.values() if c["kind"] in kinds]
        return sum(c[field] or 0 for c in cs), sum(c["n"] for c in cs)

    errors = [abs(r["ratio"] - r["truth"]) for r in records
              if r["method"] == method and r["ratio"] is not None]
    worst = max((c["error"] for c in cells.values() if c["error"] is not None), default=None)
    return {"false": count("false", ("null",)), "miss": count("miss", ("real",)),
            "wrong": count("wrong", ("real", "near")),
            "error": statistics.median(errors) if errors else None, "worst_error": worst}


def _pct(x: float | None, digits: int = 1) -> str:
    return "–" if x is None else f"{x * 100:.{digits}f}%"


def headline_table(summary: Mapping[str, Mapping[str, Any]], records: Sequence[Mapping[str, Any]],
                   near: Sequence[tuple[str, str]]) -> str:
    """Per method: false verdicts, misses, wrong directions, calls near parity, error."""
    near_cols = [f"called slower at {label}" for _, label in near]
    head = ["method", "false verdicts (no difference)", "misses (beyond parity)",
            "wrong direction", *near_cols, "median ratio error", "worst scenario's error"]
    rows = []
    for method, cells in summary.items():
        t = totals(cells, records, method)
        nears = [f"{cells[k]['slower']}/{cells[k]['n']}" if k in cells else "–" for k, _ in near]
        rows.append([method, f"{t['false'][0]}/{t['false'][1]}", f"{t['miss'][0]}/{t['miss'][1]}",
                     f"{t['wrong'][0]}/{t['wrong'][1]}", *nears, _pct(t["error"], 2),
                     _pct(t["worst_error"], 2)])  # fmt: skip
    return markdown_table(head, rows)


def scenario_table(summary: Mapping[str, Mapping[str, Any]], labels: Mapping[str, str],
                   truth: Mapping[str, float]) -> str:
    """Per scenario and method: slower/faster/no call, and the median ratio error."""
    methods = list(summary)
    head = ["scenario", "true ratio", *methods]
    rows = []
    for key, label in labels.items():
        row = [label, f"{truth[key]:.4f}"]
        for m in methods:
            c = summary[m].get(key)
            row.append("–" if c is None else
                       f"{c['slower']}/{c['faster']}/{c['none']} ±{_pct(c['error'], 1)}")
        rows.append(row)
    return markdown_table(head, rows)


def outcome_table(summary: Mapping[str, Mapping[str, Any]], labels: Mapping[str, str],
                  method: str) -> str:
    """benchbot's own outcomes and reasons per scenario (what "no call" was)."""
    rows = [[label, ", ".join(f"{w} {n}" for w, n in summary[method][key]["outcomes"].items())]
            for key, label in labels.items() if key in summary[method]]
    return markdown_table(["scenario", f"{method}: outcome (reason) x repetitions"], rows)


def resolution_table(rows: Sequence[Mapping[str, Any]], default_runs: int) -> tuple[str, Any]:
    """Detection rate (slower calls / repetitions) per planted slowdown and run count."""
    planted = sorted({r["planted"] for r in rows})
    runs = sorted({r["runs"] for r in rows})
    rate: dict[tuple[float, int], tuple[int, int]] = {}
    for p in planted:
        for n in runs:
            rs = [r for r in rows if r["planted"] == p and r["runs"] == n]
            rate[(p, n)] = (sum(r["outcome"] == "slower" for r in rs), len(rs))
    table = markdown_table(
        ["planted", *[f"runs={n}" for n in runs]],
        [[f"+{(p - 1) * 100:g}%", *[f"{rate[(p, n)][0]}/{rate[(p, n)][1]}" for n in runs]]
         for p in planted],
    )
    smallest = {n: next((p for p in planted if rate[(p, n)][1] and
                         rate[(p, n)][0] >= 0.95 * rate[(p, n)][1]), None) for n in runs}
    return table, {"smallest_95": smallest, "default_runs": default_runs}


def published_table(pub: Mapping[str, Any]) -> str:
    """Section 4: the published intervals beside the recomputed ones and benchbot's."""
    def ci(pair: Sequence[float], digits: int = 3) -> str:
        return f"[{pair[0]:.{digits}f}x, {pair[1]:.{digits}f}x]"

    rows = []
    for name, r in pub.items():
        bb, p, rc = r["benchbot"], r["published"], r["recomputed"]
        rows.append([
            name, ci(p["ratio_ci"]), ci(rc["ratio_ci"]),
            f"{p['dz']:g}" if p["dz"] is not None else "–", f"{rc['dz']:.1f}",
            f"{bb['throughput_ratio']:.3f}x {ci(bb['throughput_ci'])}",
            f"{bb['outcome']} (swapped: {r['benchbot_swapped']['outcome']})",
        ])
    return markdown_table(["comparison", "published ratio CI", "recomputed (same method)",
                           "published dz", "recomputed dz", "benchbot ratio [CI]",
                           "benchbot verdict"], rows)  # fmt: skip


def overhead_lines(o: Mapping[str, Any]) -> list[str]:
    """Section 3 in a few lines."""
    out = []
    a = o["floor"]
    if "skipped" in a:
        out.append(f"- (a) time floor: skipped: {a['skipped']}")
    else:
        out.append(
            f"- (a) time floor, `/bin/true` ({a['benchbot']['n']} runs each): benchbot median "
            f"{a['benchbot']['median_us']:.0f} µs, min {a['benchbot']['min_us']:.0f} µs; "
            f"hyperfine -N median {a['hyperfine']['median_us']:.0f} µs, min "
            f"{a['hyperfine']['min_us']:.0f} µs; ratio {a['median_ratio']:.2f}x (medians), "
            f"{a['min_ratio']:.2f}x (minimums)")
        boxed = a.get("benchbot, sandboxed")
        if boxed:
            out.append(
                f"  - in the sandbox's worker ({a.get('sandbox', 'bubblewrap')}): median "
                f"{boxed['median_us']:.0f} µs, min {boxed['min_us']:.0f} µs; ratio "
                f"{a['benchbot, sandboxed: median_ratio']:.2f}x (medians), "
                f"{a['benchbot, sandboxed: min_ratio']:.2f}x (minimums)")
    for key in ("whole_run", "whole_run_sequential", "whole_run_8ms", "whole_run_8ms_sequential",
                "whole_run_8ms_long"):
        if key in o:
            out.append(_whole_line(o[key]))
    c = o["judging"]
    out.append(f"- (c) judging {c['workloads']} workloads x {c['pairs']:,} pairs: "
               f"{c['best_s']:.3f} s (best of {c['repeats']})")
    d = o.get("bookkeeping")
    if d:
        out.append(f"- (d) benchbot's own time per run, {d['workloads']} workloads x "
                   f"{d['pairs']:,} pairs of runs that take no time ({d['runs']:,} runs): "
                   f"{d['per_run_us']:.0f} µs a run ({d['wall_s']:.1f} s)")
    e = o.get("short_runs")
    if e:
        out.append(f"- (e) a whole compare of `/bin/true`, {e['runs']:,} runs (median "
                   f"{e['median_run_us']:.0f} µs): {e['wall_s']:.1f} s, benchbot adds "
                   f"{e['beyond_us']:.0f} µs a run beyond the runs' own time, the median of "
                   f"{len(e['all_beyond_us'])} ({', '.join(f'{x:.0f}' for x in e['all_beyond_us'])} "
                   f"µs); {e['sandbox']}")
    f = o.get("own_cpu")
    if f:
        out.append(f"- (f) benchbot's own CPU time in one compare, the median of "
                   f"{f['repeats']} fresh interpreters a part: {f['total_s']:.2f} s ("
                   + ", ".join(f"{k} {v * 1e3:.0f} ms" for k, v in f["parts_s"].items())
                   + f"); a compare of {f['runs_measured']} runs of 8 ms programs measured "
                   f"{f['measured_s']:.2f} s, so a wall of 1.2x leaves {f['allowance_s']:.2f} s "
                   f"for everything else; this CPU time alone is "
                   f"{f['total_s'] / f['allowance_s']:.1f}x that")
    return out


def _repeats(b: Mapping[str, Any]) -> str:
    factors = b.get("factors", [])
    if len(factors) < 2:
        return ""
    return f", the median of {len(factors)} ({', '.join(f'{f:.2f}x' for f in sorted(factors))})"


def _whole_line(b: Mapping[str, Any]) -> str:
    program = f", programs of {b['program_ms']:.0f} ms" if "program_ms" in b else ""
    line = (f"- (b) whole run, {b.get('design', '--runs 30')}{program}: `benchbot compare` took "
            f"{b['wall_s']:.1f} s for {b['runs_measured']} measured runs summing "
            f"{b['measured_s']:.1f} s: {b['overhead_factor']:.2f}x{_repeats(b)} (verdict "
            f"{b['outcome']}); of "
            f"the {b['wall_s'] - b['measured_s']:.1f} s more, "
            + ", ".join(f"{k.replace('_', ' ')} ~{v:.2f} s" for k, v in b["parts_s"].items()))
    if "hyperfine" in b:
        h = b["hyperfine"]
        line += (f"; hyperfine made {h['runs_measured']} runs in {h['wall_s']:.1f} s for "
                 f"{h['measured_s']:.1f} s measured: {h['overhead_factor']:.2f}x")
    return line


def markdown_table(head: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A GitHub markdown table."""
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)
