"""``paths:`` on a real repository: the workloads a change cannot affect are skipped, shown,
and measured with ``--all``; with every workload skipped nothing is built or run."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from benchbot import cli
from benchbot.config.settings import Overrides
from benchbot.git import gitops
from benchbot.measure import engine
from benchbot.results.resultsdir import to_json as as_json
from tests.conftest import MakeRepo, git

# Each program appends "<arm> <name>" to $LOG when it starts; the build appends "build".
LOGGER = '#!/bin/sh\necho "{arm} $1" >> "$LOG"\n'


def _config(log: Path) -> str:
    return f"""version: 1
sandbox: {{writable: ['{log.parent}']}}
build: echo build >> '{log}'
aa: off
confirm: off
defaults:
  runs: 10
  env: {{LOG: '{log}'}}
workloads:
  - name: alpha
    run: ['./src/a/prog.sh', 'alpha']
    paths: ["src/a/**"]
  - name: beta
    run: ['./src/b/prog.sh', 'beta']
    paths: ["src/b/", "*.mk"]
"""


def _repo(make_repo: MakeRepo, log: Path, head: dict[str, str | None]) -> Path:
    return make_repo({"benchbot.yml": _config(log), "README.md": "hello\n",
                      "src/a/prog.sh": LOGGER.format(arm="base"),
                      "src/b/prog.sh": LOGGER.format(arm="base")}, head)


def _started(log: Path) -> set[str]:
    return {line.split()[-1] for line in log.read_text().splitlines()} if log.exists() else set()


@pytest.mark.real_runs("which workloads are measured and which skipped: not their times")
def test_a_workload_whose_paths_the_change_misses_is_skipped(make_repo: MakeRepo, tmp_path: Path,
                                                              validate) -> None:
    log = tmp_path / "starts.log"
    repo = _repo(make_repo, log, {"src/b/prog.sh": LOGGER.format(arm="head")})
    doc = as_json(engine.compare(engine.Request(repo=repo, base="base", head="HEAD")))
    validate(doc)
    assert [b["name"] for b in doc["benchmarks"]] == ["beta"]
    assert doc["skipped"] == [{"name": "alpha", "why": "not affected", "paths": ["src/a/**"]}]
    assert _started(log) == {"build", "beta"}  # alpha never ran


@pytest.mark.real_runs("which workloads are measured and which skipped: not their times")
def test_all_measures_the_skipped_workloads_too(make_repo: MakeRepo, tmp_path: Path,
                                                validate) -> None:
    log = tmp_path / "starts.log"
    repo = _repo(make_repo, log, {"src/b/prog.sh": LOGGER.format(arm="head")})
    out, err, results = io.StringIO(), io.StringIO(), tmp_path / "r.json"
    code = cli.main(["compare", "--repo", str(repo), "--base", "base", "--head", "HEAD", "--all",
                     "--json", str(results), "--quiet"], out=out, err=err)
    assert code == 0, err.getvalue()
    doc = json.loads(results.read_text())
    validate(doc)
    assert [b["name"] for b in doc["benchmarks"]] == ["alpha", "beta"] and "skipped" not in doc
    assert _started(log) == {"build", "alpha", "beta"}
    assert "Skipped" not in out.getvalue()


@pytest.mark.real_runs("which workloads are measured and which skipped: not their times")
def test_the_report_shows_the_skipped_workloads(make_repo: MakeRepo, tmp_path: Path) -> None:
    log = tmp_path / "starts.log"
    repo = _repo(make_repo, log, {"src/b/prog.sh": LOGGER.format(arm="head")})
    out, err = io.StringIO(), io.StringIO()
    code = cli.main(["compare", "--repo", str(repo), "--base", "base", "--head", "HEAD", "--quiet"],
                    out=out, err=err)
    assert code == 0, err.getvalue()
    assert ("Skipped, not affected by this change (paths): `alpha` — `--all` measures them."
            in out.getvalue())


def test_with_every_workload_skipped_nothing_is_built_or_run(make_repo: MakeRepo, tmp_path: Path,
                                                             validate) -> None:
    log = tmp_path / "starts.log"
    repo = _repo(make_repo, log, {"README.md": "hello again\n"})
    out, err, results = io.StringIO(), io.StringIO(), tmp_path / "r.json"
    code = cli.main(["compare", "--repo", str(repo), "--base", "base", "--head", "HEAD",
                     "--json", str(results), "--fail-on", "slower,inconclusive,invalid"],
                    out=out, err=err)
    assert code == 0, err.getvalue()
    assert not log.exists()  # neither the build nor any run
    doc = json.loads(results.read_text())
    validate(doc)
    assert doc["benchmarks"] == [] and [s["name"] for s in doc["skipped"]] == ["alpha", "beta"]
    assert doc["summary"]["conclusion"] == "success"
    assert "Nothing was measured" in out.getvalue() and "`alpha`, `beta`" in out.getvalue()
    assert "skipped, not affected by this change (paths): alpha, beta" in err.getvalue()


@pytest.mark.real_runs("which workloads are measured and which skipped: not their times")
def test_a_rename_counts_as_both_names(make_repo: MakeRepo, tmp_path: Path) -> None:
    log = tmp_path / "starts.log"
    repo = _repo(make_repo, log, {"src/a/data.txt": "x\n" * 50})
    (repo / "docs").mkdir()
    git(repo, "mv", "src/a/data.txt", "docs/data.txt")
    git(repo, "commit", "-q", "-m", "move")
    git(repo, "config", "diff.renames", "true")
    assert gitops.changed_files(repo, git(repo, "rev-parse", "HEAD~1"), "HEAD") == (
        "docs/data.txt", "src/a/data.txt")
    doc = as_json(engine.compare(engine.Request(repo=repo, base="HEAD~1", head="HEAD",
                                                overrides=Overrides(aa=False))))
    assert [b["name"] for b in doc["benchmarks"]] == ["alpha"]
    assert [s["name"] for s in doc["skipped"]] == ["beta"]


@pytest.mark.real_runs("which workloads are measured and which skipped: not their times")
def test_shards_skip_alike_and_merge(make_repo: MakeRepo, tmp_path: Path, validate) -> None:
    from benchbot.core.model import Shard
    from benchbot.results import merging

    log = tmp_path / "starts.log"
    repo = _repo(make_repo, log, {"src/b/prog.sh": LOGGER.format(arm="head")})
    docs = [engine.compare(engine.Request(repo=repo, base="base", head="HEAD",
                                          shard=Shard(index=k, count=2)))
            for k in (1, 2)]
    assert [d.shard.plan for d in docs if d.shard] == [(("beta",), ())] * 2  # alpha in neither
    assert all([s.name for s in d.skipped or ()] == ["alpha"] for d in docs)
    merged = merging.merge([merging.ShardFile(f"shard{k}", d) for k, d in enumerate(docs, 1)])
    validate(merged)
    assert [b.name for b in merged.benchmarks] == ["beta"] and merged.skipped == docs[0].skipped
    # the split publish computes again (the changed files included) is the one they hold
    config = engine.read_request_config(engine.Request(repo=repo, base="base", head="HEAD"),
                                        repo, docs[0].base.sha)
    split = engine.split_of(repo, config, docs[0].base.sha, docs[0].head.sha, 2)
    assert split.skipped == ("alpha",) and all(merging.refusal(d, split) is None for d in docs)
    again = merging.merge([merging.ShardFile(f"shard{k}", d) for k, d in enumerate(docs, 1)],
                          split=split)
    assert again.benchmarks == merged.benchmarks


def test_a_file_name_that_is_not_utf8_is_still_seen(make_repo: MakeRepo, tmp_path: Path) -> None:
    import os

    repo = _repo(make_repo, tmp_path / "starts.log", {})
    with open(os.path.join(os.fsencode(repo), b"src", b"a", b"caf\xe9.txt"), "w") as f:
        f.write("x\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "latin-1 name")
    changed = gitops.changed_files(repo, git(repo, "rev-parse", "HEAD~1"), "HEAD")
    assert [os.fsencode(c) for c in changed] == [b"src/a/caf\xe9.txt"]
