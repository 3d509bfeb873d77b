"""The A/A check's consequences, with a real repository and a spawner that plants A/A errors."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from benchbot.measure import engine
from benchbot.results.resultsdir import to_json as as_json
from benchbot.run.runner import RawRun, SpawnRequest
from tests.conftest import MakeRepo

RUNS = 10


class AAErrorSpawner:
    """Times every run 10 ms, except that for the named workloads a run of base again
    (from its own place, beside the worktrees of base and head) reads 13 ms."""

    def __init__(self, broken: set[str]) -> None:
        self.broken = broken
        self.calls: Counter[str] = Counter()

    def spawn(self, request: SpawnRequest) -> RawRun:
        name = request.argv[1]
        k = self.calls[name]
        self.calls[name] += 1
        again = Path(request.cwd).name not in ("base", "head")
        slow = name in self.broken and again
        wall = 13_000_000 if slow else 10_000_000 + (k % 3) * 1000
        return RawRun(wall_ns=wall, cpu_ns=wall, maxrss_kib=1, returncode=0)


CONFIG = f"version: 1\ndefaults: {{runs: {RUNS}}}\nworkloads:\n" + "".join(
    f"  - {{name: {n}, run: [echo, {n}]}}\n" for n in ("w1", "w2", "w3", "w4")
)


def _compare(repo: Path, broken: set[str]) -> dict:
    spawner = AAErrorSpawner(broken)
    return as_json(engine.compare(engine.Request(repo=repo, base="base", head="HEAD"), spawner_factory=lambda _: spawner))


def test_aa_failure_for_more_than_a_quarter_aborts(make_repo: MakeRepo, validate) -> None:
    repo = make_repo({"benchbot.yml": CONFIG})
    doc = _compare(repo, {"w1", "w2"})
    validate(doc)
    assert doc["aa"]["status"] == "failed" and doc["aa"]["aborted"] is True
    assert sorted(doc["aa"]["failed"]) == ["w1", "w2"]
    for b in doc["benchmarks"]:
        assert b["verdict"]["outcome"] == "inconclusive"
        assert b["verdict"]["reason_code"] == "aa_aborted"
        assert "ab" not in b["phases"]  # the A/B phase was skipped
    assert doc["summary"]["conclusion"] == "neutral"


def test_aa_failure_for_a_quarter_forces_only_that_workload(make_repo: MakeRepo, validate) -> None:
    repo = make_repo({"benchbot.yml": CONFIG})
    doc = _compare(repo, {"w3"})
    validate(doc)
    assert doc["aa"] == {"status": "failed", "failed": ["w3"], "aborted": False, "abort_fraction": 0.25}
    by = {b["name"]: b for b in doc["benchmarks"]}
    assert by["w3"]["aa"]["verdict"]["outcome"] == "slower"
    assert by["w3"]["verdict"]["outcome"] == "inconclusive"
    assert by["w3"]["verdict"]["reason_code"] == "aa_failed"
    assert "+30.0%" in by["w3"]["verdict"]["reason"]
    assert by["w1"]["verdict"]["outcome"] == "level"
    assert "ab" in by["w1"]["phases"]
