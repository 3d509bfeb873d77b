"""The /bench comment parser: table-driven, including hostile and odd input."""

from __future__ import annotations

import pytest

from benchbot.config.settings import Overrides
from benchbot.github.command import HELP, BenchCommand, CommandError, is_command, parse


@pytest.mark.parametrize("body, expected", [
    ("/bench", BenchCommand()),
    ("/bench\n", BenchCommand()),
    ("  /bench  ", BenchCommand()),
    ("/bench runs=50", BenchCommand(overrides=Overrides(runs=50))),
    ("/bench runs=10", BenchCommand(overrides=Overrides(runs=10))),
    ("/bench runs=1000", BenchCommand(overrides=Overrides(runs=1000))),
    ("/bench   runs=50    only=sort,sum  ", BenchCommand(overrides=Overrides(runs=50, only=("sort", "sum")))),
    ("/bench\truns=50\u00a0only=sort", BenchCommand(overrides=Overrides(runs=50, only=("sort",)))),  # tab, NBSP
    ("/bench only=sort,sort", BenchCommand(overrides=Overrides(only=("sort",)))),
    ("/bench only=edit_distance,a.b-c", BenchCommand(overrides=Overrides(only=("edit_distance", "a.b-c")))),
    ("/bench only=core/BM_sort/1024,sum", BenchCommand(overrides=Overrides(only=("core/BM_sort/1024", "sum")))),
    ("/bench parity=0.01", BenchCommand(overrides=Overrides(parity=0.01))),
    ("/bench parity=.5", BenchCommand(overrides=Overrides(parity=0.5))),
    ("/bench parity=1%", BenchCommand(overrides=Overrides(parity=0.01))),
    ("/bench confirm=off aa=off", BenchCommand(overrides=Overrides(confirm=False, aa=False))),
    ("/bench confirm=ON aa=yes", BenchCommand(overrides=Overrides(confirm=True, aa=True))),
    ("/bench help", BenchCommand(help=True)),
    ("/bench runs=20\nand some words for the humans; $(rm -rf /)", BenchCommand(overrides=Overrides(runs=20))),
    ("\n\n/bench runs=30", BenchCommand(overrides=Overrides(runs=30))),
])
def test_commands_that_parse(body: str, expected: BenchCommand) -> None:
    assert is_command(body)
    assert parse(body) == expected


@pytest.mark.parametrize("body, problem", [
    ("/bench runs=5", "`runs=5`: must be from 10 to 1000"),
    ("/bench runs=9", "`runs=9`: must be from 10 to 1000"),
    ("/bench runs=1001", "`runs=1001`: must be from 10 to 1000"),
    ("/bench runs=-10", "`runs=-10`: must be a whole number"),
    ("/bench runs=1e2", "`runs=1e2`: must be a whole number"),
    ("/bench runs=\uff15\uff10", "`runs=\uff15\uff10`: must be a whole number"),  # fullwidth
    ("/bench runs=", "`runs=`: must be a whole number"),
    ("/bench runs=50;", "`runs=50;`: must be a whole number"),
    ("/bench parity=0", "`parity=0`: must be above 0 and below 1"),
    ("/bench parity=1", "`parity=1`: must be above 0 and below 1"),
    ("/bench parity=nan", "`parity=nan`: must be a fraction"),
    ("/bench parity=-0.1", "`parity=-0.1`: must be a fraction"),
    ("/bench confirm=maybe", "`confirm=maybe`: must be on or off"),
    ("/bench only=", "`only=`: must be workload or suite names"),
    ("/bench only=a,,b", "`only=a,,b`: must be workload or suite names"),
    ("/bench only=core/../x", "`only=core/../x`: must be workload or suite names"),
    ("/bench only=../etc", "`only=../etc`: must be workload or suite names"),
    ("/bench colour=blue", "unknown option `colour`"),
    ("/bench RUNS=50", "unknown option `RUNS`"),
    ("/bench runs=10 runs=20", "`runs` is given twice"),
    ("/bench please", "`please` is not an option"),
    ("/bench help runs=10", "`help` is not an option"),
    ("/bench $(touch /tmp/pwned)", "`$(touch` is not an option"),
    ("/bench `id`", "`` `id` `` is not an option"),
    ("/bench runs=50 && curl evil", "`&&` is not an option"),
    ("/bench only=sort|sh", "`only=sort|sh`: must be workload or suite names"),
    ("/bench runs=10\x00", "`runs=10?`: must be a whole number"),
])
def test_commands_that_are_refused(body: str, problem: str) -> None:
    with pytest.raises(CommandError) as exc:
        parse(body)
    assert problem in exc.value.problems[0], exc.value.problems


@pytest.mark.parametrize("option", ["runs", "budget", "max_runs", "only", "parity", "confirm",
                                    "aa", "sha"])
@pytest.mark.parametrize("hostile", [
    "[docs](https://evil.example/x)", "@org/security-team", "</details><img src=x>",
    "<!--", "#123", "**bold**", "1" * 5000 + ";",
])
def test_a_refused_value_is_quoted_only_inside_backticks(option: str, hostile: str) -> None:
    """Whatever a commenter writes comes back in the reply only as a shortened code span:
    never as a link, a mention, a reference or HTML."""
    with pytest.raises(CommandError) as exc:
        parse(f"/bench {option}={hostile}")
    for problem in exc.value.problems:
        outside = "".join(problem.split("`")[0::2])  # the text outside code spans
        assert not any(bit in outside for bit in ("](", "@", "<", "#", "**", "11111")), problem
        assert len(problem) < 300


def test_max_runs_and_a_budget_combine() -> None:
    command = parse("/bench budget=30m max_runs=400 only=sort")
    assert command.overrides == Overrides(budget=1800.0, max_runs=400, only=("sort",))
    assert command.describe() == "budget=30m max_runs=400 only=sort"


def test_every_problem_is_listed() -> None:
    with pytest.raises(CommandError) as exc:
        parse("/bench runs=5 colour=blue; touch /tmp/x")
    assert len(exc.value.problems) == 4  # runs, colour, touch, /tmp/x


def test_a_long_hostile_token_is_shortened_in_the_reply() -> None:
    with pytest.raises(CommandError) as exc:
        parse("/bench " + "x" * 500)
    assert len(exc.value.problems[0]) < 120


@pytest.mark.parametrize("body", [
    "", None, "bench", "/benchmark", "/benchmark runs=10", "/bench-it", "please /bench",
    "> /bench", "`/bench`", "/Bench", "\uff0fbench",  # fullwidth solidus
])
def test_not_a_command(body: str | None) -> None:
    assert not is_command(body)


def test_describe_round_trips() -> None:
    command = parse("/bench runs=50 only=sort,sum parity=0.01 confirm=off aa=on")
    assert command.describe() == "runs=50 only=sort,sum parity=0.01 confirm=off aa=on"
    assert parse(f"/bench {command.describe()}") == command


def test_help_names_every_option() -> None:
    for option in ("runs=N", "budget=20m", "max_runs=N", "only=a,b", "parity=", "confirm=off",
                   "aa=off", "/bench help"):
        assert option in HELP


@pytest.mark.parametrize("body, expected", [
    ("/bench all", BenchCommand(overrides=Overrides(all=True))),
    ("/bench all only=sort runs=20", BenchCommand(overrides=Overrides(all=True, only=("sort",), runs=20))),
    ("/bench budget=20m all", BenchCommand(overrides=Overrides(all=True, budget=1200.0))),
])
def test_all_is_a_bare_word(body: str, expected: BenchCommand) -> None:
    assert parse(body) == expected
    assert parse(f"/bench {expected.describe()}") == expected
    assert expected.describe().split()[0] == "all"


@pytest.mark.parametrize("body, problem", [
    ("/bench all all", "`all` is given twice"),
    ("/bench all=on", "unknown option `all`"),
    ("/bench ALL", "`ALL` is not an option"),
    ("/bench alll", "`alll` is not an option"),
])
def test_all_takes_no_value_and_no_other_spelling(body: str, problem: str) -> None:
    with pytest.raises(CommandError) as info:
        parse(body)
    assert any(problem in p for p in info.value.problems), info.value.problems


def test_help_names_all() -> None:
    assert "/bench all " in HELP and "paths:" in HELP


@pytest.mark.parametrize("body, expected", [
    ("/bench bisect only=sort", BenchCommand(bisect=True, overrides=Overrides(only=("sort",)))),
    ("/bench only=sort bisect", BenchCommand(bisect=True, overrides=Overrides(only=("sort",)))),
    ("/bench bisect only=sort budget=1h", BenchCommand(
        bisect=True, overrides=Overrides(only=("sort",), budget=3600.0))),
    ("/bench bisect only=sort sha=ABCDEF1", BenchCommand(
        bisect=True, overrides=Overrides(only=("sort",)), sha="abcdef1")),
])
def test_bisect_is_a_bare_word_with_one_workload(body: str, expected: BenchCommand) -> None:
    command = parse(body)
    assert command == expected and command.workload == "sort"
    assert command.describe().startswith("bisect only=sort")
    assert parse(f"/bench {command.describe()}") == command


@pytest.mark.parametrize("body, problems", [
    ("/bench bisect", ["`/bench bisect` needs `only=NAME`"]),
    ("/bench bisect only=a,b", ["`/bench bisect` follows one workload; `only=` names 2"]),
    ("/bench bisect only=a runs=20 parity=0.01", [
        "`runs` does not apply to `/bench bisect` (it takes `only=`, `budget=`, `sha=`, `from=`)",
        "`parity` does not apply to `/bench bisect`"]),
    ("/bench bisect only=a max_runs=50 confirm=off aa=off all", [
        "`max_runs` does not apply", "`confirm` does not apply", "`aa` does not apply",
        "`all` does not apply"]),
    ("/bench bisect bisect only=a", ["`bisect` is given twice"]),
    ("/bench bisect=on only=a", ["unknown option `bisect`"]),
    ("/bench bisect help", ["`help` is not an option"]),
])
def test_bisect_refuses_what_it_cannot_use(body: str, problems: list[str]) -> None:
    with pytest.raises(CommandError) as exc:
        parse(body)
    for problem in problems:
        assert any(problem in p for p in exc.value.problems), exc.value.problems


def test_a_comparison_is_not_a_bisect() -> None:
    command = parse("/bench only=sort")
    assert not command.bisect and command.workload is None
    assert "/bench bisect only=NAME" in HELP


def test_profile_is_a_bare_word_that_profiles_every_workload() -> None:
    from benchbot.github.command import parse

    command = parse("/bench profile only=sort")
    assert command.overrides.profile == "all" and command.overrides.only == ("sort",)
    assert command.describe() == "profile only=sort"
    assert parse("/bench").overrides.profile is None
    with pytest.raises(CommandError, match="given twice"):
        parse("/bench profile profile")
