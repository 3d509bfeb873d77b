"""The event that started the job: the webhook payload, read into typed dataclasses.

``parse_event`` turns the payload in ``GITHUB_EVENT_PATH`` into an ``Event``. Nothing
here calls the API or git; URLs inside the payload are never followed (API calls are
built from ``GITHUB_API_URL`` and the repository's name).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from benchbot.core.errors import UsageError

if TYPE_CHECKING:
    from benchbot.github.env import ActionEnv

PULL_REQUEST_ACTIONS = ("opened", "synchronize", "reopened", "labeled")
# `pull_request` serves the repository's own branches; `pull_request_target` (the base
# revision's workflow, a token that may write) serves forks: see gate.py.
PULL_REQUEST_EVENTS = ("pull_request", "pull_request_target")


@dataclass(frozen=True, slots=True, kw_only=True)
class Side:
    """One side of a pull request: branch, commit and the repository it lives in."""

    ref: str
    sha: str
    repo: str | None  # owner/name; None when the fork was deleted


@dataclass(frozen=True, slots=True, kw_only=True)
class Comment:
    """The comment that triggered an ``issue_comment`` event."""

    id: int
    body: str
    author: str
    author_type: str  # User, Bot, Organization


@dataclass(frozen=True, slots=True, kw_only=True)
class Push:
    """A ``push`` event: the ref pushed, its tips before and after, the repository's
    default branch (a SHA of all zeros: the ref was created, or deleted)."""

    ref: str
    before: str
    after: str
    default_branch: str | None
    forced: bool = False
    pusher: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Event:
    """What happened: the parts of the payload benchbot acts on."""

    name: str  # pull_request, pull_request_target, issue_comment, ...
    action: str | None
    repository: str | None  # owner/name from the payload
    number: int | None  # pull request (or issue) number
    is_pull_request: bool  # for issue_comment: the issue is a pull request
    base: Side | None = None  # pull_request events only; issue_comment asks the API
    head: Side | None = None
    labels: tuple[str, ...] = ()
    label: str | None = None  # the label a `labeled` event added
    comment: Comment | None = None
    sender: str | None = None
    default_branch: str | None = None  # the repository's, from the payload (GitHub's word)
    push: Push | None = None  # push events only

    @property
    def is_fork(self) -> bool:
        """Whether the head lives in another repository than the base (a fork)."""
        if self.head is None or self.base is None:
            return False
        return is_fork(self.head.repo, self.base.repo or self.repository)


def is_fork(head_repo: str | None, base_repo: str | None) -> bool:
    """A head in a different (or deleted) repository than the base is a fork."""
    return head_repo is None or base_repo is None or head_repo.lower() != base_repo.lower()


def load_event(action_env: ActionEnv) -> Event:
    """Read and parse the payload file Actions wrote for this job."""
    where = action_env.event_path
    try:
        payload = json.loads(action_env.event_path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise UsageError(f"GITHUB_EVENT_PATH {where}: cannot read: {exc.strerror}") from None
    except json.JSONDecodeError as exc:
        raise UsageError(f"GITHUB_EVENT_PATH {where}:{exc.lineno}: not JSON: {exc.msg}") from None
    if not isinstance(payload, dict):
        raise UsageError(f"GITHUB_EVENT_PATH {where}: not an event payload")
    return parse_event(action_env.event_name, payload)


def parse_event(name: str, payload: Mapping[str, Any]) -> Event:
    """Turn a webhook payload into an Event; unknown shapes give an Event benchbot ignores."""
    repo = _get(payload, "repository", "full_name")
    sender = _get(payload, "sender", "login")
    default = _get(payload, "repository", "default_branch")
    default_branch = default if isinstance(default, str) and default else None
    action = payload.get("action") if isinstance(payload.get("action"), str) else None
    if name in PULL_REQUEST_EVENTS and isinstance(payload.get("pull_request"), dict):
        pr = payload["pull_request"]
        return Event(
            name=name, action=action, repository=repo, number=_number(pr.get("number")),
            is_pull_request=True, base=_side(pr.get("base")), head=_side(pr.get("head")),
            labels=_labels(pr.get("labels")), sender=sender, default_branch=default_branch,
            label=_get(payload, "label", "name") if action == "labeled" else None,
        )
    if name == "issue_comment" and isinstance(payload.get("issue"), dict):
        issue = payload["issue"]
        raw = payload.get("comment")
        comment = None
        if isinstance(raw, Mapping) and isinstance(raw.get("id"), int):
            comment = Comment(
                id=raw["id"], body=str(raw.get("body") or ""),
                author=str(_get(raw, "user", "login") or ""),
                author_type=str(_get(raw, "user", "type") or "User"),
            )
        return Event(
            name=name, action=action, repository=repo, number=_number(issue.get("number")),
            is_pull_request=isinstance(issue.get("pull_request"), dict),
            labels=_labels(issue.get("labels")), comment=comment, sender=sender,
            default_branch=default_branch,
        )
    if name == "push" and all(isinstance(payload.get(k), str) for k in ("ref", "before", "after")):
        return Event(name=name, action=action, repository=repo, number=None,
                     is_pull_request=False, sender=sender, default_branch=default_branch,
                     push=Push(
                         ref=payload["ref"], before=payload["before"], after=payload["after"],
                         default_branch=default_branch,
                         forced=payload.get("forced") is True,
                         pusher=_get(payload, "pusher", "name")))
    return Event(name=name, action=action, repository=repo, number=None, is_pull_request=False,
                 sender=sender, default_branch=default_branch)


def _get(data: Any, *keys: str) -> Any:
    for key in keys:
        if not isinstance(data, Mapping):
            return None
        data = data.get(key)
    return data


def _number(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _side(data: Any) -> Side | None:
    if not isinstance(data, Mapping) or not isinstance(data.get("sha"), str):
        return None
    repo = _get(data, "repo", "full_name")
    return Side(ref=str(data.get("ref") or ""), sha=data["sha"], repo=repo)


def _labels(data: Any) -> tuple[str, ...]:
    if not isinstance(data, list):
        return ()
    return tuple(str(x["name"]) for x in data if isinstance(x, Mapping) and "name" in x)
