"""The two tiers (tests/README.md): tests/conftest.py's hook, run by pytester on a folder
holding a copy of it, a fast test, a marked one and one under a slow folder."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

CONFTEST = Path(__file__).resolve().parents[1] / "conftest.py"
FAST, MARKED, FOLDER = "test_fast", "test_marked", "test_in_a_slow_folder"


@pytest.fixture
def suite(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    monkeypatch.delenv("BENCHBOT_SLOW", raising=False)
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")  # only the hook under test
    pytester.makeconftest(CONFTEST.read_text())
    pytester.makeini("[pytest]\nmarkers =\n    slow: the slow tier\n")
    pytester.makepyfile(test_a=f"import pytest\n\ndef {FAST}():\n    pass\n\n"
                                f"@pytest.mark.slow\ndef {MARKED}():\n    pass\n")
    (pytester.path / "render").mkdir()
    (pytester.path / "render" / "test_b.py").write_text(f"def {FOLDER}():\n    pass\n")
    return pytester


def ran(suite: pytest.Pytester, *args: str) -> tuple[list[str], str]:
    """The tests a run with ``args`` passed, and what it printed."""
    result = suite.runpytest_inprocess("-p", "no:cacheprovider", *args)
    passed = sorted(r.nodeid.split("::")[-1] for r in result.reprec.getreports("pytest_runtest_logreport")
                    if r.when == "call" and r.passed)
    return passed, result.stdout.str()


def test_the_fast_tier_leaves_the_slow_one_out_and_says_so(suite: pytest.Pytester) -> None:
    passed, out = ran(suite)
    assert passed == [FAST]
    assert "2 slow tests left out: run them with --slow (both tiers) or -m slow" in out
    assert ran(suite, "-m", "not render")[0] == [FAST]  # an -m that does not name slow


def test_slow_runs_alone_or_with_the_fast_tier_when_asked_for(
        suite: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    both = sorted([FAST, MARKED, FOLDER])
    assert ran(suite, "-m", "slow")[0] == sorted([FOLDER, MARKED])
    assert ran(suite, "--slow")[0] == both
    assert ran(suite, "-m", "not slow")[0] == [FAST]
    monkeypatch.setenv("BENCHBOT_SLOW", "1")
    assert ran(suite)[0] == both
    monkeypatch.setenv("BENCHBOT_SLOW", "0")
    assert ran(suite)[0] == [FAST]


# --- real timing stays out of the fast tier (tests/conftest.py's _Guard) ------------------

# One workload made ten times slower (nap.sh's sleep; a hundred times in the slow tier),
# compared by the real engine: with ghenv.PlantedNap on a fake clock, or measured by
# running nap.sh; each test asserts the verdict the planted change deserves.
TIMED = '''
import subprocess
import sys

import pytest

from benchbot.measure import engine
from tests.clock import FakeClock
from tests.ghenv import FAST, SLOW, PlantedNap

CONFIG = ("version: 1\\naa: off\\nconfirm: off\\ncounts: off\\nsandbox: off\\n"
          "defaults: {runs: 10}\\nworkloads:\\n  - {name: nap, run: ./nap.sh}\\n")


def outcome(make_repo, head=SLOW, **planted):
    repo = make_repo({"benchbot.yml": CONFIG, "nap.sh": FAST}, {"nap.sh": head})
    doc = engine.compare(engine.Request(repo=repo, base="base", head="HEAD"), **planted)
    return doc.benchmarks[0].verdict.outcome


def test_planted(make_repo):
    clock = FakeClock()
    assert outcome(make_repo, spawner_factory=lambda _: PlantedNap(clock), clock=clock) == "slower"


def test_measured(make_repo):
    assert outcome(make_repo) == "slower"


@pytest.mark.real_runs("says it asserts nothing of times, and does")
def test_measured_but_allowed(make_repo):
    assert outcome(make_repo) == "slower"


@pytest.mark.slow
def test_measured_in_the_slow_tier(make_repo):  # a hundredfold: certain at any load
    assert outcome(make_repo, head="#!/bin/sh\\nsleep 0.2\\n") == "slower"


def test_benchbot_as_a_process():
    subprocess.run([sys.executable, "-m", "benchbot", "compare", "--help"], check=True,
                   capture_output=True)
    subprocess.run(["sh", "-c", f"exec {sys.executable} -m benchbot bisect --help >/dev/null"],
                   check=True)
'''


@pytest.fixture
def timed(suite: pytest.Pytester) -> pytest.Pytester:
    suite.makepyfile(test_timed=TIMED)
    return suite


def outcomes(suite: pytest.Pytester, *args: str) -> tuple[dict[str, str], str]:
    """Each test's outcome in a run of test_timed.py with ``args``, and what it printed."""
    result = suite.runpytest_inprocess("-p", "no:cacheprovider", "test_timed.py", *args)
    got = {r.nodeid.split("::")[-1]: r.outcome for r in result.reprec.getreports("pytest_runtest_logreport")
           if r.when == "call"}
    return got, result.stdout.str()


@pytest.mark.real_runs("the check's own test: a fast test measuring for real, run by pytester")
def test_a_fast_test_cannot_rest_a_verdict_on_real_timing(timed: pytest.Pytester) -> None:
    from benchbot.sandbox import spawn

    before = spawn.ProcessSpawner.spawn
    got, out = outcomes(timed)
    assert got == {"test_planted": "passed", "test_measured": "failed",
                   "test_measured_but_allowed": "failed", "test_benchbot_as_a_process": "failed"}
    # unmarked: failed for measuring at all, and told how to do without it
    assert "real runs (processes benchbot started and timed) in a fast-tier test" in out
    assert "ghenv.PlantedNap" in out and "@pytest.mark.slow" not in out
    assert "mark the test slow" in out and 'real_runs("why")' in out
    # marked real_runs or not: every run read 1 ms, so the change measured is not there
    # (the traceback's "E" lines only: with CI set, pytest also repeats each message
    # untruncated in its short summary)
    read = re.findall(r"^E\s+AssertionError: assert '(\w+)' == 'slower'", out, re.M)
    assert len(read) == 2 and "slower" not in read, read
    assert "2 benchbot processes started to measure" in out  # one of them by a shell
    assert "real_runs: 1 fast tests ran 22 real processes, each read as 1 ms" in out
    assert spawn.ProcessSpawner.spawn is before  # the inner session's wrapper is gone


@pytest.mark.slow
def test_the_slow_tier_measures_for_real(timed: pytest.Pytester) -> None:
    got, _ = outcomes(timed, "-m", "slow")
    assert got == {"test_measured_in_the_slow_tier": "passed"}
