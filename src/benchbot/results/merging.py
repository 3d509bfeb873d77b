"""``benchbot merge``: the shards of one comparison made one results document again.

Each shard's file holds its own workloads, measured on its own machine with its own A/A
check and seed. Merging refuses files that are not shards of one comparison (other
commits, other settings or config, another split, a shard given twice), then judges the
whole again with ``judge.judge``: the A/A abort rule (more than a quarter of the
workloads failing their A/A check concludes nothing) applies to all shards' workloads
together, and the error control is the whole comparison's, as each shard already
judged with (``settings.family``). Each workload keeps its shard's seed, so its verdict
changes only where the abort rule over the whole says otherwise than its shard alone.

What a shard's file says of the whole (the split, the family, the config's digest, the
workloads skipped) is its own word, written on a machine that ran the code under test.
Given the ``Split`` computed again from the config (``engine.split_of``: the publish step
always, ``benchbot merge --repo``), a file whose word differs from it is refused naming
what it claims (``refusal``): a forged shard cannot take another's workloads while that
one fails, nor judge with a smaller family. The merged document's split and family are
then the config's, never a file's.

A comparison with suites: every shard discovered every suite and measured its share of
the benchmarks (``shards.suite_shares``). Each file states every suite's discovered list
(``suites[].benchmarks``); the lists must be the same in all files (a shard that found
another list fails the merge, naming the first benchmark one found and the other did
not), each file's suite benchmarks must be exactly its share of its list, and the family
is the config's workloads and all the suites' benchmarks, so that the error is spent as
on one machine. The list itself is the code under test's word on every shard, as it is on
one machine: what it reports is what is compared.

A shard that did not report (its job failed, was cancelled or never ran) is an error
unless ``allow_missing``; then the document records it in ``missing_shards`` (and a
shard that ran but left no usable file in ``failed_shards``), names the workloads that
nobody measured, and its check is ``neutral`` whatever the verdicts
(``results.summarize``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from benchbot.core.errors import ResultsError
from benchbot.core.model import (
    AASummary,
    Benchmark,
    Environment,
    FailedShard,
    Family,
    Results,
    SandboxInfo,
    ShardRecord,
    SuiteRecord,
)
from benchbot.results import resultsdir
from benchbot.results.shards import Split, suite_shares
from benchbot.verdict.judge import Judged, Policy, Workload, judge


@dataclass(frozen=True, slots=True)
class ShardFile:
    """One shard's results document and the name it is known by in messages."""

    where: str
    doc: Results


# What must be the same in every shard of one comparison, as (what, how to read it). The
# seed and the time budget are each shard's own.
_SAME: tuple[tuple[str, Callable[[Results], object]], ...] = (
    ("schema_version", lambda d: d.schema_version),
    ("base", lambda d: d.base.sha),
    ("head", lambda d: d.head.sha),
    ("the number of shards", lambda d: d.shard.count if d.shard else None),
    ("parity", lambda d: d.settings.parity),
    ("alpha", lambda d: d.settings.alpha),
    ("confirm", lambda d: d.settings.confirm),
    ("aa", lambda d: d.settings.aa),
    ("aa.abort_fraction", lambda d: d.aa.abort_fraction),
    ("runs", lambda d: d.settings.runs),
    ("max_runs", lambda d: d.settings.max_runs),
    ("the benchmarks the suites discovered", lambda d: _discovered(d)),
    ("the family of workloads", lambda d: d.settings.family),
    ("the config (its digest)", lambda d: d.settings.config_digest),
    ("the split of the workloads", lambda d: d.shard.plan if d.shard else None),
    ("the workloads skipped as not affected", lambda d: d.skipped),
)


def merge(files: Sequence[ShardFile], *, allow_missing: bool = False,
          failed: Sequence[FailedShard] = (), split: Split | None = None) -> Results:
    """One document of the whole comparison from its shards' files (module docstring).

    ``failed``: shards whose job ran but left no usable results file (the publish step
    knows them from their artifacts); they count as not missing, and as incomplete.
    ``split``: the comparison's split computed from the config, which every file must
    match (None: the files' own, checked only against each other).
    Every refusal is a ResultsError of one line naming the files.
    """
    check(files, split)
    ordered = sorted(files, key=lambda f: f.doc.shard.index if f.doc.shard else 0)
    first = ordered[0].doc  # the document's settings and seed are the lowest shard's
    assert first.shard is not None
    count = first.shard.count
    present = {f.doc.shard.index for f in ordered if f.doc.shard}
    failed = sorted({f.index: f for f in failed if f.index not in present}.values(),
                    key=lambda f: f.index)
    missing = [k for k in range(1, count + 1)
               if k not in present and k not in {f.index for f in failed}]
    if missing and not allow_missing:
        given = ", ".join(f"{f.where} ({f.doc.shard.index}/{count})" for f in ordered if f.doc.shard)
        raise ResultsError(
            f"cannot merge: {_shards(missing)} of {count} {'is' if len(missing) == 1 else 'are'} "
            f"missing (given: {given}); "
            "pass --allow-missing to merge the shards that reported"
        )
    docs = [f.doc for f in ordered]
    found = first.suites or ()
    family = split.family_with(found) if split is not None else first.settings.family
    benchmarks, aa = _judged(docs, family)
    unreported = [*missing, *(f.index for f in failed)]
    plan = split.plan if split is not None else first.shard.plan
    of_suites = suite_shares(found, count)
    unmeasured = tuple(n for k in sorted(unreported) if k <= len(plan)
                       for n in (*plan[k - 1], *of_suites[k - 1]))
    return replace(
        first, created=max(d.created for d in docs), benchmarks=tuple(benchmarks), aa=aa,
        suites=_suites(docs) if found else first.suites,
        settings=replace(first.settings, family=family),
        environment=_environment(docs), sandbox=_weakest_sandbox(docs),
        summary=resultsdir.summarize(benchmarks, first.status.fail_on, aa.aborted,
                                  incomplete=bool(unreported)),
        shard=None, shards=tuple(_record(d) for d in docs),
        missing_shards=tuple(missing), failed_shards=tuple(failed), unmeasured=unmeasured,
    )


def check(files: Sequence[ShardFile], split: Split | None = None) -> None:
    """Refuse files that are not distinct shards of one comparison, or (given ``split``)
    not shards of the comparison the config makes, in one line naming them."""
    if not files:
        raise ResultsError("nothing to merge: give the results files of the shards")
    for f in files:
        if f.doc.shard is None:
            raise ResultsError(f"cannot merge {f.where}: it is not a shard's results file (no "
                               "`shard`); merge combines the files of `benchbot compare --shard K/N`")
        if not 1 <= f.doc.shard.index <= f.doc.shard.count:
            raise ResultsError(f"cannot merge {f.where}: shard {f.doc.shard.index} of "
                               f"{f.doc.shard.count} does not exist")
        why = refusal(f.doc, split) if split is not None else None
        if why is not None:
            raise ResultsError(f"cannot merge {f.where}: {why}")
    head = files[0]
    for f in files[1:]:
        for what, read in _SAME:
            mine, theirs = read(head.doc), read(f.doc)
            if mine != theirs:
                raise ResultsError(f"cannot merge {head.where} and {f.where}: {what} "
                                   f"{_differs(what, mine, theirs, head.where, f.where)}")
    _check_distinct(files)


def refusal(doc: Results, split: Split) -> str | None:
    """Why a shard's file is not the share ``split`` (the config's) gives it, in words
    naming what it claims; None when it is. Its workloads first (one that is another
    shard's, or no shard's; one of its own it lacks), then what it states of the whole.
    A workload is a name of ``split.plan`` or of the file's share of the benchmarks its
    suites discovered (``shards.suite_shares`` of its ``suites[]``; that every file states
    the same lists is ``check``'s, across the files)."""
    shard = doc.shard
    if shard is None:
        return "it is not a shard's results file"
    count = len(split.plan)
    if shard.count != count:
        return f"it says it is shard {shard.index} of {shard.count}; the config's split has {count}"
    found = doc.suites or ()
    named = tuple(r.name for r in found)
    if named != tuple(n for n, _ in split.suites):
        return (f"shard {shard.index} states suites {_listed(named)}; the config at the pinned "
                f"base has {_listed(tuple(n for n, _ in split.suites))}")
    suites = suite_shares(found, count)
    share = (*split.plan[shard.index - 1], *suites[shard.index - 1])
    for b in doc.benchmarks:
        if b.name not in share:
            owner = split.owner(b.name)
            of = next((k for k, s in enumerate(suites, 1) if b.name in s), None)
            nobody = ("the config does not name it" if not found
                      else "neither the config nor its suites' discovered lists name it")
            whose = (f"shard {of}'s share of the benchmarks its suites discovered" if of
                     else f"{f'shard {owner}' if owner else 'no shard'}'s"
                          f"{'' if owner else f' ({nobody})'} in the split of the config at "
                          "the pinned base")
            kind = "benchmark" if of else "workload"
            return f"shard {shard.index} claims {kind} {b.name!r}, which is {whose}"
    held = {b.name for b in doc.benchmarks}
    lacking = [n for n in share if n not in held]
    if lacking:
        return f"shard {shard.index} lacks workload {lacking[0]!r} of its share"
    if shard.plan != split.plan:
        return f"shard {shard.index} states a split other than the config's"
    whole = split.family_with(found)
    if doc.settings.family != whole:
        return (f"shard {shard.index} states a family of {_family(doc.settings.family)}; the "
                f"config's{' with the benchmarks its suites discovered' if found else ''} is "
                f"{_family(whole)}")
    if doc.settings.config_digest != split.digest:
        return f"shard {shard.index} was measured with another config than the one at the pinned base"
    if tuple(s.name for s in doc.skipped or ()) != split.skipped:
        return f"shard {shard.index} states other workloads skipped as not affected than the change does"
    return None


def _family(family: Family | None) -> str:
    if family is None:
        return "none"
    return f"{family.sequential} sequential and {family.fixed} fixed workloads"


def _listed(names: Sequence[str]) -> str:
    return ", ".join(repr(n) for n in names) if names else "none"


def _discovered(doc: Results) -> tuple[tuple[str, bool, tuple[str, ...]], ...]:
    """What a shard's suites discovered, as every shard must have found it alike: each
    suite's name, whether its discovery failed, and its benchmarks (sorted)."""
    return tuple((r.name, r.failure is not None, tuple(sorted(r.benchmarks)))
                 for r in doc.suites or ())


def _difference(a: object, b: object, where_a: str, where_b: str) -> str:
    """The first difference of two files' discovered suites, in words."""
    mine = {n: (f, set(bs)) for n, f, bs in a}  # type: ignore[attr-defined]
    theirs = {n: (f, set(bs)) for n, f, bs in b}  # type: ignore[attr-defined]
    for name in sorted(set(mine) | set(theirs)):
        if name not in theirs or name not in mine:
            has, lacks = (where_a, where_b) if name in mine else (where_b, where_a)
            return f"differ: suite {name!r} is in {has} and not in {lacks}"
        (fa, ba), (fb, bb) = mine[name], theirs[name]
        if fa != fb:
            broke = where_a if fa else where_b
            return f"differ: suite {name!r}'s discovery failed in {broke} only"
        for bench in sorted(ba ^ bb):
            has, lacks = (where_a, where_b) if bench in ba else (where_b, where_a)
            return (f"differ: {has} found benchmark {name}/{bench} and {lacks} did not "
                    f"(suite {name!r}: {len(ba)} benchmarks in {where_a}, {len(bb)} in "
                    f"{where_b}); every shard must discover the same list")
    return "differ"


def _suites(docs: Sequence[Results]) -> tuple[SuiteRecord, ...]:
    """The suites of the whole: the lowest shard's records (their lists are every
    shard's), with every shard's counted runs and counting seconds added up."""
    merged = []
    for i, r in enumerate(docs[0].suites or ()):
        others = [(d.suites or ())[i] for d in docs]
        runs = [o.counted_runs for o in others if o.counted_runs is not None]
        spent = [o.counting_s for o in others if o.counting_s is not None]
        merged.append(replace(r, counted_runs=sum(runs) if runs else r.counted_runs,
                              counting_s=round(sum(spent), 3) if spent else r.counting_s))
    return tuple(merged)


def _differs(what: str, a: object, b: object, where_a: str, where_b: str) -> str:
    if what == "the benchmarks the suites discovered":
        return _difference(a, b, where_a, where_b)
    if what == "the split of the workloads":
        return ("differs (the same config, weights and --shard-costs file on every machine "
                "give the same split)")
    return f"is {_shown(a)} in {where_a} and {_shown(b)} in {where_b}"


def _shown(value: object) -> str:
    if isinstance(value, str) and len(value) == 40:
        return value[:12]  # a commit
    if isinstance(value, str) and value.startswith("sha256:"):
        return value[:19]
    text = str(value)
    return text if len(text) <= 60 else text[:59] + "…"


def _check_distinct(files: Sequence[ShardFile]) -> None:
    """No shard given twice, no workload in two files, each file holding its own share."""
    by_index: dict[int, str] = {}
    by_name: dict[str, str] = {}
    for f in files:
        shard = f.doc.shard
        assert shard is not None
        if shard.index in by_index:
            raise ResultsError(f"cannot merge {by_index[shard.index]} and {f.where}: both are "
                               f"shard {shard.index} of {shard.count}")
        by_index[shard.index] = f.where
        share = ({*shard.plan[shard.index - 1],
                  *suite_shares(f.doc.suites or (), shard.count)[shard.index - 1]}
                 if shard.plan else None)
        for b in f.doc.benchmarks:
            if b.name in by_name:
                raise ResultsError(f"cannot merge {by_name[b.name]} and {f.where}: workload "
                                   f"{b.name!r} is in both")
            if share is not None and b.name not in share:
                raise ResultsError(f"cannot merge {f.where}: workload {b.name!r} is not one of "
                                   f"shard {shard.index}'s in its split")
            by_name[b.name] = f.where


def _judged(docs: Sequence[Results],
            family: Family | None) -> tuple[list[Benchmark], AASummary]:
    """Every shard's benchmarks, judged again together (the error control of ``family``),
    each marked with its machine, and the A/A check over all of them."""
    first = docs[0]
    seeds = {b.name: d.settings.seed for d in docs for b in d.benchmarks}
    benchmarks = [replace(b, machine=d.environment.machine) for d in docs for b in d.benchmarks]
    policy = Policy(alpha=first.settings.alpha, confirm=first.settings.confirm,
                    aa=first.settings.aa, abort_fraction=first.aa.abort_fraction,
                    seed=first.settings.seed, family=family)
    judgement = judge([_workload(b, seeds[b.name]) for b in benchmarks], policy)
    return [_with(b, judgement.workloads[b.name]) for b in benchmarks], judgement.aa


def _workload(b: Benchmark, seed: int) -> Workload:
    m = b.measuring
    return Workload(name=b.name, parity=b.parity, floor_ns=b.floor_ns, better=b.better,
                    phases=b.phases, design=m.design if m else "pairs",
                    looks=max(1, len(m.looks)) if m else 1, seed=seed, counts=b.counts,
                    metric=b.metric, called_at=m.called_at if m else None)


def _with(b: Benchmark, j: Judged) -> Benchmark:
    assert j.final is not None
    # Peak memory keeps the shard's own verdict: it was judged with the whole comparison's
    # family already, against its machine's floor and its config's memory_parity, which
    # the shard's file records only there.
    return replace(b, aa=j.aa, ab=j.ab, confirmation=j.confirmation, verdict=j.final,
                   counts=j.counts)


def _record(doc: Results) -> ShardRecord:
    assert doc.shard is not None
    return ShardRecord(index=doc.shard.index, count=doc.shard.count,
                       machine=doc.environment.machine, seed=doc.settings.seed,
                       workloads=tuple(b.name for b in doc.benchmarks),
                       environment=doc.environment)


def _environment(docs: Sequence[Results]) -> Environment:
    """The first shard's machine, with every shard's warnings (each named by its shard
    when there are several)."""
    if len(docs) == 1:
        return docs[0].environment
    warnings = tuple(dict.fromkeys(
        f"shard {d.shard.index if d.shard else '?'}"
        f"{f' on {d.environment.machine.label}' if d.environment.machine else ''}: {w}"
        for d in docs for w in d.environment.warnings))
    return replace(docs[0].environment, warnings=warnings)


def _weakest_sandbox(docs: Sequence[Results]) -> SandboxInfo | None:
    """The sandbox to report for the whole: none if any shard ran without one (the report
    must not claim a confinement that one machine lacked)."""
    boxes = [d.sandbox for d in docs if d.sandbox is not None]
    return next((b for b in boxes if b.kind == "none"), boxes[0] if boxes else None)


def _shards(items: Sequence[int]) -> str:
    """``shard 2``, ``shards 2 and 3``, ``shards 1, 2 and 4``."""
    words = [str(i) for i in items]
    if len(words) == 1:
        return f"shard {words[0]}"
    return "shards " + ", ".join(words[:-1]) + " and " + words[-1]
