"""One scenario's world: a runner layout, a test repository, the fake GitHub and the git
server, and the events GitHub would send, with GitHub's token rules.

``World.deliver`` plays one event the way GitHub does: every workflow run the event
starts (``pull_request`` and, where the workflow listens to it, ``pull_request_target``),
each with the token GitHub would give it: read-only for a fork's ``pull_request`` run,
the write token otherwise.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from benchbot.github.post import MARKER
from tests.act.gitserver import GitServer
from tests.act.harness import (
    CONFIG,
    NAP,
    Act,
    ActRun,
    Layout,
    ServedRepository,
    make_repository,
    workload_files,
)
from tests.fakegithub import FakeGitHub
from tests.ghenv import BOT, OWNER, REPO, Env, Workspace

FORK = "someone/Hello-World"
NUMBER = 2
FAST, SLOW = "0.005", "0.05"  # the planted tenfold slowdown of nap.sh


@dataclass
class Delivery:
    """The workflow runs one event started, by event name."""

    runs: dict[str, ActRun] = field(default_factory=dict)

    def results(self, prefix: str) -> list[str]:
        """The results of the matching jobs over every run."""
        return [r for run in self.runs.values() for r in run.results(prefix)]

    @property
    def log(self) -> str:
        return "\n".join(run.log for run in self.runs.values())

    def errors(self) -> str:
        """The lines of every job's output that say what went wrong, for assertion messages."""
        lines = []
        for line in self.log.splitlines():
            try:
                msg = str(json.loads(line).get("msg", ""))
            except ValueError:
                msg = line
            if any(word in msg for word in ("error:", "Error:", "::error", "❌", "LEAK:")):
                lines.append(msg.strip()[:400])
        return "\n".join(lines[-40:])


def workflow_events(workflow: Path) -> set[str]:
    """The event names a workflow file's ``on:`` lists (YAML 1.1 reads ``on`` as True)."""
    doc = yaml.safe_load(workflow.read_text())
    on = doc.get("on", doc.get(True))
    return set(on) if isinstance(on, (dict, list)) else {str(on)}


class World:
    """A runner, a repository with a pull request, GitHub and its git server."""

    def __init__(self, base: Path, act: Act, *, flavour: str, work_inside: bool,
                 snapshot: Path, workflow: Path, fork: bool = False,
                 files: dict[str, str] | None = None,
                 branches: dict[str, dict[str, str]] | None = None,
                 main_after: dict[str, str] | None = None, base_branch: str = "main",
                 head_files: dict[str, str] | None = None) -> None:
        self.base, self.act, self.workflow = base, act, workflow
        self.layout = Layout.make(base, work_inside=work_inside)
        self.token = "ghs_" + os.urandom(16).hex()
        self.leaks = base / "leaks.txt"
        self.fake = FakeGitHub(owner=OWNER, repo=REPO, owner_type="User",
                               default_branch="main", token=self.token).start()
        self.fake.permissions.update({"alice": "write", "maria": "maintain", "bob": "read"})
        self.git = GitServer(base / "git").start()
        self.repo = self._repository(flavour, snapshot, files or {}, branches or {},
                                     main_after or {}, head_files)
        # The pull request's base: main's commit when it was opened (main may have moved
        # on since), or the tip of another branch it names.
        self.base_branch = base_branch
        base_sha = self.repo.base_sha if base_branch == "main" else self.repo.branches[base_branch]
        self.env = Env(base, self.fake, Workspace(self.repo.bare, base_sha, self.repo.head_sha))
        self.fork = fork
        if fork:
            self.fake.add_pull(NUMBER, head_sha=self.repo.head_sha, base_sha=base_sha,
                               head_ref="feature", base_ref=base_branch, head_repo_full_name=FORK,
                               user_login="someone")
        self.count = 0

    def _repository(self, flavour: str, snapshot: Path, files: dict[str, str],
                    branches: dict[str, dict[str, str]],
                    main_after: dict[str, str],
                    head_files: dict[str, str] | None) -> ServedRepository:
        """``self``: benchbot's own tree (bench.yml's `uses: ./`), its kernels config
        replaced by the test's; ``readme``: just the benchmark (the action is mapped).
        The head naps longer, or changes ``head_files``."""
        base_files = workload_files(self.token, self.layout, self.leaks, seconds=FAST)
        base_files["kernels/benchbot.yml" if flavour == "self" else "benchbot.yml"] = CONFIG
        head = {"bench/nap.sh": NAP.format(seconds=SLOW)} if head_files is None else head_files
        return make_repository(self.base, self.base / "git", f"{OWNER}/{REPO}",
                               base_files=base_files | files, head_files=head, number=NUMBER,
                               tree=snapshot if flavour == "self" else None,
                               branches=branches, main_after=main_after)

    def close(self) -> None:
        self.git.stop()
        self.fake.stop()

    # --- events, as GitHub sends them ----------------------------------------------

    def pull_request(self, action: str = "opened", labels: tuple[str, ...] = (),
                     label: str | None = None, sender: str | None = None) -> dict[str, Any]:
        """A ``pull_request`` payload; ``label``: the one just added (``labeled``),
        ``sender``: who did it (default: the payload's own)."""
        payload = self.env.pull_request_event(action, number=NUMBER,
                                              fork=FORK if self.fork else None, labels=labels)
        payload["pull_request"]["base"]["ref"] = self.base_branch
        self.fake.pulls[NUMBER]["base_ref"] = self.base_branch
        if label is not None:
            payload["label"] = {"name": label}
        if sender is not None:
            payload["sender"]["login"] = sender
        return payload

    def comment(self, body: str, login: str) -> dict[str, Any]:
        if NUMBER not in self.fake.pulls:
            self.fake.add_pull(NUMBER, head_sha=self.repo.head_sha, base_sha=self.repo.base_sha,
                               head_ref="feature", base_ref="main")
        return self.env.comment_event(body, login=login, number=NUMBER)

    def deliver(self, event: str, payload: dict[str, Any], *, path_first: Path | None = None,
                **extra_env: str) -> Delivery:
        """Every workflow run GitHub starts for this event, one after the other."""
        names = [event]
        if event == "pull_request" and "pull_request_target" in workflow_events(self.workflow):
            names.append("pull_request_target")
        delivery = Delivery()
        for name in names:
            if name not in workflow_events(self.workflow):
                continue
            self.count += 1
            delivery.runs[name] = self.act.run(
                workflow=self.workflow, event=name, payload=payload, layout=self.layout,
                api_url=self.fake.url, server_url=self.git.url, repository=f"{OWNER}/{REPO}",
                sha=self._github_sha(name), token=self._token_for(name),
                extra_env=extra_env, path_first=path_first, name=f"{self.count}-{name}")
        return delivery

    def push(self) -> dict[str, Any]:
        """A ``push`` to main (the real payload, tests/fakegithub/payloads/push.json): main
        moved from the base to the head, the planted slowdown."""
        from tests.fakegithub import load_payload

        payload = load_payload("push")
        payload.update(ref="refs/heads/main", before=self.repo.base_sha, after=self.repo.head_sha)
        payload["repository"]["default_branch"] = "main"
        payload["head_commit"]["id"] = self.repo.head_sha
        return payload

    def _github_sha(self, event: str) -> str:
        """``github.sha`` (and ``github.workflow_sha``, which act lacks): the default
        branch's tip for comments and pull_request_target (whatever base the pull request
        names: GitHub runs the default branch's workflow file for both); for pull_request
        GitHub's merge commit, for which the pull request's base stands in here; for a
        push, the tip it pushed."""
        if event == "push":
            return self.repo.head_sha
        return self.env.ws.base_sha if event == "pull_request" else self.repo.main_sha

    def _token_for(self, event: str) -> str:
        """GitHub gives a fork's ``pull_request`` run a read-only token."""
        if event == "pull_request" and self.fork:
            return self.fake.read_token
        return self.token

    # --- what GitHub shows afterwards ------------------------------------------------

    def sticky(self) -> list[dict[str, Any]]:
        return [c for c in self.fake.comments_on(NUMBER)
                if MARKER in c["body"] and c["user"]["login"] == BOT]

    def replies(self) -> list[str]:
        return [c["body"] for c in self.fake.comments_on(NUMBER)
                if c["user"]["login"] == BOT and MARKER not in c["body"]]

    def checks(self) -> list[dict[str, Any]]:
        return list(self.fake.check_runs.values())

    def assert_no_leak(self, delivery: Delivery) -> None:
        """No process of any job found the token or the runner's credential, and neither
        reached the artifacts or GitHub."""
        assert not self.leaks.exists(), self.leaks.read_text()
        assert "LEAK:" not in delivery.log
        reached = [line for line in delivery.log.splitlines() if "REACH:" in line]
        assert reached == [], "\n".join(reached[:20])  # the enumeration (reach.py) found nothing
        for body in [*(c["body"] for c in self.fake.comments.values()),
                     *(str(i["body"]) for i in self.fake.issues.values()),
                     *(b.decode(errors="replace") for b in self.fake.git.blobs.values())]:
            assert "LEAK:" not in body and "REACH:" not in body and self.token not in body
        for run in delivery.runs.values():
            store = run.artifacts
            for path in store.rglob("*") if store and store.exists() else ():
                if path.is_file():
                    text = path.read_text(errors="replace")
                    assert self.token not in text and self.layout.credentials not in text, path

