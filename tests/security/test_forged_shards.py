"""Shards do not vouch for themselves (issue 38, finding 7).

Each shard's results file states the split of the whole (`shard.plan`), the family of the
error control (`settings.family`) and the config's digest, and it is written on a machine
that ran the pull request's code. Publish used to take the merge's split and family from
the files themselves, so a forged shard 1 could claim shard 2's workloads while shard 2
failed (its verdicts shown, nothing named as unmeasured), or judge with a family of one.
Now publish computes the split again from the config at the commit the gate pinned, and
a file that differs from it is a failed shard, named with what it claimed.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from benchbot import cli
from benchbot.config.load import load_config
from benchbot.git import gitops
from benchbot.measure import engine
from benchbot.results import merging, resultsdir
from tests.fakegithub import FakeGitHub
from tests.ghenv import Env, Run, artifacts, gate_shards, measure_shard, publish_shards, sticky

pytestmark = pytest.mark.usefixtures("planted")


def _two_shards(env: Env) -> tuple[dict, str, Run, Run]:
    payload = env.comment_event("/bench")
    job = gate_shards(env, payload).outputs["job"]
    return payload, job, measure_shard(env, payload, job, "1/2"), measure_shard(env, payload, job, "2/2")


def _failed(env: Env) -> Run:
    """Shard 2's artifact as a failed job leaves it: its error only."""
    broken = env.tmp / "broken"
    broken.mkdir()
    (broken / "error.json").write_text(json.dumps({"kind": "error", "message": "the runner went away"}))
    return Run(0, "", {"artifact": "benchbot-results-shard-2-of-2"}, "", broken)


def _rewrite(run: Run, change) -> None:
    path = run.results_dir / "results.json"
    doc = json.loads(path.read_text())
    change(doc)
    path.write_text(json.dumps(doc))


def test_a_forged_shard_claiming_another_s_workloads_is_refused_naming_them(
        shard_env: Env, fake: FakeGitHub) -> None:
    env = shard_env
    payload, job, first, second = _two_shards(env)
    snooze = next(b for b in json.loads((second.results_dir / "results.json").read_text())["benchmarks"])
    assert snooze["name"] == "snooze"

    def claim_both(doc: dict) -> None:  # shard 1 takes snooze, and says the split is its own
        doc["benchmarks"].append(snooze)
        doc["shard"]["plan"] = [["nap", "snooze"], []]

    _rewrite(first, claim_both)
    done = publish_shards(env, payload, job, artifacts(env, first, _failed(env)), result="failure")
    assert done.outputs["conclusion"] == "failure"
    (check,) = fake.check_runs.values()
    assert (check["status"], check["conclusion"]) == ("completed", "failure")
    summary = check["output"]["summary"]
    # before: merged, with snooze shown as measured by shard 1 and nothing unmeasured
    assert "no shard of the 2 reported results" in summary, summary
    assert ("shard 1/2: failed: not merged: shard 1 claims workload 'snooze', which is shard "
            "2's in the split of the config at the pinned base") in summary
    assert "shard 2/2: failed: the runner went away" in summary
    assert "could not run" in sticky(fake)[0]["body"]


def test_a_shard_stating_a_smaller_family_is_refused_and_the_other_is_published(
        shard_env: Env, fake: FakeGitHub) -> None:
    env = shard_env
    payload, job, first, second = _two_shards(env)
    _rewrite(second, lambda doc: doc["settings"].update(family={"sequential": 0, "fixed": 1}))
    done = publish_shards(env, payload, job, artifacts(env, first, second), result="success")
    merged = json.loads(Path(done.outputs["results"]).read_text())
    assert [b["name"] for b in merged["benchmarks"]] == ["nap"]
    assert merged["settings"]["family"] == {"sequential": 0, "fixed": 2}  # the config's
    assert merged["unmeasured"] == ["snooze"]
    assert [f["index"] for f in merged["failed_shards"]] == [2]
    body = sticky(fake)[0]["body"]
    assert ("**Shard 2 of 2 failed:** not merged: shard 2 states a family of 0 sequential and "
            "1 fixed workloads; the config's is 0 sequential and 2 fixed workloads") in body
    assert "Not measured: `snooze`" in body


def test_honest_shards_match_the_split_publish_computes(shard_env: Env, fake: FakeGitHub) -> None:
    env = shard_env
    payload, job, first, second = _two_shards(env)
    done = publish_shards(env, payload, job, artifacts(env, first, second))
    merged = json.loads(Path(done.outputs["results"]).read_text())
    assert sorted(b["name"] for b in merged["benchmarks"]) == ["nap", "snooze"]
    assert merged["failed_shards"] == [] and merged["unmeasured"] == []


# --- benchbot merge --repo -----------------------------------------------------------------


def _shard_files(env: Env, tmp_path: Path) -> list[Path]:
    _, _, first, second = _two_shards(env)
    paths = []
    for k, run in enumerate((first, second), 1):
        path = tmp_path / f"shard{k}.json"
        path.write_text((run.results_dir / "results.json").read_text())
        paths.append(path)
    return paths


def test_merge_with_the_repository_recomputes_the_split_and_refuses_a_forged_shard(
        shard_env: Env, tmp_path: Path) -> None:
    env = shard_env
    one, two = _shard_files(env, tmp_path)
    repo = ["--repo", str(env.ws.path)]
    out = io.StringIO()
    assert cli.main(["merge", *repo, str(one), str(two)], out=out, err=io.StringIO()) == 0
    assert json.loads(out.getvalue())["settings"]["family"] == {"sequential": 0, "fixed": 2}

    doc = json.loads(one.read_text())
    doc["benchmarks"] += json.loads(two.read_text())["benchmarks"]
    doc["shard"]["plan"] = [["nap", "snooze"], []]
    one.write_text(json.dumps(doc))
    err = io.StringIO()
    assert cli.main(["merge", "--allow-missing", *repo, str(one)], out=io.StringIO(), err=err) == 1
    assert err.getvalue() == (f"benchbot: error: cannot merge {one}: shard 1 claims workload "
                              "'snooze', which is shard 2's in the split of the config at the "
                              "pinned base\n")
    # without the repository the file's own word is all there is: merged as it says
    assert cli.main(["merge", "--allow-missing", str(one)], out=io.StringIO(), err=io.StringIO()) == 0


def test_split_of_is_what_each_shard_computed(shard_env: Env, tmp_path: Path) -> None:
    env = shard_env
    one, two = _shard_files(env, tmp_path)
    docs = [resultsdir.load(p) for p in (one, two)]
    config = load_config(env.ws.path / "benchbot.yml")
    split = engine.split_of(gitops.toplevel(env.ws.path), config, env.ws.base_sha,
                            env.ws.head_sha, 2)
    assert all(merging.refusal(d, split) is None for d in docs)
    assert split.plan == (("nap",), ("snooze",)) and split.owner("snooze") == 2
