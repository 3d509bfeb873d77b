"""One settings object, one set of bounds and messages, whatever the settings came from."""

from __future__ import annotations

import argparse
import io
import re
from pathlib import Path

import pytest

from benchbot import cli
from benchbot.config.config import AAConfig, Config
from benchbot.config.load import parse_config
from benchbot.config.settings import (
    Overrides,
    SettingError,
    argparse_type,
    cpu_list,
    duration_words,
    read,
)
from benchbot.core.errors import ConfigError, UsageError
from benchbot.github.command import CommandError, parse
from benchbot.github.env import ActionEnv

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
    assert two.with_overrides(Overrides()) == two


def test_runs_and_parity_reach_every_workload(two: Config) -> None:
    changed = two.with_overrides(Overrides(runs=50, parity=0.05))
    assert [(w.runs, w.parity) for w in changed.workloads] == [(50, 0.05), (50, 0.05)]
    assert [(w.runs, w.parity) for w in two.workloads] == [(30, 0.02), (30, 0.01)]


def test_only_keeps_the_file_s_order(two: Config) -> None:
    assert [w.name for w in two.with_overrides(Overrides(only=("sum", "sort"))).workloads] == ["sort", "sum"]


def test_switches_fail_on_and_seed(two: Config) -> None:
    changed = two.with_overrides(Overrides(confirm=False, aa=False, fail_on=("slower", "invalid"), seed=7))
    assert (changed.confirm, changed.aa, changed.status.fail_on, changed.seed) == (
        False, AAConfig(enabled=False), ("slower", "invalid"), 7)
    assert changed.with_overrides(Overrides(aa=True)).aa.enabled is True


def test_the_later_settings_win_where_they_are_set() -> None:
    inputs = Overrides(runs=40, fail_on=("slower",))
    bench = Overrides(runs=100, only=("sort",))
    assert inputs.over(bench) == Overrides(runs=100, only=("sort",), fail_on=("slower",))


def test_an_unknown_workload_names_the_known_ones(two: Config) -> None:
    with pytest.raises(ConfigError, match=r"only: no workload named 'sorted' .*did you mean 'sort'\?"):
        two.with_overrides(Overrides(only=("sorted",)))


@pytest.mark.parametrize("name, text, value", [
    ("runs", "10", 10), ("runs", "1000", 1000), ("parity", "0.01", 0.01), ("parity", "1%", 0.01),
    ("confirm", "off", False), ("aa", "ON", True), ("only", "a,b,a", ("a", "b")),
    ("fail_on", "invalid,slower", ("slower", "invalid")), ("seed", "42", 42),
])
def test_read(name: str, text: str, value: object) -> None:
    assert read(name, text) == value


BAD = [("runs", "9"), ("runs", "1001"), ("runs", "ten"), ("parity", "0"), ("parity", "1"),
       ("parity", "150%"), ("confirm", "maybe"), ("only", "a;b"), ("fail_on", "worse"),
       ("seed", "-1"), ("runs", "1" * 5000), ("max_runs", "9" * 5000), ("seed", "7" * 5000),
       ("budget", "9" * 5000), ("budget", "\u0661\u0660m"), ("budget", "\uff11\uff10m"),
       ("budget", "0"), ("budget", "25h"), ("max_runs", "5"), ("runs", "\u0661\u0660")]


@pytest.mark.parametrize("name, text", BAD)
def test_one_message_wherever_a_value_comes_from(name: str, text: str) -> None:
    """The command line, a /bench comment and the Action's inputs say the same."""
    with pytest.raises(SettingError) as info:
        read(name, text)
    message = str(info.value).split(", got ")[0]
    with pytest.raises(argparse.ArgumentTypeError) as typed:
        argparse_type(name)(text)
    assert str(typed.value) == str(info.value)
    assert len(str(info.value)) < 300  # a value quoted back is cut short
    if name in ("runs", "only", "parity", "confirm", "aa", "budget", "max_runs"):
        with pytest.raises(CommandError) as bench:
            parse(f"/bench {name}={text}")
        assert message in bench.value.problems[0]
    if name in ("runs", "fail_on", "budget"):
        variable = {"runs": "BENCHBOT_RUNS", "fail_on": "BENCHBOT_FAIL_ON",
                    "budget": "BENCHBOT_BUDGET"}[name]
        env = {"GITHUB_EVENT_NAME": "x", "GITHUB_EVENT_PATH": "x", "GITHUB_REPOSITORY": "o/r",
               "GITHUB_TOKEN": "t", variable: text}
        with pytest.raises(UsageError, match=variable):
            ActionEnv.from_env(env)


def test_runs_and_a_budget_from_one_source_are_refused() -> None:
    """A fixed count and measuring until settled are two designs: asking for both at once
    is a mistake each source names in its own words."""
    with pytest.raises(SettingError, match="runs and budget cannot be given together"):
        Overrides(runs=30, budget=60.0)
    with pytest.raises(SettingError, match="runs and max_runs cannot be given together"):
        Overrides(runs=30, max_runs=100)
    with pytest.raises(CommandError) as bench:
        parse("/bench runs=30 budget=5m")
    assert bench.value.problems == (
        "`runs=` and `budget=` cannot be given together: `runs=` asks for a fixed number of "
        "pairs per phase, `budget=` for measuring each workload until it is settled; give one "
        "of them",)
    err = io.StringIO()
    assert cli.main(["compare", "--base", "a", "--head", "b", "--runs", "30", "--max-runs", "100"],
                    out=io.StringIO(), err=err) == 2
    assert "--runs and --max-runs cannot be given together" in err.getvalue()
    env = {"GITHUB_EVENT_NAME": "x", "GITHUB_EVENT_PATH": "x", "GITHUB_REPOSITORY": "o/r",
           "GITHUB_TOKEN": "t", "BENCHBOT_RUNS": "30", "BENCHBOT_BUDGET": "20m"}
    with pytest.raises(UsageError, match=r"BENCHBOT_RUNS \(input runs\) and BENCHBOT_BUDGET"):
        ActionEnv.from_env(env)


def test_the_later_source_s_design_wins(two: Config) -> None:
    """The Action's input runs=30, then /bench budget=20m: measured until settled within
    20 minutes, and the other way round; the config's runs give way to a budget given over
    it, and a budget in the config to runs given over it."""
    inputs = Overrides(runs=30, fail_on=("slower",))
    assert inputs.over(Overrides(budget=1200.0)) == Overrides(budget=1200.0, fail_on=("slower",))
    assert Overrides(budget=1200.0, max_runs=200).over(Overrides(runs=50)) == Overrides(runs=50)
    sequential = two.with_overrides(Overrides(budget=1200.0))  # the config's defaults say runs: 30
    assert [w.runs for w in sequential.workloads] == [None, None]
    assert sequential.budget_s == 1200.0
    assert [w.runs for w in two.with_overrides(Overrides(max_runs=200)).workloads] == [None, None]
    assert [w.runs for w in two.with_overrides(Overrides(parity=0.05)).workloads] == [30, 30]


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


def _imports() -> dict[str, set[str]]:
    """Each benchbot module's imports of benchbot modules, wherever written (in functions
    and under TYPE_CHECKING too)."""
    import ast

    root = Path(__file__).resolve().parents[2] / "src" / "benchbot"
    graph: dict[str, set[str]] = {}
    for path in root.rglob("*.py"):
        parts = path.relative_to(root.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("benchbot"):
                found.add(node.module)
                found.update(f"{node.module}.{a.name}" for a in node.names)
            elif isinstance(node, ast.Import):
                found.update(a.name for a in node.names if a.name.startswith("benchbot"))
        graph[name] = found
    return {name: {m for m in found if m in graph and m != name} for name, found in graph.items()}


def _reaches(graph: dict[str, set[str]], start: str) -> set[str]:
    seen: set[str] = set()
    todo = [start]
    while todo:
        for module in graph[todo.pop()] - seen:
            seen.add(module)
            todo.append(module)
    return seen


def test_settings_is_a_leaf_that_config_uses() -> None:
    """settings and the YAML-node layer import nothing that leads back to config, not even
    inside a function; config uses them."""
    graph = _imports()
    assert _reaches(graph, "benchbot.config.settings") <= {"benchbot.core.model", "benchbot.core.codec"}
    assert "benchbot.config.config" not in _reaches(graph, "benchbot.config.yamlnode")
    assert {"benchbot.config.settings", "benchbot.config.yamlnode"} <= graph["benchbot.config.config"]
    assert "benchbot.config.config" not in _reaches(graph, "benchbot.config.config")


@pytest.mark.parametrize("text, value", [("on", True), ("OFF", False), ("Yes", True),
                                         ("no", False), ("true", True), ("False", False)])
def test_one_switch_parser_for_comments_config_and_inputs(text: str, value: bool) -> None:
    assert read("confirm", text) is value
    assert parse_config(f"version: 1\nconfirm: '{text}'\nworkloads: [{{name: a, run: a}}]\n"
                        ).confirm is value
    env = {"GITHUB_EVENT_NAME": "x", "GITHUB_EVENT_PATH": "x", "GITHUB_REPOSITORY": "o/r",
           "GITHUB_TOKEN": "t", "BENCHBOT_COMMENT": text}
    assert ActionEnv.from_env(env).comment is value


def test_an_input_may_also_say_1_or_0_but_a_comment_may_not() -> None:
    """Workflows often pass 1/0 to an action; /bench and the config keep to on/off words."""
    env = {"GITHUB_EVENT_NAME": "x", "GITHUB_EVENT_PATH": "x", "GITHUB_REPOSITORY": "o/r",
           "GITHUB_TOKEN": "t"}
    assert ActionEnv.from_env({**env, "BENCHBOT_COMMENT": "1"}).comment is True
    assert ActionEnv.from_env({**env, "BENCHBOT_COMMENT": "0"}).comment is False
    with pytest.raises(UsageError, match=r"BENCHBOT_COMMENT \(input comment\): must be on or off, "
                                         r"got '2'"):
        ActionEnv.from_env({**env, "BENCHBOT_COMMENT": "2"})
    with pytest.raises(SettingError, match="must be on or off, got '1'"):
        read("confirm", "1")
    with pytest.raises(ConfigError, match=":2: confirm: must be on or off"):
        parse_config("version: 1\nconfirm: '1'\nworkloads: [{name: a, run: a}]\n")


@pytest.mark.parametrize("text, cpus", [("3", (3,)), ("0,2-3", (0, 2, 3)), (" 2-3 , 0 ", (0, 2, 3)),
                                        ("1,1,0", (0, 1))])
def test_a_cpu_list_is_read_once_for_every_source(text: str, cpus: tuple[int, ...]) -> None:
    assert cpu_list(text) == cpus
    assert parse_config(f"version: 1\nworkloads: [{{name: a, run: a, pin: '{text}'}}]\n"
                        ).workloads[0].pin == cpus


@pytest.mark.parametrize("text, words", [("0,a", "'a' is not a CPU number or a range like 2-3"),
                                         ("3-1", "range '3-1' runs backwards"),
                                         ("4096", "CPU numbers go up to 4095"),
                                         ("", "'' is not a CPU number")])
def test_a_bad_cpu_list_is_named(text: str, words: str) -> None:
    with pytest.raises(SettingError, match=re.escape(f"bad CPU list {text!r}: {words}")):
        cpu_list(text)


@pytest.mark.parametrize("seconds, words", [(600.0, "10m"), (90.0, "1m30s"), (2.5, "2.5s"),
                                            (3600.0, "1h"), (5400.0, "1h30m")])
def test_a_duration_written_is_read_back(seconds: float, words: str) -> None:
    assert duration_words(seconds) == words
    assert read("budget", words) == seconds


def test_profile_reads_called_all_or_off_from_every_source() -> None:
    from benchbot.config.load import parse_config_bytes

    assert read("profile", "ALL") == "all" and read("profile", " off ") == "off"
    with pytest.raises(SettingError, match="must be called"):
        read("profile", "sometimes")
    args = cli._parser().parse_args(["compare", "--base", "a", "--head", "b", "--profile"])
    assert cli.overrides(args).profile == "all"
    args = cli._parser().parse_args(["compare", "--base", "a", "--head", "b", "--no-profile"])
    assert cli.overrides(args).profile == "off"
    env = ActionEnv.from_env({"GITHUB_EVENT_NAME": "x", "GITHUB_EVENT_PATH": "x",
                              "GITHUB_REPOSITORY": "o/r", "GITHUB_TOKEN": "t",
                              "BENCHBOT_PROFILE": "off"})
    assert env.overrides.profile == "off"
    config = parse_config_bytes(b"version: 1\nworkloads:\n  - {name: a, run: ./a}\n", "x.yml")
    assert config.profile == "called"
    assert config.with_overrides(Overrides(profile="off")).profile == "off"
    assert Overrides(profile="all").words() == "profile"
