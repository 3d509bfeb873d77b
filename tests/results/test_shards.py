"""Sharding: the split of the workloads (deterministic, balanced, weights, measured costs,
--only, empty shards) and merge (the whole judged again, every refusal named)."""

from __future__ import annotations

import io
import json
import re
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from benchbot import cli
from benchbot.config.config import Config, WorkloadConfig
from benchbot.config.load import parse_config
from benchbot.config.settings import Overrides, SettingError, read
from benchbot.core.errors import ResultsError
from benchbot.core.model import FailedShard, Family, Machine, Results, Shard, ShardInfo, SuiteRecord
from benchbot.results import merging, resultsdir, shards
from benchbot.verdict.judge import Policy, Workload, judge
from tests.golden.scenarios import Maker, aa_aborted, document, mixed, sequential_design


def workloads(*specs: tuple[str, float]) -> tuple[WorkloadConfig, ...]:
    return tuple(WorkloadConfig(name=n, run=(n,), weight=w) for n, w in specs)


def loads(parts: Sequence[Sequence[str]], cost: dict[str, float]) -> list[float]:
    return [sum(cost[n] for n in p) for p in parts]


# --- the split --------------------------------------------------------------------------


def test_the_split_is_the_same_whatever_the_order_of_the_config() -> None:
    ws = workloads(("a", 3), ("b", 1), ("c", 2), ("d", 2), ("e", 1))
    first = shards.split(ws, 2)
    assert first == shards.split(ws, 2)
    again = shards.split(tuple(reversed(ws)), 2)
    assert [set(p) for p in again] == [set(p) for p in first]
    # each shard lists its workloads in the config's order
    assert all(list(p) == [w.name for w in ws if w.name in p] for p in first)


def test_equal_weights_go_round_by_name() -> None:
    ws = workloads(*((f"w{i}", 1.0) for i in range(1, 7)))
    assert shards.split(ws, 3) == (("w1", "w4"), ("w2", "w5"), ("w3", "w6"))


def test_weights_balance_the_cost() -> None:
    ws = workloads(("big", 8), *((f"s{i}", 1.0) for i in range(8)))
    big, small = shards.split(ws, 2)
    assert big == ("big",) and len(small) == 8


def test_measured_costs_win_over_weights_and_set_the_unit_of_the_rest() -> None:
    ws = workloads(("a", 1), ("b", 1), ("c", 1), ("new", 4))
    costs = shards.expected_costs(ws, {"a": 10.0, "b": 30.0, "c": 20.0, "gone": 99.0})
    assert costs == {"a": 10.0, "b": 30.0, "c": 20.0, "new": 80.0}  # 4 x the median 20
    assert shards.split(ws, 2, {"a": 10.0, "b": 30.0, "c": 20.0}) == (("new",), ("a", "b", "c"))


def test_more_shards_than_workloads_leaves_some_empty() -> None:
    assert shards.split(workloads(("a", 1), ("b", 1)), 3) == (("a",), ("b",), ())


@given(st.lists(st.floats(min_value=0.01, max_value=1000), min_size=1, max_size=40),
       st.integers(min_value=1, max_value=8))
def test_every_workload_in_exactly_one_shard_and_loads_within_one_workload(
        weights: list[float], count: int) -> None:
    ws = workloads(*((f"w{i:02d}", w) for i, w in enumerate(weights)))
    parts = shards.split(ws, count)
    assert len(parts) == count
    assert sorted(n for p in parts for n in p) == sorted(w.name for w in ws)
    cost = {w.name: w.weight for w in ws}
    spread = max(loads(parts, cost)) - min(loads(parts, cost))
    assert spread <= max(weights) * (1 + 1e-9)  # greedy least-loaded in decreasing order


CONFIG = """\
version: 1
workloads:
  - {name: a, run: [a], runs: 20}
  - {name: b, run: [b], runs: 20, weight: 3}
  - {name: c, run: [c], runs: 20}
  - {name: d, run: [d], runs: 20}
  - {name: e, run: [e]}
"""


def test_plan_applies_to_the_config_after_only_and_keeps_the_whole_family() -> None:
    config = parse_config(CONFIG).with_overrides(Overrides(only=("a", "b", "c", "e")))
    one = shards.plan(config, Shard(index=1, count=2))
    two = shards.plan(config, Shard(index=2, count=2))
    assert [w.name for w in one.config.workloads] == ["b"]
    assert [w.name for w in two.config.workloads] == ["a", "c", "e"]
    assert one.family == two.family == Family(sequential=1, fixed=3)
    assert one.shard == ShardInfo(index=1, count=2, plan=(("b",), ("a", "c", "e")))
    assert one.digest == two.digest and one.digest is not None
    assert shards.plan(config, None) == shards.Plan(config=config, family=Family(sequential=1, fixed=3))


def test_the_digest_ignores_what_each_machine_has_of_its_own() -> None:
    config = parse_config(CONFIG, path="benchbot.yml")
    same = replace(parse_config(CONFIG, path="/abs/other.yml"), seed=7, budget_s=60.0)
    assert shards.digest(config) == shards.digest(same)
    assert shards.digest(config) != shards.digest(config.with_overrides(Overrides(parity=0.01)))
    assert shards.digest(config) != shards.digest(config.with_overrides(Overrides(only=("a",))))


def test_costs_from_an_earlier_results_file() -> None:
    costs = shards.costs_from(mixed())
    assert "crash" not in costs  # nothing was timed
    # sort: about 85 ms a run, 30 pairs in three phases (A/A, A/B, confirmation)
    assert costs["sort"] == pytest.approx(0.085 * 180, rel=0.05)
    assert costs["sum"] == pytest.approx(0.022 * (60 + 200), rel=0.05)


@pytest.mark.parametrize(("text", "words"), [
    ("2/3", None), ("1/1", None), ("0/2", "K from 1 to 2"), ("3/2", "K from 1 to 2"),
    ("1/65", "from 1 to 64"), ("two", "must be K/N"), ("1/2/3", "must be K/N"), ("", "must be K/N"),
])
def test_a_shard_is_read_once_with_its_bounds(text: str, words: str | None) -> None:
    if words is None:
        shard = read("shard", text)
        assert str(shard) == text
        return
    with pytest.raises(SettingError, match=re.escape(words)):
        read("shard", text)


# --- merge ------------------------------------------------------------------------------

MACHINES = (Machine(hostname="bench-1", id="aaaaaaaaaaaa"), Machine(hostname="bench-2", id="bbbbbbbbbbbb"))
DIGEST = "sha256:" + "0" * 64


def family_of(doc: Results) -> Family:
    seq = sum(1 for b in doc.benchmarks if b.measuring and b.measuring.design == "triplets")
    return Family(sequential=seq, fixed=len(doc.benchmarks) - seq)


def split_doc(doc: Results, parts: Sequence[Sequence[str]], *, rejudge: bool = False) -> list[merging.ShardFile]:
    """A whole document cut into shard files as `compare --shard` writes them; with
    ``rejudge`` each shard judged alone (the whole's family, its own A/A abort)."""
    plan = tuple(tuple(p) for p in parts)
    family = family_of(doc)
    out = []
    for i, part in enumerate(parts, 1):
        shard = replace(
            doc, benchmarks=tuple(b for b in doc.benchmarks if b.name in part),
            shard=ShardInfo(index=i, count=len(parts), plan=plan),
            settings=replace(doc.settings, family=family, config_digest=DIGEST),
            environment=replace(doc.environment, machine=MACHINES[(i - 1) % 2]),
        )
        if rejudge:
            shard = merging.merge([merging.ShardFile("alone", replace(
                shard, shard=ShardInfo(index=1, count=1, plan=(tuple(part),))))])
            shard = replace(shard, shard=ShardInfo(index=i, count=len(parts), plan=plan),
                            shards=None, missing_shards=None, failed_shards=None, unmeasured=None)
        out.append(merging.ShardFile(f"shard{i}.json", shard))
    return out


def verdicts(doc: Results) -> dict[str, tuple[str, str | None]]:
    return {b.name: (b.verdict.outcome, b.verdict.reason_code) for b in doc.benchmarks}


@pytest.mark.parametrize("make", [mixed, aa_aborted, sequential_design])
def test_merged_shards_give_the_whole_s_verdicts(make, validate) -> None:
    doc = make()
    names = [b.name for b in doc.benchmarks]
    merged = merging.merge(split_doc(doc, [names[::2], names[1::2]]))
    validate(merged)
    assert resultsdir.parse(resultsdir.to_json(merged)) == merged
    assert {b.name: b.verdict for b in merged.benchmarks} == {b.name: b.verdict for b in doc.benchmarks}
    assert merged.summary == doc.summary and merged.aa == doc.aa
    assert [(s.index, s.machine, s.workloads) for s in merged.shards or ()] == [
        (1, MACHINES[0], tuple(names[::2])), (2, MACHINES[1], tuple(names[1::2]))]
    assert {b.name: b.machine for b in merged.benchmarks} == {
        n: MACHINES[0] if n in names[::2] else MACHINES[1] for n in names}
    assert merged.shard is None and merged.missing_shards == () and not merged.is_incomplete


def test_the_family_is_the_whole_s_not_the_shard_s() -> None:
    doc = sequential_design()
    files = split_doc(doc, [["sort", "copy", "sum"], ["bfs", "tiny", "parse"]])
    merged = merging.merge(files)
    assert merged.settings.family == Family(sequential=6, fixed=0)
    sort = next(b for b in merged.benchmarks if b.name == "sort")
    alone = Policy(alpha=doc.settings.alpha, seed=doc.settings.seed, family=Family(sequential=1, fixed=0))
    w = Workload(name="sort", parity=sort.parity, floor_ns=sort.floor_ns, phases=sort.phases,
                 design="triplets", looks=len(sort.measuring.looks) if sort.measuring else 1)
    narrower = judge([w], alone).workloads["sort"].final
    assert narrower is not None and sort.verdict.ci is not None and narrower.ci is not None
    assert narrower.ci[1] - narrower.ci[0] < sort.verdict.ci[1] - sort.verdict.ci[0]


def eight_with_two_aa_failures() -> Results:
    m = Maker(21)
    names = [f"w{i}" for i in range(1, 9)]
    config = "version: 1\ndefaults: {runs: 30}\nworkloads:\n" + "".join(
        f"  - {{name: {n}, run: [{n}]}}\n" for n in names)
    skew = {"w1": 1.09, "w3": 0.92}
    return document(config, {n: {"aa": m.same(50e6, 0.004, skew=skew.get(n, 1.0)),
                                 "ab": m.pair(50e6, 1.0, 0.004)} for n in names})


def test_the_aa_abort_rule_is_the_whole_s() -> None:
    doc = eight_with_two_aa_failures()
    assert not doc.aa.aborted and set(doc.aa.failed) == {"w1", "w3"}  # 2 of 8: a quarter
    files = split_doc(doc, [["w1", "w3", "w5", "w7"], ["w2", "w4", "w6", "w8"]], rejudge=True)
    assert files[0].doc.aa.aborted  # 2 of its 4 workloads, alone
    assert all(v == ("inconclusive", "aa_aborted") for v in verdicts(files[0].doc).values())
    merged = merging.merge(files)
    assert not merged.aa.aborted and merged.aa.failed == ("w1", "w3")
    assert verdicts(merged) == verdicts(doc)
    assert verdicts(merged)["w5"] == ("level", None)

    # the other way: one shard's failures abort the whole, the other shard's verdicts too
    aborting = aa_aborted()  # sort and sum fail their A/A check
    files = split_doc(aborting, [["sort", "copy"], ["sum", "bfs"]], rejudge=True)
    merged = merging.merge(files)
    assert merged.aa.aborted and merged.summary.conclusion == "neutral"
    assert set(verdicts(merged).values()) == {("inconclusive", "aa_aborted")}


def test_missing_shards_are_refused_unless_allowed_then_named_and_neutral() -> None:
    doc = mixed()
    names = [b.name for b in doc.benchmarks]
    files = split_doc(doc, [names[:2], names[2:4], names[4:]])
    with pytest.raises(ResultsError, match=r"^cannot merge: shard 2 of 3 is missing \(given: "
                       r"shard1\.json \(1/3\), shard3\.json \(3/3\)\); pass --allow-missing"):
        merging.merge([files[0], files[2]])
    with pytest.raises(ResultsError, match=r"^cannot merge: shards 1 and 3 of 3 are missing"):
        merging.merge([files[1]])
    merged = merging.merge([files[2], files[0]], allow_missing=True)
    assert merged.missing_shards == (2,) and merged.unmeasured == tuple(names[2:4])
    assert [s.index for s in merged.shards or ()] == [1, 3]
    assert verdicts(merged)["sort"][0] == "slower"
    assert merged.is_incomplete
    # incomplete cannot pass; a slowdown a shard found is not hidden by the missing one
    assert resultsdir.concluded(merged, ()).summary.conclusion == "neutral"
    assert resultsdir.concluded(merged, ("slower",)).summary.conclusion == "failure"
    failed = merging.merge([files[0]], allow_missing=True,
                           failed=[FailedShard(index=3, reason="build of head failed")])
    assert failed.missing_shards == (2,) and failed.failed_shards == (
        FailedShard(index=3, reason="build of head failed"),)
    assert failed.unmeasured == tuple(names[2:])


def _changed(files: list[merging.ShardFile], **settings: object) -> list[merging.ShardFile]:
    second = files[1]
    return [files[0], merging.ShardFile(second.where, replace(
        second.doc, settings=replace(second.doc.settings, **settings)))]


def _refusals() -> list[tuple[str, object, str]]:
    sha = "c" * 40
    return [
        ("head", lambda d: replace(d, head=replace(d.head, sha=sha)), "head is b2b2b2b2b2b2 in shard1.json and cccccccccccc in shard2.json"),
        ("base", lambda d: replace(d, base=replace(d.base, sha=sha)), "base is a1a1a1a1a1a1 in shard1.json"),
        ("schema", lambda d: replace(d, schema_version=1), "schema_version is 3 in shard1.json and 1 in shard2.json"),
        ("count", lambda d: replace(d, shard=replace(d.shard, count=3)), "the number of shards is 2 in shard1.json and 3 in shard2.json"),
        ("parity", lambda d: replace(d, settings=replace(d.settings, parity=0.01)), "parity is 0.02 in shard1.json and 0.01 in shard2.json"),
        ("alpha", lambda d: replace(d, settings=replace(d.settings, alpha=0.01)), "alpha is 0.05"),
        ("confirm", lambda d: replace(d, settings=replace(d.settings, confirm=False)), "confirm is True in shard1.json and False"),
        ("aa", lambda d: replace(d, settings=replace(d.settings, aa=False)), "aa is True"),
        ("runs", lambda d: replace(d, settings=replace(d.settings, runs=40)), "runs is 30"),
        ("family", lambda d: replace(d, settings=replace(d.settings, family=Family(sequential=0, fixed=5))), "the family of workloads is"),
        ("config", lambda d: replace(d, settings=replace(d.settings, config_digest="sha256:" + "1" * 64)), "the config (its digest) is sha256:000000000000 in shard1.json and sha256:111111111111 in shard2.json"),
        ("split", lambda d: replace(d, shard=replace(d.shard, plan=(("sort",), ("bfs",)))), "the split of the workloads differs"),
        ("twice", lambda d: replace(d, shard=replace(d.shard, index=1)), "shard1.json and shard2.json: both are shard 1 of 2"),
        ("not-a-shard", lambda d: replace(d, shard=None), "cannot merge shard2.json: it is not a shard's results file"),
        ("no-such-shard", lambda d: replace(d, shard=replace(d.shard, index=3)), "cannot merge shard2.json: shard 3 of 2 does not exist"),
        ("workload-twice", lambda d: replace(d, benchmarks=(*d.benchmarks, replace(d.benchmarks[0], name="sort"))), "shard1.json and shard2.json: workload 'sort' is in both"),
        ("not-its-share", lambda d: replace(d, benchmarks=(*d.benchmarks, replace(d.benchmarks[0], name="extra"))), "cannot merge shard2.json: workload 'extra' is not one of shard 2's in its split"),
    ]  # fmt: skip


@pytest.mark.parametrize(("change", "words"), [pytest.param(c, w, id=i) for i, c, w in _refusals()])
def test_merge_refuses_shards_of_different_comparisons(change, words: str) -> None:
    doc = mixed()
    names = [b.name for b in doc.benchmarks]
    first, second = split_doc(doc, [names[:3], names[3:]])
    changed = merging.ShardFile(second.where, change(second.doc))  # type: ignore[operator]
    with pytest.raises(ResultsError) as caught:
        merging.merge([first, changed])
    message = str(caught.value)
    assert "\n" not in message and words in message, message


def test_merge_on_the_command_line(tmp_path: Path) -> None:
    doc = mixed()
    names = [b.name for b in doc.benchmarks]
    paths = []
    for f in split_doc(doc, [names[:3], names[3:]]):
        resultsdir.save(tmp_path / f.where, f.doc)
        paths.append(str(tmp_path / f.where))
    out, err = io.StringIO(), io.StringIO()
    assert cli.main(["merge", *paths, "-o", str(tmp_path / "all.json")], out=out, err=err) == 0
    merged = resultsdir.load(tmp_path / "all.json")
    assert len(merged.benchmarks) == 6 and merged.missing_shards == ()
    err = io.StringIO()
    assert cli.main(["merge", paths[1]], out=io.StringIO(), err=err) == 1
    assert err.getvalue().startswith("benchbot: error: cannot merge: shard 1 of 2 is missing")
    out = io.StringIO()
    assert cli.main(["merge", "--allow-missing", paths[1]], out=out, err=io.StringIO()) == 0
    assert json.loads(out.getvalue())["missing_shards"] == [1]
    err = io.StringIO()
    assert cli.main(["merge", paths[0], paths[0]], out=io.StringIO(), err=err) == 1
    assert "both are shard 1 of 2" in err.getvalue()


def test_a_config_of_one_workload_still_splits() -> None:
    config: Config = parse_config("version: 1\nworkloads: [{name: only, run: x}]\n")
    plans = [shards.plan(config, Shard(index=k, count=3)) for k in (1, 2, 3)]
    assert [len(p.config.workloads) for p in plans] == [1, 0, 0]


# --- the report ---------------------------------------------------------------------------


def test_the_report_names_the_machines_and_the_missing_and_failed_shards() -> None:
    from benchbot.report import render_results

    doc = mixed()
    names = [b.name for b in doc.benchmarks]
    files = split_doc(doc, [names[:2], names[2:4], names[4:]])
    whole = render_results(merging.merge(files))
    assert ("Measured on 2 machines in 3 shards: shard 1/3 on `bench-1 (aaaaaaaa)` (2 workloads), "
            "shard 2/3 on `bench-2 (bbbbbbbb)` (2 workloads)") in whole
    assert "| shard 1/3 | bench-1 (aaaaaaaa): Example CPU" in whole and "| load before" not in whole
    assert "[!WARNING]" not in whole
    partial = merging.merge([files[0]], allow_missing=True, failed=[
        FailedShard(index=3, reason="build of head failed (exit 2): make\n<img src=x> @alice")])
    text = render_results(partial)
    assert "check: **failure**" in text  # the slowdown found; the gap does not hide it
    assert ("> **Shard 2 of 3 did not report** (its job failed, was cancelled or never ran). "
            "**Shard 3 of 3 failed:** build of head failed (exit 2): make. Not measured: `sum`, "
            "`edit_distance`, `crash`, `parse`. The check cannot pass until every shard reports.") in text
    assert "Measured on 1 machine in 1 shard (of 3)" in text
    html = render_results(replace(partial, failed_shards=(FailedShard(index=3, reason="<img src=x>"),)), "html")
    assert "failed:</strong> &lt;img src=x&gt;" in html and "<img src=x>" not in html


def test_a_shard_s_own_report_says_what_share_it_holds() -> None:
    from benchbot.report import render_results

    doc = mixed()
    names = [b.name for b in doc.benchmarks]
    own = split_doc(doc, [names[:2], names[2:]])[1].doc
    assert ("Shard 2 of 2: 4 of the comparison's 6 workloads, measured on `bench-2 (bbbbbbbb)`. "
            "`benchbot merge` makes one comparison") in render_results(own)
    empty = replace(own, benchmarks=(), shard=replace(own.shard, plan=(tuple(names), ())))
    text = render_results(empty)
    assert "Shard 2 of 2 has no workloads: the split gave all 6 to the other shards" in text
    assert "| workload |" not in text and "A/A check" not in text


def test_a_machine_is_named_by_its_host_and_a_stable_hashed_id() -> None:
    from benchbot.run import machine

    me = machine.identity()
    assert me == machine.identity() and re.fullmatch(r"[0-9a-f]{12}", me.id)
    assert me.label == f"{me.hostname} ({me.id[:8]})"
    raw = Path("/etc/machine-id")
    if raw.is_file():
        assert raw.read_text().strip()[:12] != me.id  # hashed, never the id itself


# --- the split computed again from the config (issue 38, finding 7) ------------------------


def _config_split(doc: Results, parts: Sequence[Sequence[str]]) -> shards.Split:
    return shards.Split(plan=tuple(tuple(p) for p in parts), family=family_of(doc), digest=DIGEST)


def _claim(f: merging.ShardFile, other: merging.ShardFile) -> Results:
    """``f``'s document claiming ``other``'s workloads too, with a split that says so."""
    names = tuple(b.name for b in (*f.doc.benchmarks, *other.doc.benchmarks))
    assert f.doc.shard is not None
    plan = tuple(names if k == f.doc.shard.index - 1 else () for k in range(f.doc.shard.count))
    return replace(f.doc, benchmarks=(*f.doc.benchmarks, *other.doc.benchmarks),
                   shard=replace(f.doc.shard, plan=plan))


@pytest.mark.parametrize(("forge", "words"), [
    (lambda f, o: _claim(f, o), "shard 1 claims workload 'edit_distance', which is shard 2's in the split"),
    (lambda f, o: replace(f.doc, benchmarks=f.doc.benchmarks[1:]), "shard 1 lacks workload"),
    (lambda f, o: replace(f.doc, settings=replace(f.doc.settings, family=Family(sequential=0, fixed=1))),
     "shard 1 states a family of 0 sequential and 1 fixed workloads; the config's is"),
    (lambda f, o: replace(f.doc, settings=replace(f.doc.settings, config_digest="sha256:" + "1" * 64)),
     "shard 1 was measured with another config than the one at the pinned base"),
    (lambda f, o: replace(f.doc, shard=replace(f.doc.shard, count=3)),  # type: ignore[arg-type]
     "it says it is shard 1 of 3; the config's split has 2"),
    (lambda f, o: replace(f.doc, shard=replace(f.doc.shard, plan=(("x",), ()))),  # type: ignore[arg-type]
     "shard 1 states a split other than the config's"),
])
def test_merge_refuses_a_shard_whose_word_differs_from_the_config_s_split(forge, words: str) -> None:
    doc = mixed()
    names = [b.name for b in doc.benchmarks]
    parts = [names[:3], names[3:]]
    first, second = split_doc(doc, parts)
    split = _config_split(doc, parts)
    assert merging.refusal(first.doc, split) is None and merging.refusal(second.doc, split) is None
    forged = merging.ShardFile(first.where, forge(first, second))
    with pytest.raises(ResultsError) as caught:
        merging.merge([forged], allow_missing=True, split=split)
    assert str(caught.value).startswith(f"cannot merge {first.where}: ") and words in str(caught.value)
    assert "\n" not in str(caught.value)


def test_the_merged_split_and_family_are_the_config_s() -> None:
    doc = mixed()
    names = [b.name for b in doc.benchmarks]
    parts = [names[:3], names[3:]]
    first, _ = split_doc(doc, parts)
    split = _config_split(doc, parts)
    merged = merging.merge([first], allow_missing=True, split=split)
    assert merged.unmeasured == tuple(names[3:]) and merged.settings.family == split.family


def test_a_workload_no_shard_holds_is_named_as_none_s() -> None:
    doc = mixed()
    names = [b.name for b in doc.benchmarks]
    first, _ = split_doc(doc, [names[:3], names[3:]])
    split = _config_split(doc, [names[:3], names[3:5]])  # the config lacks the last
    forged = replace(first.doc, benchmarks=(*first.doc.benchmarks, doc.benchmarks[-1]))
    assert merging.refusal(forged, split) == (
        f"shard 1 claims workload {names[-1]!r}, which is no shard's (the config does not name "
        "it) in the split of the config at the pinned base")


# --- suites: every shard discovers, each measures a share (issue 39) ---------------------

SUITES = """version: 1
workloads:
  - {name: plain, run: [x]}
suites:
  - name: go
    run: [./suite.test]
    format: go
  - name: fixed
    run: [./fixed]
    format: jsonl
    runs: 10
"""


def _record(name: str, benchmarks: Sequence[str], failure: str | None = None) -> SuiteRecord:
    return SuiteRecord(name=name, format="go", benchmarks=tuple(benchmarks), failure=failure)


def test_a_config_with_suites_is_sharded_and_every_shard_keeps_every_suite() -> None:
    config = parse_config(SUITES)
    one, two = (shards.plan(config, Shard(index=k, count=2)) for k in (1, 2))
    # before: "a comparison with suites cannot be sharded yet"
    assert one.config.suites == two.config.suites == config.suites  # each discovers each suite
    assert [w.name for w in one.config.workloads] == ["plain"] and two.config.workloads == ()
    split = shards.expected(config, 2)
    assert split.suites == (("go", True), ("fixed", False))
    found = (_record("go", ["B", "A", "C"]), _record("fixed", ["x", "y"]))
    # the whole's family: the config's workload and every discovered benchmark, by design
    assert split.family_with(found) == Family(sequential=1 + 3, fixed=2)
    assert shards.with_suites(one.family, config.suites, found) == Family(sequential=4, fixed=2)


def test_suite_shares_are_dealt_in_turn_from_the_sorted_names() -> None:
    found = (_record("go", ["Sort/64", "Sort/8", "Hash", "Sort/512"]), _record("py", ["t"]))
    assert shards.suite_shares(found, 2) == (("go/Hash", "go/Sort/64", "py/t"),
                                             ("go/Sort/512", "go/Sort/8"))
    # the order a harness reported them in changes nothing
    again = (_record("go", ["Hash", "Sort/8", "Sort/512", "Sort/64"]), _record("py", ["t"]))
    assert shards.suite_shares(again, 2) == shards.suite_shares(found, 2)
    # a suite whose discovery failed is one invalid workload, the suite's name: one shard's
    broken = (_record("go", [], failure="the base run of the harness exited with 2"),
              _record("py", ["a", "b"]))
    assert shards.suite_shares(broken, 2) == (("go", "py/b"), ("py/a",))
    assert shards.with_suites(Family(sequential=0, fixed=0), {"go": True, "py": True},
                              broken) == Family(sequential=3, fixed=0)


@given(st.lists(st.text(min_size=1, max_size=6), max_size=60, unique=True),
       st.integers(min_value=1, max_value=9))
def test_suite_shares_are_disjoint_cover_the_list_and_differ_by_one_at_most(
        names: list[str], count: int) -> None:
    shares = shards.suite_shares((_record("s", names),), count)
    dealt = [n for share in shares for n in share]
    assert sorted(dealt) == sorted(f"s/{n}" for n in names) and len(set(dealt)) == len(dealt)
    sizes = [len(s) for s in shares]
    assert len(shares) == count and max(sizes) - min(sizes) <= 1
