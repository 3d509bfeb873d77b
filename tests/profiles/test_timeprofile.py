"""The sampled time profile's pure parts (benchbot.profiles.timeprofile): perf script's output ->
folded stacks of the run's processes only, the per-function comparison and its noise
guard, and the probe's reasons. The real sampling, in the sandbox, is in
tests/profiles/test_timeprofile_measured.py and tests/security/test_time_profile_reach.py."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from benchbot.profiles import timeprofile as tp

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "flame"
MS = 1_000_000


def test_a_real_perf_script_folds_to_the_runs_processes_only() -> None:
    """perf record -- bwrap … sh -c base (tests/fixtures/flame/perf-script.txt, recorded
    here): bubblewrap's own samples (before its child execs sh) are left out; sh's and
    base's are kept, innermost frame last."""
    text = (FIXTURES / "perf-script.txt").read_text()
    folded = tp.fold(text, wrapper_execs=1)
    everything = tp.fold(text, wrapper_execs=0)
    assert sum(folded.values()) == 87 * MS
    assert sum(everything.values()) - sum(folded.values()) == 4 * MS  # bwrap's four
    selfs = tp.self_costs(folded)
    assert selfs["walk"] == 48 * MS and selfs["spin"] == 33 * MS
    assert all(not s.endswith("bwrap]") for s in folded)
    assert any(s.endswith(";walk;asm_exc_page_fault_[k];exc_page_fault_[k]") or
               s.endswith("walk;asm_exc_page_fault_[k];exc_page_fault_[k]") for s in folded)


SCRIPT = """\
perf-exec     0 PERF_RECORD_COMM: perf-exec:100/100
bwrap 100 PERF_RECORD_COMM exec: bwrap:100/100
bwrap   100    1000000
\tffffffff81000000 copy_process ([kernel.kallsyms])
\t            1234 [unknown] (/usr/bin/bwrap)

bwrap 100 PERF_RECORD_FORK(101:101):(100:100)
app 101 PERF_RECORD_COMM exec: app:101/101
my app   101    1000000
\t            11be weird;name (/work/app)
\t            107f main (/work/app)

app 101 PERF_RECORD_COMM: bwrap:101/101
bwrap   101    2000000
\t            11be hide_me (/work/app)
\t            2000 [unknown] (/work/libfoo.so)

bwrap   101    1000000
\tffffffff81000000 clear_page_erms ([kernel.kallsyms])

bwrap 101 PERF_RECORD_FORK(102:102):(101:101)
bwrap   102    1000000
\t            3000 child_work (/work/app)

bwrap   100    1000000
\t            1234 [unknown] (/usr/bin/bwrap)
"""


def test_a_process_is_the_runs_by_exec_and_fork_not_by_its_name() -> None:
    folded = tp.fold(SCRIPT, wrapper_execs=1)
    assert folded == {
        "main;weird:name": 1 * MS,  # a ";" in a name would split the stack
        "[libfoo.so];hide_me": 2 * MS,  # renamed itself "bwrap": still the run's
        "clear_page_erms_[k]": 1 * MS,
        "child_work": 1 * MS,  # forked by the run, before any exec of its own
    }
    # Without the sandbox the first exec is the run itself.
    assert sum(tp.fold(SCRIPT, wrapper_execs=0).values()) == 7 * MS


def _profile(selfs: dict[str, int], runs: int = 3) -> tp.TimeProfile:
    folded = {f"main;{name}": ms * MS * runs for name, ms in selfs.items()}
    return tp.TimeProfile(folded=folded, runs=runs, samples=sum(folded.values()) // MS,
                          period_ns=MS, wall_s=1.0, confined=True)


def test_compare_names_the_function_that_moved_and_not_the_one_that_stayed() -> None:
    base = _profile({"walk": 40, "spin": 30})
    head = _profile({"walk": 200, "spin": 29})
    again = _profile({"walk": 42, "spin": 31})
    cmp = tp.compare(base, head, again)
    assert [f.name for f in cmp.named] == ["walk"]
    walk = cmp.named[0]
    assert (walk.base_ns, walk.head_ns, walk.base_again_ns) == (40 * MS, 200 * MS, 42 * MS)
    assert walk.share == pytest.approx(160 / 159)
    assert cmp.guarded and cmp.base_ns == 70 * MS and cmp.head_ns == 229 * MS


def test_per_run_stacks_make_arms_of_different_run_counts_comparable() -> None:
    assert _profile({"walk": 40}, runs=3).folded_per_run() == {"main;walk": 40 * MS}
    assert _profile({"walk": 40}, runs=7).folded_per_run() == {"main;walk": 40 * MS}


def test_a_move_within_base_against_base_again_is_not_named() -> None:
    """spin moves by 12 ms from base to head, but by 10 ms from base to base again: noise."""
    base = _profile({"walk": 100, "spin": 100}, runs=100)
    head = _profile({"walk": 100, "spin": 112}, runs=100)
    assert [f.name for f in tp.compare(base, head).named] == ["spin"]  # unguarded
    again = _profile({"walk": 100, "spin": 90}, runs=100)
    cmp = tp.compare(base, head, again)
    assert cmp.named == ()
    spin = next(f for f in cmp.functions if f.name == "spin")
    assert spin.noise_ns == pytest.approx(2 * 10 * MS)


def test_a_move_within_the_samples_own_error_is_not_named() -> None:
    """3 ms over 1 run: 3 samples, within 4 standard errors of Poisson counts."""
    cmp = tp.compare(_profile({"a": 5, "b": 5}, runs=1), _profile({"a": 8, "b": 5}, runs=1))
    assert cmp.named == ()
    cmp = tp.compare(_profile({"a": 500, "b": 500}, runs=1), _profile({"a": 800, "b": 500}, runs=1))
    assert [f.name for f in cmp.named] == ["a"]


def test_a_small_share_of_the_run_is_never_named() -> None:
    base = _profile({"big": 1000, "tiny": 1}, runs=50)
    head = _profile({"big": 1000, "tiny": 15}, runs=50)
    assert tp.compare(base, head).named == ()  # 14 ms of 1,001: under MIN_MOVE


def test_the_probe_says_why_without_perf() -> None:
    found = tp.probe_with(None)
    assert not found.works and found.reason == "perf is not installed"
    assert "apt-get install linux-perf" in (found.fix or "")
    assert tp.only_work_note(found) == "only work was profiled: perf is not installed"


@pytest.mark.skipif(shutil.which("perf") is None, reason="perf is not installed")
def test_the_probe_says_why_an_event_cannot_be_sampled() -> None:
    """A hardware event on a VM without counters is a real refusal, with perf's words."""
    found = tp.probe_with(shutil.which("perf"), "instructions")
    if found.works:
        pytest.skip("this machine has hardware counters: instructions can be sampled")
    assert found.reason is not None
    assert found.reason.startswith("perf record -e instructions cannot sample here")
    assert "not supported" in found.reason or "paranoid" in found.reason


def test_record_refuses_an_unknown_call_graph(tmp_path: Path) -> None:
    from benchbot.sandbox import bwrap
    with pytest.raises(ValueError, match="call_graph"):
        tp.record(["true"], cwd=tmp_path, env={}, sandbox=bwrap.Sandbox(kind="none", description=""),
                  call_graph="lbr")


def test_perf_script_reads_a_profile_with_none_of_benchbots_environment(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # perf script reads the run's binaries outside the sandbox: a token in benchbot's
    # environment must not reach it. A stand-in perf prints the environment it was given.
    shim = tmp_path / "perf"
    shim.write_text("#!/bin/sh\nenv\n")
    shim.chmod(0o755)
    monkeypatch.setenv("GITHUB_TOKEN", "ghs_secret")
    monkeypatch.setenv("HOME", str(tmp_path))
    seen = tp._script(str(shim), tmp_path / "perf.data")
    assert "ghs_secret" not in seen and "HOME=" not in seen
    assert "LC_ALL=C" in seen
