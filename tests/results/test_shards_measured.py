"""Shards with real processes and real git worktrees: `compare --shard K/N` on each share,
`merge` of their files, judged again as the whole (the family-wise control and the A/A
abort rule span all shards), and merge refusing files of different comparisons."""

from __future__ import annotations

import io
import json
from dataclasses import replace
from pathlib import Path

import pytest

from benchbot import cli
from benchbot.config.settings import Overrides
from benchbot.core.model import Benchmark, Family, Results, Shard
from benchbot.measure import engine
from benchbot.results import merging, resultsdir
from benchbot.verdict.judge import Policy, Workload, judge
from tests.conftest import MakeRepo
from tests.measure.test_aa_phase import AAErrorSpawner

FAST, SLOW = "#!/bin/sh\nsleep 0.002\n", "#!/bin/sh\nsleep 0.02\n"


def sequential_repo(make_repo: MakeRepo) -> Path:
    """Four sleep scripts measured until settled: three get 10x slower, one 10x faster."""
    config = "version: 1\nbudget: 2m\nworkloads:\n" + "".join(
        f"  - {{name: {n}, run: ./{n}.sh}}\n" for n in ("a", "b", "c", "d"))
    base = {"benchbot.yml": config, **{f"{n}.sh": FAST for n in "abd"}, "c.sh": SLOW}
    head = {**{f"{n}.sh": SLOW for n in "abd"}, "c.sh": FAST}
    return make_repo(base, head)


def compare_cli(repo: Path, out: Path, *args: str) -> tuple[int, str]:
    err = io.StringIO()
    code = cli.main(["compare", "--repo", str(repo), "--base", "base", "--head", "HEAD",
                     "--json", str(out), "--quiet", *args], out=io.StringIO(), err=err)
    return code, err.getvalue()


@pytest.mark.slow
def test_two_real_shards_merge_into_the_whole_comparison(make_repo: MakeRepo, tmp_path: Path,
                                                         validate) -> None:
    repo = sequential_repo(make_repo)
    paths = [tmp_path / "shard1.json", tmp_path / "shard2.json"]
    for k, path in enumerate(paths, 1):
        code, err = compare_cli(repo, path, "--shard", f"{k}/2")
        assert code == 0, err
        validate(path)
    shards = [resultsdir.load(p) for p in paths]
    assert [[b.name for b in s.benchmarks] for s in shards] == [["a", "c"], ["b", "d"]]
    for s in shards:  # each judged as a part of the whole: four sequential workloads
        assert s.settings.family == Family(sequential=4, fixed=0)
        assert s.shard is not None and s.shard.plan == (("a", "c"), ("b", "d"))
        assert s.environment.machine is not None
    assert shards[0].settings.config_digest == shards[1].settings.config_digest

    out = io.StringIO()
    assert cli.main(["merge", *map(str, paths)], out=out, err=io.StringIO()) == 0
    merged = resultsdir.parse(json.loads(out.getvalue()))
    validate(resultsdir.to_json(merged))
    outcomes = {b.name: b.verdict.outcome for b in merged.benchmarks}
    assert outcomes == {"a": "slower", "b": "slower", "c": "faster", "d": "slower"}
    assert [(s.index, s.workloads) for s in merged.shards or ()] == [(1, ("a", "c")), (2, ("b", "d"))]
    assert all(b.machine == shards[0].environment.machine for b in merged.benchmarks)
    # the verdicts are the rule's over the whole: judged again with a family of four, with
    # each shard's seed, they are what the shards said and what the merge says
    by_shard = {b.name: (b, s.settings.seed) for s in shards for b in s.benchmarks}
    whole = judge([Workload(name=n, parity=b.parity, floor_ns=b.floor_ns, phases=b.phases,
                            design="triplets", seed=seed, counts=b.counts,
                            called_at=b.measuring.called_at if b.measuring else None,
                            looks=len(b.measuring.looks) if b.measuring else 1)
                   for n, (b, seed) in by_shard.items()],
                  Policy(alpha=0.05, family=Family(sequential=4, fixed=0)))
    for b in merged.benchmarks:
        assert b.verdict == whole.workloads[b.name].final == by_shard[b.name][0].verdict
    from benchbot.report import render_results

    assert "Measured on 1 machine in 2 shards" in render_results(merged)


SHARD_CONFIG = "version: 1\ndefaults: {runs: 10}\nworkloads:\n" + "".join(
    f"  - {{name: w{i}, run: [echo, w{i}]}}\n" for i in range(1, 9))


def shard_with(repo: Path, shard: Shard, broken: set[str], **overrides: object) -> Results:
    spawner = AAErrorSpawner(broken)
    return engine.compare(engine.Request(repo=repo, base="base", head="HEAD", shard=shard,
                                         overrides=Overrides(**overrides)),  # type: ignore[arg-type]
                          spawner_factory=lambda _: spawner)


def test_one_shard_s_aa_failures_abort_the_whole(make_repo: MakeRepo) -> None:
    repo = make_repo({"benchbot.yml": SHARD_CONFIG})
    only = ("w1", "w2", "w3", "w4")
    first = shard_with(repo, Shard(index=1, count=2), {"w1", "w3"}, only=only)
    second = shard_with(repo, Shard(index=2, count=2), set(), only=only)
    assert [b.name for b in first.benchmarks] == ["w1", "w3"]
    assert second.aa.status == "passed" and not second.aa.aborted
    assert {b.verdict.outcome for b in second.benchmarks} == {"level"}
    merged = merging.merge([merging.ShardFile("1", first), merging.ShardFile("2", second)])
    assert merged.aa.aborted and merged.aa.failed == ("w1", "w3")  # 2 of 4: more than a quarter
    assert {(b.verdict.outcome, b.verdict.reason_code) for b in merged.benchmarks} == {
        ("inconclusive", "aa_aborted")}
    assert merged.summary.conclusion == "neutral"


def test_a_shard_measures_on_past_its_own_aa_abort_for_the_whole_to_judge(make_repo: MakeRepo) -> None:
    repo = make_repo({"benchbot.yml": SHARD_CONFIG})
    first = shard_with(repo, Shard(index=1, count=2), {"w1", "w3"})
    second = shard_with(repo, Shard(index=2, count=2), set())
    assert [b.name for b in first.benchmarks] == ["w1", "w3", "w5", "w7"]
    assert first.aa.aborted  # 2 of its 4 workloads: its own file concludes nothing ...
    assert all("ab" in b.phases for b in first.benchmarks)  # ... but it measured them all
    merged = merging.merge([merging.ShardFile("1", first), merging.ShardFile("2", second)])
    assert not merged.aa.aborted and merged.aa.failed == ("w1", "w3")  # 2 of 8: a quarter
    outcomes = {b.name: (b.verdict.outcome, b.verdict.reason_code) for b in merged.benchmarks}
    assert outcomes["w1"] == outcomes["w3"] == ("inconclusive", "aa_failed")
    assert {outcomes[n][0] for n in ("w2", "w4", "w5", "w6", "w7", "w8")} == {"level"}


def save(tmp_path: Path, name: str, doc: Results) -> str:
    resultsdir.save(tmp_path / name, doc)
    return str(tmp_path / name)


def merge_error(*paths: str) -> str:
    err = io.StringIO()
    assert cli.main(["merge", *paths], out=io.StringIO(), err=err) == 1
    lines = err.getvalue().splitlines()
    assert len(lines) == 1, lines
    return lines[0]


def test_merge_refuses_shards_that_are_not_of_one_comparison(make_repo: MakeRepo,
                                                              tmp_path: Path) -> None:
    repo = make_repo({"benchbot.yml": SHARD_CONFIG}, {"other.txt": "head\n"})
    one = save(tmp_path, "one.json", shard_with(repo, Shard(index=1, count=2), set()))
    two = save(tmp_path, "two.json", shard_with(repo, Shard(index=2, count=2), set()))
    parity = save(tmp_path, "parity.json",
                  shard_with(repo, Shard(index=2, count=2), set(), parity=0.01))
    three = save(tmp_path, "three.json", shard_with(repo, Shard(index=2, count=3), set()))
    fewer = save(tmp_path, "fewer.json", shard_with(repo, Shard(index=2, count=2), set(),
                                                    only=("w1", "w2", "w3")))
    spawner = AAErrorSpawner(set())
    older = engine.compare(engine.Request(repo=repo, base="base", head="base",
                                          shard=Shard(index=2, count=2)),
                           spawner_factory=lambda _: spawner)
    other_head = save(tmp_path, "other-head.json", older)

    assert merge_error(one, parity) == (
        f"benchbot: error: cannot merge {one} and {parity}: parity is 0.02 in {one} and 0.01 in {parity}")
    assert merge_error(one, other_head).startswith(
        f"benchbot: error: cannot merge {one} and {other_head}: head is ")
    assert merge_error(one, three) == (f"benchbot: error: cannot merge {one} and {three}: the "
                                       f"number of shards is 2 in {one} and 3 in {three}")
    assert merge_error(one, fewer) == (f"benchbot: error: cannot merge {one} and {fewer}: the "
                                       f"family of workloads is Family(sequential=0, fixed=8) in "
                                       f"{one} and Family(sequential=0, fixed=3) in {fewer}")
    assert merge_error(one, one) == (f"benchbot: error: cannot merge {one} and {one}: both are "
                                     "shard 1 of 2")
    assert merge_error(two).startswith("benchbot: error: cannot merge: shard 1 of 2 is missing")
    out = io.StringIO()
    assert cli.main(["merge", one, two], out=out, err=io.StringIO()) == 0
    whole = json.loads(out.getvalue())
    assert len(whole["benchmarks"]) == 8 and whole["missing_shards"] == []
    unsharded = save(tmp_path, "whole.json", resultsdir.parse(whole))
    assert "it is not a shard's results file" in merge_error(unsharded, one)


def test_an_empty_shard_writes_a_file_that_says_so(make_repo: MakeRepo, tmp_path: Path) -> None:
    repo = make_repo({"benchbot.yml": "version: 1\nbuild: exit 3\nworkloads:\n"
                      "  - {name: a, run: [true]}\n  - {name: b, run: [true]}\n"})
    out, err = io.StringIO(), io.StringIO()
    code = cli.main(["compare", "--repo", str(repo), "--base", "base", "--head", "HEAD",
                     "--shard", "3/3", "--json", str(tmp_path / "r.json")], out=out, err=err)
    assert code == 0, err.getvalue()  # nothing built (the build would fail), nothing run
    assert "shard 3/3: 0 of 2 workloads" in err.getvalue()
    doc = resultsdir.load(tmp_path / "r.json")
    assert doc.benchmarks == () and doc.shard is not None and doc.shard.plan == (("a",), ("b",), ())
    assert "Shard 3 of 3 has no workloads: the split gave all 2 to the other shards" in out.getvalue()


@pytest.mark.real_runs("which workloads each shard measures: not their times")
def test_only_comes_before_the_split_and_costs_can_steer_it(make_repo: MakeRepo,
                                                            tmp_path: Path) -> None:
    repo = make_repo({"benchbot.yml": SHARD_CONFIG})
    doc = shard_with(repo, Shard(index=2, count=2), set(), only=("w2", "w5", "w7"))
    assert doc.shard is not None and doc.shard.plan == (("w2", "w7"), ("w5",))
    assert [b.name for b in doc.benchmarks] == ["w5"]
    # an earlier results file in which w2 took a hundred times longer than the rest
    earlier = shard_with(repo, Shard(index=1, count=1), set())
    slow = tuple(b if b.name != "w2" else _slower(b) for b in earlier.benchmarks)
    costs = save(tmp_path, "costs.json", replace(earlier, benchmarks=slow))
    code, err = compare_cli(repo, tmp_path / "r.json", "--shard", "2/2", "--shard-costs", costs,
                            "--only", "w2,w5,w7", "--runs", "10", "--no-aa", "--no-confirm")
    assert code == 0, err
    steered = resultsdir.load(tmp_path / "r.json")
    assert steered.shard is not None and steered.shard.plan == (("w2",), ("w5", "w7"))
    assert [b.name for b in steered.benchmarks] == ["w5", "w7"]
    err_ = io.StringIO()
    assert cli.main(["compare", "--base", "base", "--head", "HEAD", "--shard-costs", costs],
                    out=io.StringIO(), err=err_) == 2
    assert "--shard-costs splits the workloads for --shard K/N" in err_.getvalue()


def _slower(bench: Benchmark) -> Benchmark:
    phases = {n: replace(p, arms={a: replace(r, wall_ns=tuple(w * 100 for w in r.wall_ns))
                                  for a, r in p.arms.items()})
              for n, p in bench.phases.items()}
    return replace(bench, phases=phases)
