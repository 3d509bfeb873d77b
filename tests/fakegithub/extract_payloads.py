#!/usr/bin/env python3
"""Regenerate the webhook payload fixtures in ``tests/fakegithub/payloads/``.

Source: ``api.github.com/index.json`` of the npm package
``@octokit/webhooks-examples`` (real payloads GitHub sent, collected by the
Octokit project).  Rerun with::

    mkdir -p /tmp/octo && cd /tmp/octo
    npm pack @octokit/webhooks-examples && tar xzf octokit-webhooks-examples-*.tgz
    cd /work/main
    python tests/fakegithub/extract_payloads.py /tmp/octo/package

The examples chosen (index into the event's ``examples`` list) and the edits
made are listed in ``PICKS`` and ``payloads/README.md``; keep both in step.
"""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
OUT = HERE / "payloads"

#: output file -> (event name, action, index among that event's examples with that action)
PICKS: dict[str, tuple[str, str, int]] = {
    "pull_request.opened.json": ("pull_request", "opened", 0),
    "pull_request.synchronize.json": ("pull_request", "synchronize", 0),
    "pull_request.reopened.json": ("pull_request", "reopened", 0),
    "pull_request.labeled.json": ("pull_request", "labeled", 0),
    "issue_comment.created.json": ("issue_comment", "created", 0),
    "issue_comment.edited.json": ("issue_comment", "edited", 0),
    "push.created.json": ("push", "", 4),
    "push.tag.json": ("push", "", 0),
}


def pick(index: list[dict[str, Any]], event: str, action: str, nth: int) -> tuple[dict[str, Any], int]:
    """The ``nth`` example of ``event`` with ``action`` ("": a push, which has none)."""
    entry = next(e for e in index if e["name"] == event)
    hits = [(i, ex) for i, ex in enumerate(entry["examples"]) if ex.get("action", "") == action]
    i, ex = hits[nth]
    return ex, i


def make_pr_comment(payload: dict[str, Any]) -> dict[str, Any]:
    """The plain-issue ``issue_comment`` example, turned into a comment on a pull request."""
    p = copy.deepcopy(payload)
    issue = p["issue"]
    repo_api = issue["repository_url"]
    html_repo = p["repository"]["html_url"]
    n = issue["number"]
    issue["pull_request"] = {
        "url": f"{repo_api}/pulls/{n}",
        "html_url": f"{html_repo}/pull/{n}",
        "diff_url": f"{html_repo}/pull/{n}.diff",
        "patch_url": f"{html_repo}/pull/{n}.patch",
        "merged_at": None,
    }
    # GitHub links PR comments and PR issues to /pull/N, not /issues/N.
    issue["html_url"] = f"{html_repo}/pull/{n}"
    p["comment"]["html_url"] = p["comment"]["html_url"].replace(f"/issues/{n}#", f"/pull/{n}#")
    return p


# The commit the pull_request examples name as master's tip: the push's parent below.
MASTER_BEFORE = "f95f852bd8fca8fcc58a9a2d6c842781e32a215e"


def make_push(payload: dict[str, Any]) -> dict[str, Any]:
    """The branch-creating push example, turned into a push of one commit onto an existing
    default branch, as GitHub sends for every later push: ``before`` a commit, ``created``
    false, ``compare`` the range."""
    p = copy.deepcopy(payload)
    p["before"] = MASTER_BEFORE
    p["created"] = False
    html_repo = p["repository"]["html_url"]
    p["compare"] = f"{html_repo}/compare/{MASTER_BEFORE[:12]}...{p['after'][:12]}"
    return p


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    pkg = Path(argv[1])
    index = json.loads((pkg / "api.github.com" / "index.json").read_text(encoding="utf-8"))
    version = json.loads((pkg / "package.json").read_text(encoding="utf-8"))["version"]
    OUT.mkdir(exist_ok=True)
    written: dict[str, dict[str, Any]] = {}
    for name, (event, action, nth) in PICKS.items():
        ex, i = pick(index, event, action, nth)
        written[name] = ex
        print(f"{name}: @octokit/webhooks-examples@{version} api.github.com/index.json "
              f"[name={event}].examples[{i}]", file=sys.stderr)
    written["issue_comment.created.pr.json"] = make_pr_comment(written["issue_comment.created.json"])
    written["push.json"] = make_push(written["push.created.json"])
    for name, payload in written.items():
        (OUT / name).write_text(json.dumps(payload, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
