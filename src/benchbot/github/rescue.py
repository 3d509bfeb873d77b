"""The last resort: complete benchbot's check when benchbot itself could not.

``action.yml`` runs this file as a script, with the runner's own ``python3`` and straight
from the action's directory, as the last step of a ``publish`` or ``all`` job in which a
step failed or that was cancelled or timed out (``if: failure() || cancelled()``). The usual cause is that installing benchbot failed (the
package index was down, a wheel was missing), so benchbot never ran and the check the
gate opened would stay ``in_progress`` forever, blocking a pull request whose branch
protection requires it. So this file imports nothing but the standard library.

It completes, with ``failure`` and a one-line reason, each check run on the pinned head
that is still in progress and carries this workflow run's ``external_id``
(``external_id``, also used by the adapter when it creates the check): never another
run's check, never a completed one. Where the gate fell back to a commit status, that
status is set to ``failure``. The gate's sticky comment, where the hand-over names it,
then says why instead of "measuring". The head and the check's name come from the gate's
hand-over (``BENCHBOT_JOB``), else from the event payload.
"""

from __future__ import annotations

import json
import os
import sys
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TextIO

MARKER = "<!-- benchbot:sticky -->"  # the sticky comment's hidden marker (post.MARKER)
RUNNING = "### benchbot: measuring"  # how the sticky comment begins while measuring (post.py)
BISECT_MARKER = "<!-- benchbot:bisect -->"  # a /bench bisect's own comment (post.BISECT_MARKER)
BISECT_RUNNING = "### benchbot: bisecting"  # how it begins while the bisect runs
TIMEOUT_S = 30
DEFAULT_API_URL = "https://api.github.com"
_NEXT = 'rel="next"'


def external_id(run_id: str | None) -> str | None:
    """The ``external_id`` of the check runs a workflow run creates (None outside Actions)."""
    return f"benchbot-run-{run_id}" if run_id else None


class RescueError(Exception):
    """A call to GitHub failed, or the environment does not say what to complete."""


@dataclass(frozen=True, slots=True)
class Target:
    """What to complete: the head commit, the check's name (None: any), whether the gate
    set a commit status instead of a check run, and the sticky comment it opened."""

    head_sha: str
    name: str | None
    status_instead: bool = False
    comment_id: int | None = None


def main(env: Mapping[str, str], err: TextIO) -> int:
    """Complete what is left in progress; return the exit status (0: nothing left)."""
    try:
        done = rescue(env)
    except RescueError as exc:
        err.write(f"benchbot rescue: {exc}\n")
        return 1
    err.write(f"benchbot rescue: {done}\n")
    return 0


def rescue(env: Mapping[str, str]) -> str:
    """Complete this run's open check (or status); say what was done, in one line."""
    token, run_id = env.get("GITHUB_TOKEN", "").strip(), env.get("GITHUB_RUN_ID", "").strip()
    if not token or not run_id:
        return "no token or no GITHUB_RUN_ID: nothing to complete"
    if _is_push(env.get("BENCHBOT_JOB", "")):
        return "a push's history opens no check: nothing to complete"
    api = _Api(env, token)
    target = _target(env, api)
    if target is None:
        return "no pinned head commit in the job or the event: nothing to complete"
    reason = _reason(env)
    if target.status_instead:
        api.call("POST", f"/statuses/{target.head_sha}", {
            "state": "failure", "context": target.name or "benchbot", "description": reason[:140]})
        _end_comment(api, target, reason)
        return f"set the status {target.name} on {target.head_sha[:12]} to failure"
    mine = external_id(run_id)
    runs = [r for r in _open_runs(api, target) if r.get("external_id") == mine]
    for run in runs:
        api.call("PATCH", f"/check-runs/{int(run['id'])}", {
            "status": "completed", "conclusion": "failure",
            "output": {"title": "benchbot: could not run", "summary": reason}})
    if not runs:
        return f"no check of this run is in progress on {target.head_sha[:12]}: nothing to complete"
    _end_comment(api, target, reason)
    return f"completed {len(runs)} check run(s) on {target.head_sha[:12]} as failure: {reason}"


def _end_comment(api: _Api, target: Target, reason: str) -> None:
    """The gate's sticky comment (or a bisect's own) stops saying "measuring", and only
    while it still does: a report publish wrote before completing the check failed stays
    as it is. It keeps its own marker, so a bisect's never becomes the sticky one."""
    if target.comment_id is None:
        return
    path = f"/issues/comments/{target.comment_id}"
    body = str(api.call("GET", path).get("body", ""))
    if body.startswith(BISECT_MARKER) and BISECT_RUNNING in body:
        marker, title = BISECT_MARKER, "### benchbot bisect: could not run"
    elif RUNNING in body:
        marker, title = MARKER, "### benchbot: could not run"
    else:
        return
    api.call("PATCH", path, {"body": f"{marker}\n{title}\n\n{reason}\n"})


def _is_push(job: str) -> bool:
    """Whether the hand-over is a push's (``watch.PushJob``: ``kind: push``)."""
    try:
        data = json.loads(job)
    except (ValueError, RecursionError):
        return False
    return isinstance(data, dict) and data.get("kind") == "push"


def _reason(env: Mapping[str, str]) -> str:
    """One line on why benchbot could not complete the check itself."""
    if env.get("BENCHBOT_INSTALL_OUTCOME") == "failure":
        return ("benchbot could not be installed on the runner (the step \"Install benchbot\" "
                "failed), so nothing was published; the job's log says why.")
    return ("benchbot stopped before it completed this check (the job failed or was cut short); "
            "the job's log says why.")


def _target(env: Mapping[str, str], api: _Api) -> Target | None:
    """The head and the check's name: the gate's hand-over, else the event payload."""
    name = env.get("BENCHBOT_CHECK_NAME", "").strip() or None
    job = env.get("BENCHBOT_JOB", "").strip()
    if job:
        try:
            data = json.loads(job)
            check = data.get("check") or {}
            comment_id = data.get("comment_id")
            return Target(head_sha=_sha(data["head"]["sha"]), name=str(data["check_name"]),
                          status_instead=check.get("kind") == "status",
                          comment_id=comment_id if isinstance(comment_id, int) else None)
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise RescueError(f"BENCHBOT_JOB is not the gate's hand-over: {exc!r}") from None
        except RecursionError:
            raise RescueError("BENCHBOT_JOB is not the gate's hand-over: nested too deeply") from None
    payload = _payload(env.get("GITHUB_EVENT_PATH", ""))
    pull = payload.get("pull_request")
    if isinstance(pull, dict):
        return Target(head_sha=_sha(pull["head"]["sha"]), name=name)
    issue = payload.get("issue")
    if isinstance(issue, dict) and issue.get("pull_request") and isinstance(issue.get("number"), int):
        found = api.call("GET", f"/pulls/{issue['number']}")
        return Target(head_sha=_sha(found["head"]["sha"]), name=name)
    return None


def _payload(path: str) -> dict[str, Any]:
    if not path:
        return {}
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError) as exc:
        raise RescueError(f"GITHUB_EVENT_PATH {path}: cannot read: {exc}") from None
    except RecursionError:
        raise RescueError(f"GITHUB_EVENT_PATH {path}: cannot read: nested too deeply") from None
    return data if isinstance(data, dict) else {}


def _sha(value: object) -> str:
    text = str(value).lower()
    if len(text) != 40 or any(c not in "0123456789abcdef" for c in text):
        raise RescueError(f"not a commit SHA: {text[:50]!r}")
    return text


def _open_runs(api: _Api, target: Target) -> list[dict[str, Any]]:
    """The head's check runs in progress (every page), of that name where it is known."""
    query = {"status": "in_progress", "filter": "all", "per_page": "100"}
    if target.name:
        query["check_name"] = target.name
    url: str | None = api.url(f"/commits/{target.head_sha}/check-runs?{urllib.parse.urlencode(query)}")
    runs: list[dict[str, Any]] = []
    while url:
        page, link = api.get_page(url)
        runs.extend(r for r in page.get("check_runs", []) if isinstance(r, dict))
        url = _next_link(link)
    return runs


def _next_link(link: str) -> str | None:
    for part in link.split(","):
        if _NEXT in part and "<" in part and ">" in part:
            return part[part.index("<") + 1: part.index(">")]
    return None


class _Api:
    """The few REST calls above, with urllib (a failure is one RescueError naming the call)."""

    def __init__(self, env: Mapping[str, str], token: str) -> None:
        base = (env.get("GITHUB_API_URL") or DEFAULT_API_URL).rstrip("/")
        repository = env.get("GITHUB_REPOSITORY", "").strip()
        if "/" not in repository:
            raise RescueError("GITHUB_REPOSITORY is not set (owner/name)")
        self._repo = f"{base}/repos/{repository}"
        self._headers = {"Authorization": f"Bearer {token}",
                         "Accept": "application/vnd.github+json",
                         "X-GitHub-Api-Version": "2022-11-28", "User-Agent": "benchbot-rescue"}

    def url(self, path: str) -> str:
        return self._repo + path

    def call(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        data, _ = self._send(method, self.url(path), body)
        return data

    def get_page(self, url: str) -> tuple[dict[str, Any], str]:
        data, link = self._send("GET", url, None)
        return (data if isinstance(data, dict) else {}), link

    def _send(self, method: str, url: str, body: dict[str, Any] | None) -> tuple[Any, str]:
        raw = json.dumps(body).encode() if body is not None else None
        headers = dict(self._headers)
        if raw is not None:
            headers["Content-Type"] = "application/json"
        request = urllib.request.Request(url, data=raw, method=method, headers=headers)
        shown = f"{method} {urllib.parse.urlsplit(url).path}"
        try:
            with urllib.request.urlopen(request, timeout=TIMEOUT_S) as answer:
                text = answer.read().decode("utf-8", "replace")
                return (json.loads(text) if text else None), answer.headers.get("Link", "")
        except urllib.error.HTTPError as exc:
            raise RescueError(f"{shown} failed: {exc.code} {_message(exc)}") from None
        except (urllib.error.URLError, OSError, ValueError) as exc:
            raise RescueError(f"{shown} failed: {exc}") from None


def _message(exc: urllib.error.HTTPError) -> str:
    try:
        return str(json.loads(exc.read().decode("utf-8", "replace")).get("message", ""))[:200]
    except (ValueError, AttributeError, OSError):
        return exc.reason if isinstance(exc.reason, str) else ""


if __name__ == "__main__":
    sys.exit(main(os.environ, sys.stderr))
