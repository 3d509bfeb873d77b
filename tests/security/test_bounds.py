"""Every input a user can give ends in one line naming the file, line and key, or the
argument; never a traceback, and never a run of unbounded size."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from benchbot import cli
from benchbot.github.post import COMMENT_LIMIT, refusal_reply
from tests.conftest import MakeRepo, git
from tests.ghenv import BOT, Env

W = "workloads:\n  - name: t\n"


def compare(repo: Path, *extra: str) -> tuple[int, str]:
    err = io.StringIO()
    code = cli.main(["compare", "--repo", str(repo), "--base", "base", "--head", "HEAD", "--quiet",
                     *extra], out=io.StringIO(), err=err)
    return code, err.getvalue()


@pytest.mark.parametrize("config, where", [
    ('version: 1\n' + W + '    run: ["true", "a\\0b"]\n', "benchbot.yml:4: workloads[0].run[1]: contains a NUL byte"),
    ('version: 1\n' + W + '    run: [true]\n    env: {X: "a\\0"}\n', "benchbot.yml:5: workloads[0].env.X: contains a NUL byte"),
    ('version: 1\nbuild: "make\\0"\n' + W + '    run: [true]\n', "benchbot.yml:2: build: contains a NUL byte"),
    ('version: 1\n' + W + '    run: [true]\n    timeout: 100000h\n', "benchbot.yml:5: workloads[0].timeout: must be at most a day"),
    ('version: 1\n' + W + '    run: [true]\n    timeout: 1.0e+308\n', "benchbot.yml:5: workloads[0].timeout: must be at most a day"),
    ('version: 1\n' + W + '    run: [true]\n    pin: "0-99999999"\n', "benchbot.yml:5: workloads[0].pin: bad CPU list '0-99999999': CPU numbers go up to 4095"),
    ('version: 1\n' + W + '    run: [true]\n    pin: 4096\n', "benchbot.yml:5: workloads[0].pin: must be at most 4095"),
    ('version: 1\n' + W + '    run: [true]\n    pin: 4095\n', "benchbot.yml:3: workloads[0].pin: CPU 4095 is not one this machine lets benchbot use"),
    ('version: 1\n' + W + '    run: [true]\n    runs: 5000\n', "benchbot.yml:5: workloads[0].runs: must be from 10 to 1000"),
    ('version: 1\n' + W + '    run: [true]\n    weight: 0\n', "benchbot.yml:5: workloads[0].weight: must be a positive number"),
    ('version: 1\n' + W + '    run: [true]\n    warmup: 1000000\n', "benchbot.yml:5: workloads[0].warmup: must be at most 100"),
    ('version: 1\npass_env: [GITHUB_TOKEN]\n' + W + '    run: [true]\n', "benchbot.yml:2: pass_env[0]: GITHUB_TOKEN is never passed"),
    ('version: 1\npass_env: [MY_API_TOKEN]\n' + W + '    run: [true]\n', "benchbot.yml:2: pass_env[0]: MY_API_TOKEN is never passed"),
    ('version: 1\nsandbox: sometimes\n' + W + '    run: [true]\n', "benchbot.yml:2: sandbox: must be one of auto | on | off"),
    ('version: 1\nsandbox: {writable: [relative/dir]}\n' + W + '    run: [true]\n', "benchbot.yml:2: sandbox.writable[0]: must be an absolute path"),
])
def test_a_bad_config_is_one_line_naming_the_key(make_repo: MakeRepo, config: str, where: str) -> None:
    repo = make_repo({"benchbot.yml": config})
    code, err = compare(repo)
    assert code == 1
    (line,) = err.splitlines()
    assert line.startswith(f"benchbot: error: {where}"), line


def test_a_config_that_is_not_utf8_at_the_base_is_one_line(make_repo: MakeRepo) -> None:
    repo = make_repo({"benchbot.yml": "version: 1\n"})
    (repo / "benchbot.yml").write_bytes(b"version: 1\n# caf\xe9\nworkloads: []\n")
    git(repo, "commit", "-qam", "latin-1")
    git(repo, "tag", "-f", "base")
    code, err = compare(repo)
    assert code == 1
    assert err == "benchbot: error: benchbot.yml:2: not UTF-8 text (byte 16); save it as UTF-8\n"


@pytest.mark.parametrize("argv, message", [
    (["--runs", "5000"], "--runs: must be from 10 to 1000"),
    (["--runs", "9"], "--runs: must be from 10 to 1000"),
    (["--parity", "2"], "--parity: must be above 0 and below 1"),
    (["--only", "nope"], "only: no workload named 'nope'"),
    (["--shard", "3/2"], "--shard: the shard K/2 must have K from 1 to 2, got 3"),
    (["--shard", "1/100000"], "--shard: must be a whole number from 1 to 64"),
    (["--shard", "1/2", "--shard-costs", "/nonexistent.json"], "/nonexistent.json: cannot read"),
])
def test_bad_arguments_are_one_line(make_repo: MakeRepo, argv: list[str], message: str) -> None:
    repo = make_repo({"benchbot.yml": "version: 1\n" + W + "    run: [true]\n"})
    code, err = compare(repo, *argv)
    assert code in (1, 2)
    (line,) = err.splitlines()
    assert message in line, line


def test_nul_in_a_revision_is_one_line(make_repo: MakeRepo) -> None:
    repo = make_repo({"benchbot.yml": "version: 1\n" + W + "    run: [true]\n"})
    err = io.StringIO()
    code = cli.main(["compare", "--repo", str(repo), "--base", "ba\0se", "--head", "HEAD"],
                    out=io.StringIO(), err=err)
    assert code in (1, 2) and len(err.getvalue().splitlines()) == 1 and "Traceback" not in err.getvalue()


def test_bench_runs_above_the_bound_is_refused(env: Env) -> None:
    run = env.run_in_process("issue_comment", env.comment_event("/bench runs=1001"))
    assert run.returncode == 0, run.stderr
    (reply,) = [c["body"] for c in env.fake.comments_on(2) if c["user"]["login"] == BOT]
    assert "must be from 10 to 1000" in reply and env.fake.check_runs == {}


def test_a_refusal_naming_thousands_of_problems_fits_in_a_comment() -> None:
    problems = [f"unknown option `opt{i}` (options: runs, only, parity, confirm, aa, sha)"
                for i in range(5000)]
    body = refusal_reply("alice", problems)
    assert len(body) <= COMMENT_LIMIT
    assert body.startswith("@alice") and body.rstrip().endswith("</details>")
    assert "- …" in body


def test_a_long_hostile_bench_comment_gets_a_reply_that_fits(env: Env) -> None:
    body = "/bench " + " ".join(f"k{i}=`v`" for i in range(20_000))
    run = env.run_in_process("issue_comment", env.comment_event(body[:65_000]))
    assert run.returncode == 0, run.stderr
    (reply,) = [c["body"] for c in env.fake.comments_on(2) if c["user"]["login"] == BOT]
    assert len(reply) <= COMMENT_LIMIT and "nothing was run" in reply
