"""What measure.counted expects of a profile's cost before it starts one."""

from __future__ import annotations

from benchbot.config.load import parse_config
from benchbot.core.model import CountedRun, Counts
from benchbot.measure import counted
from benchbot.measure.context import Measured


def _counts(per_run_s: float, runs: int) -> Counts:
    return Counts(method="valgrind", why="valgrind", unit="call", base=(100.0,),
                  base_again=(100.0,), head=(105.0,), counted_s=per_run_s * runs,
                  runs=tuple(CountedRun(arm="base", units=2, instructions=200, seconds=per_run_s)
                             for _ in range(runs)))


def test_a_profiled_run_is_expected_to_cost_at_least_valgrinds_start() -> None:
    # A benchmark counted with its suite in one process (suites.gbsplit) holds a share of
    # those processes, 0.05 s here: its own profiled run still starts valgrind and the
    # harness, so the estimate is at least that, for each of the three arms in turn.
    w = parse_config("version: 1\nworkloads:\n  - {name: b, run: ./b}\n").workloads[0]
    shared = Measured(phases={}, counts={"b": _counts(0.05, 3)})
    assert counted._profile_s(shared, w, parallel=False) == 3 * counted.VALGRIND_START_S
    assert counted._profile_s(shared, w, parallel=True) == counted.VALGRIND_START_S
    # A run of its own that took longer is expected to take as long again.
    own = Measured(phases={}, counts={"b": _counts(2.0, 5)})
    assert counted._profile_s(own, w, parallel=False) == 6.0
