"""The ``suites:`` section of benchbot.yml: what it reads, and each mistake named with its
key and line."""

from __future__ import annotations

import re

import pytest

from benchbot.config.load import parse_config
from benchbot.config.settings import Overrides
from benchbot.core.errors import ConfigError

GOOD = """\
version: 1
defaults:
  parity: 0.03
  counts: auto
suites:
  - name: core
    run: ["build/core_bench", "--benchmark_format=json"]
    format: google-benchmark
    filter: ["--benchmark_filter={regex}"]
    max_runs: 200
workloads:
  - name: cli
    run: ./cli
"""


def test_a_suite_reads_with_the_defaults_it_can_use() -> None:
    config = parse_config(GOOD)
    [suite] = config.suites
    assert suite.run == ("build/core_bench", "--benchmark_format=json")
    assert suite.format == "google-benchmark" and suite.filter == ("--benchmark_filter={regex}",)
    assert suite.settings.parity == 0.03 and suite.settings.max_runs == 200
    assert suite.settings.metric == "reported" and suite.settings.counts == "auto"
    assert config.measured == ("cli", "core")


def test_suites_alone_are_a_config() -> None:
    config = parse_config("version: 1\nsuites:\n  - name: s\n    run: ./b\n    format: jsonl\n")
    assert config.workloads == () and [s.name for s in config.suites] == ["s"]


@pytest.mark.parametrize("text, line, key, words", [
    ("version: 1\nsuites:\n  - name: core\n    run: ./b\n    format: gtest\n", 5,
     "suites[0].format", "'gtest' is not a format benchbot reads"),
    ("version: 1\nsuites:\n  - name: core\n    run: ./b\n    format: jsonl\n    metric: wall\n", 6,
     "suites[0].metric", "unknown key"),
    ("version: 1\nsuites:\n  - name: core\n    run: ./b\n", 3, "suites[0].format", "missing"),
    ("version: 1\nworkloads:\n  - name: core\n    run: ./a\nsuites:\n  - name: core\n"
     "    run: ./b\n    format: jsonl\n", 6, "suites[0].name", "duplicate suite name 'core'"),
    ("version: 1\nsuites:\n  - name: core\n    run: ./b\n    format: jsonl\n    filter: --only\n",
     6, "suites[0].filter", "holds neither {regex} nor {name}"),
    ("version: 1\nsuites: []\n", 2, "suites", "is empty"),
    ("version: 1\nbuild: make\n", 1, "workloads", "missing"),
])
def test_a_mistake_names_its_key_and_line(text: str, line: int, key: str, words: str) -> None:
    with pytest.raises(ConfigError, match=rf"^benchbot.yml:{line}: {re.escape(key)}: .*"
                                          rf"{re.escape(words)}"):
        parse_config(text)


def test_only_takes_a_suite_or_one_of_its_benchmarks() -> None:
    config = parse_config(GOOD)
    whole = config.with_overrides(Overrides(only=("core",)))
    assert whole.workloads == () and whole.suites[0].only is None
    one = config.with_overrides(Overrides(only=("core/BM_sort/1024", "cli")))
    assert [w.name for w in one.workloads] == ["cli"] and one.suites[0].only == ("BM_sort/1024",)
    with pytest.raises(ConfigError, match="no workload or suite named 'nope'"):
        config.with_overrides(Overrides(only=("nope",)))
