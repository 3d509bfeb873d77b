"""benchbot.yml: parsing into dataclasses, every mistake named by file, line and key, and the schema."""

from __future__ import annotations

import json
import re
import textwrap
from collections.abc import Callable, Iterator
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from benchbot.config import keys as cfg
from benchbot.config import schemagen
from benchbot.config.config import (
    DEFAULT_PATHS,
    AAConfig,
    Config,
    GithubConfig,
    StatusConfig,
    WorkloadConfig,
)
from benchbot.config.load import find_config, load_config, parse_config
from benchbot.config.settings import UNITS_S
from benchbot.config.yamlnode import parse_duration
from benchbot.core.errors import ConfigError

REPO = Path(__file__).resolve().parents[2]
PATH = "conf/bench.yml"  # not the default name, so messages are seen to carry the real one

# The configuration example of the product's interface description, verbatim.
INTERFACES_EXAMPLE = r"""version: 1
build: make -C kernels          # run once in each worktree; no build: skip
defaults:
  runs: 30
  parity: 0.02
  timeout: 60s                  # per run
workloads:
  - name: sort
    run: ["kernels/build/sort", "1000000"]   # argv list, or a string split like a shell would (no shell)
  - name: sum
    run: kernels/build/sum
    metric: reported            # wall (default) | reported
    pattern: 'elapsed_ns=(\d+)' # with metric: reported; one group, integer ns
    expect: 'checksum=(\S+)'    # this output must be identical in every run of both arms
    parity: 0.01
"""

# The bundled kernels as a user would configure them (kernels/*.c print these lines).
KERNELS_EXAMPLE = r"""version: 1
build: make -C kernels
defaults:
  runs: 30
  warmup: 1
  timeout: 60s
workloads:
  - name: sort
    run: kernels/build/sort 1000000
    expect: 'checksum=(\S+)'
  - name: sum
    run: [kernels/build/sum, 20]
    metric: reported
    pattern: 'elapsed_ns=(\d+)'
    expect: 'checksum=(\S+)'
  - name: edit_distance
    run: kernels/build/edit_distance
    expect: 'checksum=(\S+)'
  - name: copy
    run: kernels/build/copy 16 16
    expect: 'checksum=(\S+)'
    floor: 50us
  - name: bfs
    run: kernels/build/bfs
    expect: 'checksum=(\S+)'
    env: {OMP_NUM_THREADS: 1}
aa: {runs: 20, abort_fraction: 0.25}
confirm: on
status:
  fail_on: [slower, invalid]
"""


def _repo_examples() -> list[Any]:
    """Config files shipped in the repository (the kernels' example) and the yaml blocks of
    the README and docs/ that hold a whole config."""
    found: list[Any] = []
    for rel in ("kernels/benchbot.yml", "src/benchbot/kernels/benchbot.yml", *DEFAULT_PATHS):
        if (REPO / rel).is_file():
            found.append(pytest.param((REPO / rel).read_text(encoding="utf-8"), id=rel))
    for page in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]:
        blocks = re.findall(r"```ya?ml\n(.*?)```", page.read_text(encoding="utf-8"), re.DOTALL)
        name = page.relative_to(REPO)
        found += [
            pytest.param(b, id=f"{name}#{i}") for i, b in enumerate(blocks) if "workloads:" in b
        ]
    return found or [pytest.param("", marks=pytest.mark.skip("no example files in the repo yet"))]


def dedent(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


@pytest.fixture
def make_config() -> Callable[..., Config]:
    """Factory: a valid one-workload config, with top-level keys or the workload's keys overridden.

    A key of config.TOP_KEYS goes to the top level; any other to the workload. A value of
    None removes the key.
    """

    def make(**over: Any) -> Config:
        doc: dict[str, Any] = {"version": 1}
        workload: dict[str, Any] = {"name": "w", "run": ["prog", "arg"]}
        for key, value in over.items():
            (doc if key in cfg.TOP_KEYS else workload)[key] = value
        doc.setdefault("workloads", [workload])
        doc = {k: v for k, v in doc.items() if v is not None}
        doc["workloads"] = [{k: v for k, v in w.items() if v is not None} for w in doc["workloads"]]
        return parse_config(yaml.safe_dump(doc, sort_keys=False), path=PATH)

    return make


def config_error(text: str) -> str:
    with pytest.raises(ConfigError) as info:
        parse_config(dedent(text), path=PATH)
    message = str(info.value)
    assert "\n" not in message
    return message


# --- the spec's example ---------------------------------------------------------------------


def test_interfaces_example_parses_to_the_expected_dataclasses() -> None:
    assert parse_config(INTERFACES_EXAMPLE) == Config(
        path="benchbot.yml",
        build="make -C kernels",
        workloads=(
            WorkloadConfig(
                name="sort", run=("kernels/build/sort", "1000000"), runs=30, parity=0.02,
                timeout_s=60.0, line=8,
            ),
            WorkloadConfig(
                name="sum", run=("kernels/build/sum",), runs=30, parity=0.01, timeout_s=60.0,
                metric="reported", pattern=r"elapsed_ns=(\d+)", expect=r"checksum=(\S+)", line=10,
            ),
        ),
    )  # fmt: skip


def test_defaults_of_the_dataclasses() -> None:
    config = parse_config("version: 1\nworkloads: [{name: a, run: a}]\n")
    assert config.aa == AAConfig(enabled=True, runs=None, abort_fraction=0.25)
    assert config.status == StatusConfig(fail_on=("slower",), name="benchbot")
    assert config.github == GithubConfig(forks=False, fork_label=None, comment=True)
    assert (config.confirm, config.alpha, config.base, config.seed, config.build) == (
        True, 0.05, "merge-base", None, None,
    )  # fmt: skip
    (w,) = config.workloads
    assert (w.runs, w.warmup, w.parity, w.timeout_s, w.order, w.metric, w.better) == (
        None, 1, 0.02, 60.0, "alternate", "wall", "lower",
    )  # fmt: skip
    assert (w.max_runs, w.stdout, config.budget_s) == (1000, "capture", 600.0)


def test_kernels_example_parses() -> None:
    config = parse_config(KERNELS_EXAMPLE)
    assert [w.name for w in config.workloads] == ["sort", "sum", "edit_distance", "copy", "bfs"]
    assert config.workloads[1].run == ("kernels/build/sum", "20")
    assert config.workloads[3].floor_ns == pytest.approx(50_000)
    assert config.workloads[4].env == (("OMP_NUM_THREADS", "1"),)
    assert config.status.fail_on == ("slower", "invalid")
    assert config.aa == AAConfig(runs=20)


# --- values ---------------------------------------------------------------------------------


def test_workload_settings_override_defaults() -> None:
    config = parse_config(
        dedent("""
            version: 1
            defaults: {runs: 40, warmup: 3, order: random, env: {A: x}, pin: 1}
            workloads:
              - {name: a, run: a}
              - {name: b, run: b, runs: 12, env: {B: y}, pin: null}
        """)
    )
    a, b = config.workloads
    assert (a.runs, a.warmup, a.order, a.env, a.pin) == (40, 3, "random", (("A", "x"),), (1,))
    assert (b.runs, b.warmup, b.order, b.env, b.pin) == (12, 3, "random", (("B", "y"),), None)


@pytest.mark.parametrize(
    ("run", "argv"),
    [
        ("prog", ("prog",)),
        ("prog '-x y' \"a b\" c\\ d", ("prog", "-x y", "a b", "c d")),
        ("prog $HOME; rm -rf /", ("prog", "$HOME;", "rm", "-rf", "/")),  # no shell, ever
        ('["prog", 1000000, 1.50, on]', ("prog", "1000000", "1.50", "on")),  # as written
        ("[prog, 'a b']", ("prog", "a b")),
    ],
)
def test_run_becomes_an_argv(run: str, argv: tuple[str, ...]) -> None:
    config = parse_config(f"version: 1\nworkloads:\n  - name: a\n    run: {run}\n")
    assert config.workloads[0].run == argv


@pytest.mark.parametrize(
    ("pin", "cpus"),
    [
        ("3", (3,)),
        ("'0,2-3'", (0, 2, 3)),
        ("[2, 0]", (0, 2)),
        ("'1-1, 1'", (1,)),
        ("0-2", (0, 1, 2)),
    ],
)
def test_pin_forms(pin: str, cpus: tuple[int, ...]) -> None:
    config = parse_config(f"version: 1\nworkloads: [{{name: a, run: a, pin: {pin}}}]\n")
    assert config.workloads[0].pin == cpus


def test_env_values_are_passed_as_written(make_config: Callable[..., Config]) -> None:
    config = parse_config(
        "version: 1\nworkloads:\n  - name: a\n    run: a\n"
        "    env: {THREADS: 4, RATIO: 1.50, FLAG: on, OCT: 010, S: 'x y', EMPTY: ''}\n"
    )
    assert config.workloads[0].env == (
        ("THREADS", "4"), ("RATIO", "1.50"), ("FLAG", "on"), ("OCT", "010"), ("S", "x y"),
        ("EMPTY", ""),
    )  # fmt: skip


@pytest.mark.parametrize(
    ("over", "floor_ns", "effective"),
    [
        ({}, None, 25_000.0),
        ({"metric": "reported", "pattern": r"t=(\d+)"}, None, 1_000.0),
        ({"floor": "100us"}, 100_000.0, 100_000.0),
        ({"floor": 0}, 0.0, 0.0),
        ({"floor": "2ms", "metric": "reported", "pattern": r"t=(\d+)"}, 2e6, 2e6),
    ],
)
def test_floor(
    make_config: Callable[..., Config],
    over: dict[str, Any],
    floor_ns: float | None,
    effective: float,
) -> None:
    (w,) = make_config(**over).workloads
    assert w.floor_ns == (None if floor_ns is None else pytest.approx(floor_ns))
    assert w.effective_floor_ns == pytest.approx(effective)


@pytest.mark.parametrize(
    ("over", "field", "expected"),
    [
        ({"build": "make -j4 && make check"}, "build", "make -j4 && make check"),
        ({"build": ["make", "-j", 4]}, "build", ("make", "-j", "4")),
        ({"build": None}, "build", None),
        ({"aa": "off"}, "aa", AAConfig(enabled=False)),
        ({"aa": False}, "aa", AAConfig(enabled=False)),
        ({"aa": {"runs": 15, "abort_fraction": 0.5}}, "aa", AAConfig(runs=15, abort_fraction=0.5)),
        ({"aa": {"enabled": "no"}}, "aa", AAConfig(enabled=False)),
        ({"confirm": "off"}, "confirm", False),
        ({"alpha": 0.01}, "alpha", 0.01),
        ({"base": "tip"}, "base", "tip"),
        ({"seed": 42}, "seed", 42),
        (
            {"status": {"fail_on": "inconclusive"}},
            "status",
            StatusConfig(fail_on=("inconclusive",)),
        ),
        ({"status": {"fail_on": []}}, "status", StatusConfig(fail_on=())),
        (
            {"status": {"fail_on": ["slower", "invalid", "slower"], "name": "perf"}},
            "status",
            StatusConfig(fail_on=("slower", "invalid"), name="perf"),
        ),
        (
            {"github": {"forks": True, "fork_label": "safe to bench", "comment": False}},
            "github",
            GithubConfig(forks=True, fork_label="safe to bench", comment=False),
        ),
    ],
)
def test_top_level_values(
    make_config: Callable[..., Config], over: dict[str, Any], field: str, expected: Any
) -> None:
    assert getattr(make_config(**over), field) == expected


@pytest.mark.parametrize("word", ["on", "On", "yes", "true", "'on'", '"yes"', "True"])
def test_switches_read_yaml_11_words_and_their_quoted_forms(word: str) -> None:
    text = f"version: 1\nconfirm: {word}\ngithub: {{forks: {word}}}\nworkloads: [{{name: a, run: a}}]\n"
    config = parse_config(text)
    assert config.confirm is True and config.github.forks is True


def test_builds_run_at_once_unless_the_config_says_off() -> None:
    assert parse_config("version: 1\nworkloads: [{name: a, run: a}]\n").parallel_builds is True
    text = "version: 1\nparallel_builds: off\nworkloads: [{name: a, run: a}]\n"
    assert parse_config(text).parallel_builds is False


def test_merge_keys_and_anchors() -> None:
    config = parse_config(
        dedent("""
            version: 1
            workloads:
              - &common {name: a, run: a, runs: 12, parity: 0.05}
              - <<: *common
                name: b
        """)
    )
    assert [(w.name, w.runs, w.parity) for w in config.workloads] == [
        ("a", 12, 0.05), ("b", 12, 0.05),
    ]  # fmt: skip


# --- errors: file, line and key -------------------------------------------------------------

W = "version: 1\nworkloads:\n  - name: a\n    run: prog\n"  # a valid head; a workload key goes on line 5

ERRORS = [
    # (id, text, line, key, words in the message)
    ("runs-low", W + "    runs: 5\n", 5, "workloads[0].runs", "must be from 10 to 1000 (fewer than 10 runs a side are refused; more would hold the runner too long), got 5"),
    ("runs-low-defaults", "version: 1\ndefaults:\n  runs: 9\nworkloads: [{name: a, run: a}]\n", 3, "defaults.runs", "must be from 10 to 1000"),
    ("runs-type", W + "    runs: thirty\n", 5, "workloads[0].runs", "must be an integer, got a string ('thirty')"),
    ("runs-float", W + "    runs: 30.0\n", 5, "workloads[0].runs", "must be an integer"),
    ("runs-bool", W + "    runs: yes\n", 5, "workloads[0].runs", "must be an integer, got a boolean"),
    ("warmup-negative", W + "    warmup: -1\n", 5, "workloads[0].warmup", "at least 0"),
    ("parity-high", W + "    parity: 1\n", 5, "workloads[0].parity", "below 1"),
    ("parity-negative", W + "    parity: -0.01\n", 5, "workloads[0].parity", "above 0"),
    ("parity-zero", W + "    parity: 0\n", 5, "workloads[0].parity", "above 0"),
    ("parity-list", W + "    parity: [1]\n", 5, "workloads[0].parity", "must be a number, got a list"),
    ("parity-nan", W + "    parity: .nan\n", 5, "workloads[0].parity", "finite"),
    ("unknown-key", W + "    parityy: 0.01\n", 5, "workloads[0].parityy", "unknown key; did you mean 'parity'?"),
    ("unknown-key-no-match", W + "    zzz: 1\n", 5, "workloads[0].zzz", "unknown key; known keys: name, run, runs"),
    ("unknown-top-key", "version: 1\nworkload: []\n", 2, "workload", "did you mean 'workloads'?"),
    ("unknown-defaults-key", "version: 1\ndefaults:\n  name: x\nworkloads: [{name: a, run: a}]\n", 3, "defaults.name", "unknown key"),
    ("timeout-unit", W + "    timeout: 10 parsecs\n", 5, "workloads[0].timeout", "not a duration: write a number and a unit (ns, us, ms, s, m, h), e.g. 500ms, 60s, 1m30s, got '10 parsecs'"),
    ("timeout-zero", W + "    timeout: 0s\n", 5, "workloads[0].timeout", "longer than 0"),
    ("timeout-list", W + "    timeout: [1]\n", 5, "workloads[0].timeout", "must be a duration"),
    ("floor-negative", W + "    floor: -1\n", 5, "workloads[0].floor", "0 or more"),
    ("order", W + "    order: alternating\n", 5, "workloads[0].order", "must be one of alternate | random, got a string ('alternating'); did you mean 'alternate'?"),
    ("metric", W + "    metric: cpu\n", 5, "workloads[0].metric", "wall | reported"),
    ("better", W + "    better: faster\n", 5, "workloads[0].better", "lower | higher"),
    ("regex-broken", W + "    expect: 'x=(\\d+'\n", 5, "workloads[0].expect", "not a valid regular expression: missing ), unterminated subpattern"),
    ("regex-no-group", W + "    expect: 'checksum=\\S+'\n", 5, "workloads[0].expect", "exactly one group (...) around the value to capture, has 0"),
    ("regex-two-groups", W + "    metric: reported\n    pattern: '(a)=(\\d+)'\n", 6, "workloads[0].pattern", "has 2; make other groups non-capturing with (?:...)"),
    ("reported-no-pattern", W + "    metric: reported\n", 5, "workloads[0].metric", "metric: reported needs a pattern"),
    ("reported-null-pattern", W + "    metric: reported\n    pattern: null\n", 6, "workloads[0].pattern", "needs a pattern"),
    ("pattern-without-reported", W + "    pattern: 't=(\\d+)'\n", 5, "workloads[0].pattern", "only read with metric: reported"),
    ("pattern-in-defaults-wall-here", "version: 1\ndefaults:\n  metric: reported\n  pattern: 't=(\\d+)'\nworkloads:\n  - name: a\n    run: a\n    metric: wall\n", 8, "workloads[0].metric", "this workload's metric is wall"),
    ("higher-with-wall", W + "    better: higher\n", 5, "workloads[0].better", "better: higher is only for a value the workload reports"),
    ("no-run", "version: 1\nworkloads:\n  - name: a\n    runs: 10\n", 3, "workloads[0].run", "missing"),
    ("no-name", "version: 1\nworkloads:\n  - run: a\n", 3, "workloads[0].name", "missing"),
    ("run-empty-string", "version: 1\nworkloads:\n  - name: a\n    run: ''\n", 4, "workloads[0].run", "must not be empty"),
    ("run-empty-list", "version: 1\nworkloads:\n  - name: a\n    run: []\n", 4, "workloads[0].run", "is empty"),
    ("run-null", "version: 1\nworkloads:\n  - name: a\n    run:\n", 4, "workloads[0].run", "is empty"),
    ("run-quote", "version: 1\nworkloads:\n  - name: a\n    run: prog 'a b\n", 4, "workloads[0].run", "cannot split into arguments: No closing quotation"),
    ("run-mapping", "version: 1\nworkloads:\n  - name: a\n    run: {a: 1}\n", 4, "workloads[0].run", "must be a string, got a mapping"),
    ("run-null-arg", "version: 1\nworkloads:\n  - name: a\n    run: [a, null]\n", 4, "workloads[0].run[1]", "must be a string"),
    ("duplicate-name", "version: 1\nworkloads:\n  - name: a\n    run: a\n  - name: b\n    run: b\n  - name: a\n    run: c\n", 7, "workloads[2].name", "duplicate workload name 'a' (first on line 3, again on line 7)"),
    ("bad-name", "version: 1\nworkloads:\n  - name: my bench\n    run: a\n", 3, "workloads[0].name", "'my bench' may only hold letters, digits"),
    ("bad-name-comma", "version: 1\nworkloads:\n  - name: 'a,b'\n    run: a\n", 3, "workloads[0].name", "may only hold"),
    ("pin-word", W + "    pin: 0,a\n", 5, "workloads[0].pin", "bad CPU list '0,a': 'a' is not a CPU number or a range like 2-3"),
    ("pin-backwards", W + "    pin: 3-1\n", 5, "workloads[0].pin", "range '3-1' runs backwards"),
    ("pin-negative", W + "    pin: [0, -1]\n", 5, "workloads[0].pin[1]", "at least 0"),
    ("pin-empty-list", W + "    pin: []\n", 5, "workloads[0].pin", "names no CPU"),
    ("pin-bool", W + "    pin: on\n", 5, "workloads[0].pin", "must be a CPU list"),
    ("env-list", W + "    env: [A]\n", 5, "workloads[0].env", "must be a mapping, got a list"),
    ("env-null", W + "    env:\n      A: 1\n      B:\n", 7, "workloads[0].env.B", "must be a string, got nothing (null)"),
    ("env-nested", W + "    env:\n      A: {b: 1}\n", 6, "workloads[0].env.A", "must be a string, got a mapping"),
    ("env-equals", W + "    env: {'A=B': 1}\n", 5, "workloads[0].env.A=B", "not a valid environment variable name"),
    ("cwd-absolute", W + "    cwd: /tmp\n", 5, "workloads[0].cwd", "inside the repository"),
    ("cwd-escapes", W + "    cwd: sub/../../x\n", 5, "workloads[0].cwd", "inside the repository"),
    ("version-missing", "workloads: [{name: a, run: a}]\n", 1, "version", "missing; start the file with 'version: 1'"),
    ("version-2", "# comment\nversion: 2\nfuture: x\n", 2, "version", "this benchbot reads version 1, got an integer ('2')"),
    ("version-string", "version: '1'\n", 1, "version", "got a string ('1')"),
    ("version-float", "version: 1.0\n", 1, "version", "got a number ('1.0')"),
    ("version-true", "version: true\n", 1, "version", "got a boolean"),
    ("workloads-missing", "version: 1\nbuild: make\n", 1, "workloads", "missing"),
    ("workloads-empty", "version: 1\nworkloads: []\n", 2, "workloads", "is empty"),
    ("workloads-null", "version: 1\nworkloads:\n", 2, "workloads", "is empty"),
    ("workloads-mapping", "version: 1\nworkloads:\n  a: b\n", 3, "workloads", "must be a list, got a mapping"),
    ("workload-not-mapping", "version: 1\nworkloads:\n  - prog\n", 3, "workloads[0]", "must be a mapping, got a string ('prog')"),
    ("duplicate-top-key", "version: 1\nconfirm: on\nworkloads: [{name: a, run: a}]\nconfirm: off\n", 4, "confirm", "duplicate key (first given on line 2); YAML would silently keep the last one"),
    ("duplicate-workload-key", W + "    run: other\n", 5, "workloads[0].run", "duplicate key (first given on line 4)"),
    ("duplicate-defaults-key", "version: 1\ndefaults:\n  runs: 10\n  runs: 20\nworkloads: [{name: a, run: a}]\n", 4, "defaults.runs", "duplicate key (first given on line 3)"),
    ("duplicate-env-key", W + "    env:\n      A: 1\n      A: 2\n", 7, "workloads[0].env.A", "duplicate key (first given on line 6)"),
    ("top-not-mapping", "- a\n- b\n", 1, "(top level)", "must be a mapping, got a list"),
    ("empty-file", "# nothing here\n", 1, "version", "the file is empty"),
    ("aa-word", "version: 1\naa: maybe\nworkloads: [{name: a, run: a}]\n", 2, "aa", "must be on, off or a mapping"),
    ("aa-unknown", "version: 1\naa:\n  run: 20\nworkloads: [{name: a, run: a}]\n", 3, "aa.run", "did you mean 'runs'?"),
    ("aa-runs-low", "version: 1\naa: {runs: 4}\nworkloads: [{name: a, run: a}]\n", 2, "aa.runs", "must be from 10 to 1000"),
    ("aa-fraction", "version: 1\naa:\n  abort_fraction: 2\nworkloads: [{name: a, run: a}]\n", 3, "aa.abort_fraction", "at most 1"),
    ("confirm-word", "version: 1\nconfirm: maybe\nworkloads: [{name: a, run: a}]\n", 2, "confirm", "must be on or off (true/false), got a string ('maybe')"),
    ("parallel-builds-word", "version: 1\nworkloads: [{name: a, run: a}]\nparallel_builds: 2\n", 3, "parallel_builds", "must be on or off (true/false), got an integer"),
    ("alpha-zero", "version: 1\nalpha: 0\nworkloads: [{name: a, run: a}]\n", 2, "alpha", "above 0 and below 1"),
    ("alpha-one", "version: 1\nalpha: 1\nworkloads: [{name: a, run: a}]\n", 2, "alpha", "above 0 and below 1"),
    ("base", "version: 1\nbase: head\nworkloads: [{name: a, run: a}]\n", 2, "base", "merge-base | tip"),
    ("seed-negative", "version: 1\nseed: -1\nworkloads: [{name: a, run: a}]\n", 2, "seed", "at least 0"),
    ("seed-date", "version: 1\nseed: 2001-12-14\nworkloads: [{name: a, run: a}]\n", 2, "seed", "must be an integer, got a date ('2001-12-14')"),
    ("seed-float", "version: 1\nseed: 1.5\nworkloads: [{name: a, run: a}]\n", 2, "seed", "must be an integer"),
    ("fail-on-typo", "version: 1\nstatus:\n  fail_on: [slower, slowr]\nworkloads: [{name: a, run: a}]\n", 3, "status.fail_on[1]", "did you mean 'slower'?"),
    ("fail-on-word", "version: 1\nstatus:\n  fail_on: worse\nworkloads: [{name: a, run: a}]\n", 3, "status.fail_on", "slower | faster | level | inconclusive | invalid"),
    ("status-name-empty", "version: 1\nstatus:\n  name: ''\nworkloads: [{name: a, run: a}]\n", 3, "status.name", "must not be empty"),
    ("status-not-mapping", "version: 1\nstatus: on\nworkloads: [{name: a, run: a}]\n", 2, "status", "must be a mapping, got a boolean ('on')"),
    ("github-forks", "version: 1\ngithub:\n  forks: sometimes\nworkloads: [{name: a, run: a}]\n", 3, "github.forks", "must be on or off"),
    ("github-unknown", "version: 1\ngithub:\n  fork_labels: x\nworkloads: [{name: a, run: a}]\n", 3, "github.fork_labels", "did you mean 'fork_label'?"),
    ("build-network-word", "version: 1\nsandbox:\n  build_network: lan\nworkloads: [{name: a, run: a}]\n", 3, "sandbox.build_network", "must be on or off (true/false), got a string ('lan')"),
    ("build-network-typo", "version: 1\nsandbox:\n  build_networks: on\nworkloads: [{name: a, run: a}]\n", 3, "sandbox.build_networks", "did you mean 'build_network'?"),
    ("build-empty-list", "version: 1\nbuild: []\nworkloads: [{name: a, run: a}]\n", 2, "build", "is empty"),
    ("build-empty-string", "version: 1\nbuild: ' '\nworkloads: [{name: a, run: a}]\n", 2, "build", "must not be empty"),
    ("build-number", "version: 1\nbuild: 3\nworkloads: [{name: a, run: a}]\n", 2, "build", "must be a string, got an integer ('3')"),
    ("complex-key", "version: 1\n? [a, b]\n: c\n", 2, "(top level)", "keys must be plain names"),
    ("weight-zero", W + "    weight: 0\n", 5, "workloads[0].weight", "must be a positive number"),
    ("weight-negative", W + "    weight: -2\n", 5, "workloads[0].weight", "got -2"),
    ("weight-word", W + "    weight: heavy\n", 5, "workloads[0].weight", "must be a number, got a string ('heavy')"),
    ("weight-nan", W + "    weight: .nan\n", 5, "workloads[0].weight", "must be a finite number"),
    ("weight-huge", W + "    weight: 1.0e+12\n", 5, "workloads[0].weight", "up to 1e+09"),
    ("weight-in-defaults", "version: 1\ndefaults:\n  weight: 2\nworkloads: [{name: a, run: a}]\n", 3, "defaults.weight", "unknown key"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("text", "line", "key", "words"), [pytest.param(*e[1:], id=e[0]) for e in ERRORS]
)
def test_error_names_file_line_and_key(text: str, line: int, key: str, words: str) -> None:
    message = config_error(text)
    assert message.startswith(f"{PATH}:{line}: {key}: "), message
    assert words in message


@pytest.mark.parametrize("mode, words", [
    ("{mode: on}", "must be one of auto | on | off, got a mapping"),
    ("{}", "must be one of auto | on | off, got a mapping"),
    ("[on]", "must be one of auto | on | off, got a list"),
])
def test_sandbox_mode_is_a_word_not_a_nested_sandbox(mode: str, words: str) -> None:
    """Regression: the mode was once read as a whole sandbox, so ``mode: {mode: on}``
    passed and a list was told to be a mapping."""
    message = config_error(f"version: 1\nsandbox:\n  mode: {mode}\nworkloads: [{{name: a, run: a}}]\n")
    assert message == f"{PATH}:3: sandbox.mode: {words}"


@pytest.mark.parametrize(("value", "expected"), [("", False), ("on", True), ("off", False),
                                                 ("true", True)])
def test_sandbox_build_network_is_off_unless_the_config_allows_it(value: str,
                                                                  expected: bool) -> None:
    key = f"\n  build_network: {value}" if value else ""
    text = f"version: 1\nsandbox:\n  mode: on{key}\nworkloads: [{{name: a, run: a}}]\n"
    assert parse_config(text, path=PATH).sandbox.build_network is expected


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        ("version: 1\nworkloads:\n  - name: a\n   run: b\n", 4, "expected <block end>"),
        ("version: 1\nbuild: a: b\n", 2, "mapping values are not allowed here"),
        ("version: 1\nworkloads: [a\n", 3, "expected ',' or ']'"),
        ("version: 1\n\tbuild: x\n", 2, "found character '\\t' that cannot start any token"),
        ("version: 1\nbuild: *nope\n", 2, "found undefined alias 'nope'"),
        ("version: 1\nbuild: a\x07b\n", 2, "special characters are not allowed (U+0007)"),
        (
            "version: 1\n---\nversion: 1\n",
            2,
            "expected a single document in the stream, but found another",
        ),
    ],
    ids=[
        "indent",
        "colon-in-value",
        "unclosed-flow",
        "tab",
        "undefined-alias",
        "control-char",
        "two-documents",
    ],
)
def test_yaml_syntax_errors_name_file_and_line(text: str, line: int, words: str) -> None:
    message = config_error(text)
    assert message.startswith(f"{PATH}:{line}: YAML syntax error"), message
    assert words in message


def test_error_in_a_later_workload_names_its_index_and_line() -> None:
    message = config_error(INTERFACES_EXAMPLE.replace("    parity: 0.01", "    parity: 1.5"))
    assert message == f"{PATH}:15: workloads[1].parity: must be above 0 and below 1 (0.02 is 2%), got 1.5"


def test_duration_errors_carry_the_position() -> None:
    message = config_error(
        "version: 1\ndefaults:\n  timeout: 1 minute\nworkloads: [{name: a, run: a}]\n"
    )
    assert message.startswith(f"{PATH}:3: defaults.timeout: not a duration: ")
    assert message.endswith("got '1 minute'")


# --- files ----------------------------------------------------------------------------------


def test_load_config_reads_a_file_and_names_it(tmp_path: Path) -> None:
    path = tmp_path / "benchbot.yml"
    path.write_text(INTERFACES_EXAMPLE, encoding="utf-8")
    assert load_config(path).path == str(path)
    assert load_config(str(path)).workloads[1].name == "sum"
    path.write_text(W + "    runs: 3\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=rf"^{re.escape(str(path))}:5: workloads\[0\]\.runs: "):
        load_config(path)


def test_load_config_missing_file(tmp_path: Path) -> None:
    missing = tmp_path / "nope.yml"
    with pytest.raises(ConfigError, match=rf"^{re.escape(str(missing))}: no such file; .*--config"):
        load_config(missing)


def test_load_config_unreadable(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=rf"^{re.escape(str(tmp_path))}: cannot read: "):
        load_config(tmp_path)  # a directory


def test_load_config_not_utf8_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "benchbot.yml"
    path.write_bytes(b"version: 1\nbuild: caf\xe9\n")
    with pytest.raises(ConfigError, match=rf"^{re.escape(str(path))}:2: not UTF-8 text"):
        load_config(path)


@pytest.mark.parametrize(
    ("present", "found"),
    [
        ((".github/benchbot.yml", "benchbot.yml"), ".github/benchbot.yml"),
        (("benchbot.yml",), "benchbot.yml"),
        ((".github/benchbot.yml",), ".github/benchbot.yml"),
        ((), None),
        (("benchbot.yaml", ".github/benchbot.yaml"), None),
    ],
)
def test_find_config_order(tmp_path: Path, present: tuple[str, ...], found: str | None) -> None:
    for rel in present:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("version: 1\n")
    assert find_config(tmp_path) == (None if found is None else tmp_path / found)


def test_find_config_skips_a_directory(tmp_path: Path) -> None:
    (tmp_path / ".github" / "benchbot.yml").mkdir(parents=True)
    (tmp_path / "benchbot.yml").write_text("version: 1\n")
    assert find_config(tmp_path) == tmp_path / "benchbot.yml"


# --- durations ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "seconds"),
    [
        ("60s", 60.0), ("500ms", 0.5), ("2m", 120.0), ("1.5s", 1.5), ("25us", 25e-6),
        ("25µs", 25e-6), ("25μs", 25e-6), ("100ns", 100e-9), ("1h", 3600.0), ("1m30s", 90.0),
        (".5s", 0.5), ("10", 10.0), (" 3s ", 3.0), (10, 10.0), (2.5, 2.5), (0, 0.0),
    ],
)  # fmt: skip
def test_parse_duration(value: object, seconds: float) -> None:
    assert parse_duration(value, where="here") == pytest.approx(seconds)


@pytest.mark.parametrize(
    "value",
    [
        "",
        "s",
        "10 s",
        "10sec",
        "1e3s",
        "-1s",
        "1,5s",
        "10S",
        "ms10",
        True,
        None,
        [1],
        -1,
        float("inf"),
    ],
)
def test_parse_duration_refuses(value: object) -> None:
    with pytest.raises(ConfigError, match=r"^f\.yml:3: defaults\.timeout: "):
        parse_duration(value, where="f.yml:3: defaults.timeout")


@given(st.integers(min_value=0, max_value=10**6), st.sampled_from(sorted(UNITS_S)))
def test_parse_duration_scales_by_its_unit(n: int, unit: str) -> None:
    assert parse_duration(f"{n}{unit}", where="x") == pytest.approx(n * UNITS_S[unit])


# --- the JSON Schema ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def schema() -> dict[str, Any]:
    text = resources.files("benchbot").joinpath("schemas/config.schema.json").read_text("utf-8")
    loaded: dict[str, Any] = json.loads(text)
    jsonschema.Draft202012Validator.check_schema(loaded)
    return loaded


def schema_errors(schema: dict[str, Any], text: str) -> list[str]:
    validator = jsonschema.Draft202012Validator(schema)
    return [e.message for e in validator.iter_errors(yaml.safe_load(text))]


@pytest.mark.parametrize(
    "text",
    [
        pytest.param(INTERFACES_EXAMPLE, id="interfaces.md"),
        pytest.param(KERNELS_EXAMPLE, id="kernels"),
        *_repo_examples(),
    ],
)
def test_examples_validate_against_the_schema_and_parse(schema: dict[str, Any], text: str) -> None:
    assert schema_errors(schema, text) == []
    assert parse_config(text).workloads


@pytest.mark.parametrize(
    "text",
    [
        W + "    parityy: 0.01\n",
        "version: 1\nworkload: []\n",
        "version: 1\ndefaults: {name: x}\nworkloads: [{name: a, run: a}]\n",
        "version: 1\naa: {run: 20}\nworkloads: [{name: a, run: a}]\n",
        W + "    runs: 5\n",
        W + "    order: alternating\n",
        W + "    timeout: 10 parsecs\n",
        W + "    pin: 0,a\n",
        "version: 2\nworkloads: [{name: a, run: a}]\n",
        "version: 1\nworkloads: []\n",
        "version: 1\nworkloads:\n  - name: my bench\n    run: a\n",
        "version: 1\nworkloads:\n  - name: a\n",
    ],
)
def test_schema_and_parser_both_refuse(schema: dict[str, Any], text: str) -> None:
    assert schema_errors(schema, text)
    with pytest.raises(ConfigError):
        parse_config(text)


def _resolve(schema: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node and "description" not in node:
        node = schema["$defs"][node["$ref"].rsplit("/", 1)[1]]
    return node


def _object_properties(schema: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every (dotted name, property schema) of the file, through $ref and oneOf."""

    def walk(prefix: str, node: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
        node = _resolve(schema, node)
        for option in node.get("oneOf", []):
            yield from walk(prefix, option)
        for name, sub in node.get("properties", {}).items():
            yield f"{prefix}{name}", sub
            yield from walk(f"{prefix}{name}.", sub)
        if "items" in node and isinstance(node["items"], dict):
            yield from walk(prefix, node["items"])

    yield from walk("", schema)


def test_the_schema_file_is_what_the_key_tables_generate() -> None:
    """The checked-in schema is written by ``python -m benchbot.config.schemagen``; a key
    changed in config.py without running it fails here."""
    shipped = resources.files("benchbot").joinpath("schemas/config.schema.json").read_text("utf-8")
    assert shipped == schemagen.render(), "run: python -m benchbot.config.schemagen"
    assert schemagen.main(["--check"]) == 0


def test_the_schema_check_fails_on_a_stale_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    stale = tmp_path / "config.schema.json"
    stale.write_text(schemagen.render().replace('"maximum": 1000', '"maximum": 999', 1),
                     encoding="utf-8")
    assert stale.read_text(encoding="utf-8") != schemagen.render()
    monkeypatch.setattr(schemagen, "PATH", stale)
    assert schemagen.main(["--check"]) == 1
    assert "run: python -m benchbot.config.schemagen" in capsys.readouterr().err
    assert schemagen.main([]) == 0
    assert stale.read_text(encoding="utf-8") == schemagen.render()


@pytest.mark.parametrize("text, valid", [
    ("version: 1\ndefaults: {parity: 0}\nworkloads: [{name: a, run: a}]\n", False),
    ("version: 1\naa: {runs: 1001}\nworkloads: [{name: a, run: a}]\n", False),
    ("version: 1\nseed: 9223372036854775808\nworkloads: [{name: a, run: a}]\n", False),
    ("version: 1\ndefaults: {unit: null}\nworkloads: [{name: a, run: a}]\n", True),
])
def test_the_schema_takes_its_bounds_from_the_parser(schema: dict[str, Any], text: str,
                                                     valid: bool) -> None:
    """Where the hand-written schema once differed from the parser, the generated one agrees."""
    assert (schema_errors(schema, text) == []) is valid
    if valid:
        parse_config(text)
    else:
        with pytest.raises(ConfigError):
            parse_config(text)


def test_schema_describes_every_property(schema: dict[str, Any]) -> None:
    undescribed = [
        n for n, p in _object_properties(schema) if "description" not in _resolve(schema, p)
    ]
    assert undescribed == []


@pytest.mark.parametrize(
    ("where", "keys"),
    [
        ("", cfg.TOP_KEYS),
        ("defaults.", cfg.SETTING_KEYS),
        ("workloads.", cfg.WORKLOAD_KEYS),
        ("aa.", cfg.AA_KEYS),
        ("status.", cfg.STATUS_KEYS),
        ("github.", cfg.GITHUB_KEYS),
    ],
)
def test_schema_keys_match_the_parser(
    schema: dict[str, Any], where: str, keys: tuple[str, ...]
) -> None:
    names = {n[len(where) :] for n, _ in _object_properties(schema) if n.startswith(where)}
    assert {n for n in names if "." not in n} == set(keys)


def test_schema_defaults_match_the_dataclasses(schema: dict[str, Any]) -> None:
    props = dict(_object_properties(schema))
    default: dict[str, Any] = {
        n: _resolve(schema, p).get("default", p.get("default")) for n, p in props.items()
    }
    w = WorkloadConfig(name="x", run=("x",))
    assert default.get("workloads.runs") is w.runs is None  # no default: sequential
    assert default["workloads.max_runs"] == w.max_runs
    assert default["workloads.weight"] == w.weight == 1
    assert parse_duration(default["budget"], where="") == Config(path="x").budget_s
    assert default["workloads.warmup"] == w.warmup
    assert default["workloads.parity"] == w.parity
    assert parse_duration(default["workloads.timeout"], where="") == w.timeout_s
    assert (default["workloads.order"], default["workloads.metric"], default["workloads.better"]) == (
        w.order, w.metric, w.better,
    )  # fmt: skip
    c = Config(path="x")
    assert (default["alpha"], default["base"], default["confirm"], default["aa"]) == (
        c.alpha, c.base, c.confirm, c.aa.enabled,
    )  # fmt: skip
    assert default["aa.abort_fraction"] == c.aa.abort_fraction
    assert tuple(default["status.fail_on"]) == c.status.fail_on
    assert default["status.name"] == c.status.name
    assert (default["github.forks"], default["github.comment"]) == (
        c.github.forks,
        c.github.comment,
    )


def test_a_weight_is_read_per_workload() -> None:
    config = parse_config(W + "    weight: 2.5\n  - name: b\n    run: b\n")
    assert [w.weight for w in config.workloads] == [2.5, 1.0]


@pytest.mark.parametrize("written, read_as", [("010", "8"), ("0x10", "16"), ("1:30", "90"), ("0o17", "15")])
@pytest.mark.parametrize("key", ["budget", "defaults.max_runs", "defaults.warmup", "defaults.parity"])
def test_a_number_yaml_reads_from_another_notation_is_refused(key: str, written: str,
                                                              read_as: str) -> None:
    """YAML 1.1 reads 010 as octal 8 and 1:30 as 90: a budget or a count a user wrote
    in decimal must not silently become another number."""
    if key == "budget":
        text = f"version: 1\nbudget: {written}\nworkloads: [{{name: a, run: a}}]\n"
    else:
        text = f"version: 1\ndefaults:\n  {key.split('.')[1]}: {written}\nworkloads: [{{name: a, run: a}}]\n"
    message = config_error(text)
    if "write the number in decimal" in message:
        assert f": {key}: write the number in decimal: YAML reads {written!r} as {read_as}" in message
    else:  # read as a string by this YAML (0o17 is YAML 1.2): refused as not a number
        assert f": {key}: must be" in message or "not a duration" in message


def test_decimal_numbers_and_quoted_durations_still_read() -> None:
    config = parse_config("version: 1\nbudget: 1_200\ndefaults: {max_runs: 100, parity: 0.01}\n"
                          "workloads: [{name: a, run: a, timeout: '010'}]\n")
    assert (config.budget_s, config.workloads[0].max_runs, config.workloads[0].parity,
            config.workloads[0].timeout_s) == (1200.0, 100, 0.01, 10.0)


def test_a_value_too_long_to_be_a_number_is_quoted_short() -> None:
    message = config_error("version: 1\ndefaults: {max_runs: " + "9" * 5000 + "}\n"
                           "workloads: [{name: a, run: a}]\n")
    assert "defaults.max_runs: must be" in message and len(message) < 300


@pytest.mark.parametrize("text, line, key, other", [
    ("version: 1\ndefaults: {runs: 30}\nworkloads:\n  - {name: a, run: a, max_runs: 50}\n",
     4, "workloads[0].max_runs", "defaults.runs (line 2)"),
    ("version: 1\nworkloads:\n  - name: a\n    run: a\n    max_runs: 50\n    runs: 30\n",
     6, "workloads[0].runs", "workloads[0].max_runs (line 5)"),
    ("version: 1\ndefaults:\n  runs: 30\n  max_runs: 50\nworkloads: [{name: a, run: a}]\n",
     4, "defaults.max_runs", "defaults.runs (line 3)"),
])
def test_runs_with_max_runs_for_one_workload_is_refused(text: str, line: int, key: str,
                                                        other: str) -> None:
    message = config_error(text.replace("version: 1\n", "version: 1\n", 1))
    assert f":{line}: {key}: cannot be set with {other}: " in message


def test_a_fixed_workload_under_a_default_max_runs_is_fine() -> None:
    config = parse_config("version: 1\ndefaults: {max_runs: 50}\nworkloads:\n"
                          "  - {name: a, run: a, runs: 30}\n  - {name: b, run: b}\n")
    assert [(w.runs, w.max_runs) for w in config.workloads] == [(30, 50), (None, 50)]


def test_a_throughput_may_name_its_unit() -> None:
    config = parse_config("version: 1\nworkloads:\n  - {name: q, run: q, metric: reported, "
                          "pattern: 'qps=(\\S+)', better: higher, unit: queries/s}\n")
    assert config.workloads[0].unit == "queries/s"


@pytest.mark.parametrize("unit, words", [
    ("'<b>x</b>'", "must be a short label"), ("'[a](b)'", "must be a short label"),
    ("'12'", "must be a short label"), ("a_very_long_unit_name", "must be a short label"),
])
def test_a_unit_is_a_short_plain_label(unit: str, words: str) -> None:
    message = config_error("version: 1\nworkloads:\n  - {name: q, run: q, metric: reported, "
                           f"pattern: 'qps=(\\S+)', better: higher, unit: {unit}}}\n")
    assert ":3: workloads[0].unit: " + words in message


def test_a_unit_is_only_for_a_throughput() -> None:
    message = config_error("version: 1\nworkloads:\n  - {name: q, run: q, unit: MB/s}\n")
    assert ":3: workloads[0].unit: a unit is only for a figure the workload reports" in message


# --- instruction counts and memory (issue 20) --------------------------------------------------


def test_counts_and_memory_parity_at_the_top_in_defaults_and_per_workload() -> None:
    config = parse_config(dedent("""
        version: 1
        counts: valgrind
        memory_parity: 0.1
        defaults:
          memory_parity: 0.2
        workloads:
          - {name: a, run: ./a}
          - {name: b, run: ./b, counts: perf, memory_parity: 0.3}
          - {name: c, run: ./c, counts: off, metric: wall}
          - {name: d, run: ./d, counts: on, metric: instructions}
        """), path=PATH)
    assert (config.counts, config.memory_parity) == ("valgrind", 0.1)
    assert [(w.counts, w.memory_parity) for w in config.workloads] == [
        ("valgrind", 0.2), ("perf", 0.3), ("off", 0.2), ("auto", 0.2)]
    assert config.workloads[3].metric == "instructions"
    plain = parse_config("version: 1\nworkloads:\n  - {name: a, run: ./a}\n", path=PATH)
    assert (plain.workloads[0].counts, plain.workloads[0].memory_parity) == ("auto", 0.03)


def test_counts_errors_name_the_key_and_the_line() -> None:
    assert config_error("""
        version: 1
        workloads:
          - name: a
            run: ./a
            counts: sometimes
        """) == (f"{PATH}:5: workloads[0].counts: must be one of auto | perf | valgrind | off, "
                 "got a string ('sometimes')")
    assert config_error("""
        version: 1
        memory_parity: 1.5
        workloads:
          - {name: a, run: ./a}
        """).startswith(f"{PATH}:2: memory_parity: must be above 0 and below 1")
    message = config_error("""
        version: 1
        defaults:
          counts: off
        workloads:
          - name: a
            run: ./a
            metric: instructions
        """)
    assert message.startswith(f"{PATH}:7: workloads[0].metric: metric: instructions judges "
                              "the counts alone, and counts is off (defaults.counts, line 3)")


# --- paths: the files that can affect a workload ------------------------------------------------


def test_paths_are_read_under_defaults_and_per_workload() -> None:
    config = parse_config(textwrap.dedent("""\
        version: 1
        defaults:
          paths: ["src/**", "Makefile"]
        workloads:
          - name: a
            run: a
            paths: ["src/a/**", "*.h", "src/a/**"]
          - name: b
            run: b
          - name: c
            run: c
            paths: null
        """), path=PATH)
    assert [w.paths for w in config.workloads] == [("src/a/**", "*.h"), ("src/**", "Makefile"), None]
    assert parse_config("version: 1\nworkloads: [{name: a, run: a}]\n").workloads[0].paths is None


@pytest.mark.parametrize("value, where, message", [
    ("[]", "workloads[0].paths", "is empty, so no change could ever affect the workload"),
    ("src/**", "workloads[0].paths", "must be a list of globs"),
    ('["src/**", "a**"]', "workloads[0].paths[1]", "'a**' has ** inside a name"),
    ('["!vendor/**"]', "workloads[0].paths[0]", "negation (!) is not supported"),
    ('["src/[ab"]', "workloads[0].paths[0]", "has a [ without its ]"),
    ('["../x"]', "workloads[0].paths[0]", "'..' segment"),
    ('[""]', "workloads[0].paths[0]", "must not be empty"),
    ("[3]", "workloads[0].paths[0]", "must be a string"),
])
def test_bad_paths_are_named_by_key_and_line(value: str, where: str, message: str) -> None:
    text = f"version: 1\nworkloads:\n  - name: a\n    run: a\n    paths: {value}\n"
    with pytest.raises(ConfigError) as info:
        parse_config(text, path=PATH)
    assert str(info.value).startswith(f"{PATH}:5: {where}: ")
    assert message in str(info.value)


def test_a_bad_glob_under_defaults_is_named_there() -> None:
    text = "version: 1\ndefaults:\n  paths: ['a//b']\nworkloads: [{name: a, run: a}]\n"
    with pytest.raises(ConfigError, match=r"^conf/bench.yml:3: defaults.paths\[0\]: 'a//b' has an empty"):
        parse_config(text, path=PATH)


def test_all_drops_every_workloads_paths() -> None:
    from benchbot.config.settings import Overrides

    config = parse_config("version: 1\ndefaults: {paths: ['src/**']}\n"
                          "workloads: [{name: a, run: a}, {name: b, run: b}]\n")
    assert [w.paths for w in config.with_overrides(Overrides()).workloads] == [("src/**",)] * 2
    assert [w.paths for w in config.with_overrides(Overrides(all=True)).workloads] == [None, None]
