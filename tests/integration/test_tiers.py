"""The two tiers (tests/README.md): tests/conftest.py's hook, run by pytester on a folder
holding a copy of it, a fast test, a marked one and one under a slow folder."""

from __future__ import annotations

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
