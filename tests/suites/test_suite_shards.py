"""A suite across shards through the real engine (issue 39, item 5), on a fake clock: each
shard's harness is ``FakeGo`` (tests/suites/test_suite_counts.py), and what is tested
is the wiring: every shard discovers the whole suite and states its list, each measures
and counts only its share (dealt in turn from the sorted names, ``shards.suite_shares``),
its rounds ask the harness for that share alone, and ``merge`` judges the shards as one
family of all the suite's benchmarks, refusing shards that discovered different lists or
claim another's benchmark."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from benchbot.config.settings import Overrides
from benchbot.core.errors import ResultsError
from benchbot.core.model import Family, Results, Shard
from benchbot.measure import engine
from benchbot.results import merging
from benchbot.results.resultsdir import to_json
from benchbot.run.runner import RawRun, SpawnRequest
from benchbot.sandbox import counting
from tests.clock import FakeClock
from tests.conftest import MakeRepo
from tests.suites.test_suite_counts import CONFIG, SPECS, FakeGo, Spec

NAMES = sorted(f"go/{n}" for n in SPECS)


@pytest.fixture(autouse=True)
def valgrind_here(monkeypatch: pytest.MonkeyPatch) -> None:
    """valgrind "installed" and no hardware counters, on any machine: the fake counts."""
    monkeypatch.setattr(counting, "means", lambda env, shown=None: counting.Means(
        perf_problem="no hardware counters (a test)", valgrind_problem=None))


class Logged(FakeGo):
    """FakeGo that keeps every timed run's argv, to see what each round asked for."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.timed: list[tuple[str, ...]] = []

    def spawn(self, request: SpawnRequest) -> RawRun:
        if request.count != "valgrind":
            self.timed.append(request.argv)
        return super().spawn(request)


def _shard(repo: Path, k: int, n: int, specs: dict[str, Spec] = SPECS) -> tuple[Results, Logged]:
    clock = FakeClock()
    fake = Logged(specs, clock, seed=k)
    doc = engine.compare(engine.Request(repo=repo, base="base", head="HEAD",
                                        overrides=Overrides(budget=600.0, seed=5 + k),
                                        shard=Shard(index=k, count=n)),
                         spawner_factory=lambda _: fake, clock=clock)
    return doc, fake


def _split(repo: Path, doc: Results) -> Any:
    from benchbot.config.find import read_config

    return engine.split_of(repo, read_config(repo, doc.base.sha), doc.base.sha, doc.head.sha,
                           doc.shard.count if doc.shard else 1)


def _selected(argv: tuple[str, ...]) -> set[str]:
    pattern = next((a.split("=", 1)[1] for a in reversed(argv) if a.startswith("-test.bench=")), ".")
    return {f"go/{n}" for n in SPECS if re.search(pattern, n)}


def test_two_shards_of_a_suite_measure_disjoint_shares_merged_as_one_family(
        make_repo: MakeRepo, validate: Any) -> None:
    repo = make_repo({"benchbot.yml": CONFIG}, {"README": "head\n"})
    (one, fake1), (two, fake2) = _shard(repo, 1, 2), _shard(repo, 2, 2)
    mine = [{b.name for b in d.benchmarks} for d in (one, two)]
    # dealt in turn from the sorted list: disjoint, covering it, 3 and 2
    assert mine == [set(NAMES[0::2]), set(NAMES[1::2])]
    for doc, fake, share in ((one, fake1, mine[0]), (two, fake2, mine[1])):
        validate(to_json(doc))
        [suite] = doc.suites
        assert sorted(f"go/{b}" for b in suite.benchmarks) == NAMES  # the list it discovered
        # judged with the whole's family: all five benchmarks, not its share's two or three
        assert doc.settings.family == Family(sequential=len(SPECS), fixed=0)
        # counted: its own share only, six runs a benchmark at least
        assert {f"go/{n}" for r in fake.counted for n in fake._selected(r.argv)} == share
        # its discovery ran the whole suite (base and head); every later round asked the
        # harness (the suite's filter) for benchmarks of its share alone
        assert [a[1:] for a in fake.timed[:2]] == [CONFIG_RUN[1:]] * 2
        rounds = [_selected(a) for a in fake.timed[2:]]
        assert rounds and all(r and r <= share for r in rounds), rounds
    # each shard's own report counts the whole: the config's workloads and the suite's
    from benchbot.report.build import build_view
    from benchbot.report.render import render

    assert "Shard 1 of 2: 3 of the comparison's 5 workloads" in render(build_view(one), "markdown")
    split = _split(repo, one)
    assert merging.refusal(one, split) is None and merging.refusal(two, split) is None
    merged = merging.merge([merging.ShardFile("shard1.json", one),
                            merging.ShardFile("shard2.json", two)], split=split)
    validate(to_json(merged))
    assert sorted(b.name for b in merged.benchmarks) == NAMES
    assert merged.settings.family == Family(sequential=len(SPECS), fixed=0)
    assert merged.unmeasured == () and len(merged.shards) == 2
    verdicts = {b.name: b.verdict.outcome for b in merged.benchmarks}
    assert verdicts == {"go/BenchmarkHash": "slower", "go/BenchmarkAlloc": "slower",
                        "go/BenchmarkSort": "level", "go/BenchmarkParse": "level",
                        "go/BenchmarkSearch": "level"}
    [suite] = merged.suites
    assert suite.counted_runs == len(fake1.counted) + len(fake2.counted)
    # a missing shard: its share of the suite is named as not measured (and shard 1's
    # regression, Alloc, still fails the check)
    alone = merging.merge([merging.ShardFile("shard1.json", one)], split=split, allow_missing=True)
    assert alone.unmeasured == tuple(NAMES[1::2]) and alone.summary.conclusion == "failure"


CONFIG_RUN = ("./suite.test", "-test.run", "^$", "-test.bench", ".", "-test.benchmem")


def test_a_shard_that_discovered_another_list_fails_the_merge_naming_the_difference(
        make_repo: MakeRepo) -> None:
    repo = make_repo({"benchbot.yml": CONFIG}, {"README": "head\n"})
    one, _ = _shard(repo, 1, 2)
    more = {**SPECS, "BenchmarkExtra": Spec(ns=12_000, instructions=35_000)}
    two, _ = _shard(repo, 2, 2, more)  # its harness reported one benchmark more
    split = _split(repo, one)
    assert merging.refusal(two, split) is None  # its share of its own list, alone
    with pytest.raises(ResultsError, match=re.escape(
            "cannot merge shard1.json and shard2.json: the benchmarks the suites discovered "
            "differ: shard2.json found benchmark go/BenchmarkExtra and shard1.json did not")):
        merging.merge([merging.ShardFile("shard1.json", one),
                       merging.ShardFile("shard2.json", two)], split=split)


def test_a_forged_shard_claiming_another_s_benchmark_is_refused(make_repo: MakeRepo) -> None:
    from dataclasses import replace

    repo = make_repo({"benchbot.yml": CONFIG}, {"README": "head\n"})
    (one, _), (two, _) = _shard(repo, 1, 2), _shard(repo, 2, 2)
    split = _split(repo, one)
    theirs = two.benchmarks[0]
    forged = replace(one, benchmarks=(*one.benchmarks, theirs))
    assert merging.refusal(forged, split) == (
        f"shard 1 claims benchmark {theirs.name!r}, which is shard 2's share of the "
        "benchmarks its suites discovered")
    # stating a list of its own share alone, so as to keep all of it: the list then deals
    # one of them to shard 2
    [suite] = one.suites
    kept = tuple(n.removeprefix("go/") for n in NAMES[0::2])
    narrowed = replace(one, suites=(replace(suite, benchmarks=kept),))
    assert merging.refusal(narrowed, split) == (
        f"shard 1 claims benchmark {NAMES[2]!r}, which is shard 2's share of the benchmarks "
        "its suites discovered")
    # a list of one benchmark, its own, and the family to match: consistent in itself, but
    # shard 2 discovered another list, and the merge names the difference
    small = replace(one, benchmarks=tuple(b for b in one.benchmarks if b.name == NAMES[0]),
                    suites=(replace(suite, benchmarks=kept[:1]),))
    small = replace(small, settings=replace(small.settings, family=split.family_with(small.suites)))
    assert merging.refusal(small, split) is None
    with pytest.raises(ResultsError, match=re.escape(
            f"the benchmarks the suites discovered differ: shard 2 found benchmark {NAMES[1]} "
            "and shard 1 did not")):
        merging.merge([merging.ShardFile("shard 1", small), merging.ShardFile("shard 2", two)],
                      split=split)
    # a smaller family than the list it states
    less = replace(one, settings=replace(one.settings, family=Family(sequential=1, fixed=0)))
    assert merging.refusal(less, split) == (
        "shard 1 states a family of 1 sequential and 0 fixed workloads; the config's with the "
        "benchmarks its suites discovered is 5 sequential and 0 fixed workloads")
