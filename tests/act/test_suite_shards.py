"""A suite on two shards through bench.yml as shipped (issue 39, item 5): the workflow
does not change (the gate's `shards: 2`, the matrix from its output); each measure job
discovers the suite and measures the benchmarks dealt to it, and publish merges them as
one comparison, one family, one table."""

from __future__ import annotations

import json
from typing import Any

from tests.act.conftest import MakeWorld
from tests.act.world import Delivery


def results_documents(delivery: Delivery) -> list[dict[str, Any]]:
    """The results files the measure jobs uploaded."""
    docs = []
    for run in delivery.runs.values():
        if run.artifacts and run.artifacts.exists():
            docs += [json.loads(p.read_text()) for p in run.artifacts.rglob("results.json")]
    return docs


# A JSON-lines harness of four benchmarks with planted figures (0.4% apart from one process
# to the next); head's `mul` does 1.6 times the work (head's nap.sh sleeps 0.05 s). With
# names as arguments it reports only those (the suite's filter).
SUITE_SH = """#!/bin/sh
scale=1000
grep -q 0.05 bench/nap.sh && scale=1600
want() { [ -z "$ARGS" ] && return 0; for a in $ARGS; do [ "$a" = "$1" ] && return 0; done; return 1; }
ARGS="$*"
line() { want "$1" && echo "{\\"name\\": \\"$1\\", \\"value\\": $(( $2 * (1000 + $$ % 5) / 1000 )), \\"unit\\": \\"ns\\"}"; return 0; }
line add 100000
line copy 200000
line mul $(( 150 * scale ))
line sort 300000
"""
SUITE_CONFIG = """\
version: 1
build: ./bench/build.sh
aa: off
confirm: off
defaults:
  runs: 10
  warmup: 1
suites:
  - name: core
    run: ["./bench/suite.sh"]
    format: jsonl
    filter: ["{name}"]
"""


def test_a_suite_on_two_shards_is_one_comparison(make_world: MakeWorld) -> None:
    # bench.yml unchanged: the gate's shards: 2, the matrix from its output; each shard
    # discovers the suite and measures its share, publish merges one family of four
    world = make_world(workflow="bench", files={"kernels/benchbot.yml": SUITE_CONFIG,
                                                "bench/suite.sh": SUITE_SH})
    delivery = world.deliver("pull_request", world.pull_request("opened"))
    assert delivery.results("bench/gate") == ["success"], delivery.errors()
    assert delivery.results("bench/measure") == ["success", "success"], delivery.errors()
    assert delivery.results("bench/publish") == ["success"], delivery.errors()
    docs = sorted(results_documents(delivery), key=lambda d: d["shard"]["index"])
    assert [sorted(b["name"] for b in d["benchmarks"]) for d in docs] == [
        ["core/add", "core/mul"], ["core/copy", "core/sort"]]  # dealt in turn by name
    for doc in docs:
        assert sorted(doc["suites"][0]["benchmarks"]) == ["add", "copy", "mul", "sort"]
        assert doc["settings"]["family"] == {"sequential": 0, "fixed": 4}
    (comment,) = world.sticky()
    body = str(comment["body"])
    assert "2 shards" in body and "core/mul" in body and "core/sort" in body, body
    assert body.count("| | workload |") == 1, body  # one table of all four
    (check,) = world.checks()
    assert (check["status"], check["conclusion"]) == ("completed", "failure"), check
    world.assert_no_leak(delivery)
