"""A stateful, GitHub-like REST API server for tests.

Only the endpoints benchbot uses are served (see ``tools/openapi_extract.py``);
every request received and every response sent is checked against the OpenAPI
extract ``openapi-extract.json`` (taken from GitHub's own description in the
npm package ``@octokit/openapi``).  Problems land in ``validation_errors``;
tests should assert that list is empty.

Usage::

    from tests.fakegithub import FakeGitHub

    with FakeGitHub() as gh:                     # octo-org/octo-repo, token "ghs_test"
        gh.add_pull(7, head_sha="a" * 40)
        gh.permissions["alice"] = "write"
        gh.add_comment(7, "/benchbot run", "alice")
        client = github.Github(auth=github.Auth.Token(gh.token), base_url=gh.url, ...)
        ...
        assert gh.validation_errors == []

Runs on 127.0.0.1 in a background thread (stdlib ``ThreadingHTTPServer``).
Request validation needs ``openapi-core`` (a test dependency); pass
``validate=False`` to run without it.
"""

from __future__ import annotations

import base64
import hashlib
import http
import io
import itertools
import json
import math
import re
import secrets
import socket
import tarfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import parse_qs, quote, unquote, urlencode, urlsplit

EXTRACT_PATH = Path(__file__).with_name("openapi-extract.json")

DOCS = "https://docs.github.com/rest"
NOT_ACCESSIBLE = "Resource not accessible by integration"
PRIMARY_RATE_LIMIT_MESSAGE = (
    "API rate limit exceeded for installation ID 1. If you reach out to GitHub Support for help, "
    "please include the request ID {rid} and timestamp {ts}."
)
SECONDARY_RATE_LIMIT_MESSAGE = (
    "You have exceeded a secondary rate limit. Please wait a few minutes before you try again. "
    "If you reach out to GitHub Support for help, please include the request ID {rid}."
)
COMMENT_BODY_MAX = 65536
# A check run's output.summary and output.text: 65535 characters, and 65535 bytes of UTF-8
# (GitHub's docs say characters; it refuses more bytes too: github/docs#35252).
CHECK_OUTPUT_MAX = 65535
SHA_RE = re.compile(r"[0-9a-f]{40}")
PERMISSIONS = ("admin", "maintain", "write", "triage", "read", "none")
# legacy "permission" field of GET .../collaborators/{u}/permission for each role
LEGACY_PERMISSION = {"admin": "admin", "maintain": "write", "write": "write",
                     "triage": "read", "read": "read", "none": "none"}
REACTION_CONTENTS = ("+1", "-1", "laugh", "confused", "heart", "hooray", "rocket", "eyes")
GITHUB_ACTIONS_BOT_ID = 41898282
GITHUB_ACTIONS_APP_ID = 15368


def _iso(dt: datetime) -> str:
    return dt.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _parse_iso(s: str) -> datetime:
    return datetime.fromisoformat(s.replace("Z", "+00:00"))


def _node_id(prefix: str, n: int) -> str:
    return prefix + "_" + base64.b64encode(f"fake:{prefix}:{n}".encode()).decode().rstrip("=")


# --------------------------------------------------------------------------- records


@dataclass
class RecordedRequest:
    """One request as received, plus the status it was answered with."""

    method: str
    path: str  # percent-decoded, without query; /repositories/{id}/... already mapped to /repos/...
    raw_path: str  # as sent, with query
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: Any  # parsed JSON, or None
    raw_body: bytes = b""
    status: int = 0
    injected: bool = False  # answered by fail_next()

    def header(self, name: str) -> str | None:
        low = name.lower()
        for k, v in self.headers.items():
            if k.lower() == low:
                return v
        return None

    def __repr__(self) -> str:  # short, for assertion messages
        q = ("?" + urlencode(self.query, doseq=True)) if self.query else ""
        return f"<{self.method} {self.path}{q} -> {self.status}{' (injected)' if self.injected else ''}>"


@dataclass
class _Fault:
    method: str
    regex: re.Pattern[str]
    status: int
    times: int
    headers: dict[str, str]
    body: Any
    apply: bool


@dataclass
class _Response:
    status: int
    body: Any = None  # JSON-able, or None for no body
    headers: dict[str, str] = field(default_factory=dict)
    validate: bool = True  # against the operation's documented response
    raw: bytes | None = None  # a body that is not JSON (the archive codeload serves)


class _ApiError(Exception):
    def __init__(self, status: int, message: str, *, errors: list[dict[str, Any]] | None = None,
                 doc: str = DOCS, headers: dict[str, str] | None = None):
        super().__init__(message)
        self.response = _Response(status, _error_body(status, message, doc, errors), headers or {})


def _error_body(status: int, message: str, doc: str = DOCS,
                errors: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"message": message, "documentation_url": doc, "status": str(status)}
    if errors is not None:
        body["errors"] = errors
    return body


# --------------------------------------------------------------------------- validation


class _Validator:
    """Checks requests and responses against the OpenAPI extract with openapi-core."""

    _cache: ClassVar[dict[Path, _Validator]] = {}
    _cache_lock = threading.Lock()

    @classmethod
    def load(cls, path: Path = EXTRACT_PATH) -> _Validator:
        with cls._cache_lock:
            if path not in cls._cache:
                cls._cache[path] = cls(path)
            return cls._cache[path]

    def __init__(self, path: Path):
        try:
            from openapi_core import Config, OpenAPI
            from openapi_schema_validator import OAS30Validator
        except ImportError as e:  # pragma: no cover - depends on the environment
            raise RuntimeError(
                "FakeGitHub validation needs openapi-core (pip install openapi-core); "
                "or pass FakeGitHub(validate=False)"
            ) from e
        self.spec = _allow_null_in_nullable_enums(json.loads(path.read_text(encoding="utf-8")))
        self.host = self.spec["servers"][0]["url"].rstrip("/")
        # The extract itself is checked once, by its own test (test_fakegithub.py,
        # test_openapi_extract_is_valid_and_complete): not again in every session (a second).
        self.api = OpenAPI.from_dict(self.spec, config=Config(spec_validator_cls=None))
        self._lock = threading.Lock()
        self._requests_seen: dict[tuple[Any, ...], tuple[str, str] | None] = {}
        self._headers_matter = "security" in self.spec or '"in": "header"' in json.dumps(self.spec)
        schemas = self.spec["components"]["schemas"]
        self._error_validators = {
            name: OAS30Validator(schemas[name]) for name in ("basic-error", "validation-error")
        }

    # Parameters GitHub takes with their slashes as sent (git/ref/heads/main), which an
    # OpenAPI path template cannot match: given to the validator as one encoded segment.
    _SLASHED = re.compile(r"^(/repos/[^/]+/[^/]+/(?:git/refs?|tarball))/(.+)$")

    def _mock_request(self, method: str, path: str, query: dict[str, list[str]],
                      headers: dict[str, str], body: bytes, content_type: str) -> Any:
        from openapi_core.testing import MockRequest

        m = self._SLASHED.match(path)
        if m:
            path = f"{m.group(1)}/{quote(m.group(2), safe='')}"
        return MockRequest(self.host, method.lower(), path, args=query, headers=headers,
                           data=body or None, content_type=content_type)

    def check_request(self, method: str, path: str, query: dict[str, list[str]],
                      headers: dict[str, str], body: bytes, content_type: str) -> tuple[str, str] | None:
        """None if valid, else (kind, message) with kind "route" (no such operation) or "invalid".
        The answer depends on the request alone (its headers only where the extract
        declares a header parameter or a security scheme; it declares neither): one already
        checked is not checked again (the same requests come in every test; 3 ms each)."""
        key = (method, path, tuple(sorted((k, tuple(v)) for k, v in query.items())),
               tuple(sorted(headers.items())) if self._headers_matter else (), body, content_type)
        with self._lock:
            if key in self._requests_seen:
                return self._requests_seen[key]
        answer = self._check_request(method, path, query, headers, body, content_type)
        with self._lock:
            self._requests_seen[key] = answer
        return answer

    def _check_request(self, method: str, path: str, query: dict[str, list[str]],
                       headers: dict[str, str], body: bytes, content_type: str) -> tuple[str, str] | None:
        from openapi_core.templating.paths.exceptions import PathError

        req = self._mock_request(method, path, query, headers, body, content_type)
        try:
            with self._lock:
                self.api.validate_request(req)
        except PathError as e:
            return "route", f"{type(e).__name__}: {e}"
        except Exception as e:  # openapi-core raises several families
            return "invalid", _describe(e)
        return None

    def check_response(self, method: str, path: str, query: dict[str, list[str]],
                       req_headers: dict[str, str], status: int, headers: dict[str, str],
                       data: bytes) -> str | None:
        from openapi_core.templating.responses.exceptions import ResponseNotFound
        from openapi_core.testing import MockResponse

        req = self._mock_request(method, path, query, req_headers, b"", "application/json")
        resp = MockResponse(data, status_code=status, headers=headers,
                            content_type="application/json")
        try:
            with self._lock:
                self.api.validate_response(req, resp)
        except ResponseNotFound:
            # status not documented for this operation (e.g. 401, 403 from a read-only
            # token, 5xx): GitHub answers with basic-error / validation-error bodies.
            schema = "validation-error" if status == 422 else "basic-error"
            try:
                obj = json.loads(data) if data else {}
            except ValueError as e:
                return f"undocumented status {status}: body is not JSON ({e})"
            errs = sorted(self._error_validators[schema].iter_errors(obj), key=str)
            if errs:
                return f"undocumented status {status}, body not a {schema}: " + "; ".join(
                    e.message for e in errs)
        except Exception as e:
            return _describe(e)
        return None


def _allow_null_in_nullable_enums(node: Any) -> Any:
    """GitHub's description marks fields like check-run ``conclusion`` as
    ``{"nullable": true, "enum": [...]}`` and really sends null there; under OpenAPI 3.0.3
    an enum without null rejects null, so add it (in memory only) to such enums."""
    if isinstance(node, dict):
        if node.get("nullable") is True and isinstance(node.get("enum"), list) and None not in node["enum"]:
            node["enum"] = [*node["enum"], None]
        for v in node.values():
            _allow_null_in_nullable_enums(v)
    elif isinstance(node, list):
        for v in node:
            _allow_null_in_nullable_enums(v)
    return node


def _describe(e: BaseException) -> str:
    out = f"{type(e).__name__}: {e}"
    for obj in (e, e.__cause__):
        errs = getattr(obj, "schema_errors", None)
        if errs:
            details = []
            for se in errs:
                where = "/".join(str(p) for p in se.absolute_path) or "<root>"
                details.append(f"{where}: {se.message}")
            return f"{type(e).__name__}: " + "; ".join(details)
    return out


# --------------------------------------------------------------------------- the server


class _GitStore:
    """Git's objects as git names them (SHA-1 of ``<type> <size>\\0<content>``): blobs, trees
    (one per directory: name -> (mode, type, sha)), commits and refs."""

    def __init__(self) -> None:
        self.blobs: dict[str, bytes] = {}
        self.trees: dict[str, dict[str, tuple[str, str, str]]] = {}
        self.commits: dict[str, dict[str, Any]] = {}
        self.refs: dict[str, str] = {}  # refs/heads/x: commit sha

    @staticmethod
    def _oid(kind: str, data: bytes) -> str:
        return hashlib.sha1(f"{kind} {len(data)}\0".encode() + data).hexdigest()

    def blob(self, data: bytes) -> str:
        sha = self._oid("blob", data)
        self.blobs[sha] = data
        return sha

    def _tree(self, entries: dict[str, tuple[str, str, str]]) -> str:
        def key(item: tuple[str, tuple[str, str, str]]) -> str:  # git sorts a tree as name/
            return item[0] + ("/" if item[1][1] == "tree" else "")

        data = b"".join(f"{mode.lstrip('0')} {name}".encode() + b"\0" + bytes.fromhex(oid)
                        for name, (mode, _, oid) in sorted(entries.items(), key=key))
        sha = self._oid("tree", data)
        self.trees[sha] = dict(entries)
        return sha

    def tree_of(self, files: dict[str, tuple[str, str]]) -> str:
        """The tree of ``files`` (path: (mode, blob sha)), its subtrees made as needed."""
        top: dict[str, Any] = {}
        for path, (mode, oid) in files.items():
            node = top
            *dirs, name = path.split("/")
            for d in dirs:
                node = node.setdefault(d, {})
            node[name] = (mode, oid)

        def make(node: dict[str, Any]) -> str:
            entries = {name: ("040000", "tree", make(v)) if isinstance(v, dict) else (v[0], "blob", v[1])
                       for name, v in node.items()}
            return self._tree(entries)

        return make(top)

    def flatten(self, tree: str, prefix: str = "") -> dict[str, tuple[str, str]]:
        out: dict[str, tuple[str, str]] = {}
        for name, (mode, kind, oid) in self.trees[tree].items():
            if kind == "tree":
                out.update(self.flatten(oid, f"{prefix}{name}/"))
            else:
                out[f"{prefix}{name}"] = (mode, oid)
        return out

    def commit(self, tree: str, parents: list[str], message: str, who: dict[str, str]) -> str:
        text = f"tree {tree}\n" + "".join(f"parent {p}\n" for p in parents)
        text += f"author {who['name']} <{who['email']}> 0 +0000\ncommitter {who['name']} <{who['email']}> 0 +0000\n\n{message}"
        sha = self._oid("commit", text.encode())
        self.commits[sha] = {"tree": tree, "parents": parents, "message": message,
                             "author": dict(who), "committer": dict(who)}
        return sha

    def descends(self, sha: str, ancestor: str) -> bool:
        todo, seen = [sha], set()
        while todo:
            c = todo.pop()
            if c == ancestor:
                return True
            if c not in seen and c in self.commits:
                seen.add(c)
                todo.extend(self.commits[c]["parents"])
        return False

    def resolve(self, ref: str) -> str | None:
        if ref in self.commits:
            return ref
        for name in (ref, f"refs/heads/{ref}", f"refs/{ref}"):
            if name in self.refs:
                return self.refs[name]
        return None

    def tarball(self, sha: str, prefix: str) -> bytes:
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w:gz") as tar:
            for path, (mode, oid) in sorted(self.flatten(self.commits[sha]["tree"]).items()):
                data = self.blobs[oid]
                info = tarfile.TarInfo(f"{prefix}/{path}")
                info.size, info.mode = len(data), int(mode[-3:], 8)
                tar.addfile(info, io.BytesIO(data))
        return buf.getvalue()


class FakeGitHub:
    """GitHub REST API look-alike; see the module docstring.

    State (all public, inspect or seed it freely; hold ``lock`` if the server is busy):

    * ``issues``: number -> {"number", "title", "body", "user", "state", "created_at",
      "updated_at", "is_pull"} for every issue *and* pull request number.
    * ``pulls``: number -> {"number", "head_sha", "base_sha", "head_ref", "base_ref",
      "head_repo_full_name", "base_repo_full_name", "user", "title", "body", "state",
      "draft", "merged"}; seed with ``add_pull()`` / ``add_pull_from_event()``.
    * ``comments``: id -> {"id", "issue_number", "body", "user": {"login", "type", "id"},
      "created_at", "updated_at", "node_id"} (timestamps ISO 8601 ``Z`` strings).
    * ``check_runs``: id -> {"id", "name", "head_sha", "status", "conclusion",
      "output": {"title", "summary", "text"}, "details_url", "external_id",
      "started_at", "completed_at", "annotations_count"}.
    * ``statuses``: list of {"id", "sha", "state", "target_url", "description",
      "context", "creator", "created_at"}.
    * ``reactions``: list of {"id", "comment_id", "content", "user", "created_at"}.
    * ``requests``: list of :class:`RecordedRequest`, in arrival order.
    * ``permissions``: login -> admin|maintain|write|triage|read|none.  Logins not in
      it get admin where they own the (user-owned) repository, else ``default_permission`` ("read", as on a public repository); set that to
      None to answer 404 for unknown users.
    * ``validation_errors``: request/response problems found against the OpenAPI extract.

    Switches: ``checks_forbidden`` (check-run endpoints answer 403 "Resource not
    accessible by integration"), ``statuses_forbidden``, ``read_only`` (every POST/PATCH
    answers that 403, like the token of a pull_request run from a fork; ``read_token`` is a
    second token that always gets those answers),
    ``user_endpoint_forbidden`` (GET /user -> 403, as for the Actions token; default
    True), ``app_endpoint_forbidden`` (GET /app -> 403; default True).
    """

    bot_login = "github-actions[bot]"

    def __init__(self, *, owner: str = "octo-org", repo: str = "octo-repo", token: str = "ghs_test",
                 owner_type: str = "Organization", default_branch: str = "main",
                 validate: bool = True, html_url_base: str = "https://github.com",
                 link_style: str = "repositories", rate_limit: int = 5000,
                 clock: Callable[[], datetime] | None = None):
        if link_style not in ("repositories", "repos"):
            raise ValueError("link_style must be 'repositories' or 'repos'")
        self.owner = owner
        self.repo = repo
        self.token = token
        self.owner_type = owner_type
        self.default_branch = default_branch
        self.html_url_base = html_url_base.rstrip("/")
        self.link_style = link_style
        self.clock: Callable[[], datetime] = clock or (lambda: datetime.now(timezone.utc))
        self.repo_id = 700000001
        self.created_at = "2024-01-02T03:04:05Z"

        self.lock = threading.RLock()
        self.issues: dict[int, dict[str, Any]] = {}
        self.pulls: dict[int, dict[str, Any]] = {}
        self.comments: dict[int, dict[str, Any]] = {}
        self.check_runs: dict[int, dict[str, Any]] = {}
        self.statuses: list[dict[str, Any]] = []
        self.reactions: list[dict[str, Any]] = []
        self.reviews: dict[int, list[dict[str, Any]]] = {}  # pull number -> its reviews, oldest first
        self.requests: list[RecordedRequest] = []
        self.permissions: dict[str, str] = {}
        self.default_permission: str | None = "read"
        # The git database (blobs, trees, commits, refs), as the Git Data API sees it.
        self.git = _GitStore()
        self.labels: dict[str, dict[str, Any]] = {}  # name: label, made as issues name them
        self.validation_errors: list[str] = []

        self.checks_forbidden = False
        self.statuses_forbidden = False
        self.read_only = False
        # A second token that may read but not write, like the token of a job whose
        # permissions are `contents: read` (benchbot's measure job).
        self.read_token = "ghs_readonly"
        self.user_endpoint_forbidden = True
        self.app_endpoint_forbidden = True

        self.rate_limit = rate_limit
        self.rate_used = 0
        self.rate_reset = int(time.time()) + 3600

        self._faults: list[_Fault] = []
        self._users: dict[str, dict[str, Any]] = {}
        self._repo_ids: dict[str, int] = {f"{owner}/{repo}".lower(): self.repo_id}
        self._ids = {k: itertools.count(start) for k, start in (
            ("comment", 2000000001), ("check_run", 3000000001), ("status", 4000000001),
            ("reaction", 5000000001), ("user", 9000001), ("repo", 700000002), ("review", 80000001),
            ("issue", 1500000001), ("pull", 1600000001), ("check_suite", 3500000001))}
        self._register_user(self.bot_login, "Bot", GITHUB_ACTIONS_BOT_ID)
        self._register_user(owner, owner_type)

        self._validator = _Validator.load() if validate else None
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.url = ""

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> FakeGitHub:
        if self._httpd is not None:
            return self
        handler = type("_BoundHandler", (_Handler,), {"fake": self})
        httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        httpd.daemon_threads = True
        self._httpd = httpd
        self.url = f"http://127.0.0.1:{httpd.server_address[1]}"
        # shutdown() waits for the loop to look again: every 5 ms, not every 50, as a test
        # stops a server at its end (hundreds of them in the fast tier).
        self._thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.005},
                                        name="FakeGitHub", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is None:
            return
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._httpd = None
        self._thread = None

    def __enter__(self) -> FakeGitHub:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    @property
    def full_name(self) -> str:
        return f"{self.owner}/{self.repo}"

    # ------------------------------------------------------------------ seeding

    def _register_user(self, login: str, user_type: str | None = None, uid: int | None = None) -> dict[str, Any]:
        key = login.lower()
        with self.lock:
            if key not in self._users:
                if user_type is None:
                    user_type = "Bot" if login.endswith("[bot]") else "User"
                self._users[key] = {"login": login, "type": user_type,
                                    "id": uid if uid is not None else next(self._ids["user"])}
            elif user_type is not None:
                self._users[key]["type"] = user_type
            return self._users[key]

    def add_issue(self, number: int, *, title: str = "An issue", body: str | None = "",
                  user_login: str = "octocat", state: str = "open") -> dict[str, Any]:
        """Seed a plain issue (not a pull request)."""
        self._register_user(user_login)
        now = _iso(self.clock())
        with self.lock:
            rec = {"number": number, "id": next(self._ids["issue"]), "title": title, "body": body,
                   "user": user_login, "state": state, "created_at": now, "updated_at": now,
                   "is_pull": False}
            self.issues[number] = rec
            return rec

    def add_check_run(self, name: str, head_sha: str, **body: Any) -> dict[str, Any]:
        """Seed a check run as POST .../check-runs would make it (``body``: that request's
        other fields), without a request: for a test that needs many."""
        with self.lock:
            response = self._h_create_check_run({"name": name, "head_sha": head_sha, **body})
        return self.check_runs[response.body["id"]]

    def add_pull(self, number: int, *, head_sha: str = "c0ffee" + "0" * 34,
                 base_sha: str = "ba5e" + "0" * 36, head_ref: str = "feature",
                 base_ref: str | None = None, head_repo_full_name: str | None = None,
                 user_login: str = "octocat", title: str = "A pull request",
                 body: str | None = "", state: str = "open", draft: bool = False,
                 merged: bool = False) -> dict[str, Any]:
        """Seed a pull request (also issue ``number``).  ``head_repo_full_name`` names a
        fork ("someone/octo-repo"); default: the repository itself."""
        for sha in (head_sha, base_sha):
            if not SHA_RE.fullmatch(sha):
                raise ValueError(f"not a 40-hex sha: {sha!r}")
        self._register_user(user_login)
        head_full = head_repo_full_name or self.full_name
        self._register_user(head_full.split("/")[0])
        now = _iso(self.clock())
        with self.lock:
            self.issues[number] = {"number": number, "id": next(self._ids["issue"]), "title": title,
                                   "body": body, "user": user_login, "state": state,
                                   "created_at": now, "updated_at": now, "is_pull": True}
            rec = {"number": number, "id": next(self._ids["pull"]), "head_sha": head_sha,
                   "base_sha": base_sha, "head_ref": head_ref,
                   "base_ref": base_ref or self.default_branch, "head_repo_full_name": head_full,
                   "base_repo_full_name": self.full_name, "user": user_login, "title": title,
                   "body": body, "state": state, "draft": draft, "merged": merged}
            self.pulls[number] = rec
            return rec

    def add_pull_from_event(self, payload: dict[str, Any]) -> dict[str, Any]:
        """Seed the pull request a ``pull_request.*`` webhook payload describes, or a bare
        PR for an ``issue_comment`` payload on a PR (shas then are placeholders)."""
        if "pull_request" in payload:
            pr = payload["pull_request"]
            head_repo = (pr["head"].get("repo") or {}).get("full_name")
            return self.add_pull(
                pr["number"], head_sha=pr["head"]["sha"], base_sha=pr["base"]["sha"],
                head_ref=pr["head"]["ref"], base_ref=pr["base"]["ref"],
                head_repo_full_name=head_repo, user_login=pr["user"]["login"], title=pr["title"],
                body=pr.get("body"), state=pr["state"], draft=bool(pr.get("draft")),
                merged=bool(pr.get("merged")))
        issue = payload["issue"]
        if "pull_request" not in issue:
            raise ValueError("issue_comment payload is on a plain issue; use add_issue()")
        return self.add_pull(issue["number"], user_login=issue["user"]["login"],
                             title=issue["title"], body=issue.get("body"), state=issue["state"])

    def add_comment(self, issue_number: int, body: str, login: str, user_type: str | None = None,
                    *, created_at: datetime | None = None) -> dict[str, Any]:
        """Seed an issue comment written by someone else; returns the stored record.
        ``user_type`` defaults to "Bot" for logins ending in "[bot]", else "User"."""
        with self.lock:
            if issue_number not in self.issues:
                raise KeyError(f"no issue or pull request #{issue_number}; add_pull()/add_issue() first")
            return self._store_comment(issue_number, body, login, user_type, created_at)

    def _store_comment(self, issue_number: int, body: str, login: str, user_type: str | None,
                       created_at: datetime | None = None) -> dict[str, Any]:
        u = self._register_user(login, user_type)
        ts = _iso(created_at or self.clock())
        cid = next(self._ids["comment"])
        rec = {"id": cid, "node_id": _node_id("IC", cid), "issue_number": issue_number, "body": body,
               "user": dict(u), "created_at": ts, "updated_at": ts}
        self.comments[cid] = rec
        return rec

    def add_review(self, number: int, login: str, state: str, commit_id: str | None, *,
                   body: str = "", submitted_at: datetime | None = None) -> dict[str, Any]:
        """Seed a review of pull request ``number`` by ``login`` (state APPROVED,
        COMMENTED, CHANGES_REQUESTED, DISMISSED or PENDING) on ``commit_id``, the head it
        was written on (GitHub says null when that commit is gone); returns the record."""
        with self.lock:
            if number not in self.pulls:
                raise KeyError(f"no pull request #{number}; add_pull() first")
            u = self._register_user(login)
            rid = next(self._ids["review"])
            rec = {"id": rid, "user": dict(u), "state": state, "commit_id": commit_id, "body": body,
                   "submitted_at": None if state == "PENDING" else _iso(submitted_at or self.clock())}
            self.reviews.setdefault(number, []).append(rec)
            return rec

    def workflow_token(self, event_name: str, *, fork: bool) -> str:
        """The token GitHub hands a workflow run of this event: a fork's ``pull_request``
        run gets a read-only one, whatever the workflow's ``permissions:`` ask (writes
        answer 403 "Resource not accessible by integration"); ``pull_request_target``
        and ``issue_comment`` run the default branch's workflow with a token that may
        write."""
        return self.read_token if event_name == "pull_request" and fork else self.token

    # ------------------------------------------------------------------ faults & helpers

    def fail_next(self, method: str, path_regex: str, status: int = 502, times: int = 1,
                  headers: dict[str, str] | None = None, body: Any = None, *,
                  apply: bool = False) -> None:
        """Answer the next ``times`` requests matching ``method`` ("*" for any) and
        ``re.search(path_regex, path)`` with ``status``.  With ``apply=True`` the request
        is carried out first and only its response is replaced (a write that happened
        although the client saw an error).  Default bodies mimic GitHub's: a primary
        rate-limit message when ``headers`` has X-RateLimit-Remaining "0", a secondary
        one for 429 or a 403 with Retry-After, "Resource not accessible by integration"
        for other 403s, else the status phrase."""
        with self.lock:
            self._faults.append(_Fault(method.upper(), re.compile(path_regex), status, times,
                                       dict(headers or {}), body, apply))

    def fail_rate_limited(self, method: str, path_regex: str, reset_in: float = 1.0,
                          times: int = 1) -> None:
        """Primary rate limit: 403, X-RateLimit-Remaining 0, reset ``reset_in`` s ahead."""
        self.fail_next(method, path_regex, 403, times, {
            "X-RateLimit-Remaining": "0",
            "X-RateLimit-Reset": str(math.ceil(time.time() + reset_in))})

    def fail_secondary_rate_limit(self, method: str, path_regex: str, retry_after: int = 1,
                                  status: int = 429, times: int = 1) -> None:
        """Secondary rate limit: ``status`` (429 or 403) with Retry-After."""
        self.fail_next(method, path_regex, status, times, {"Retry-After": str(retry_after)})

    def take_validation_errors(self) -> list[str]:
        """Return and clear ``validation_errors`` (for tests that send bad input on purpose)."""
        with self.lock:
            out = list(self.validation_errors)
            self.validation_errors.clear()
            return out

    def requests_matching(self, method: str, path_regex: str) -> list[RecordedRequest]:
        m = method.upper()
        rx = re.compile(path_regex)
        with self.lock:
            return [r for r in self.requests if (m == "*" or r.method == m) and rx.search(r.path)]

    def comments_on(self, issue_number: int) -> list[dict[str, Any]]:
        with self.lock:
            return sorted((c for c in self.comments.values() if c["issue_number"] == issue_number),
                          key=lambda c: (c["created_at"], c["id"]))

    def _take_fault(self, method: str, path: str) -> _Fault | None:
        with self.lock:
            for f in self._faults:
                if (f.method in ("*", method)) and f.regex.search(path):
                    f.times -= 1
                    if f.times <= 0:
                        self._faults.remove(f)
                    return f
        return None

    def _fault_response(self, f: _Fault, rid: str) -> _Response:
        headers = dict(f.headers)
        body = f.body
        if body is None:
            hl = {k.lower(): v for k, v in headers.items()}
            if f.status == 403 and hl.get("x-ratelimit-remaining") == "0":
                body = _error_body(403, PRIMARY_RATE_LIMIT_MESSAGE.format(rid=rid, ts=_iso(self.clock())),
                                   f"{DOCS}/using-the-rest-api/rate-limits-for-the-rest-api")
            elif f.status == 429 or (f.status == 403 and "retry-after" in hl):
                body = _error_body(f.status, SECONDARY_RATE_LIMIT_MESSAGE.format(rid=rid),
                                   f"{DOCS}/using-the-rest-api/rate-limits-for-the-rest-api")
            elif f.status == 403:
                body = _error_body(403, NOT_ACCESSIBLE)
            else:
                try:
                    phrase = http.HTTPStatus(f.status).phrase
                except ValueError:
                    phrase = "Error"
                body = _error_body(f.status, "Server Error" if f.status == 500 else phrase)
        return _Response(f.status, body, headers, validate=False)

    # ------------------------------------------------------------------ object builders

    def _api(self, path: str) -> str:
        return self.url + path

    def _html(self, path: str) -> str:
        return self.html_url_base + path

    def _user_obj(self, login: str) -> dict[str, Any]:
        u = self._register_user(login)
        q = quote(u["login"], safe="")
        uid = u["id"]
        api = self._api(f"/users/{q}")
        html = (self._html(f"/apps/{u['login'][:-5]}") if u["type"] == "Bot" and u["login"].endswith("[bot]")
                else self._html(f"/{u['login']}"))
        return {
            "login": u["login"], "id": uid, "node_id": _node_id("U", uid),
            "avatar_url": f"https://avatars.githubusercontent.com/u/{uid}?v=4", "gravatar_id": "",
            "url": api, "html_url": html,
            "followers_url": api + "/followers", "following_url": api + "/following{/other_user}",
            "gists_url": api + "/gists{/gist_id}", "starred_url": api + "/starred{/owner}{/repo}",
            "subscriptions_url": api + "/subscriptions", "organizations_url": api + "/orgs",
            "repos_url": api + "/repos", "events_url": api + "/events{/privacy}",
            "received_events_url": api + "/received_events", "type": u["type"],
            "user_view_type": "public", "site_admin": False,
        }

    def _repo_obj(self, full_name: str | None = None, *, full: bool = False) -> dict[str, Any]:
        full_name = full_name or self.full_name
        owner, name = full_name.split("/", 1)
        with self.lock:
            rid = self._repo_ids.setdefault(full_name.lower(), next(self._ids["repo"]))
        is_fork = full_name.lower() != self.full_name.lower()
        base = self._api(f"/repos/{full_name}")
        open_issues = sum(1 for i in self.issues.values() if i["state"] == "open")
        obj: dict[str, Any] = {
            "id": rid, "node_id": _node_id("R", rid), "name": name, "full_name": full_name,
            "private": False, "owner": self._user_obj(owner), "html_url": self._html(f"/{full_name}"),
            "description": "A repository served by FakeGitHub", "fork": is_fork, "url": base,
            "archive_url": base + "/{archive_format}{/ref}", "assignees_url": base + "/assignees{/user}",
            "blobs_url": base + "/git/blobs{/sha}", "branches_url": base + "/branches{/branch}",
            "collaborators_url": base + "/collaborators{/collaborator}",
            "comments_url": base + "/comments{/number}", "commits_url": base + "/commits{/sha}",
            "compare_url": base + "/compare/{base}...{head}", "contents_url": base + "/contents/{+path}",
            "contributors_url": base + "/contributors", "deployments_url": base + "/deployments",
            "downloads_url": base + "/downloads", "events_url": base + "/events",
            "forks_url": base + "/forks", "git_commits_url": base + "/git/commits{/sha}",
            "git_refs_url": base + "/git/refs{/sha}", "git_tags_url": base + "/git/tags{/sha}",
            "git_url": f"git://github.com/{full_name}.git", "hooks_url": base + "/hooks",
            "issue_comment_url": base + "/issues/comments{/number}",
            "issue_events_url": base + "/issues/events{/number}", "issues_url": base + "/issues{/number}",
            "keys_url": base + "/keys{/key_id}", "labels_url": base + "/labels{/name}",
            "languages_url": base + "/languages", "merges_url": base + "/merges",
            "milestones_url": base + "/milestones{/number}",
            "notifications_url": base + "/notifications{?since,all,participating}",
            "pulls_url": base + "/pulls{/number}", "releases_url": base + "/releases{/id}",
            "ssh_url": f"git@github.com:{full_name}.git", "stargazers_url": base + "/stargazers",
            "statuses_url": base + "/statuses/{sha}", "subscribers_url": base + "/subscribers",
            "subscription_url": base + "/subscription", "tags_url": base + "/tags",
            "teams_url": base + "/teams", "trees_url": base + "/git/trees{/sha}",
            "clone_url": f"https://github.com/{full_name}.git", "mirror_url": None,
            "svn_url": self._html(f"/{full_name}"), "homepage": None, "language": "Python",
            "forks_count": 0, "forks": 0, "stargazers_count": 0, "watchers_count": 0, "watchers": 0,
            "size": 1024, "default_branch": self.default_branch, "open_issues_count": open_issues,
            "open_issues": open_issues, "is_template": False, "topics": [], "has_issues": True,
            "has_projects": True, "has_wiki": True, "has_pages": False, "has_downloads": True,
            "has_discussions": False, "archived": False, "disabled": False, "visibility": "public",
            "pushed_at": self.created_at, "created_at": self.created_at, "updated_at": self.created_at,
            "allow_forking": True, "web_commit_signoff_required": False, "license": None,
            "permissions": {"admin": False, "maintain": False, "push": True, "triage": True, "pull": True},
        }
        if full:
            obj.update({"network_count": 0, "subscribers_count": 0, "temp_clone_token": ""})
            if self.owner_type == "Organization" and not is_fork:
                obj["organization"] = self._user_obj(owner)
        return obj

    def _author_association(self, login: str) -> str:
        if login.lower() == self.owner.lower():
            return "OWNER"
        perm = self.permissions.get(login)
        if perm and perm != "none":
            return "MEMBER" if self.owner_type == "Organization" else "COLLABORATOR"
        return "NONE"

    def _reaction_rollup(self, comment_id: int) -> dict[str, Any]:
        counts = {c: 0 for c in REACTION_CONTENTS}
        for r in self.reactions:
            if r["comment_id"] == comment_id:
                counts[r["content"]] += 1
        return {"url": self._api(f"/repos/{self.full_name}/issues/comments/{comment_id}/reactions"),
                "total_count": sum(counts.values()), **counts}

    def _comment_obj(self, c: dict[str, Any]) -> dict[str, Any]:
        n = c["issue_number"]
        kind = "pull" if self.issues.get(n, {}).get("is_pull") else "issues"
        return {
            "url": self._api(f"/repos/{self.full_name}/issues/comments/{c['id']}"),
            "html_url": self._html(f"/{self.full_name}/{kind}/{n}#issuecomment-{c['id']}"),
            "issue_url": self._api(f"/repos/{self.full_name}/issues/{n}"),
            "id": c["id"], "node_id": c["node_id"], "user": self._user_obj(c["user"]["login"]),
            "created_at": c["created_at"], "updated_at": c["updated_at"],
            "author_association": self._author_association(c["user"]["login"]),
            "body": c["body"], "reactions": self._reaction_rollup(c["id"]),
            "performed_via_github_app": None,
        }

    def _issue_obj(self, i: dict[str, Any]) -> dict[str, Any]:
        n = i["number"]
        base = self._api(f"/repos/{self.full_name}")
        is_pull = i["is_pull"]
        obj: dict[str, Any] = {
            "url": f"{base}/issues/{n}", "repository_url": base,
            "labels_url": f"{base}/issues/{n}/labels{{/name}}", "comments_url": f"{base}/issues/{n}/comments",
            "events_url": f"{base}/issues/{n}/events",
            "html_url": self._html(f"/{self.full_name}/{'pull' if is_pull else 'issues'}/{n}"),
            "id": i["id"], "node_id": _node_id("PR" if is_pull else "I", i["id"]), "number": n,
            "title": i["title"], "user": self._user_obj(i["user"]),
            "labels": [self._label_obj(name) for name in i.get("labels", [])], "state": i["state"],
            "locked": False, "assignee": None, "assignees": [], "milestone": None,
            "comments": sum(1 for c in self.comments.values() if c["issue_number"] == n),
            "created_at": i["created_at"], "updated_at": i["updated_at"], "closed_at": None,
            "author_association": self._author_association(i["user"]), "active_lock_reason": None,
            "body": i["body"], "reactions": {"url": f"{base}/issues/{n}/reactions", "total_count": 0,
                                             **{c: 0 for c in REACTION_CONTENTS}},
            "timeline_url": f"{base}/issues/{n}/timeline", "performed_via_github_app": None,
            "state_reason": None,
        }
        if is_pull:
            p = self.pulls[n]
            obj["draft"] = p["draft"]
            obj["pull_request"] = {
                "url": f"{base}/pulls/{n}", "html_url": self._html(f"/{self.full_name}/pull/{n}"),
                "diff_url": self._html(f"/{self.full_name}/pull/{n}.diff"),
                "patch_url": self._html(f"/{self.full_name}/pull/{n}.patch"),
                "merged_at": self.created_at if p["merged"] else None,
            }
        return obj

    def _label_obj(self, name: str) -> dict[str, Any]:
        label = self.labels.setdefault(name, {"name": name, "id": next(self._ids["issue"])})
        return {"id": label["id"], "node_id": _node_id("LA", label["id"]),
                "url": self._api(f"/repos/{self.full_name}/labels/{quote(name)}"), "name": name,
                "color": "ededed", "default": False, "description": None}

    def _pull_obj(self, p: dict[str, Any]) -> dict[str, Any]:
        n = p["number"]
        base = self._api(f"/repos/{self.full_name}")
        issue = self.issues[n]
        html = self._html(f"/{self.full_name}/pull/{n}")
        url = f"{base}/pulls/{n}"

        def side(which: str) -> dict[str, Any]:
            full = p[f"{which}_repo_full_name"]
            owner = full.split("/")[0]
            return {"label": f"{owner}:{p[f'{which}_ref']}", "ref": p[f"{which}_ref"],
                    "sha": p[f"{which}_sha"], "user": self._user_obj(owner),
                    "repo": self._repo_obj(full)}

        links = {"self": url, "html": html, "issue": f"{base}/issues/{n}",
                 "comments": f"{base}/issues/{n}/comments", "review_comments": f"{url}/comments",
                 "review_comment": f"{base}/pulls/comments{{/number}}", "commits": f"{url}/commits",
                 "statuses": f"{base}/statuses/{p['head_sha']}"}
        return {
            "url": url, "id": p["id"], "node_id": _node_id("PR", p["id"]), "html_url": html,
            "diff_url": html + ".diff", "patch_url": html + ".patch", "issue_url": f"{base}/issues/{n}",
            "number": n, "state": p["state"], "locked": False, "title": p["title"],
            "user": self._user_obj(p["user"]), "body": p["body"], "created_at": issue["created_at"],
            "updated_at": issue["updated_at"], "closed_at": None,
            "merged_at": self.created_at if p["merged"] else None, "merge_commit_sha": None,
            "assignee": None, "assignees": [], "requested_reviewers": [], "requested_teams": [],
            "labels": [], "milestone": None, "draft": p["draft"], "commits_url": f"{url}/commits",
            "review_comments_url": f"{url}/comments", "review_comment_url": links["review_comment"],
            "comments_url": f"{base}/issues/{n}/comments", "statuses_url": links["statuses"],
            "head": side("head"), "base": side("base"),
            "_links": {k: {"href": v} for k, v in links.items()},
            "author_association": self._author_association(p["user"]), "auto_merge": None,
            "active_lock_reason": None, "merged": p["merged"], "mergeable": True, "rebaseable": True,
            "mergeable_state": "clean", "merged_by": None,
            "comments": sum(1 for c in self.comments.values() if c["issue_number"] == n),
            "review_comments": 0, "maintainer_can_modify": False, "commits": 1, "additions": 1,
            "deletions": 0, "changed_files": 1,
        }

    def _app_obj(self) -> dict[str, Any]:
        return {
            "id": GITHUB_ACTIONS_APP_ID, "slug": "github-actions", "client_id": "Iv1.fakefakefakefake",
            "node_id": "MDM6QXBwMTUzNjg=", "owner": self._user_obj_fixed("github", "Organization", 9919),
            "name": "GitHub Actions", "description": "Automate your workflow from idea to production",
            "external_url": "https://help.github.com/en/actions",
            "html_url": self._html("/apps/github-actions"),
            "created_at": "2018-07-30T09:30:17Z", "updated_at": "2024-04-10T20:33:16Z",
            "permissions": {"checks": "write", "issues": "write", "pull_requests": "write",
                            "statuses": "write", "metadata": "read", "contents": "write"},
            "events": ["check_run", "check_suite", "issue_comment", "pull_request", "push", "status"],
        }

    def _user_obj_fixed(self, login: str, user_type: str, uid: int) -> dict[str, Any]:
        self._register_user(login, user_type, uid)
        return self._user_obj(login)

    def _check_run_obj(self, r: dict[str, Any]) -> dict[str, Any]:
        base = self._api(f"/repos/{self.full_name}")
        prs = [
            {"id": p["id"], "number": p["number"], "url": f"{base}/pulls/{p['number']}",
             "head": {"ref": p["head_ref"], "sha": p["head_sha"],
                      "repo": {"id": self.repo_id, "url": base, "name": self.repo}},
             "base": {"ref": p["base_ref"], "sha": p["base_sha"],
                      "repo": {"id": self.repo_id, "url": base, "name": self.repo}}}
            for p in self.pulls.values()
            if p["head_sha"] == r["head_sha"] and p["state"] == "open"
            and p["head_repo_full_name"].lower() == self.full_name.lower()  # forks: [] like GitHub
        ]
        return {
            "id": r["id"], "name": r["name"], "node_id": _node_id("CR", r["id"]),
            "head_sha": r["head_sha"], "external_id": r["external_id"],
            "url": f"{base}/check-runs/{r['id']}",
            "html_url": self._html(f"/{self.full_name}/runs/{r['id']}"),
            "details_url": r["details_url"], "status": r["status"], "conclusion": r["conclusion"],
            "started_at": r["started_at"], "completed_at": r["completed_at"],
            "output": {"title": r["output"]["title"], "summary": r["output"]["summary"],
                       "text": r["output"]["text"], "annotations_count": r["annotations_count"],
                       "annotations_url": f"{base}/check-runs/{r['id']}/annotations"},
            "check_suite": {"id": r["check_suite_id"]}, "app": self._app_obj(), "pull_requests": prs,
        }

    def _status_obj(self, s: dict[str, Any]) -> dict[str, Any]:
        creator = self._user_obj(s["creator"]["login"])
        return {
            "url": self._api(f"/repos/{self.full_name}/statuses/{s['sha']}"),
            "avatar_url": creator["avatar_url"], "id": s["id"], "node_id": _node_id("SC", s["id"]),
            "state": s["state"], "description": s["description"], "target_url": s["target_url"],
            "context": s["context"], "created_at": s["created_at"], "updated_at": s["created_at"],
            "creator": creator,
        }

    def _reaction_obj(self, r: dict[str, Any]) -> dict[str, Any]:
        return {"id": r["id"], "node_id": _node_id("REA", r["id"]),
                "user": self._user_obj(r["user"]["login"]), "content": r["content"],
                "created_at": r["created_at"]}

    # ------------------------------------------------------------------ routing

    _ROUTES: ClassVar[list[tuple[str, re.Pattern[str], str, str]]] = [
        (m, re.compile("^" + rx + "$"), name, perm) for m, rx, name, perm in [
            ("GET", r"/repos/(?P<owner>[^/]+)/(?P<repo>[^/]+)", "get_repo", ""),
            ("GET", r"/repos/(?P<owner>[^/]+)/(?P<repo>[^/]+)/pulls/(?P<number>\d+)", "get_pull", ""),
            ("GET", r"/repos/(?P<owner>[^/]+)/(?P<repo>[^/]+)/pulls/(?P<number>\d+)/reviews",
             "list_reviews", ""),
            ("GET", r"/repos/(?P<owner>[^/]+)/(?P<repo>[^/]+)/issues/(?P<number>\d+)", "get_issue", ""),
            ("GET", r"/repos/(?P<owner>[^/]+)/(?P<repo>[^/]+)/issues/(?P<number>\d+)/comments",
             "list_comments", ""),
            ("POST", r"/repos/(?P<owner>[^/]+)/(?P<repo>[^/]+)/issues/(?P<number>\d+)/comments",
             "create_comment", "issues=write; pull_requests=write"),
            ("GET", r"/repos/(?P<owner>[^/]+)/(?P<repo>[^/]+)/issues/comments/(?P<id>\d+)", "get_comment", ""),
            ("PATCH", r"/repos/(?P<owner>[^/]+)/(?P<repo>[^/]+)/issues/comments/(?P<id>\d+)",
             "update_comment", "issues=write; pull_requests=write"),
            ("POST", r"/repos/(?P<owner>[^/]+)/(?P<repo>[^/]+)/issues/comments/(?P<id>\d+)/reactions",
             "create_reaction", "issues=write; pull_requests=write"),
            ("GET", r"/repos/(?P<owner>[^/]+)/(?P<repo>[^/]+)/collaborators/(?P<username>[^/]+)/permission",
             "get_permission", ""),
            ("POST", r"/repos/(?P<owner>[^/]+)/(?P<repo>[^/]+)/check-runs", "create_check_run", "checks=write"),
            ("GET", r"/repos/(?P<owner>[^/]+)/(?P<repo>[^/]+)/check-runs/(?P<id>\d+)", "get_check_run",
             "checks=read"),
            ("PATCH", r"/repos/(?P<owner>[^/]+)/(?P<repo>[^/]+)/check-runs/(?P<id>\d+)", "update_check_run",
             "checks=write"),
            ("GET", r"/repos/(?P<owner>[^/]+)/(?P<repo>[^/]+)/commits/(?P<ref>[^/]+)/check-runs",
             "list_check_runs", "checks=read"),
            ("POST", r"/repos/(?P<owner>[^/]+)/(?P<repo>[^/]+)/statuses/(?P<sha>[^/]+)", "create_status",
             "statuses=write"),
            ("GET", r"/user", "get_user", ""),
            ("GET", r"/app", "get_app", ""),
            ("GET", r"/repos/(?P<owner>[^/]+)/(?P<repo>[^/]+)/git/ref/(?P<ref>.+)", "get_ref",
             "contents=read"),
            ("POST", r"/repos/(?P<owner>[^/]+)/(?P<repo>[^/]+)/git/refs", "create_ref",
             "contents=write"),
            ("PATCH", r"/repos/(?P<owner>[^/]+)/(?P<repo>[^/]+)/git/refs/(?P<ref>.+)", "update_ref",
             "contents=write"),
            ("GET", r"/repos/(?P<owner>[^/]+)/(?P<repo>[^/]+)/git/commits/(?P<sha>[0-9a-f]+)",
             "get_git_commit", "contents=read"),
            ("POST", r"/repos/(?P<owner>[^/]+)/(?P<repo>[^/]+)/git/commits", "create_git_commit",
             "contents=write"),
            ("POST", r"/repos/(?P<owner>[^/]+)/(?P<repo>[^/]+)/git/trees", "create_tree",
             "contents=write"),
            ("GET", r"/repos/(?P<owner>[^/]+)/(?P<repo>[^/]+)/tarball/(?P<ref>.+)", "tarball",
             "contents=read"),
            ("GET", r"/repos/(?P<owner>[^/]+)/(?P<repo>[^/]+)/issues", "list_issues", ""),
            ("POST", r"/repos/(?P<owner>[^/]+)/(?P<repo>[^/]+)/issues", "create_issue", "issues=write"),
            ("PATCH", r"/repos/(?P<owner>[^/]+)/(?P<repo>[^/]+)/issues/(?P<number>\d+)", "update_issue",
             "issues=write"),
        ]
    ]

    def _dispatch(self, method: str, path: str, query: dict[str, list[str]], body: Any,
                  accept: str, read_only: bool = False) -> _Response:
        for m, rx, name, perm in self._ROUTES:
            match = rx.match(path)
            if match and m == method:
                args = {k: unquote(v) for k, v in match.groupdict().items()}
                if "owner" in args and (args["owner"].lower(), args["repo"].lower()) != (
                        self.owner.lower(), self.repo.lower()):
                    raise _ApiError(404, "Not Found")
                args.pop("owner", None)
                args.pop("repo", None)
                if method in ("POST", "PATCH") and (self.read_only or read_only):
                    raise _ApiError(403, NOT_ACCESSIBLE,
                                    headers={"X-Accepted-GitHub-Permissions": perm} if perm else None)
                handler: Callable[..., _Response] = getattr(self, "_h_" + name)
                return handler(query=query, body=body, accept=accept, **args)
        raise _ApiError(404, "Not Found")

    # ------------------------------------------------------------------ handlers

    def _h_get_repo(self, **_: Any) -> _Response:
        return _Response(200, self._repo_obj(full=True))

    def _h_get_pull(self, number: str, **_: Any) -> _Response:
        p = self.pulls.get(int(number))
        if p is None:
            raise _ApiError(404, "Not Found", doc=f"{DOCS}/pulls/pulls#get-a-pull-request")
        return _Response(200, self._pull_obj(p))

    def _h_list_reviews(self, number: str, query: dict[str, list[str]], **_: Any) -> _Response:
        n = int(number)
        if n not in self.pulls:
            raise _ApiError(404, "Not Found",
                            doc=f"{DOCS}/pulls/reviews#list-reviews-for-a-pull-request")
        path = (f"/repositories/{self.repo_id}/pulls/{n}/reviews" if self.link_style == "repositories"
                else f"/repos/{self.full_name}/pulls/{n}/reviews")
        page_items, link = self._paginate(list(self.reviews.get(n, [])), query, path)
        headers = {"Link": link} if link else {}
        return _Response(200, [self._review_obj(n, r) for r in page_items], headers)

    def _review_obj(self, number: int, r: dict[str, Any]) -> dict[str, Any]:
        html = self._html(f"/{self.full_name}/pull/{number}")
        api = self._api(f"/repos/{self.full_name}/pulls/{number}")
        out = {"id": r["id"], "node_id": _node_id("PRR", r["id"]),
               "user": self._user_obj(r["user"]["login"]), "body": r["body"], "state": r["state"],
               "html_url": f"{html}#pullrequestreview-{r['id']}", "pull_request_url": api,
               "_links": {"html": {"href": f"{html}#pullrequestreview-{r['id']}"},
                          "pull_request": {"href": api}},
               "commit_id": r["commit_id"], "author_association": self._author_association(r["user"]["login"])}
        if r["submitted_at"] is not None:
            out["submitted_at"] = r["submitted_at"]
        return out

    def _h_get_issue(self, number: str, **_: Any) -> _Response:
        i = self.issues.get(int(number))
        if i is None:
            raise _ApiError(404, "Not Found", doc=f"{DOCS}/issues/issues#get-an-issue")
        return _Response(200, self._issue_obj(i))

    def _h_list_comments(self, number: str, query: dict[str, list[str]], **_: Any) -> _Response:
        n = int(number)
        if n not in self.issues:
            raise _ApiError(404, "Not Found", doc=f"{DOCS}/issues/comments#list-issue-comments")
        items = self.comments_on(n)
        if "since" in query:
            since = _parse_iso(query["since"][0])
            items = [c for c in items if _parse_iso(c["updated_at"]) >= since]
        path = (f"/repositories/{self.repo_id}/issues/{n}/comments" if self.link_style == "repositories"
                else f"/repos/{self.full_name}/issues/{n}/comments")
        page_items, link = self._paginate(items, query, path)
        headers = {"Link": link} if link else {}
        return _Response(200, [self._comment_obj(c) for c in page_items], headers)

    def _paginate(self, items: list[Any], query: dict[str, list[str]], path: str) -> tuple[list[Any], str]:
        def intarg(name: str, default: int) -> int:
            try:
                return int(query.get(name, [default])[0])
            except (TypeError, ValueError):
                return default

        per_page = min(max(intarg("per_page", 30), 1), 100)
        page = max(intarg("page", 1), 1)
        last = max(1, math.ceil(len(items) / per_page))
        chunk = items[(page - 1) * per_page: page * per_page]
        other = [(k, v) for k, vs in query.items() if k not in ("page",) for v in vs]

        def url(p: int) -> str:
            return f"{self.url}{path}?{urlencode([*other, ('page', str(p))])}"

        rels = []
        if page > 1:
            rels.append((min(page - 1, last), "prev"))
        if page < last:
            rels.append((page + 1, "next"))
            rels.append((last, "last"))
        if page > 1:
            rels.append((1, "first"))
        return chunk, ", ".join(f'<{url(p)}>; rel="{rel}"' for p, rel in rels)

    def _h_create_comment(self, number: str, body: dict[str, Any], **_: Any) -> _Response:
        n = int(number)
        doc = f"{DOCS}/issues/comments#create-an-issue-comment"
        if n not in self.issues:
            raise _ApiError(404, "Not Found", doc=doc)
        text = body["body"]
        self._check_comment_body(text, doc)
        c = self._store_comment(n, text, self.bot_login, "Bot")
        return _Response(201, self._comment_obj(c),
                         {"Location": self._api(f"/repos/{self.full_name}/issues/comments/{c['id']}")})

    @staticmethod
    def _check_comment_body(text: str, doc: str) -> None:
        if not text.strip():
            raise _ApiError(422, "Validation Failed", doc=doc, errors=[
                {"resource": "IssueComment", "code": "missing_field", "field": "body"}])
        if len(text) > COMMENT_BODY_MAX:
            raise _ApiError(422, "Validation Failed", doc=doc, errors=[
                {"resource": "IssueComment", "code": "custom", "field": "body",
                 "message": f"body is too long (maximum is {COMMENT_BODY_MAX} characters)"}])

    def _comment_or_404(self, cid: str, doc: str) -> dict[str, Any]:
        c = self.comments.get(int(cid))
        if c is None:
            raise _ApiError(404, "Not Found", doc=doc)
        return c

    def _h_get_comment(self, id: str, **_: Any) -> _Response:
        c = self._comment_or_404(id, f"{DOCS}/issues/comments#get-an-issue-comment")
        return _Response(200, self._comment_obj(c))

    def _h_update_comment(self, id: str, body: dict[str, Any], **_: Any) -> _Response:
        doc = f"{DOCS}/issues/comments#update-an-issue-comment"
        c = self._comment_or_404(id, doc)
        self._check_comment_body(body["body"], doc)
        c["body"] = body["body"]
        c["updated_at"] = _iso(self.clock())
        return _Response(200, self._comment_obj(c))

    def _h_create_reaction(self, id: str, body: dict[str, Any], accept: str, **_: Any) -> _Response:
        c = self._comment_or_404(id, f"{DOCS}/reactions/reactions#create-reaction-for-an-issue-comment")
        content = body["content"]
        for r in self.reactions:
            if r["comment_id"] == c["id"] and r["content"] == content and r["user"]["login"] == self.bot_login:
                return _Response(200, self._reaction_obj(r))
        rid = next(self._ids["reaction"])
        r = {"id": rid, "comment_id": c["id"], "content": content,
             "user": dict(self._register_user(self.bot_login)), "created_at": _iso(self.clock())}
        self.reactions.append(r)
        return _Response(201, self._reaction_obj(r))

    def _h_get_permission(self, username: str, **_: Any) -> _Response:
        role = self.permissions.get(username)
        if role is None:
            for k, v in self.permissions.items():
                if k.lower() == username.lower():
                    role = v
        if role is None and self.owner_type == "User" and username.lower() == self.owner.lower():
            role = "admin"  # a user-owned repository's owner is its admin
        if role is None:
            role = self.default_permission
        if role is None:
            raise _ApiError(404, "Not Found",
                            doc=f"{DOCS}/collaborators/collaborators#get-repository-permissions-for-a-user")
        if role not in PERMISSIONS:
            raise ValueError(f"permissions[{username!r}] = {role!r}; expected one of {PERMISSIONS}")
        user = self._user_obj(username)
        user.update({"permissions": {"admin": role == "admin", "maintain": role in ("admin", "maintain"),
                                     "push": role in ("admin", "maintain", "write"),
                                     "triage": role in ("admin", "maintain", "write", "triage"),
                                     "pull": role != "none"},
                     "role_name": role})
        return _Response(200, {"permission": LEGACY_PERMISSION[role], "role_name": role, "user": user})

    def _checks_guard(self) -> None:
        if self.checks_forbidden:
            raise _ApiError(403, NOT_ACCESSIBLE, doc=f"{DOCS}/checks/runs#create-a-check-run",
                            headers={"X-Accepted-GitHub-Permissions": "checks=write"})

    @staticmethod
    def _invalid(message: str, doc: str) -> _ApiError:
        return _ApiError(422, "Invalid request.\n\n" + message, doc=doc)

    def _h_create_check_run(self, body: dict[str, Any], **_: Any) -> _Response:
        self._checks_guard()
        doc = f"{DOCS}/checks/runs#create-a-check-run"
        head_sha = body["head_sha"]
        if not SHA_RE.fullmatch(head_sha):
            raise _ApiError(422, f"No commit found for SHA: {head_sha}", doc=doc)
        status = body.get("status", "queued")
        conclusion = body.get("conclusion")
        self._check_status_conclusion("status" in body, status, conclusion, body, None, doc)
        self._check_output(body, doc)
        if conclusion is not None:
            status = "completed"
        now = _iso(self.clock())
        output = body.get("output") or {}
        rid = next(self._ids["check_run"])
        rec = {
            "id": rid, "check_suite_id": next(self._ids["check_suite"]), "name": body["name"],
            "head_sha": head_sha, "status": status, "conclusion": conclusion,
            "output": {"title": output.get("title"), "summary": output.get("summary"),
                       "text": output.get("text")},
            "annotations_count": len(output.get("annotations") or []),
            "details_url": body.get("details_url"), "external_id": body.get("external_id", ""),
            "started_at": body.get("started_at") or now,
            "completed_at": body.get("completed_at") or (now if status == "completed" else None),
        }
        self.check_runs[rid] = rec
        return _Response(201, self._check_run_obj(rec))

    def _check_status_conclusion(self, status_given: bool, status: str, conclusion: str | None,
                                 body: dict[str, Any], old: dict[str, Any] | None, doc: str) -> None:
        """GitHub's rules for status/conclusion/completed_at combinations (422 otherwise)."""
        if conclusion == "stale":
            raise self._invalid('"stale" cannot be set as a conclusion; only GitHub sets it.', doc)
        if conclusion is not None and status_given and status != "completed":
            raise self._invalid(
                f'"conclusion" can only be given with status "completed", not "{status}".', doc)
        if conclusion is None and status_given and status == "completed":
            raise self._invalid('"conclusion" wasn\'t supplied.', doc)
        if conclusion is None and "completed_at" in body and (old is None or old["conclusion"] is None):
            raise self._invalid('"conclusion" wasn\'t supplied.', doc)

    @classmethod
    def _check_output(cls, body: dict[str, Any], doc: str) -> None:
        """GitHub's limits on a check run's output.summary and output.text (422 otherwise):
        its answer for too many characters (reached only with ``validate=False``: the
        schema's maxLength answers first) and for too many bytes of UTF-8."""
        output = body.get("output") or {}
        for name in ("summary", "text"):
            value = output.get(name)
            if not isinstance(value, str):
                continue
            if len(value) > CHECK_OUTPUT_MAX:
                raise cls._invalid(f"Only {CHECK_OUTPUT_MAX} characters are allowed; "
                                   f"{len(value)} were supplied.", doc)
            if len(value.encode("utf-8", "surrogatepass")) > CHECK_OUTPUT_MAX:
                raise _ApiError(422, "Validation Failed", doc=doc, errors=[
                    {"resource": "CheckRun", "code": "custom", "field": name,
                     "message": f"{name} exceeds a maximum bytesize of {CHECK_OUTPUT_MAX}"}])

    def _h_get_check_run(self, id: str, **_: Any) -> _Response:
        self._checks_guard()
        r = self.check_runs.get(int(id))
        if r is None:
            raise _ApiError(404, "Not Found", doc=f"{DOCS}/checks/runs#get-a-check-run")
        return _Response(200, self._check_run_obj(r))

    def _h_update_check_run(self, id: str, body: dict[str, Any], **_: Any) -> _Response:
        self._checks_guard()
        doc = f"{DOCS}/checks/runs#update-a-check-run"
        r = self.check_runs.get(int(id))
        if r is None:
            raise _ApiError(404, "Not Found", doc=doc)
        status_given = "status" in body
        status = body.get("status", r["status"])
        conclusion = body.get("conclusion")
        self._check_status_conclusion(status_given, status, conclusion, body, r, doc)
        self._check_output(body, doc)
        now = _iso(self.clock())
        for k in ("name", "details_url", "external_id", "started_at"):
            if k in body:
                r[k] = body[k]
        if conclusion is not None:
            r["status"], r["conclusion"] = "completed", conclusion
            r["completed_at"] = body.get("completed_at") or r["completed_at"] or now
        elif status_given:
            r["status"] = status
            if status != "completed":  # re-opened: forget the old conclusion
                r["conclusion"], r["completed_at"] = None, None
        if "completed_at" in body:
            r["completed_at"] = body["completed_at"]
        if "output" in body:
            out = body["output"]
            for k in ("title", "summary", "text"):
                if k in out:
                    r["output"][k] = out[k]
            r["annotations_count"] += len(out.get("annotations") or [])
        return _Response(200, self._check_run_obj(r))

    def _h_list_check_runs(self, ref: str, query: dict[str, list[str]], **_: Any) -> _Response:
        """The check runs on a commit, newest first; ``check_name`` and ``status`` filter
        them, and ``filter=latest`` (GitHub's default) keeps the newest run of each name."""
        self._checks_guard()
        if not SHA_RE.fullmatch(ref):  # branch and tag names are not served here
            raise _ApiError(422, f"No commit found for SHA: {ref}",
                            doc=f"{DOCS}/checks/runs#list-check-runs-for-a-git-reference")
        runs = sorted((r for r in self.check_runs.values() if r["head_sha"] == ref),
                      key=lambda r: r["id"], reverse=True)
        if "check_name" in query:
            runs = [r for r in runs if r["name"] == query["check_name"][0]]
        if "status" in query:
            runs = [r for r in runs if r["status"] == query["status"][0]]
        if query.get("filter", ["latest"])[0] == "latest":
            seen: set[str] = set()
            runs = [r for r in runs if not (r["name"] in seen or seen.add(r["name"]))]
        path = (f"/repositories/{self.repo_id}/commits/{ref}/check-runs"
                if self.link_style == "repositories"
                else f"/repos/{self.full_name}/commits/{ref}/check-runs")
        page, link = self._paginate(runs, query, path)
        return _Response(200, {"total_count": len(runs),
                               "check_runs": [self._check_run_obj(r) for r in page]},
                         {"Link": link} if link else {})

    def _h_create_status(self, sha: str, body: dict[str, Any], **_: Any) -> _Response:
        doc = f"{DOCS}/commits/statuses#create-a-commit-status"
        if self.statuses_forbidden:
            raise _ApiError(403, NOT_ACCESSIBLE, doc=doc,
                            headers={"X-Accepted-GitHub-Permissions": "statuses=write"})
        if not SHA_RE.fullmatch(sha):
            raise _ApiError(422, f"No commit found for SHA: {sha}", doc=doc)
        desc = body.get("description")
        if desc is not None and len(desc) > 140:
            raise _ApiError(422, "Validation Failed", doc=doc, errors=[
                {"resource": "Status", "code": "custom", "field": "description",
                 "message": "description is too long (maximum is 140 characters)"}])
        s = {"id": next(self._ids["status"]), "sha": sha, "state": body["state"],
             "target_url": body.get("target_url"), "description": desc,
             "context": body.get("context", "default"),
             "creator": dict(self._register_user(self.bot_login)), "created_at": _iso(self.clock())}
        self.statuses.append(s)
        return _Response(201, self._status_obj(s))

    def _h_get_user(self, **_: Any) -> _Response:
        if self.user_endpoint_forbidden:
            raise _ApiError(403, NOT_ACCESSIBLE, doc=f"{DOCS}/users/users#get-the-authenticated-user")
        u = self._user_obj(self.bot_login)
        u.update({"name": None, "company": None, "blog": "", "location": None, "email": None,
                  "hireable": None, "bio": None, "twitter_username": None, "public_repos": 0,
                  "public_gists": 0, "followers": 0, "following": 0,
                  "created_at": "2018-07-30T09:30:16Z", "updated_at": "2018-07-30T09:30:16Z"})
        return _Response(200, u)

    def _h_get_app(self, **_: Any) -> _Response:
        if self.app_endpoint_forbidden:
            raise _ApiError(403, NOT_ACCESSIBLE, doc=f"{DOCS}/apps/apps#get-the-authenticated-app")
        return _Response(200, self._app_obj())

    # ------------------------------------------------------------------ request pipeline

    # --- the Git Data API and the tarball (the history branch) ----------------------

    def _ref_obj(self, name: str) -> dict[str, Any]:
        sha = self.git.refs[name]
        return {"ref": name, "node_id": _node_id("REF", abs(hash(name)) % 10**9),
                "url": self._api(f"/repos/{self.full_name}/git/{name}"),
                "object": {"type": "commit", "sha": sha,
                           "url": self._api(f"/repos/{self.full_name}/git/commits/{sha}")}}

    def _git_commit_obj(self, sha: str) -> dict[str, Any]:
        c = self.git.commits[sha]
        base = f"/repos/{self.full_name}/git"
        return {
            "sha": sha, "node_id": _node_id("C", int(sha[:7], 16)),
            "url": self._api(f"{base}/commits/{sha}"),
            "html_url": self._html(f"/{self.full_name}/commit/{sha}"),
            "author": c["author"], "committer": c["committer"], "message": c["message"],
            "tree": {"sha": c["tree"], "url": self._api(f"{base}/trees/{c['tree']}")},
            "parents": [{"sha": p, "url": self._api(f"{base}/commits/{p}"),
                         "html_url": self._html(f"/{self.full_name}/commit/{p}")}
                        for p in c["parents"]],
            "verification": {"verified": False, "reason": "unsigned", "signature": None,
                             "payload": None, "verified_at": None},
        }

    def _h_get_ref(self, ref: str, **_: Any) -> _Response:
        name = "refs/" + ref
        if name not in self.git.refs:
            raise _ApiError(404, "Not Found", doc=f"{DOCS}/git/refs#get-a-reference")
        return _Response(200, self._ref_obj(name))

    def _h_create_ref(self, body: dict[str, Any], **_: Any) -> _Response:
        name, sha = body["ref"], body["sha"]
        doc = f"{DOCS}/git/refs#create-a-reference"
        if not name.startswith("refs/") or name.count("/") < 2:
            raise self._invalid("Reference name must start with 'refs/' and have at least two slashes.", doc)
        if name in self.git.refs:
            raise self._invalid("Reference already exists", doc)
        if sha not in self.git.commits:
            raise self._invalid("Object does not exist", doc)
        self.git.refs[name] = sha
        return _Response(201, self._ref_obj(name))

    def _h_update_ref(self, ref: str, body: dict[str, Any], **_: Any) -> _Response:
        name, sha = "refs/" + ref, body["sha"]
        doc = f"{DOCS}/git/refs#update-a-reference"
        if name not in self.git.refs:
            raise self._invalid("Reference does not exist", doc)
        if sha not in self.git.commits:
            raise self._invalid("Object does not exist", doc)
        if not body.get("force") and not self.git.descends(sha, self.git.refs[name]):
            raise self._invalid("Update is not a fast forward", doc)
        self.git.refs[name] = sha
        return _Response(200, self._ref_obj(name))

    def _h_get_git_commit(self, sha: str, **_: Any) -> _Response:
        if sha not in self.git.commits:
            raise _ApiError(404, "Not Found", doc=f"{DOCS}/git/commits#get-a-commit-object")
        return _Response(200, self._git_commit_obj(sha))

    def _h_create_git_commit(self, body: dict[str, Any], **_: Any) -> _Response:
        doc = f"{DOCS}/git/commits#create-a-commit"
        tree, parents = body["tree"], list(body.get("parents") or [])
        if tree not in self.git.trees or any(p not in self.git.commits for p in parents):
            raise self._invalid("Tree SHA does not exist" if tree not in self.git.trees
                                else "Parent SHA does not exist or is not a commit object", doc)
        now = _iso(self.clock())
        who = {"name": self.bot_login, "email": f"{GITHUB_ACTIONS_BOT_ID}+{self.bot_login}@users.noreply.github.com",
               "date": now}
        sha = self.git.commit(tree, parents, str(body["message"]), who)
        return _Response(201, self._git_commit_obj(sha))

    def _h_create_tree(self, body: dict[str, Any], **_: Any) -> _Response:
        doc = f"{DOCS}/git/trees#create-a-tree"
        base = body.get("base_tree")
        if base is not None and base not in self.git.trees:
            raise self._invalid("base_tree is not a valid tree oid", doc)
        files = self.git.flatten(base) if base else {}
        for entry in body["tree"]:
            path = str(entry.get("path") or "")
            if not path or path.startswith("/") or ".." in path.split("/"):
                raise self._invalid(f"tree.path {path!r} is invalid", doc)
            if "content" in entry and entry.get("sha") is not None:
                raise self._invalid("tree.sha and tree.content cannot both be given", doc)
            if entry.get("type", "blob") != "blob":
                raise self._invalid("only blobs are served here", doc)
            if "content" in entry:
                files[path] = (entry.get("mode", "100644"), self.git.blob(str(entry["content"]).encode()))
            elif entry.get("sha") is None:
                files.pop(path, None)
            elif entry["sha"] in self.git.blobs:
                files[path] = (entry.get("mode", "100644"), entry["sha"])
            else:
                raise self._invalid("tree.sha is not a valid blob", doc)
        sha = self.git.tree_of(files)
        return _Response(201, {"sha": sha, "url": self._api(f"/repos/{self.full_name}/git/trees/{sha}"),
                               "truncated": False, "tree": self._tree_entries(sha)})

    def _tree_entries(self, sha: str) -> list[dict[str, Any]]:
        out = []
        for name, (mode, kind, oid) in sorted(self.git.trees[sha].items()):
            item: dict[str, Any] = {"path": name, "mode": mode, "type": kind, "sha": oid,
                                    "url": self._api(f"/repos/{self.full_name}/git/{kind}s/{oid}")}
            if kind == "blob":
                item["size"] = len(self.git.blobs[oid])
            out.append(item)
        return out

    def _h_tarball(self, ref: str, **_: Any) -> _Response:
        sha = self.git.resolve(ref)
        if sha is None:
            raise _ApiError(404, "Not Found", doc=f"{DOCS}/repos/contents#download-a-repository-archive-tar")
        # As GitHub: a redirect to codeload, which serves the archive without the API.
        return _Response(302, None, {"Location": f"{self.url}/_codeload/{self.full_name}/tar.gz/{sha}"})

    def branch_files(self, branch: str) -> dict[str, bytes]:
        """The files at a branch's tip (path: content); {} when there is no such branch."""
        sha = self.git.refs.get(f"refs/heads/{branch}")
        if sha is None:
            return {}
        return {path: self.git.blobs[oid]
                for path, (_, oid) in self.git.flatten(self.git.commits[sha]["tree"]).items()}

    def _codeload(self, path: str) -> _Response | None:
        """The archive at ``/_codeload/{owner}/{repo}/tar.gz/{sha}`` (outside the API)."""
        m = re.match(r"^/_codeload/([^/]+)/([^/]+)/tar\.gz/([0-9a-f]{40})$", path)
        if m is None:
            return None
        sha = m.group(3)
        if sha not in self.git.commits:
            return _Response(404, None, validate=False)
        prefix = f"{self.owner}-{self.repo}-{sha[:7]}"
        return _Response(200, None, {"Content-Type": "application/x-gzip"}, validate=False,
                         raw=self.git.tarball(sha, prefix))

    # --- issues ----------------------------------------------------------------------

    def _h_list_issues(self, query: dict[str, list[str]], **_: Any) -> _Response:
        state = query.get("state", ["open"])[0]
        wanted = [x for x in query.get("labels", [""])[0].split(",") if x]
        items = [i for i in sorted(self.issues.values(), key=lambda i: -i["number"])
                 if (state == "all" or i["state"] == state)
                 and all(w in i.get("labels", []) for w in wanted)]
        path = f"/repos/{self.full_name}/issues"
        page_items, link = self._paginate(items, query, path)
        return _Response(200, [self._issue_obj(i) for i in page_items], {"Link": link} if link else {})

    def _h_create_issue(self, body: dict[str, Any], **_: Any) -> _Response:
        doc = f"{DOCS}/issues/issues#create-an-issue"
        text = body.get("body")
        if text is not None:
            self._check_comment_body(text, doc)
        number = max([*self.issues, *self.pulls, 0]) + 1
        rec = self.add_issue(number, title=str(body["title"]), body=text, user_login=self.bot_login)
        rec["labels"] = [str(x) for x in body.get("labels") or []]
        for name in rec["labels"]:  # GitHub makes a label an issue names if there is none
            self.labels.setdefault(name, {"name": name, "id": next(self._ids["issue"])})
        return _Response(201, self._issue_obj(rec))

    def _h_update_issue(self, number: str, body: dict[str, Any], **_: Any) -> _Response:
        i = self.issues.get(int(number))
        if i is None:
            raise _ApiError(404, "Not Found", doc=f"{DOCS}/issues/issues#update-an-issue")
        if "body" in body and body["body"] is not None:
            self._check_comment_body(body["body"], f"{DOCS}/issues/issues#update-an-issue")
        for key in ("title", "body", "state"):
            if key in body:
                i[key] = body[key]
        if "labels" in body:
            i["labels"] = [str(x) for x in body["labels"] or []]
        i["updated_at"] = _iso(self.clock())
        return _Response(200, self._issue_obj(i))

    def _rate_headers(self, count: bool) -> dict[str, str]:
        with self.lock:
            now = int(time.time())
            if now >= self.rate_reset:
                self.rate_reset, self.rate_used = now + 3600, 0
            if count:
                self.rate_used += 1
            return {"X-RateLimit-Limit": str(self.rate_limit),
                    "X-RateLimit-Remaining": str(max(self.rate_limit - self.rate_used, 0)),
                    "X-RateLimit-Reset": str(self.rate_reset),
                    "X-RateLimit-Used": str(self.rate_used), "X-RateLimit-Resource": "core"}

    def _map_path(self, path: str) -> str:
        m = re.match(r"^/repositories/(\d+)(/.*)?$", path)
        if m and int(m.group(1)) == self.repo_id:
            return f"/repos/{self.full_name}{m.group(2) or ''}"
        return path

    def _handle(self, method: str, raw_path: str, headers: dict[str, str], raw_body: bytes) -> tuple[int, dict[str, str], bytes]:
        parts = urlsplit(raw_path)
        path = self._map_path(unquote(parts.path)).rstrip("/") or "/"
        query = parse_qs(parts.query, keep_blank_values=True)
        hl = {k.lower(): v for k, v in headers.items()}
        rid = f"{secrets.token_hex(2).upper()}:{secrets.token_hex(3).upper()}:{secrets.token_hex(4).upper()}"

        body: Any = None
        body_error = None
        if raw_body:
            try:
                body = json.loads(raw_body)
            except ValueError as e:
                body_error = str(e)
        rec = RecordedRequest(method, path, raw_path, query, dict(headers), body, raw_body)
        with self.lock:
            self.requests.append(rec)
        if method == "GET" and path.startswith("/_codeload/"):  # not the API: no validation
            with self.lock:
                served = self._codeload(path) or _Response(404, None, validate=False)
            rec.status = served.status
            return served.status, dict(served.headers), served.raw or b""

        # 1. validate the request itself (recorded whatever happens next)
        req_problem: tuple[str, str] | None = None
        if self._validator is not None and body_error is None:
            ct = hl.get("content-type", "application/json")
            req_problem = self._validator.check_request(method, path, query, headers, raw_body, ct)
            if req_problem is not None:
                self._validation_error(f"request {method} {raw_path}: {req_problem[1]}")

        # 2. faults injected before the request reaches "GitHub"
        fault = self._take_fault(method, path)
        auth_problem = self._auth_problem(hl.get("authorization"))
        resp: _Response
        injected = False
        if fault is not None and not fault.apply:
            resp, injected = self._fault_response(fault, rid), True
        elif auth_problem is not None:
            resp = _Response(401, _error_body(401, auth_problem))
        elif body_error is not None:
            resp = _Response(400, _error_body(400, "Problems parsing JSON"))
        elif req_problem is not None and req_problem[0] == "route":
            resp = _Response(404, _error_body(404, "Not Found"), validate=False)
        elif req_problem is not None:
            resp = _Response(422, _error_body(422, "Invalid request.\n\n" + req_problem[1]))
        else:
            try:
                with self.lock:
                    resp = self._dispatch(method, path, query, body if body is not None else {},
                                          hl.get("accept", ""),
                                          read_only=self._token_of(hl.get("authorization")) == self.read_token)
            except _ApiError as e:
                resp = e.response
            if fault is not None:  # apply=True: the write happened, the client sees an error
                resp, injected = self._fault_response(fault, rid), True

        out_headers = {
            "Content-Type": "application/json; charset=utf-8",
            "X-GitHub-Api-Version-Selected": "2022-11-28",
            "X-GitHub-Media-Type": self._media_type(hl.get("accept", "")),
            "X-GitHub-Request-Id": rid,
            "X-Content-Type-Options": "nosniff",
            **self._rate_headers(count=auth_problem is None),
            **resp.headers,
        }
        data = json.dumps(resp.body).encode() if resp.body is not None else (resp.raw or b"")

        if self._validator is not None and not injected and resp.validate and req_problem is None:
            problem = self._validator.check_response(method, path, query, headers, resp.status,
                                                     out_headers, data)
            if problem is not None:
                self._validation_error(f"response {resp.status} to {method} {raw_path}: {problem}")
        rec.status = resp.status
        rec.injected = injected
        return resp.status, out_headers, data

    def _validation_error(self, msg: str) -> None:
        with self.lock:
            self.validation_errors.append(msg)

    def _auth_problem(self, auth: str | None) -> str | None:
        """None if the Authorization header carries one of our tokens, else GitHub's 401 message."""
        if not auth:
            return "Requires authentication"
        if self._token_of(auth) in (self.token, self.read_token):
            return None
        return "Bad credentials"

    @staticmethod
    def _token_of(auth: str | None) -> str | None:
        scheme, _, tok = (auth or "").partition(" ")
        return tok.strip() if scheme.lower() in ("token", "bearer") else None

    @staticmethod
    def _media_type(accept: str) -> str:
        m = re.search(r"application/vnd\.github\.([\w-]+)-preview", accept)
        if m:
            return f"github.{m.group(1)}-preview; format=json"
        return "github.v3; format=json"


class _Handler(BaseHTTPRequestHandler):
    fake: FakeGitHub
    protocol_version = "HTTP/1.1"
    server_version = "GitHub.com"
    sys_version = ""
    timeout = 30
    wbufsize = -1  # buffer headers + body into one write; avoids Nagle/delayed-ACK stalls

    def setup(self) -> None:
        super().setup()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def _serve(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            status, headers, data = self.fake._handle(self.command, self.path, dict(self.headers.items()), raw)
        except Exception as e:  # a bug in the fake: say so loudly, answer 500
            self.fake._validation_error(f"FakeGitHub crashed on {self.command} {self.path}: {e!r}")
            status, headers, data = 500, {"Content-Type": "application/json"}, json.dumps(
                {"message": f"FakeGitHub internal error: {e!r}"}).encode()
        self.send_response(status)
        for k, v in headers.items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)
        self.wfile.flush()

    do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = do_HEAD = _serve

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass


__all__ = ["EXTRACT_PATH", "FakeGitHub", "RecordedRequest"]
