"""Suites through the real engine: a C harness speaking the JSON-lines protocol, built in
real worktrees, run in the sandbox the config asks for (the real harnesses' own tests are
in test_suites.py).

In the fast tier the harness reports planted figures (each benchmark's amount of work, with
a little noise that follows the order of its runs), so its verdicts do not rest on this
machine's timing; the slow tier's ``measured`` cases have it time its loops for real."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from benchbot.config.settings import Overrides
from benchbot.core.model import Family, Results, Shard
from benchbot.measure import engine
from benchbot.results.resultsdir import to_json as as_json
from tests.conftest import MakeRepo

# A harness of three benchmarks: each times 20 calls of a loop and prints the fastest (with
# PLANTED in scale.h: prints the loop's length in ns instead, 0.25% apart from one run to
# the next at most, and runs no loop). It runs the benchmarks its arguments name (all
# without any), logs its argv to $LOG, writes its report to the file after --out where one
# is given, and misbehaves as MODE in scale.h says.
HARNESS_C = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "scale.h"
static volatile unsigned long sink;
static FILE *out;
static void work(long n) { unsigned long s = 0; for (long i = 0; i < n; i++) s += (unsigned long)i * 2654435761u; sink = s; }
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e9 + t.tv_nsec; }
static int wanted(const char *name, int argc, char **argv) {
  int named = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--out")) { i++; continue; }
    named = 1;
    if (!strcmp(argv[i], name)) return 1;
  }
  return !named;
}
static long runs;  /* the harness's runs before this one (the lines in $LOG) */
static void bench(const char *name, long n, int argc, char **argv) {
  if (!wanted(name, argc, argv)) return;
  double t = 1e300;  /* the fastest of 20 calls: a harness's own defence against preemption */
  if (PLANTED) t = n * (1.0 + 0.0005 * ((runs * 7919 + n) % 11 - 5));
  else for (int k = 0; k < 20; k++) { double t0 = now(); work(n); double d = now() - t0; if (d < t) t = d; }
  fprintf(out, "{\"name\": \"%s\", \"value\": %.1f, \"unit\": \"ns\"}\n", name, t);
}
int main(int argc, char **argv) {
  out = stdout;
  for (int i = 1; i + 1 < argc; i++) if (!strcmp(argv[i], "--out")) out = fopen(argv[i + 1], "w");
  const char *log = getenv("LOG");
  FILE *before = log ? fopen(log, "r") : NULL;
  if (before) { for (int c; (c = fgetc(before)) != EOF;) runs += c == '\n'; fclose(before); }
  if (log) { FILE *f = fopen(log, "a"); for (int i = 1; i < argc; i++) fprintf(f, "%s ", argv[i]); fprintf(f, "\n"); fclose(f); }
  if (MODE == 1 && argc == 1) { fprintf(stderr, "boom: the harness broke\n"); return 3; }
  if (MODE == 2) { fprintf(out, "<script>alert(1)</script> | not json\n"); return 0; }
  bench("add", 150000, argc, argv);
  bench("mul/8", (long)(150000 * SCALE), argc, argv);
  bench("copy[x]", 100000, argc, argv);
  if (EXTRA) bench("new one", 50000, argc, argv);
  return 0;
}
"""


def _scale(scale: float = 1.0, mode: int = 0, extra: int = 0, timing: str = "planted") -> str:
    planted = int(timing == "planted")
    return f"#define SCALE {scale}\n#define MODE {mode}\n#define EXTRA {extra}\n#define PLANTED {planted}\n"


TIMINGS = ["planted", pytest.param("measured", marks=pytest.mark.slow)]


def _config(log: Path, *, run: str = "['./bench']", extra: str = "",
            pairs: str = "max_runs: 300") -> str:
    return (
        "version: 1\n"
        "build: cc -O1 -o bench bench.c\n"
        f"sandbox: {{writable: ['{log.parent}']}}\n"
        "budget: 2m\n"
        "suites:\n"
        "  - name: core\n"
        f"    run: {run}\n"
        "    format: jsonl\n"
        f"    env: {{LOG: '{log}'}}\n"
        f"    {pairs}\n"
        f"{extra}"
    )


def _compare(repo: Path, **over: object) -> dict:
    doc: Results = engine.compare(engine.Request(repo=repo, base="base", head="HEAD",
                                                 overrides=Overrides(**over)))  # type: ignore[arg-type]
    return as_json(doc)


def _verdicts(doc: dict) -> dict[str, str]:
    return {b["name"]: b["verdict"]["outcome"] for b in doc["benchmarks"]}


@pytest.mark.real_runs("the harness's figures are planted; its processes' own times are not judged")
@pytest.mark.parametrize("timing", TIMINGS)
def test_each_benchmark_of_a_suite_is_judged_and_the_filter_runs_only_the_unsettled(
        make_repo: MakeRepo, tmp_path: Path, validate, timing: str) -> None:
    log = tmp_path / "argv.log"
    repo = make_repo({"benchbot.yml": _config(log, extra="    filter: ['{name}']\n"),
                      "bench.c": HARNESS_C, "scale.h": _scale(timing=timing)},
                     {"scale.h": _scale(1.6, timing=timing)})
    doc = _compare(repo)
    validate(doc)
    verdicts = _verdicts(doc)
    assert verdicts["core/mul/8"] == "slower"  # 1.6x the work
    assert verdicts["core/add"] in ("level", "inconclusive")
    assert verdicts["core/copy[x]"] in ("level", "inconclusive")
    bench = {b["name"]: b for b in doc["benchmarks"]}
    assert bench["core/mul/8"]["verdict"]["ratio"] == pytest.approx(1.6, rel=0.1)
    assert bench["core/add"]["counts"]["method"] is None  # a process's count is no one benchmark's
    assert "memory" not in bench["core/add"]  # nor is its peak memory
    [suite] = doc["suites"]
    assert suite["benchmarks"] == ["add", "mul/8", "copy[x]"] and suite["filtered"] is True
    calls = [line.split() for line in log.read_text().splitlines()]
    assert calls[0] == [] and calls[1] == []  # discovery: the whole suite once per arm
    # Later rounds name only the benchmarks still measuring, once they differ from all.
    pairs = {name: b["measuring"]["pairs"] for name, b in bench.items()}
    if len(set(pairs.values())) > 1:
        assert any(0 < len(c) < 3 for c in calls[2:])
    # Every process served all its benchmarks in one go: far fewer starts than the
    # benchmarks' runs together (three arms a round).
    assert len(calls) - 2 <= 3 * max(pairs.values()) + 3


@pytest.mark.real_runs("the harness's figures are planted; its processes' own times are not judged")
def test_a_benchmark_in_one_arm_only_is_added_not_compared_and_output_goes_to_a_file(
        make_repo: MakeRepo, tmp_path: Path, validate) -> None:
    log = tmp_path / "argv.log"
    repo = make_repo({"benchbot.yml": _config(log, run="['./bench', '--out', '{output}']",
                                              pairs="runs: 12"),
                      "bench.c": HARNESS_C, "scale.h": _scale()},
                     {"scale.h": _scale(1.6, extra=1)})
    results = engine.compare(engine.Request(repo=repo, base="base", head="HEAD"))
    doc = as_json(results)
    validate(doc)
    assert set(_verdicts(doc)) == {"core/add", "core/mul/8", "core/copy[x]"}
    assert _verdicts(doc)["core/mul/8"] == "slower"
    [suite] = doc["suites"]
    assert suite["added"] == ["new one"] and suite["removed"] == []
    assert suite["filtered"] is False
    args = log.read_text().split()
    assert args[0] == "--out" and args[1].endswith("/report") and "{output}" not in args[1]
    # The comment, rendered as GitHub renders it: the suite's line names the new benchmark.
    cmarkgfm = pytest.importorskip("cmarkgfm")
    from benchbot.report import render_comment

    html = cmarkgfm.github_flavored_markdown_to_html(render_comment(results, 65_000))
    assert "Suite <code>core</code> (jsonl): 3 benchmarks compared; new in head, not " \
           "compared: <code>new one</code>." in html
    assert "<code>core/mul/8</code>" in html


@pytest.mark.real_runs("the harness's figures are planted; its processes' own times are not judged")
@pytest.mark.parametrize("mode, code, quoted", [
    (1, "run_failed", "boom: the harness broke"),
    (2, "no_metric", "<script>alert(1)</script>"),
])
def test_a_broken_harness_is_one_invalid_workload_and_the_others_are_judged(
        make_repo: MakeRepo, tmp_path: Path, validate, mode: int, code: str, quoted: str) -> None:
    log = tmp_path / "argv.log"
    config = _config(log) + ("workloads:\n"
                             "  - name: plain\n"
                             "    run: ['./bench', 'add']\n"
                             "    runs: 10\n")
    repo = make_repo({"benchbot.yml": config, "bench.c": HARNESS_C, "scale.h": _scale()},
                     {"scale.h": _scale(mode=mode)})
    results = engine.compare(engine.Request(repo=repo, base="base", head="HEAD"))
    doc = as_json(results)
    validate(doc)
    bench = {b["name"]: b for b in doc["benchmarks"]}
    assert bench["core"]["verdict"]["outcome"] == "invalid"
    assert bench["core"]["verdict"]["reason_code"] == code
    assert quoted in bench["core"]["verdict"]["reason"]
    assert "the head run" in bench["core"]["verdict"]["reason"]
    assert bench["plain"]["verdict"]["outcome"] != "invalid"  # its own runs are fine
    [suite] = doc["suites"]
    assert quoted in suite["failure"]
    from benchbot.report.build import build_view
    from benchbot.report.render import render
    from benchbot.results import resultsdir as results_file

    assert results_file.parse(json.loads(json.dumps(doc))) == results  # the file reads back
    for fmt in ("markdown", "html"):
        assert "<script>" not in render(build_view(results), fmt)  # escaped wherever shown


@pytest.mark.real_runs("the harness's figures are planted; its processes' own times are not judged")
def test_only_picks_one_benchmark_of_a_suite(make_repo: MakeRepo, tmp_path: Path) -> None:
    log = tmp_path / "argv.log"
    repo = make_repo({"benchbot.yml": _config(log, pairs="runs: 12"), "bench.c": HARNESS_C,
                      "scale.h": _scale()}, {"scale.h": _scale(1.6)})
    doc = _compare(repo, only=("core/mul/8", "core/nope"))
    assert set(_verdicts(doc)) == {"core/mul/8"}
    assert doc["suites"][0]["not_found"] == ["nope"]


@pytest.mark.real_runs("the harness's figures are planted; its processes' own times are not judged")
def test_a_suite_on_two_shards_runs_each_share_alone_and_merges_as_one(
        make_repo: MakeRepo, tmp_path: Path, validate) -> None:
    log = tmp_path / "argv.log"
    repo = make_repo({"benchbot.yml": _config(log, extra="    filter: ['{name}']\n"),
                      "bench.c": HARNESS_C, "scale.h": _scale()}, {"scale.h": _scale(1.6)})
    docs, asked = [], []
    for k in (1, 2):  # before: "a comparison with suites cannot be sharded yet"
        before = len(log.read_text().splitlines()) if log.exists() else 0
        docs.append(engine.compare(engine.Request(repo=repo, base="base", head="HEAD",
                                                  shard=Shard(index=k, count=2))))
        asked.append([line.split() for line in log.read_text().splitlines()[before:]])
    shares = [{b.name for b in d.benchmarks} for d in docs]
    # dealt in turn from the sorted list: core/add, core/copy[x], core/mul/8
    assert shares == [{"core/add", "core/mul/8"}, {"core/copy[x]"}]
    for doc, share, argvs in zip(docs, shares, asked, strict=True):
        validate(as_json(doc))
        assert sorted(doc.suites[0].benchmarks) == ["add", "copy[x]", "mul/8"]
        assert doc.settings.family == Family(sequential=3, fixed=0)
        # its discovery (base and head) ran the whole suite; every round after, its share
        assert argvs[:2] == [[], []]
        rounds = [{f"core/{a}" for a in argv if a != "--out" and not a.startswith("/")}
                  for argv in argvs[2:]]
        assert rounds and all(r and r <= share for r in rounds), rounds
    from benchbot.config.find import read_config
    from benchbot.results import merging

    base, head = docs[0].base.sha, docs[0].head.sha
    split = engine.split_of(repo, read_config(repo, base), base, head, 2)
    merged = merging.merge([merging.ShardFile(f"shard {k}", d) for k, d in enumerate(docs, 1)],
                           split=split)
    validate(as_json(merged))
    assert {b.name: b.verdict.outcome for b in merged.benchmarks} == {
        "core/add": "level", "core/mul/8": "slower", "core/copy[x]": "level"}


def test_the_filter_is_built_from_names_as_data(tmp_path: Path) -> None:
    from benchbot.run.runner import filter_argv

    names = ["a; rm -rf /", "$(x)", "{regex}", "b/c"]
    argv = filter_argv(["--only", "{name}", "--re={regex}"], "jsonl", names)
    assert argv[:5] == ["--only", *names]
    import re

    pattern = argv[5].removeprefix("--re=")
    assert all(re.fullmatch(pattern, n) for n in names)
    assert not re.fullmatch(pattern, "a") and not re.fullmatch(pattern, "b/cd")
    assert shlex.join(argv)  # an argv, never a command line: no shell is involved


@pytest.mark.real_runs("the harness's figures are planted; its processes' own times are not judged")
def test_a_suite_measured_with_a_fixed_number_of_pairs(make_repo: MakeRepo, tmp_path: Path,
                                                       validate) -> None:
    log = tmp_path / "argv.log"
    repo = make_repo({"benchbot.yml": _config(log, pairs="runs: 12"),
                      "bench.c": HARNESS_C, "scale.h": _scale()},
                     {"scale.h": _scale(1.6)})
    doc = _compare(repo)
    validate(doc)
    assert _verdicts(doc)["core/mul/8"] == "slower"
    bench = {b["name"]: b for b in doc["benchmarks"]}
    assert len(bench["core/add"]["phases"]["aa"]["arms"]["base"]["samples_ns"]) == 12
    # One harness run per arm per pair, for all three benchmarks at once: discovery (2),
    # the A/A and A/B phases (24 each), and the confirmation of the standout (24).
    starts = len(log.read_text().splitlines())
    assert starts == 2 + 24 + 24 + (24 if "confirm" in bench["core/mul/8"]["phases"] else 0)


def test_a_name_the_filter_cannot_select_runs_the_whole_suite(tmp_path: Path) -> None:
    from benchbot.config.config import WorkloadConfig
    from benchbot.run.runner import Harness, Target, suite_request

    members = [WorkloadConfig(name=f"g/{n}", run=("./g.test",), suite="g", bench=n, select=n)
               for n in ("/odd", "BenchmarkA")]
    how = Harness(format="go", filter=("-test.bench={regex}",),
                  benchmarks=("g//odd", "g/BenchmarkA", "g/BenchmarkB"))
    made = suite_request(Target(argv=("./g.test",), cwd=tmp_path), members, {}, how)
    assert made.argv == ("./g.test",) and made.harness == "go"
    made = suite_request(Target(argv=("./g.test",), cwd=tmp_path), members[1:], {}, how)
    assert made.argv == ("./g.test", "-test.bench=^(BenchmarkA)$")
