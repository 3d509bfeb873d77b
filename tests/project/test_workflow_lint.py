"""The workflows and action.yml pass zizmor (security) and the GitHub JSON Schemas (structure).

Both tools come from PyPI with the `test` extra and work offline. A finding is either
fixed or ignored inline with ``# zizmor: ignore[rule]`` and a reason next to it.
"""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.expressions import interpolate
from tests.workflows import adapted_workflow

ROOT = Path(__file__).resolve().parents[2]
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
ACTION = ROOT / "action.yml"
FILES = [*WORKFLOWS, ACTION]
# Where every job of the three-job workflow takes the action from (issue 38): the
# workflow's own commit, except for the repository's own branches' pull_request.
ACTION_REF = ("${{ github.event_name == 'pull_request' && github.event.pull_request.base.sha "
              "|| github.workflow_sha || github.sha }}")


def _zizmor() -> str:
    found = shutil.which("zizmor") or shutil.which("zizmor", path=str(Path(sys.executable).parent))
    if found is None:
        pytest.skip("zizmor is not installed (pip install '.[test]' installs it)")
    return found


def _check_jsonschema() -> list[str]:
    if importlib.util.find_spec("check_jsonschema") is None:
        pytest.skip("check-jsonschema is not installed (pip install '.[test]' installs it)")
    return [sys.executable, "-m", "check_jsonschema"]


def test_the_files_exist() -> None:
    assert {p.name for p in WORKFLOWS} >= {"ci.yml", "bench.yml"} and ACTION.is_file()


def test_zizmor_finds_nothing() -> None:
    proc = subprocess.run(
        [_zizmor(), "--offline", "--format", "json", *map(str, FILES)],
        capture_output=True, text=True, check=False, timeout=120,
    )
    findings = json.loads(proc.stdout or "[]")
    shown = [f"{f['ident']}: {f['desc']} at {f['locations'][0]['symbolic']['key']}" for f in findings]
    assert findings == [], "\n".join(shown) + proc.stderr
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize("schema, paths", [
    ("vendor.github-workflows", WORKFLOWS),
    ("vendor.github-actions", [ACTION]),
])
def test_schema(schema: str, paths: list[Path]) -> None:
    proc = subprocess.run(
        [*_check_jsonschema(), "--builtin-schema", schema, *map(str, paths)],
        capture_output=True, text=True, check=False, timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_every_ignored_finding_is_justified() -> None:
    for path in FILES:
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if "zizmor: ignore[" in line:
                reason = line.split("]", 1)[1].strip()
                assert reason, f"{path.name}:{number}: an ignored finding needs a reason"


def test_no_expression_in_a_run_script() -> None:
    """Event text reaches scripts through env:, never as ${{ }} inside run:."""
    for path in FILES:
        doc = yaml.safe_load(path.read_text())
        steps = [s for job in (doc.get("jobs") or {}).values() for s in job.get("steps", [])]
        steps += (doc.get("runs") or {}).get("steps", [])
        for step in steps:
            assert not re.search(r"\$\{\{", step.get("run", "")), f"{path.name}: {step}"


def check_trust_zones(doc: dict) -> None:
    """The three-job shape of issue "Safe to run on a self-hosted runner": the job that runs
    pull-request code (measure) holds no write permission; gate and publish hold it and
    run on GitHub-hosted machines; strangers' comments never queue the runner's job."""
    triggers = doc[True]  # YAML 1.1 reads the key `on` as a boolean
    # The repository's branches on pull_request; forks on pull_request_target (the base
    # revision's workflow, a token that may write: a fork's pull_request token cannot).
    assert triggers["pull_request"]["types"] == ["opened", "synchronize", "reopened"]
    assert triggers["pull_request_target"]["types"] == ["labeled", "opened", "synchronize",
                                                        "reopened"]
    assert triggers["issue_comment"]["types"] == ["created"]
    assert doc["permissions"] == {}
    jobs = doc["jobs"]
    gate, measure, publish = jobs["gate"], jobs["measure"], jobs["publish"]
    writes = {"contents": "read", "pull-requests": "write", "checks": "write", "issues": "write"}
    for name, job in (("gate", gate), ("publish", publish)):
        assert job["runs-on"] == "ubuntu-latest", name
        assert job["permissions"] == writes, name
    assert "self-hosted" in measure["runs-on"] and "benchmark" in measure["runs-on"]
    assert measure["permissions"] == {"contents": "read"}
    assert measure["needs"] == "gate" and "needs.gate.outputs.run == 'true'" in measure["if"]
    assert measure["concurrency"]["cancel-in-progress"] is False
    assert "token" not in str(measure["steps"])  # no token of its own to the measure step
    assert "concurrency" not in doc and "concurrency" not in gate  # the gate never queues
    assert set(publish["needs"]) == {"gate", "measure"}
    assert publish["if"].startswith("always()")
    assert gate["outputs"]["job"] == "${{ steps.gate.outputs.job }}"
    condition = " ".join(gate["if"].split())
    assert ("github.event_name == 'pull_request' && "
            "github.event.pull_request.head.repo.full_name == github.repository") in condition
    assert ("github.event_name == 'pull_request_target' && "
            "github.event.pull_request.head.repo.full_name != github.repository") in condition
    for name, job in jobs.items():  # every job runs the action of the workflow's own commit
        checkout = next(s for s in job["steps"] if "actions/checkout" in s.get("uses", ""))
        assert checkout["with"]["ref"] == ACTION_REF, name
    modes = {}
    for name, job in jobs.items():
        step = next(s for s in job["steps"] if s.get("with", {}).get("mode"))
        modes[name] = step["with"]["mode"]
        checkout = next(s for s in job["steps"] if "actions/checkout" in s.get("uses", ""))
        assert checkout["with"]["persist-credentials"] is False, name
    assert modes == {"gate": "gate", "measure": "measure", "publish": "publish",
                     "publish-history": "publish"}
    assert "needs.gate.outputs.job" in str(jobs["measure"]["steps"])
    assert "needs.measure.result" in str(jobs["publish"]["steps"])
    check_push(doc)


def check_push(doc: dict) -> None:
    """A push to the default branch (issue "Watch main"): the same gate and measure; only
    publish-history may write contents (the history branch) and the issue, one at a time;
    the pull requests' publish never runs for a push."""
    triggers, jobs = doc[True], doc["jobs"]
    assert triggers["push"] == {"branches": ["main"]}
    assert "github.event_name == 'push'" in " ".join(jobs["gate"]["if"].split())
    history = jobs["publish-history"]
    assert history["permissions"] == {"contents": "write", "issues": "write"}
    assert history["runs-on"] == "ubuntu-latest" and set(history["needs"]) == {"gate", "measure"}
    assert history["if"].startswith("always()") and "github.event_name == 'push'" in history["if"]
    assert history["concurrency"] == {"group": "benchbot-history", "cancel-in-progress": False}
    assert "github.event_name != 'push'" in jobs["publish"]["if"]
    assert "needs.measure.result" in str(history["steps"])
    writers = [n for n, j in jobs.items() if "write" in str(j.get("permissions", {}).get("contents"))]
    assert writers == ["publish-history"]


def check_sharded(doc: dict) -> None:
    """The shards of issue "Beyond one machine": the gate decides N and outputs the matrix;
    measure is a matrix over it that a failed shard does not cancel, at most as many at
    once as there are machines, one per machine slot; publish merges them all."""
    gate, measure = doc["jobs"]["gate"], doc["jobs"]["measure"]
    assert gate["outputs"]["shards"] == "${{ steps.gate.outputs.shards }}"
    gate_step = next(s for s in gate["steps"] if s.get("with", {}).get("mode") == "gate")
    assert int(gate_step["with"]["shards"]) >= 2
    strategy = measure["strategy"]
    assert strategy["fail-fast"] is False
    assert strategy["matrix"]["shard"] == "${{ fromJSON(needs.gate.outputs.shards) }}"
    assert strategy["max-parallel"] >= 1
    assert "strategy.job-index" in measure["concurrency"]["group"]
    step = next(s for s in measure["steps"] if s.get("with", {}).get("mode") == "measure")
    assert step["with"]["shard"] == "${{ matrix.shard }}"
    assert "matrix.shard" in measure["name"]


def _group(measure: dict, event: str, action: str | None, number: int, slot: int) -> str:
    """The measure job's concurrency group for one event, as GitHub evaluates it."""
    context = {"github": {"event_name": event,
                          "event": {"action": action, "pull_request": {"number": number},
                                    "issue": {"number": number}}},
               "strategy": {"job-index": slot}}
    return interpolate(measure["concurrency"]["group"], context)


@pytest.mark.parametrize("machines", [1, 2])
def test_a_stranger_s_pushes_never_cancel_a_maintainer_s_pending_job(machines: int) -> None:
    """A concurrency group holds one running and one pending job; a newer job cancels the
    pending one (whatever cancel-in-progress says, which only spares the running one).
    With forks: true a stranger's every push queues a measure job: those go to a group
    of their pull request's own, where a push replaces only that pull request's pending
    job. (It used to be one group per machine slot for everything: the stranger's next
    push cancelled a maintainer's /bench waiting for the runner.)"""
    measure = yaml.safe_load(adapted_workflow(machines))["jobs"]["measure"]
    assert measure["concurrency"]["cancel-in-progress"] is False
    for slot in range(machines):
        maintainers = {_group(measure, "issue_comment", "created", 3, slot),  # /bench
                       _group(measure, "issue_comment", "created", 7, slot),
                       _group(measure, "pull_request", "synchronize", 4, slot),  # own branch
                       _group(measure, "pull_request_target", "labeled", 3, slot)}  # fork_label
        strangers = [_group(measure, "pull_request_target", action, 3, slot)
                     for action in ("opened", "synchronize", "reopened")]
        assert not maintainers & set(strangers), (maintainers, strangers)
        assert len(set(strangers)) == 1  # their own pushes: the newest replaces the pending one
        assert _group(measure, "pull_request_target", "synchronize", 5, slot) not in strangers
        assert all(g.startswith(f"benchbot-benchmark-runner-{slot}") for g in
                   [*maintainers, *strangers])  # one machine slot each, as before
    assert len({_group(measure, "issue_comment", "created", 3, s) for s in range(machines)}) == machines


OLD, TIP, MERGE, HEAD = "01d" * 13 + "0", "71b" * 13 + "0", "3e6" * 13 + "0", "4ead" * 10


def _context(event: str, base_ref: str, *, fork: bool) -> dict:
    """The expression context of one event on a repository whose default branch is main
    (its tip TIP): a fork's pull request names ``base_ref`` as its base, at commit OLD (a
    fork chooses both: a base branch, and a pull request opened long ago keeps its
    base.sha). ``github.sha`` and ``github.workflow_sha`` as GitHub sets them."""
    own = "owner/repo"
    pull = {"number": 2, "base": {"ref": base_ref, "sha": OLD},
            "head": {"sha": HEAD, "repo": {"full_name": "someone/repo" if fork else own}}}
    sha = {"pull_request": MERGE, "push": HEAD}.get(event, TIP)
    payload: dict = {"repository": {"default_branch": "main"}, "action": "opened"}
    if event.startswith("pull_request"):
        payload["pull_request"] = pull
    if event == "issue_comment":
        payload.update(issue={"number": 2, "pull_request": {"url": "…"}},
                       comment={"body": "/bench sha=" + HEAD})
    return {"github": {"event_name": event, "repository": own, "sha": sha,
                       "workflow_sha": sha, "event": payload}}


@pytest.mark.parametrize("workflow", ["bench.yml", "adapted"])
def test_a_fork_never_chooses_which_benchbot_runs(workflow: str) -> None:
    """Issue 38: on pull_request_target a fork chooses its base branch, and the jobs used
    to check out that branch's revision (``base.sha``) and run its action, the gate with
    the write token: an older branch's benchbot, which predates the ``fork_bases``
    refusal, approved the fork. Now the gate does not start for a fork whose base is not
    the default branch, and every job runs the action of the workflow's own commit
    (GitHub runs the default branch's file), whatever base branch or commit the pull
    request names."""
    text = ((ROOT / ".github" / "workflows" / "bench.yml").read_text() if workflow == "bench.yml"
            else adapted_workflow(1))
    jobs = yaml.safe_load(text)["jobs"]
    gate_if = "${{ " + jobs["gate"]["if"] + " }}"
    starts = {(event, base, fork): interpolate(gate_if, _context(event, base, fork=fork))
              for event in ("pull_request", "pull_request_target")
              for base in ("main", "v1", "release/2.0") for fork in (False, True)}
    assert starts == {
        # the repository's own branches (their authors may write), against any base
        ("pull_request", "main", False): "true", ("pull_request", "v1", False): "true",
        ("pull_request", "release/2.0", False): "true",
        # a fork's pull_request run: its own copy of the workflow, a read-only token
        ("pull_request", "main", True): "false", ("pull_request", "v1", True): "false",
        ("pull_request", "release/2.0", True): "false",
        # pull_request_target: forks only, and only against the default branch
        ("pull_request_target", "main", False): "false",
        ("pull_request_target", "v1", False): "false",
        ("pull_request_target", "release/2.0", False): "false",
        ("pull_request_target", "main", True): "true",
        ("pull_request_target", "v1", True): "false",
        ("pull_request_target", "release/2.0", True): "false"}
    assert interpolate(gate_if, _context("issue_comment", "v1", fork=True)) == "true"
    assert interpolate(gate_if, _context("push", "main", fork=False)) == "true"
    for name, job in jobs.items():
        checkout = next(s for s in job["steps"] if "actions/checkout" in s.get("uses", ""))
        steps = job["steps"]
        action = next(i for i, s in enumerate(steps) if s.get("with", {}).get("mode"))
        assert steps.index(checkout) < action, name  # the action is what that checkout left
        for event in ("pull_request_target", "issue_comment", "push"):
            for base in ("main", "v1"):
                ref = interpolate(checkout["with"]["ref"], _context(event, base, fork=True))
                assert ref == (HEAD if event == "push" else TIP), (name, event, base, ref)
        # the repository's own branch: the base revision, never the merge commit's code
        ref = interpolate(checkout["with"]["ref"], _context("pull_request", "v1", fork=False))
        assert ref == OLD, (name, ref)


def test_bench_workflow_shape() -> None:
    doc = yaml.safe_load((ROOT / ".github" / "workflows" / "bench.yml").read_text())
    check_trust_zones(doc)
    check_sharded(doc)
    step = next(s for s in doc["jobs"]["gate"]["steps"] if s.get("uses") == "./")
    assert step["with"]["config"] == "kernels/benchbot.yml"
    assert (ROOT / "kernels" / "benchbot.yml").is_file()


@pytest.mark.parametrize("machines", [1, 2])
def test_the_workflow_as_docs_github_tells_users_to_adapt_it(tmp_path: Path, machines: int) -> None:
    """docs/github.md tells users to copy bench.yml and change three things; what they get
    keeps the trust zones (and, with two machines, the matrix)."""
    doc = yaml.safe_load(_adapted_workflow(tmp_path, machines).read_text())
    check_trust_zones(doc)
    if machines > 1:
        check_sharded(doc)
    else:
        gate_step = next(s for s in doc["jobs"]["gate"]["steps"] if s.get("with", {}).get("mode"))
        assert "shards" not in gate_step["with"] and "config" not in gate_step["with"]


def test_action_inputs_and_outputs() -> None:
    doc = yaml.safe_load(ACTION.read_text())
    assert set(doc["inputs"]) >= {"token", "config", "runs", "python", "fail-on",
                                  "working-directory", "comment", "check-name", "shards",
                                  "shard"}
    assert all(i.get("description") and "default" in i for i in doc["inputs"].values())
    assert doc["inputs"]["token"]["default"] == "${{ github.token }}"
    assert set(doc["outputs"]) >= {"conclusion", "results", "slower", "faster", "level",
                                   "inconclusive", "invalid"}
    assert doc["runs"]["using"] == "composite"
    # every input the action passes to benchbot is one it reads
    env = next(s for s in doc["runs"]["steps"] if s.get("id") == "benchbot")["env"]
    env_py = (ROOT / "src" / "benchbot" / "github" / "env.py").read_text()
    for name in env:
        assert name == "GITHUB_TOKEN" or f'"{name}"' in env_py, name
    assert doc["inputs"]["mode"]["default"] == "all"
    run = next(s for s in doc["runs"]["steps"] if s.get("id") == "benchbot")["run"]
    assert run.startswith("exec ")  # no shell holding the token waits above benchbot
    # each shard uploads under its own name; publish downloads them all, one folder each
    upload = next(s for s in doc["runs"]["steps"] if "upload-artifact" in s.get("uses", ""))
    assert upload["with"]["name"] == "${{ steps.benchbot.outputs.artifact || inputs.artifact-name }}"
    download = next(s for s in doc["runs"]["steps"] if "download-artifact" in s.get("uses", ""))
    assert download["with"]["pattern"] == "${{ inputs.artifact-name }}*"
    assert download["with"]["merge-multiple"] is False and "name" not in download["with"]
    assert doc["outputs"]["shards"]["value"] == "${{ steps.benchbot.outputs.shards }}"


def _adapted_workflow(tmp_path: Path, machines: int) -> Path:
    path = tmp_path / "bench.yml"
    path.write_text(adapted_workflow(machines))
    return path


@pytest.mark.parametrize("machines", [1, 2])
def test_the_adapted_workflow_is_valid(tmp_path: Path, machines: int) -> None:
    path = _adapted_workflow(tmp_path, machines)
    proc = subprocess.run(
        [*_check_jsonschema(), "--builtin-schema", "vendor.github-workflows", str(path)],
        capture_output=True, text=True, check=False, timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    proc = subprocess.run([_zizmor(), "--offline", "--format", "json", str(path)],
                          capture_output=True, text=True, check=False, timeout=120)
    findings = json.loads(proc.stdout or "[]")
    assert findings == [], [f["ident"] for f in findings]
