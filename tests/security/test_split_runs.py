"""A split count (benchbot.suites.gbsplit; docs/security.md, "Counts") against heads that
try to move it, for real: the generated google-benchmark suite built with g++, counted by
suitecount under valgrind. A head that writes an out file of its own in valgrind's
directory (a part after callgrind's last dump, or the first part written again), or that
runs fewer repetitions than asked (fewer dumps): no count comes from the split, and the
suite is counted one by one. Slow tier; skips without g++, libbenchmark or valgrind."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks import suitegen
from tests.suites.test_gbsplit_live import ENV, FORGER, _build, _count, _need

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("trick", ["add", "rewrite"])
def test_a_head_that_writes_in_valgrind_s_directory_gets_no_split(tmp_path: Path,
                                                                  trick: str) -> None:
    _need()
    base = _build(tmp_path, "base")
    head = _build(tmp_path, "head", extra=FORGER)
    again = _build(tmp_path, "again")
    names = ["BM_Fnv", "BM_Crc", "BM_Sha", "BM_XorShift", "BM_Murmur"]
    got = _count(tmp_path, base, head, again, {**ENV, "TRICK": trick}, names)
    how = got.suites["gbench"][0]
    assert how.startswith("not split (the head build's run callgrind: not split: "), how
    assert ("starts at basic block 0, not" if trick == "add" else
            "was not made, written and closed once by valgrind alone") in how, how
    for name, c in got.counts.items():
        assert not c.why.startswith("valgrind: one callgrind"), name
        # counted one by one: the forger writes there too, and is refused (no count), or
        # (where it found nothing to copy) its counts are the work's
        if c.method is not None:
            truth = suitegen.expected(name.split("_", 1)[1], "changed")
            change = c.head[0] / c.base[0] - 1
            assert (change > 0.04) if truth == "more" else (abs(change) < 0.06), (name, change)


def test_a_head_that_runs_fewer_repetitions_than_asked_gets_no_split(tmp_path: Path) -> None:
    # one benchmark registered with Repetitions(2), which wins over the flag: four dumps
    # where six were asked; the report shows it, and the suite is counted one by one
    _need()
    text = suitegen.cc_files("changed", "head")["bench.cc"]
    text = text.replace("BENCHMARK_MAIN();", "BENCHMARK(BM_Fnv)->Name(\"BM_Fnv2\")->Repetitions(2);\n"
                        "BENCHMARK_MAIN();")
    base = _build(tmp_path, "base", text=text)
    head = _build(tmp_path, "head", text=text)
    again = _build(tmp_path, "again", text=text)
    names = ["BM_Fnv", "BM_Fnv2/repeats:2", "BM_Crc", "BM_Sha", "BM_XorShift"]
    got = _count(tmp_path, base, head, again, ENV, names)
    how = got.suites["gbench"][0]
    assert how.startswith("not split (the base build's run its report does not name 3 "
                          "repetitions of each benchmark"), how
