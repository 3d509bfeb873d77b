"""One settings object, one set of bounds and messages, whatever the settings came from."""

from __future__ import annotations

import argparse
import io
from dataclasses import replace
from pathlib import Path

import pytest

from benchbot import cli
from benchbot.config import AAConfig, Config, parse_config
from benchbot.errors import ConfigError, UsageError
from benchbot.github.command import CommandError, parse
from benchbot.github.event import Settings
from benchbot.settings import Overrides, SettingError, argparse_type, read

CONFIG = """version: 1
defaults: {runs: 30, parity: 0.02}
workloads:
  - {name: sort, run: [sort]}
  - {name: sum, run: [sum], parity: 0.01}
"""


@pytest.fixture
def two() -> Config:
    return parse_config(CONFIG)


def test_nothing_set_changes_nothing(two: Config) -> None:
    assert Overrides().apply(two) == two


def test_runs_and_parity_reach_every_workload(two: Config) -> None:
    changed = Overrides(runs=50, parity=0.05).apply(two)
    assert [(w.runs, w.parity) for w in changed.workloads] == [(50, 0.05), (50, 0.05)]
    assert [(w.runs, w.parity) for w in two.workloads] == [(30, 0.02), (30, 0.01)]


def test_only_keeps_the_file_s_order(two: Config) -> None:
    assert [w.name for w in Overrides(only=("sum", "sort")).apply(two).workloads] == ["sort", "sum"]


def test_switches_fail_on_and_seed(two: Config) -> None:
    changed = Overrides(confirm=False, aa=False, fail_on=("slower", "invalid"), seed=7).apply(two)
    assert (changed.confirm, changed.aa, changed.status.fail_on, changed.seed) == (
        False, AAConfig(enabled=False), ("slower", "invalid"), 7)
    assert Overrides(aa=True).apply(changed).aa.enabled is True


def test_the_later_settings_win_where_they_are_set() -> None:
    inputs = Overrides(runs=40, fail_on=("slower",))
    bench = Overrides(runs=100, only=("sort",))
    assert inputs.over(bench) == Overrides(runs=100, only=("sort",), fail_on=("slower",))


def test_an_unknown_workload_names_the_known_ones(two: Config) -> None:
    with pytest.raises(ConfigError, match=r"only: no workload named 'sorted' .*did you mean 'sort'\?"):
        Overrides(only=("sorted",)).apply(two)


@pytest.mark.parametrize("name, text, value", [
    ("runs", "10", 10), ("runs", "1000", 1000), ("parity", "0.01", 0.01), ("parity", "1%", 0.01),
    ("confirm", "off", False), ("aa", "ON", True), ("only", "a,b,a", ("a", "b")),
    ("fail_on", "invalid,slower", ("slower", "invalid")), ("seed", "42", 42),
])
def test_read(name: str, text: str, value: object) -> None:
    assert read(name, text) == value


BAD = [("runs", "9"), ("runs", "1001"), ("runs", "ten"), ("parity", "0"), ("parity", "1"),
       ("parity", "150%"), ("confirm", "maybe"), ("only", "a;b"), ("fail_on", "worse"),
       ("seed", "-1")]


@pytest.mark.parametrize("name, text", BAD)
def test_one_message_wherever_a_value_comes_from(name: str, text: str) -> None:
    """The command line, a /bench comment and the Action's inputs say the same."""
    with pytest.raises(SettingError) as info:
        read(name, text)
    message = str(info.value).split(", got ")[0]
    with pytest.raises(argparse.ArgumentTypeError) as typed:
        argparse_type(name)(text)
    assert str(typed.value) == str(info.value)
    if name in ("runs", "only", "parity", "confirm", "aa"):
        with pytest.raises(CommandError) as bench:
            parse(f"/bench {name}={text}")
        assert message in bench.value.problems[0]
    if name in ("runs", "fail_on"):
        variable = {"runs": "BENCHBOT_RUNS", "fail_on": "BENCHBOT_FAIL_ON"}[name]
        env = {"GITHUB_EVENT_NAME": "x", "GITHUB_EVENT_PATH": "x", "GITHUB_REPOSITORY": "o/r",
               "GITHUB_TOKEN": "t", variable: text}
        with pytest.raises(UsageError, match=variable):
            Settings.from_env(env)


def test_the_config_uses_the_same_bounds() -> None:
    for key, value, message in (("runs", 5000, "must be from 10 to 1000"),
                                ("parity", 0, "must be above 0 and below 1")):
        with pytest.raises(ConfigError, match=message):
            parse_config(CONFIG.replace("runs: 30, parity: 0.02", f"{key}: {value}"))


def test_bounds_hold_for_values_made_in_code() -> None:
    with pytest.raises(SettingError):
        Overrides(runs=5)
    with pytest.raises(SettingError):
        Overrides(parity=1.5)


def test_runs_and_parity_walk_from_the_command_line_to_the_verdict(tmp_path: Path, make_repo) -> None:
    """--runs and --parity become one Overrides, applied once, and reach the rule."""
    repo = make_repo({"benchbot.yml": "version: 1\naa: off\nconfirm: off\nworkloads:\n  - {name: t, run: [true]}\n"})
    out = io.StringIO()
    code = cli.main(["compare", "--repo", str(repo), "--base", "base", "--head", "HEAD", "--quiet",
                     "--runs", "12", "--parity", "3%", "--json", str(tmp_path / "r.json")],
                    out=out, err=io.StringIO())
    assert code == 0
    from benchbot import results

    doc = results.load(tmp_path / "r.json")
    bench = doc.benchmarks[0]
    assert (doc.settings.runs, doc.settings.parity) == (12, 0.03)
    assert (bench.runs, bench.parity, len(bench.phases["ab"].order) // 2) == (12, 0.03, 12)
    if bench.verdict.tolerance is not None:
        assert bench.verdict.tolerance >= 0.03  # parity is the tolerance's least
    assert replace(Overrides(), runs=12).runs == 12
