"""Results -> view model: every decision a report makes (row order, words, notes) is here.

Templates only format. Context such as the workflow run's URL is passed in, never read
from a global, so the view is a pure function of its inputs.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from benchbot.report import format as fmt

CommandStyle = Literal["cli", "bench"]

# Order rows so that what needs a reader's attention comes first.
OUTCOME_ORDER = {"slower": 0, "faster": 1, "invalid": 2, "inconclusive": 3, "level": 4}
ICONS = {
    "slower": "🔴",
    "faster": "🟢",
    "level": "⚪",
    "inconclusive": "🟡",
    "invalid": "⛔",
}
WORDS = {
    "slower": "slower",
    "faster": "faster",
    "level": "level",
    "inconclusive": "inconclusive",
    "invalid": "invalid",
}


@dataclass(frozen=True, slots=True, kw_only=True)
class Row:
    """One workload's line in the table, already worded."""

    name: str
    outcome: str
    icon: str
    verdict: str  # "slower +4.3%" or "inconclusive"
    base: str
    head: str
    ratio: str
    ci: str
    best_ratio: str
    tolerance: str
    spread: str
    aa: str
    why: str | None
    settle: str | None  # the command that would settle an inconclusive row
    note: int | None  # footnote number in the markdown table
    base_samples: str
    head_samples: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ReportView:
    """Everything a markdown or HTML report shows."""

    title: str
    headline: str
    counts: Mapping[str, int]
    geomean: str
    conclusion: str
    base: str
    head: str
    rows: Sequence[Row]
    notes: Sequence[Row]
    aa_line: str
    aborted: bool
    environment: Sequence[tuple[str, str]]
    warnings: Sequence[str]
    settings: str
    run_url: str | None
    bench_hint: bool
    created: str
    rule: str
    extra: Sequence[str] = field(default_factory=tuple)


def _median(values: Sequence[float]) -> float | None:
    return statistics.median(values) if values else None


def _value(bench: Mapping[str, Any], arm: str) -> str:
    data = bench["arms"][arm]
    if bench.get("better") == "higher":
        return fmt.number(_median(data.get("values", [])))
    return fmt.duration(_median(data["samples_ns"]))


def _samples(bench: Mapping[str, Any], arm: str) -> str:
    data = bench["arms"][arm]
    if bench.get("better") == "higher":
        return ", ".join(fmt.number(v) for v in sorted(data.get("values", [])))
    return ", ".join(fmt.duration(v) for v in sorted(data["samples_ns"]))


def settle_command(name: str, runs: int, style: CommandStyle, base: str, head: str) -> str:
    """The command a reader types to settle an inconclusive workload."""
    if style == "bench":
        return f"/bench runs={runs} only={name}"
    return f"benchbot compare --base {base} --head {head} --runs {runs} --only {name}"


def _verdict_words(bench: Mapping[str, Any]) -> str:
    v = bench["verdict"]
    outcome = v["outcome"]
    if outcome not in ("slower", "faster"):
        return WORDS[outcome]
    if bench.get("better") == "higher":  # judged as time (1/throughput); say it as throughput
        return f"{WORDS[outcome]} ({fmt.change(1 / v['ratio'])} throughput)"
    return f"{WORDS[outcome]} {fmt.change(v.get('ratio'))}"


def _sentence(text: str | None) -> str | None:
    """End a reason with a full stop, so that the next sentence can follow it."""
    if not text:
        return None
    return text if text.endswith((".", "!", "?")) else f"{text}."


def _aa_cell(bench: Mapping[str, Any]) -> str:
    aa = bench.get("aa")
    if not aa:
        return "–"
    v = aa["verdict"]
    if v["outcome"] == "invalid":
        return "invalid"
    return f"{fmt.change(v.get('ratio'))} ({v['outcome']})"


def _row(bench: Mapping[str, Any], note: int | None, style: CommandStyle, base: str, head: str) -> Row:
    v = bench["verdict"]
    runs = v.get("suggested_runs")
    settle = settle_command(bench["name"], runs, style, base, head) if runs else None
    return Row(
        name=bench["name"],
        outcome=v["outcome"],
        icon=ICONS[v["outcome"]],
        verdict=_verdict_words(bench),
        base=_value(bench, "base"),
        head=_value(bench, "head"),
        ratio=fmt.ratio(v.get("ratio")),
        ci=fmt.interval(v.get("ci")),
        best_ratio=fmt.ratio(v.get("best_ratio")),
        tolerance=fmt.tolerance(v.get("tolerance")),
        spread=fmt.percent(v.get("spread")),
        aa=_aa_cell(bench),
        why=_sentence(v.get("reason")),
        settle=settle,
        note=note,
        base_samples=_samples(bench, "base"),
        head_samples=_samples(bench, "head"),
    )


def _headline(counts: Mapping[str, int], geomean: str) -> str:
    parts = [f"{counts[o]} {o}" for o in ("slower", "faster", "level", "inconclusive", "invalid")]
    return " · ".join(parts) + f" · geomean {geomean}"


def _aa_line(doc: Mapping[str, Any]) -> str:
    aa = doc["aa"]
    if aa["status"] == "skipped":
        return "A/A check: skipped (aa=off); the A/B tolerances do not include the method's own noise."
    readings = [
        (abs(b["aa"]["verdict"]["ratio"] - 1), b["name"], b["aa"]["verdict"]["ratio"])
        for b in doc["benchmarks"]
        if b.get("aa") and b["aa"]["verdict"].get("ratio")
    ]
    worst = max(readings) if readings else None
    largest = f"; largest reading {fmt.change(worst[2])} ({worst[1]})" if worst else ""
    if aa.get("aborted"):
        return (
            f"A/A check: **failed for {len(aa['failed'])} of {len(readings)} workloads** "
            f"({', '.join(aa['failed'])}): this runner is too noisy now, nothing was compared"
            f"{largest}."
        )
    if aa["failed"]:
        return (
            f"A/A check (base against itself): failed for {', '.join(aa['failed'])}; those "
            f"workloads cannot be judged on this runner now{largest}."
        )
    return f"A/A check (base against itself): passed{largest}."


def build_view(
    doc: Mapping[str, Any],
    *,
    run_url: str | None = None,
    command_style: CommandStyle = "cli",
    title: str = "benchbot",
) -> ReportView:
    """Turn a results document into the view every report format renders."""
    summary = doc["summary"]
    counts = {o: summary[o] for o in ("slower", "faster", "level", "inconclusive", "invalid")}
    geomean = fmt.ratio(summary.get("geomean_ratio"))
    base_ref = doc["base"].get("ref") or doc["base"]["sha"]
    head_ref = doc["head"].get("ref") or doc["head"]["sha"]
    ordered = sorted(doc["benchmarks"], key=lambda b: (OUTCOME_ORDER[b["verdict"]["outcome"]], b["name"]))
    rows: list[Row] = []
    notes: list[Row] = []
    for bench in ordered:
        needs_note = bool(bench["verdict"].get("reason"))
        row = _row(bench, len(notes) + 1 if needs_note else None, command_style, base_ref, head_ref)
        rows.append(row)
        if needs_note:
            notes.append(row)
    env = doc["environment"]
    settings = doc["settings"]
    return ReportView(
        title=title,
        headline=_headline(counts, geomean),
        counts=counts,
        geomean=geomean,
        conclusion=summary["conclusion"],
        base=f"{base_ref} ({fmt.short_sha(doc['base']['sha'])})",
        head=f"{head_ref} ({fmt.short_sha(doc['head']['sha'])})",
        rows=rows,
        notes=notes,
        aa_line=_aa_line(doc),
        aborted=bool(doc["aa"].get("aborted")),
        environment=(
            ("CPU", f"{env['cpu']} ({env['cores']} usable cores)"),
            ("kernel", env["kernel"]),
            ("Python", env["python"]),
            ("governor", env.get("governor") or "not exposed"),
            ("load before / after", f"{fmt.load(env.get('load_before'))} → {fmt.load(env.get('load_after'))}"),
            ("sandbox", (doc.get("sandbox") or {}).get("description") or "not recorded"),
        ),
        warnings=list(env.get("warnings", [])),
        settings=(
            f"{settings['runs']} pairs per phase, warm-up {settings['warmup']}, order "
            f"{settings['order']}, seed {settings['seed']}, parity {fmt.percent(settings['parity'])}, "
            f"confirmation {'on' if settings['confirm'] else 'off'}, A/A {'on' if settings['aa'] else 'off'}"
        ),
        run_url=run_url,
        bench_hint=command_style == "bench",
        created=doc["created"],
        rule=doc["noise_model"]["rule"],
    )
