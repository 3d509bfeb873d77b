"""Harness outputs read into results: real outputs (tests/fixtures/harness), broken ones,
hostile ones, and the filter regexes checked against the harnesses' own matchers."""

from __future__ import annotations

import ast
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchbot.harness import formats
from benchbot.harness.formats import FORMATS, Entry, Parsed, filter_regex, from_json, parse, to_json

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "harness"


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text()


def by_name(parsed: Parsed) -> dict[str, Entry]:
    assert parsed.error is None, parsed.error
    return {e.name: e for e in parsed.entries}


# --- google-benchmark -----------------------------------------------------------------


def test_google_benchmark_real_time_in_ns_with_counters_and_the_failed_one() -> None:
    parsed = parse("google-benchmark", fixture("google-benchmark.json"))
    got = by_name(parsed)
    assert list(got) == ["BM_Sort/8", "BM_Sort/64", "BM_Copy/1024", "BM_Fill<int>",
                         "BM_Fill<double>"]
    assert got["BM_Sort/8"].value == pytest.approx(361.98931661223872)
    assert got["BM_Fill<double>"].value == pytest.approx(2.7888825550261825e-03 * 1000)  # us
    assert all(e.unit == "ns" and e.better == "lower" and e.select == e.name
               for e in got.values())
    copy = dict(got["BM_Copy/1024"].extras)
    assert copy["bytes/s"] == pytest.approx(1.1994045006877776e+11)
    assert copy["chars"] == 1024.0 and copy["cpu ns"] == pytest.approx(8.5375700976009785)
    assert dict(got["BM_Sort/64"].extras)["items/s"] == pytest.approx(2.0479528549520147e+08)
    assert parsed.failed == (("BM_Broken", "no input file"),)


def test_google_benchmark_repetitions_use_the_median_aggregate() -> None:
    data = json.loads(fixture("google-benchmark-repetitions.json"))
    parsed = parse("google-benchmark", json.dumps(data))
    got = by_name(parsed)
    assert list(got) == ["BM_Sort/8", "BM_Copy/1024"]
    for name, entry in got.items():
        (median,) = [b for b in data["benchmarks"] if b["run_name"] == name
                     and b.get("aggregate_name") == "median"]
        assert entry.value == median["real_time"]
    assert parsed.failed == (("BM_Broken", "no input file"),)


def test_google_benchmark_repetitions_without_aggregates_give_their_median() -> None:
    data = json.loads(fixture("google-benchmark-repetitions.json"))
    data["benchmarks"] = [b for b in data["benchmarks"] if b["run_type"] == "iteration"]
    got = by_name(parse("google-benchmark", json.dumps(data)))
    times = [b["real_time"] for b in data["benchmarks"] if b["run_name"] == "BM_Copy/1024"]
    assert len(times) == 3 and got["BM_Copy/1024"].value == statistics.median(times)
    # A median aggregate wins over the repetitions, wherever it comes in the list.
    data["benchmarks"].insert(0, {"name": "BM_Copy/1024_median", "run_name": "BM_Copy/1024",
                                  "run_type": "aggregate", "aggregate_name": "median",
                                  "real_time": 7.0, "time_unit": "ms"})
    assert by_name(parse("google-benchmark", json.dumps(data)))["BM_Copy/1024"].value == 7e6


def test_google_benchmark_aggregates_only() -> None:
    data = json.loads(fixture("google-benchmark-aggregates-only.json"))
    got = by_name(parse("google-benchmark", json.dumps(data)))
    assert list(got) == ["BM_Fill<int>", "BM_Fill<double>"]
    assert got["BM_Fill<double>"].value == pytest.approx(0.0016170870879266544 * 1000)


def test_google_benchmark_leaves_out_what_was_skipped_with_a_message() -> None:
    data = json.loads(fixture("google-benchmark.json"))
    data["benchmarks"][0].update(skipped=True, skip_message="needs AVX-512")
    got = by_name(parse("google-benchmark", json.dumps(data)))
    assert "BM_Sort/8" not in got and "BM_Sort/64" in got


@pytest.mark.parametrize(("change", "message"), [
    ({"real_time": "fast"}, "benchmarks[0]: real_time 'fast' is not a number"),
    ({"real_time": -1.0}, "benchmarks[0]: real_time -1.0 is not a finite number"),
    ({"real_time": math.nan}, "real_time nan is not a finite number"),
    ({"time_unit": "fortnight"}, "time_unit 'fortnight' is not one of ns, us, ms, s"),
    ({"run_name": "a\x1b[31mb"}, "benchmarks[0]: 'a\\x1b[31mb': the name has control characters"),
    ({"run_name": "x" * 201}, "the name is 201 characters long, more than 200"),
    ({"run_name": 7, "name": 7}, "benchmarks[0] has no name"),
])
def test_google_benchmark_refuses_broken_results(change: dict[str, Any], message: str) -> None:
    data = json.loads(fixture("google-benchmark.json"))
    data["benchmarks"][0].update(change)
    parsed = parse("google-benchmark", json.dumps(data))
    assert parsed.entries == () and parsed.error is not None and message in parsed.error


# --- go test -bench -------------------------------------------------------------------


def test_go_two_packages_count_two_benchmem_and_a_failure() -> None:
    parsed = parse("go", fixture("go-two-packages.txt"))
    got = by_name(parsed)
    assert list(got) == ["hashing.BenchmarkCopy", "BenchmarkSort/n=10", "BenchmarkSort/n=100",
                         "sorting.BenchmarkCopy", "BenchmarkCompare"]
    assert got["BenchmarkSort/n=10"].value == statistics.median([268.9, 299.7])
    assert got["BenchmarkSort/n=10"].select == "BenchmarkSort"
    assert got["sorting.BenchmarkCopy"].select == "BenchmarkCopy"
    assert dict(got["sorting.BenchmarkCopy"].extras) == {
        "MB/s": statistics.median([2584.47, 2577.31]), "B/op": 4096.0, "allocs/op": 1.0,
        "iterations": 2000.0}
    assert dict(got["BenchmarkCompare"].extras)["hits/op"] == 0.5
    assert all(e.unit == "ns" and e.better == "lower" for e in got.values())
    assert parsed.failed == (("BenchmarkBroken", "sort_test.go:40: no input file"),)


def test_go_keeps_the_procs_suffix_when_the_names_do_not_all_share_one() -> None:
    got = by_name(parse("go", fixture("go-cpu-list.txt")))  # -cpu 1,2
    assert list(got) == ["BenchmarkSort/n=10", "BenchmarkSort/n=10-2", "BenchmarkSort/n=100",
                         "BenchmarkSort/n=100-2", "BenchmarkCompare", "BenchmarkCompare-2"]
    assert {e.select for e in got.values()} == {"BenchmarkSort", "BenchmarkCompare"}


def test_go_ignores_what_is_not_a_result_line_and_prefixes_by_whole_path_if_needed() -> None:
    text = ("goos: linux\npkg: a/x/util\nBenchmarking is fun\nBenchmarkA-4 hello\n"
            "BenchmarkA-4\t  10\t 5 ns/op\n  some log line\npkg: b/y/util\n"
            "BenchmarkA-4\t  10\t 7 ns/op\t3.5 widgets/op\nok  \tb/y/util\t0.1s\n")
    got = by_name(parse("go", text))
    assert [(e.name, e.value, e.extras) for e in got.values()] == [
        ("a/x/util.BenchmarkA", 5.0, (("iterations", 10.0),)),
        ("b/y/util.BenchmarkA", 7.0, (("widgets/op", 3.5), ("iterations", 10.0)))]


def test_go_without_ns_per_op_uses_its_first_figure() -> None:
    got = by_name(parse("go", "BenchmarkRate-2 100 250.5 MB/s 3 B/op\n"))
    entry = got["BenchmarkRate"]
    assert (entry.value, entry.unit, entry.better, entry.extras) == (
        250.5, "MB/s", "higher", (("B/op", 3.0), ("iterations", 100.0)))


@pytest.mark.parametrize(("line", "why"), [
    ("BenchmarkX-2 \t 100\t abc ns/op", "'abc' is not a number"),
    ("BenchmarkX-2 \t 100\t 12 ns/op 7", "pairs of value and unit"),
    ("BenchmarkX-2 \t 100", "pairs of value and unit"),
    ("BenchmarkX-2 \t 100\t NaN ns/op", "'NaN' is not a number"),
    ("BenchmarkX-2 \t 100\t 1e999 ns/op", "not finite"),
    ("BenchmarkX-2 \t 100\t -3 ns/op", "is not a finite number of at least 0"),
])
def test_go_result_lines_that_do_not_parse_are_errors_with_their_line(line: str, why: str) -> None:
    parsed = parse("go", "pkg: p\nBenchmarkOK-2 10 5 ns/op\n" + line + "\nPASS\n")
    assert parsed.error is not None and parsed.error.startswith("line 3:"), parsed.error
    assert why in parsed.error


# --- bencher lines ----------------------------------------------------------------------


def test_libtest_bencher_lines_with_decimals_separators_and_mb_per_s() -> None:
    parsed = parse("bencher", fixture("libtest-bencher.txt"))
    got = by_name(parsed)
    assert list(got) == ["benches::copy_4k", "benches::sort_small", "benches::sum_large"]
    assert got["benches::sum_large"].value == 16461.67
    assert dict(got["benches::sum_large"].extras) == {"+/-": 16702.37}
    assert dict(got["benches::copy_4k"].extras)["MB/s"] == 48761.0
    assert got["benches::copy_4k"].select == "benches::copy_4k"
    assert parsed.failed == (("benches::broken", "FAILED"),)


def test_criterion_bencher_lines_with_spaces_and_slashes_in_names() -> None:
    got = by_name(parse("bencher", fixture("criterion-bencher.txt")))
    assert {n: e.value for n, e in got.items()} == {
        "fib/recursive/20": 26208.0, "fib/iterative/20": 12.0,
        "parse json/small input": 1834.0, "parse json/large input": 1203455.0}


def test_bencher_other_units_and_tab_separated_lines() -> None:
    got = by_name(parse("bencher", "test a\tbench:\t  1,500 cycles/iter (+/- 3)\n"
                                   "test b ... bench: 2.5 us/iter (+/- 0.5)\n"))
    assert (got["a"].value, got["a"].unit) == (1500.0, "cycles")
    assert (got["b"].value, got["b"].unit, got["b"].extras) == (2500.0, "ns", (("+/-", 500.0),))


@pytest.mark.parametrize("line", [
    "test x ... bench: garbage",
    "test x ... bench: 12 ns/iter",
    "test x ... bench: 1,23 ns/iter (+/- 1)",
    "test x ... bench: -5 ns/iter (+/- 1)",
])
def test_bencher_lines_that_do_not_parse_are_errors(line: str) -> None:
    parsed = parse("bencher", "running 2 tests\ntest ok ... bench: 5 ns/iter (+/- 1)\n" + line)
    assert parsed.error == f"line 3: {line!r} is not a bencher line: " \
                           "test NAME ... bench: 1,234 ns/iter (+/- 56)"


# --- pytest-benchmark ------------------------------------------------------------------


def test_pytest_benchmark_median_in_ns_and_full_names_where_two_share_one() -> None:
    data = json.loads(fixture("pytest-benchmark.json"))
    got = by_name(parse("pytest-benchmark", json.dumps(data)))
    assert list(got) == ["test_sort[10]", "test_sort[100]", "test_bench.py::test_join",
                         "test_bench.py::TestGroup::test_join"]
    first = data["benchmarks"][0]
    assert got["test_sort[10]"].value == pytest.approx(first["stats"]["median"] * 1e9)
    assert got["test_sort[10]"].select == "test_bench.py::test_sort[10]"
    assert dict(got["test_sort[10]"].extras)["rounds"] == first["stats"]["rounds"]


def test_pytest_benchmark_without_stats_is_an_error() -> None:
    data = {"benchmarks": [{"name": "test_a", "fullname": "t.py::test_a", "stats": None}]}
    assert parse("pytest-benchmark", json.dumps(data)).error == \
        "benchmarks[0]: 'test_a' has no stats"


# --- pyperf ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["pyperf.json", "pyperf-one-benchmark.json"])
def test_pyperf_median_of_the_runs_values_without_warmups(name: str) -> None:
    data = json.loads(fixture(name))
    got = by_name(parse("pyperf", json.dumps(data)))
    names = [b.get("metadata", data["metadata"])["name"] for b in data["benchmarks"]]
    assert list(got) == names
    for bench, entry in zip(data["benchmarks"], got.values(), strict=True):
        values = [v for run in bench["runs"] for v in run.get("values", [])]
        assert len(values) == 6 and entry.value == pytest.approx(statistics.median(values) * 1e9)
        assert entry.unit == "ns"


def test_pyperf_units_that_are_not_times_and_benchmarks_without_values() -> None:
    data = {"version": "1.0", "benchmarks": [
        {"metadata": {"name": "rss", "unit": "byte"}, "runs": [{"values": [10, 30, 20]}]},
        {"metadata": {"name": "calls", "unit": "integer"}, "runs": [{"values": [4]}]},
        {"metadata": {"name": "empty"}, "runs": [{"warmups": [[1, 0.5]]}]}]}
    parsed = parse("pyperf", json.dumps(data))
    assert [(e.name, e.value, e.unit) for e in parsed.entries] == [
        ("rss", 20.0, "byte"), ("calls", 4.0, "integer")]
    assert [n for n, _ in parsed.failed] == ["empty"]
    data["benchmarks"][0]["metadata"]["unit"] = "meter"
    assert "unit 'meter' is not second, byte or integer" in str(parse("pyperf", json.dumps(data)).error)


# --- jsonl ----------------------------------------------------------------------------------


def test_jsonl_times_in_ns_other_units_as_given_and_the_median_of_repeats() -> None:
    got = by_name(parse("jsonl", fixture("jsonl.txt")))
    assert [(e.name, e.value, e.unit, e.better) for e in got.values()] == [
        ("startup", 41.5e6, "ns", "lower"), ("query p50", 812e3, "ns", "lower"),
        ("throughput", 18250.5, "req/s", "higher"), ("binary size", 1048576.0, "bytes", "lower")]


@pytest.mark.parametrize(("line", "why"), [
    ("hello", "is not a JSON object"),
    ("[1, 2]", "is not a JSON object"),
    ('{"name": "a", "value": 1, "unit": "ms", "extra": 1}', "unknown key 'extra'"),
    ('{"name": "a", "value": 1, "unit": "req/s"}', "(unit 'req/s' is not a time)"),
    ('{"name": "a", "value": 1, "unit": "s", "better": "faster"}', 'better must be "lower"'),
    ('{"name": "a", "value": true, "unit": "s"}', "needs a string name, a number value"),
    ('{"name": "a", "value": "1", "unit": "s"}', "needs a string name, a number value"),
    ('{"name": "a", "value": NaN, "unit": "s"}', "value nan is not a finite number"),
    ('{"name": "a", "value": -1, "unit": "s"}', "value -1.0 is not a finite number"),
    ('{"name": "", "value": 1, "unit": "s"}', "the name is empty"),
    ('{"name": "a\\u202eb", "value": 1, "unit": "s"}', "the name has control characters"),
    ('{"name": "a", "value": 1, "unit": "s"}\n{"name": "a", "value": 1, "unit": "B", "better": "lower"}',
     "'a' is reported in 'ns' and in 'B'"),
])
def test_jsonl_lines_that_are_not_results_are_errors(line: str, why: str) -> None:
    parsed = parse("jsonl", '{"name": "ok", "value": 1, "unit": "ns"}\n\n' + line + "\n")
    assert parsed.entries == () and parsed.error is not None
    assert parsed.error.startswith(("line 3:", "line 4:")) and why in parsed.error, parsed.error


# --- everywhere ------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", FORMATS)
def test_no_results_at_all_is_an_error(fmt: str) -> None:
    text = {"google-benchmark": '{"context": {}, "benchmarks": []}', "go": "PASS\nok p 0.1s\n",
            "bencher": "running 0 tests\n", "pytest-benchmark": '{"benchmarks": []}',
            "pyperf": '{"version": "1.0", "benchmarks": []}', "jsonl": "\n \n"}[fmt]
    assert parse(fmt, text) == Parsed(entries=(), error="no benchmark results in the output")
    assert parse(fmt, "").error is not None


def test_only_failures_is_an_error_that_keeps_them() -> None:
    parsed = parse("go", "--- FAIL: BenchmarkA\n    a_test.go:3: boom\nFAIL\n")
    assert parsed.error == "no benchmark results in the output (1 failed)"
    assert parsed.failed == (("BenchmarkA", "a_test.go:3: boom"),)


def test_an_error_quotes_the_line_cut_and_escaped() -> None:
    line = "test \x1b[2J\x07 ... bench: " + "9" * 100
    parsed = parse("bencher", "\n\n" + line)
    assert parsed.error is not None and parsed.error.startswith("line 3: 'test \\x1b[2J\\x07 ")
    quoted = parsed.error.split(": ", 1)[1].split(" is not", 1)[0]
    assert quoted == repr(line[:80]) + "…" and "\x1b" not in parsed.error


@pytest.mark.parametrize("fmt", ["google-benchmark", "pytest-benchmark", "pyperf"])
def test_broken_json_is_an_error_with_its_line(fmt: str) -> None:
    parsed = parse(fmt, '{\n  "benchmarks": [\n    {"name": \x00}\n]}')
    assert parsed.error is not None and parsed.error.startswith("line 3: '    {\"name\": \\x00}'")
    assert "is not JSON" in parsed.error
    assert "no 'benchmarks' list" in str(parse(fmt, "[1, 2]").error)
    deep = parse(fmt, "[" * 100_000 + "]" * 100_000)
    assert deep.entries == () and deep.error is not None


def test_output_over_the_cap_is_refused_unread() -> None:
    text = "x" * (formats.TEXT_LIMIT + 1)
    assert parse("jsonl", text).error == (f"the output is {len(text)} characters long; benchbot "
                                          f"reads at most {formats.TEXT_LIMIT} (16 Mi)")


def test_harness_imports_the_standard_library_only() -> None:
    """The sandboxed worker imports it with nothing but the interpreter."""
    tree = ast.parse(Path(formats.__file__).read_text())
    names = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import)
             for alias in node.names}
    names |= {node.module.split(".")[0] for node in ast.walk(tree)
              if isinstance(node, ast.ImportFrom) and node.module}
    assert names and names <= set(sys.stdlib_module_names) | {"__future__"}, names


def test_unknown_formats_are_a_programming_error() -> None:
    with pytest.raises(ValueError, match="unknown harness format 'csv'"):
        parse("csv", "")
    with pytest.raises(ValueError, match="unknown harness format"):
        filter_regex("csv", ["a"])


@pytest.mark.parametrize("name", sorted(p.name for p in FIXTURES.glob("*.*") if p.suffix != ".md"))
def test_fixtures_round_trip_through_plain_json(name: str) -> None:
    fmt = next(f for f in FORMATS if name.startswith(f.split("-")[0])) \
        if not name.startswith(("libtest", "criterion")) else "bencher"
    parsed = parse(fmt, fixture(name))
    assert parsed.error is None and parsed.entries
    wire = json.dumps(to_json(parsed), allow_nan=False)
    assert from_json(json.loads(wire)) == parsed
    errored = Parsed(entries=(), failed=(("a", "b"),), error="line 1: 'x' is not JSON")
    assert from_json(json.loads(json.dumps(to_json(errored)))) == errored


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(fmt=st.sampled_from(FORMATS), text=st.one_of(
    st.text(max_size=300),
    st.lists(st.sampled_from([
        "BenchmarkA-2 10 5 ns/op", "BenchmarkA-2 1 x", "pkg: a/b", "--- FAIL: BenchmarkB",
        "test a ... bench: 1,234 ns/iter (+/- 5)", "test b ... bench: ?", "test c ... FAILED",
        '{"name": "n", "value": 1, "unit": "ms"}', '{"benchmarks": [{"name": "x"}]}',
        '{"benchmarks": [{"run_name": "x", "real_time": 1}]}', "", "\x00\x1b", "é\u2028",
    ]), max_size=12).map("\n".join)))
def test_parse_never_raises_only_reports(fmt: str, text: str) -> None:
    parsed = parse(fmt, text)
    assert (parsed.error is None) == bool(parsed.entries)
    for entry in parsed.entries:
        assert math.isfinite(entry.value) and entry.value >= 0
        assert formats._name_problem(entry.name, formats.MAX_NAME_CHARS) is None
    if parsed.error is not None:
        assert not any(formats._is_bad(c) for c in parsed.error)
    json.dumps(to_json(parsed), allow_nan=False)


_NAMES = st.text(st.characters(blacklist_categories=("Cc", "Cf", "Cs", "Zl", "Zp")),
                 min_size=1, max_size=40)


@settings(max_examples=100, deadline=None)
@given(results=st.lists(st.tuples(_NAMES, st.floats(0, 1e12), st.sampled_from(["ns", "ms", "B"])),
                        min_size=1, max_size=8, unique_by=lambda r: r[0]))
def test_jsonl_reads_back_what_a_program_writes(results: list[tuple[str, float, str]]) -> None:
    text = "".join(json.dumps({"name": n, "value": v, "unit": u, "better": "lower"}) + "\n"
                   for n, v, u in results)
    got = parse("jsonl", text)
    assert [(e.name, e.select) for e in got.entries] == [(n, n) for n, _, _ in results]
    for entry, (_, value, unit) in zip(got.entries, results, strict=True):
        assert entry.value == pytest.approx(value * (1e6 if unit == "ms" else 1.0))


_GO_SUB = st.text(st.characters(blacklist_categories=("Cc", "Cf", "Cs", "Zl", "Zp", "Zs")),
                 min_size=1, max_size=12).filter(lambda s: not any(c.isspace() for c in s))


@settings(max_examples=100, deadline=None)
@given(results=st.lists(st.tuples(st.from_regex(r"[A-Z][A-Za-z0-9_]{0,8}", fullmatch=True),
                                  _GO_SUB, st.floats(0, 1e9), st.integers(1, 3)),
                        min_size=1, max_size=6, unique_by=lambda r: (r[0], r[1])))
def test_go_and_bencher_read_back_what_the_harness_prints(
        results: list[tuple[str, str, float, int]]) -> None:
    go = "".join(f"Benchmark{top}/{sub}-8 \t 100\t {value:.4f} ns/op\t 3 B/op\n" * count
                 for top, sub, value, count in results)
    got = by_name(parse("go", "goos: linux\npkg: example.com/p\n" + go + "PASS\n"))
    assert [(e.name, e.select) for e in got.values()] == [
        (f"Benchmark{top}/{sub}", f"Benchmark{top}") for top, sub, _, _ in results]
    for entry, (_, _, value, _) in zip(got.values(), results, strict=True):
        assert entry.value == pytest.approx(value, abs=1e-4)
        assert entry.extras == (("B/op", 3.0), ("iterations", 100.0))
    bencher = "".join(f"test {top}::{sub} ... bench: {value:,.2f} ns/iter (+/- 1)\n"
                      for top, sub, value, _ in results)
    got = by_name(parse("bencher", "running 3 tests\n" + bencher + "\ntest result: ok.\n"))
    assert list(got) == [f"{top}::{sub}" for top, sub, _, _ in results]
    for entry, (_, _, value, _) in zip(got.values(), results, strict=True):
        assert entry.value == pytest.approx(value, abs=0.01)


# --- filter_regex --------------------------------------------------------------------------


def _as_python(fmt: str, regex: str) -> str:
    """The dialect's regex as Python's re reads it: the escapes filter_regex writes
    (brackets, \\^, \\\\ and \\x{H}) mean the same there once \\x{H} is spelled \\U."""
    if fmt in ("go", "bencher"):
        return re.sub(r"\\x\{([0-9A-F]+)\}", lambda m: f"\\U{int(m.group(1), 16):08x}", regex)
    if fmt == "google-benchmark":  # the same set, which Python warns may one day be nested
        return regex.replace("[[]", "\\[")
    return regex


@settings(max_examples=150, deadline=None)
@given(fmt=st.sampled_from(FORMATS), names=st.lists(_NAMES, min_size=1, max_size=6),
       others=st.lists(_NAMES, max_size=6))
def test_filter_regex_matches_exactly_the_selected_names(fmt: str, names: list[str],
                                                         others: list[str]) -> None:
    if fmt == "go" and any(not n.split("/", 1)[0] for n in names):
        # A go name with nothing before its first "/" has no top level to select: refused
        # (the runner then runs the whole suite; test_suite_engine).
        with pytest.raises(ValueError, match="the name is empty"):
            filter_regex(fmt, names)
        return
    regex = filter_regex(fmt, names)
    assert regex.startswith("^(") and regex.endswith(")$")
    body = regex[2:-2]
    assert re.fullmatch(r"[A-Za-z0-9_|\\\[\]{}^\x80-\U0010ffff]*", body) or fmt == "google-benchmark"
    compiled = re.compile(_as_python(fmt, regex))
    wanted = {n.split("/", 1)[0] if fmt == "go" else n for n in names}
    for candidate in [*names, *others, *(n + "x" for n in names), *("x" + n for n in names)]:
        assert bool(compiled.search(candidate)) == (candidate in wanted), (regex, candidate)


def test_filter_regex_escapes_per_dialect() -> None:
    names = ["BM_Fill<int>", "a b/[c]^$\\", "é"]
    assert filter_regex("google-benchmark", names) == \
        "^(BM_Fill[<]int[>]|a[ ]b[/][[]c[]]\\^[$]\\\\|é)$"
    assert filter_regex("bencher", ["a/b c", "é"]) == "^(a\\x{2F}b\\x{20}c|\\x{E9})$"
    assert filter_regex("go", ["BenchmarkA/n=1", "BenchmarkA/n=2", "BenchmarkÜ"]) == \
        "^(BenchmarkA|Benchmark\\x{DC})$"
    assert filter_regex("jsonl", ["a.b", "😀"]) == "^(a\\x2eb|\\U0001f600)$"
    with pytest.raises(ValueError, match="no benchmarks to select"):
        filter_regex("jsonl", [])
    with pytest.raises(ValueError, match="control characters"):
        filter_regex("jsonl", ["a\nb"])


# --- the harnesses' own matchers (slow: they compile and run real programs) --------------

_TRICKY = ["BM_Plain", "BM_Sort/8", "BM_Fill<int>", "BM_Fill<double>", "ns::BM_X:2",
           "with space", "brackets[1]", "parens(a)|b", "dot.star*", "caret^dollar$",
           "back\\slash", "braces{2}", "plus+q?", "ünïcode/名前", "BM_Sort/80", "-dash"]

_REGISTER = """\
#include <benchmark/benchmark.h>
#include <cstdlib>
#include <fstream>
#include <string>
static void Nothing(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(state.iterations());
}
int main(int argc, char** argv) {
  std::ifstream names(std::getenv("BENCH_NAMES"));
  for (std::string n; std::getline(names, n);) benchmark::RegisterBenchmark(n.c_str(), Nothing);
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
}
"""


@pytest.fixture(scope="module")
def google_binary(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if shutil.which("g++") is None or not Path("/usr/include/benchmark/benchmark.h").exists():
        pytest.skip("g++ or libbenchmark-dev (google-benchmark) is not installed")
    work = tmp_path_factory.mktemp("gbench")
    (work / "reg.cc").write_text(_REGISTER)
    made = subprocess.run(["g++", "reg.cc", "-O1", "-o", "reg", "-lbenchmark", "-lpthread"],
                          cwd=work, capture_output=True, text=True)
    if made.returncode != 0:
        pytest.skip(f"cannot build against libbenchmark: {made.stderr[-300:]}")
    (work / "names.txt").write_text("".join(n + "\n" for n in _TRICKY))
    return work


@pytest.mark.slow
@pytest.mark.parametrize("chosen", [_TRICKY, _TRICKY[1:2], ["BM_Fill<int>", "caret^dollar$"],
                                    ["back\\slash", "ünïcode/名前", "with space", "-dash"],
                                    ["parens(a)|b", "dot.star*", "braces{2}", "plus+q?"]])
def test_google_benchmark_filter_selects_exactly_them(google_binary: Path,
                                                      chosen: list[str]) -> None:
    env = dict(os.environ, BENCH_NAMES=str(google_binary / "names.txt"))
    listed = subprocess.run(
        ["./reg", "--benchmark_list_tests",
         "--benchmark_filter=" + filter_regex("google-benchmark", chosen)],
        cwd=google_binary, env=env, capture_output=True, text=True, check=True)
    assert listed.stdout.splitlines() == [n for n in _TRICKY if n in chosen]


@pytest.mark.slow
def test_google_benchmark_filter_round_trip_through_a_real_run(google_binary: Path) -> None:
    env = dict(os.environ, BENCH_NAMES=str(google_binary / "names.txt"))
    def run(*extra: str) -> Parsed:
        out = subprocess.run(["./reg", "--benchmark_format=json", "--benchmark_min_time=0.001",
                              *extra], cwd=google_binary, env=env, capture_output=True,
                             text=True, check=True)
        return parse("google-benchmark", out.stdout)
    everything = run()
    assert [e.name for e in everything.entries] == _TRICKY
    chosen = [e.select for e in everything.entries][::3]
    again = run("--benchmark_filter=" + filter_regex("google-benchmark", chosen))
    assert [e.name for e in again.entries] == chosen


_GO_BENCH = """\
package tricky

import "testing"

func nothing(b *testing.B) {
	for i := 0; i < b.N; i++ {
	}
}

func BenchmarkPlain(b *testing.B)   { nothing(b) }
func BenchmarkPlainer(b *testing.B) { nothing(b) }
func Benchmark_under(b *testing.B)  { nothing(b) }
func BenchmarkÜber(b *testing.B)    { nothing(b) }

func BenchmarkSub(b *testing.B) {
	for _, name := range []string{"a/b", "x<y>", "k:v", "with space", "[1]", "(p)|q"} {
		b.Run(name, nothing)
	}
}
"""


@pytest.mark.slow
@pytest.mark.parametrize("chosen", [["BenchmarkSub/x<y>"], ["BenchmarkPlain", "BenchmarkÜber"],
                                    ["Benchmark_under", "BenchmarkSub/a/b", "BenchmarkSub/[1]"]])
def test_go_filter_selects_exactly_them(tmp_path: Path, chosen: list[str]) -> None:
    if shutil.which("go") is None:
        pytest.skip("go is not installed")
    (tmp_path / "go.mod").write_text("module example.com/tricky\n\ngo 1.19\n")
    (tmp_path / "tricky_test.go").write_text(_GO_BENCH)
    env = dict(os.environ, GOCACHE=str(tmp_path / "cache"), GOPATH=str(tmp_path / "gopath"),
               GOFLAGS="-mod=mod", GOPROXY="off", GOTOOLCHAIN="local")
    def run(pattern: str) -> Parsed:
        out = subprocess.run(["go", "test", "-run", "^$", "-bench", pattern, "-benchtime", "1x"],
                             cwd=tmp_path, env=env, capture_output=True, text=True)
        assert out.returncode == 0, out.stdout + out.stderr
        return parse("go", out.stdout)
    everything = run(".")
    names = [e.name for e in everything.entries]
    assert "BenchmarkSub/x<y>" in names and "BenchmarkSub/with_space" in names
    again = run(filter_regex("go", chosen))
    tops = {c.split("/", 1)[0] for c in chosen}
    assert [e.name for e in again.entries] == [n for n in names if n.split("/", 1)[0] in tops]
