"""What is posted on a pull request, tested without HTTP through an in-memory API."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from benchbot.core.errors import GithubError
from benchbot.core.model import Summary
from benchbot.github.api import CheckRunInfo, CommentInfo
from benchbot.github.limits import fit
from benchbot.github.post import (
    BENCH_HINT,
    BISECT_MARKER,
    COMMENT_LIMIT,
    DEFAULT_BOT_LOGIN,
    MARKER,
    Publisher,
    final_body,
    find_sticky,
    headline,
    status_description,
)
from benchbot.report.escape import Markdown, md_code_block, md_inline

BOT = DEFAULT_BOT_LOGIN


def comment(i: int, body: str, author: str = BOT, kind: str = "Bot") -> CommentInfo:
    return CommentInfo(id=i, body=body, author=author, author_type=kind)


@dataclass
class MemoryApi:
    """Holds comments, checks and statuses; ``fail`` maps a method name to errors to raise."""

    comments_: list[CommentInfo] = field(default_factory=list)
    checks: dict[int, dict[str, object]] = field(default_factory=dict)
    statuses: list[dict[str, object]] = field(default_factory=list)
    reactions: list[tuple[int, str]] = field(default_factory=list)
    fail: dict[str, list[GithubError]] = field(default_factory=dict)
    app_slug: str | None = "github-actions"
    user: str | None = None
    calls: list[str] = field(default_factory=list)
    lost_create: bool = False  # a create that is stored but answered with a 502
    lost_check: bool = False  # the same for a check run

    def _enter(self, name: str) -> None:
        self.calls.append(name)
        errors = self.fail.get(name)
        if errors:
            raise errors.pop(0)

    def comments(self, number: int) -> list[CommentInfo]:
        self._enter("comments")
        return list(self.comments_)

    def create_comment(self, number: int, body: str) -> CommentInfo:
        self._enter("create_comment")
        made = comment(1000 + len(self.comments_), body)
        self.comments_.append(made)
        if self.lost_create:
            self.lost_create = False
            raise GithubError("POST comments failed: 502", status=502)
        return made

    def edit_comment(self, number: int, comment_id: int, body: str) -> CommentInfo:
        self._enter("edit_comment")
        for i, c in enumerate(self.comments_):
            if c.id == comment_id:
                self.comments_[i] = comment(c.id, body, c.author, c.author_type)
                return self.comments_[i]
        raise GithubError("PATCH failed: 404 Not Found", status=404)

    def react(self, number: int, comment_id: int, content: str) -> None:
        self._enter("react")
        self.reactions.append((comment_id, content))

    def authenticated_login(self) -> str | None:
        self._enter("authenticated_login")
        return self.user

    def create_check_run(self, *, name: str, head_sha: str, title: str, summary: str,
                         details_url: str | None = None,
                         external_id: str | None = None) -> CheckRunInfo:
        self._enter("create_check_run")
        _refuse_long(summary)
        cid = len(self.checks) + 1
        self.checks[cid] = {"name": name, "status": "in_progress", "summary": summary,
                            "head_sha": head_sha, "external_id": external_id}
        if self.lost_check:
            self.lost_check = False
            raise GithubError("POST check-runs failed: 502", status=502)
        return CheckRunInfo(id=cid, app_slug=self.app_slug, name=name, external_id=external_id)

    def check_runs(self, head_sha: str, *, name: str,
                   status: str | None = None) -> list[CheckRunInfo]:
        self._enter("check_runs")
        return [CheckRunInfo(id=cid, app_slug=self.app_slug, name=name,
                             status=str(c["status"]), external_id=c["external_id"])  # type: ignore[arg-type]
                for cid, c in self.checks.items()
                if c["name"] == name and c["head_sha"] == head_sha
                and status in (None, c["status"])]

    def update_check_run(self, check_id: int, *, title: str, summary: str,
                         conclusion: str | None = None, text: str | None = None) -> None:
        self._enter("update_check_run")
        _refuse_long(summary)
        self.checks[check_id].update(summary=summary, title=title)
        if conclusion:
            self.checks[check_id].update(status="completed", conclusion=conclusion)

    def create_status(self, sha: str, *, state: str, context: str, description: str,
                      target_url: str | None = None) -> None:
        self._enter("create_status")
        self.statuses.append({"state": state, "context": context, "description": description})


def _refuse_long(summary: str) -> None:
    """GitHub's limit on a check's summary, which it counts in bytes."""
    if len(summary.encode()) > 65_535:
        raise GithubError("PATCH /repos/o/r/check-runs/1 failed: 422 Validation Failed "
                          "(summary exceeds a maximum bytesize of 65535)", status=422)


def publisher(api: MemoryApi, **kw: object) -> Publisher:
    options: dict[str, object] = {"number": 7, "head_sha": "a" * 40, "check_name": "benchbot",
                                  "run_url": "https://github.com/o/r/actions/runs/1",
                                  "retry_wait_s": 0.0}
    options.update(kw)
    return Publisher(api, **options)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- sticky selection


def test_sticky_needs_the_marker_and_our_identity() -> None:
    comments = [
        comment(1, f"{MARKER} forged", author="mallory", kind="User"),
        comment(2, "a bot comment without the marker"),
        comment(3, f"{MARKER}\nours"),
        comment(4, f"{MARKER}\na later duplicate"),
        comment(5, f"{MARKER}\nanother app's", author="other-app[bot]"),
    ]
    assert find_sticky(comments, BOT) == comments[2]
    assert find_sticky(comments, "GitHub-Actions[bot]") == comments[2]  # logins ignore case
    assert find_sticky(comments, "other-app[bot]") == comments[4]
    assert find_sticky(comments[:2], BOT) is None


def test_the_sticky_and_the_bisect_comment_are_told_apart_by_their_beginning() -> None:
    """A bisect's comment quotes commit subjects, which can spell the sticky marker out:
    only the marker a comment begins with counts, so neither is ever taken for the other."""
    comments = [
        comment(1, f"{BISECT_MARKER}\n| `abc1234` | {MARKER} a subject |"),
        comment(2, f"quoted: {BISECT_MARKER}"),
        comment(3, f"{MARKER}\nthe comparison"),
        comment(4, f"{BISECT_MARKER}\nthe bisect"),
    ]
    assert find_sticky(comments, BOT) == comments[2]
    assert find_sticky(comments, BOT, BISECT_MARKER) == comments[0]
    api = MemoryApi(comments_=comments[1:])
    pub = publisher(api, marker=BISECT_MARKER)
    pub.show(Markdown(f"{BISECT_MARKER}\nanswered"))
    assert [c.body for c in api.comments_][1:] == [f"{MARKER}\nthe comparison",
                                                   f"{BISECT_MARKER}\nanswered"]


def test_first_show_creates_later_ones_edit() -> None:
    api = MemoryApi(comments_=[comment(1, f"{MARKER} forged", "mallory", "User")])
    pub = publisher(api)
    pub.start_check("measuring", Markdown("…"))
    pub.show(Markdown(f"{MARKER}\nrunning"))
    pub.show(Markdown(f"{MARKER}\ndone"))
    assert [c.body for c in api.comments_] == [f"{MARKER} forged", f"{MARKER}\ndone"]
    assert api.calls.count("comments") == 1 and api.calls.count("create_comment") == 1
    assert pub.failures == []


def test_a_second_job_edits_the_existing_sticky_comment() -> None:
    api = MemoryApi(comments_=[comment(1, "hello", "alice", "User"), comment(2, f"{MARKER}\nold")])
    pub = publisher(api)
    pub.start_check("measuring", Markdown("…"))
    pub.show(Markdown(f"{MARKER}\nnew"))
    assert [c.body for c in api.comments_] == ["hello", f"{MARKER}\nnew"]
    assert "create_comment" not in api.calls


def test_a_lost_create_is_found_instead_of_posted_twice() -> None:
    api = MemoryApi(lost_create=True)
    pub = publisher(api)
    pub.show(Markdown(f"{MARKER}\nrunning"))
    pub.show(Markdown(f"{MARKER}\ndone"))
    assert [c.body for c in api.comments_] == [f"{MARKER}\ndone"]
    assert pub.failures == []


def test_a_deleted_sticky_comment_is_made_again() -> None:
    api = MemoryApi(comments_=[comment(2, f"{MARKER}\nold")])
    pub = publisher(api)
    pub.show(Markdown(f"{MARKER}\nfirst"))
    api.comments_.clear()  # someone deleted it meanwhile
    pub.show(Markdown(f"{MARKER}\nsecond"))
    assert [c.body for c in api.comments_] == [f"{MARKER}\nsecond"]


def test_comment_off_writes_no_comment() -> None:
    api = MemoryApi()
    pub = publisher(api, comment=False)
    pub.show(Markdown(f"{MARKER}\nx"))
    assert api.calls == []


# --------------------------------------------------------------------------- identity


@pytest.mark.parametrize("configured, slug, user, expected", [
    ("my-bot[bot]", "github-actions", "someone", "my-bot[bot]"),
    (None, "my-app", "someone", "my-app[bot]"),
    (None, None, "octocat", "octocat"),
    (None, None, None, BOT),
])
def test_identity(configured: str | None, slug: str | None, user: str | None, expected: str) -> None:
    api = MemoryApi(app_slug=slug, user=user)
    pub = publisher(api, bot_login=configured)
    pub.start_check("t", Markdown("s"))
    assert pub.identity() == expected


def test_identity_when_get_user_is_refused() -> None:
    api = MemoryApi(app_slug=None, fail={"authenticated_login": [GithubError("GET /user failed: 500", status=500)]})
    pub = publisher(api)
    assert pub.identity() == BOT and pub.failures == []


# --------------------------------------------------------------------------- the check


def test_check_run_goes_in_progress_then_completed() -> None:
    api = MemoryApi()
    pub = publisher(api)
    pub.start_check("measuring", Markdown("starting"))
    pub.update_check("measuring", Markdown("phase: ab"))
    pub.finish_check("failure", "1 slower", Markdown("report"), artifact="a", description="d")
    assert api.checks[1]["conclusion"] == "failure" and api.checks[1]["summary"] == "report"
    assert api.statuses == []


def test_a_check_summary_is_cut_in_bytes_not_characters() -> None:
    # 45,000 characters, 90,000 bytes: a report of many workloads is full of × and −
    report = "### benchbot\n\n" + "| × | − |\n" * 7_500
    api = MemoryApi()
    pub = publisher(api)
    pub.start_check("measuring", Markdown(report))
    pub.update_check("measuring", Markdown(report))
    pub.finish_check("failure", "1 slower", Markdown(report), artifact="benchbot-results", description="d")
    check = api.checks[1]
    assert (check["status"], check["conclusion"]) == ("completed", "failure") and pub.failures == []
    summary = str(check["summary"])
    assert len(summary.encode()) <= 65_535 and "(65,535 bytes) and was cut here" in summary
    assert summary.startswith("### benchbot\n\n| × | − |\n") and "benchbot-results" in summary


def test_a_refused_check_summary_still_completes_the_check() -> None:
    refused = GithubError("PATCH /repos/o/r/check-runs/1 failed: 422 Validation Failed (summary "
                          "exceeds a maximum bytesize of 65535)", status=422)
    api = MemoryApi(fail={"update_check_run": [refused]})
    pub = publisher(api)
    pub.start_check("measuring", Markdown("starting"))
    pub.finish_check("failure", "1 slower", Markdown("the report"), artifact="benchbot-results",
                     description="d")
    check = api.checks[1]
    assert (check["status"], check["conclusion"], check["title"]) == ("completed", "failure", "1 slower")
    summary = str(check["summary"])
    assert "GitHub refused the report" in summary and "maximum bytesize of 65535" in summary
    assert "benchbot comment" in summary and "benchbot-results" in summary
    assert "https://github.com/o/r/actions/runs/1" in summary
    assert pub.failures == [] and api.statuses == []


def test_a_check_that_cannot_be_completed_at_all_is_a_failure() -> None:
    refused = [GithubError("PATCH failed: 422 Invalid request.", status=422) for _ in range(2)]
    api = MemoryApi(fail={"update_check_run": refused})
    pub = publisher(api, comment=False)
    pub.start_check("measuring", Markdown("starting"))
    pub.finish_check("success", "all level", Markdown("the report"), artifact="a", description="d")
    assert pub.failures == ["PATCH failed: 422 Invalid request."]
    assert api.calls.count("update_check_run") == 2


def test_forbidden_check_runs_fall_back_to_a_commit_status() -> None:
    api = MemoryApi(fail={"create_check_run": [GithubError("POST check-runs failed: 403", status=403)]})
    pub = publisher(api)
    pub.start_check("measuring", Markdown("starting"))
    pub.update_check("measuring", Markdown("phase: ab"))  # nothing to update on a status
    pub.finish_check("neutral", "1 inconclusive", Markdown("report"), artifact="a", description="1 inconclusive")
    assert [(s["state"], s["context"]) for s in api.statuses] == [("pending", "benchbot"), ("success", "benchbot")]
    assert pub.failures == []


def test_other_check_errors_are_failures_not_fallbacks() -> None:
    api = MemoryApi(fail={"create_check_run": [GithubError("POST check-runs failed: 422", status=422)]})
    pub = publisher(api)
    pub.start_check("measuring", Markdown("starting"))
    assert pub.failures == ["POST check-runs failed: 422"] and api.statuses == []


def test_a_check_run_stored_despite_a_server_error_is_adopted_not_duplicated() -> None:
    api = MemoryApi(lost_check=True)
    pub = publisher(api, external_id="benchbot-run-7")
    pub.start_check("measuring", Markdown("starting"))
    assert pub.failures == [] and list(api.checks) == [1]
    assert api.calls == ["create_check_run", "check_runs"]  # looked before creating again
    pub.finish_check("success", "done", Markdown("report"), artifact="a", description="done")
    assert api.checks[1]["status"] == "completed"


def test_a_check_run_of_another_job_is_not_adopted() -> None:
    api = MemoryApi()
    publisher(api, external_id="benchbot-run-6").start_check("measuring", Markdown("another run"))
    api.fail["create_check_run"] = [GithubError("POST check-runs failed: 502", status=502)]
    pub = publisher(api, external_id="benchbot-run-7")
    pub.start_check("measuring", Markdown("starting"))
    assert [c["external_id"] for c in api.checks.values()] == ["benchbot-run-6", "benchbot-run-7"]
    assert pub.state()[0].id == 2


def test_failures_are_collected_and_publishing_goes_on() -> None:
    err = GithubError("POST reactions failed: 403", status=403)
    down = [GithubError("GET failed: 500", status=500) for _ in range(5)]
    api = MemoryApi(fail={"react": [err], "comments": down})
    pub = publisher(api)
    pub.react(5, "eyes")
    pub.show(Markdown(f"{MARKER}\nx"))  # five 500s in a row: every try fails
    pub.start_check("t", Markdown("s"))
    assert len(pub.failures) == 2 and api.checks[1]["status"] == "in_progress"
    assert api.comments_ == []


def test_several_server_errors_in_a_row_still_give_one_sticky_comment() -> None:
    lost = [GithubError("POST comments failed: 502", status=502) for _ in range(3)]
    api = MemoryApi(fail={"create_comment": lost, "comments": [GithubError("x", status=503)]})
    pub = publisher(api)
    pub.show(Markdown(f"{MARKER}\nrunning"))
    assert [c.body for c in api.comments_] == [f"{MARKER}\nrunning"] and pub.failures == []
    # each try looked for the comment before creating it
    assert api.calls.count("comments") == 5 and api.calls.count("create_comment") == 4


def test_a_create_stored_but_answered_with_errors_is_never_duplicated() -> None:
    api = MemoryApi(lost_create=True, fail={"comments": [GithubError("x", status=500)]})
    pub = publisher(api)
    pub.show(Markdown(f"{MARKER}\nrunning"))
    assert [c.body for c in api.comments_] == [f"{MARKER}\nrunning"] and pub.failures == []


# --------------------------------------------------------------------------- texts


def test_final_body_is_cut_to_the_comment_limit_with_a_pointer() -> None:
    report = "### benchbot\n\n<details><summary>x</summary>\n\n" + "| row |\n" * 20_000 + "</details>\n"
    body = final_body(Markdown(report), artifact="benchbot-results", run_url="https://x/runs/1")
    assert len(body) <= COMMENT_LIMIT
    assert body.startswith(MARKER) and "benchbot-results" in body and "https://x/runs/1" in body
    assert body.endswith(BENCH_HINT) and "\n</details>\n" in body
    assert "| row" not in body.splitlines()[-5]  # cut at a line end, then the note


def test_a_short_report_is_kept_whole() -> None:
    assert final_body(Markdown("### r\n"), artifact="a", run_url=None) == f"{MARKER}\n### r\n"


def test_fit() -> None:
    assert fit("short", 10, "…") == "short"
    cut = fit("line one\nline two\nline three\n", 20, "[cut]")
    assert cut.endswith("[cut]") and len(cut) <= 20 and "line one" in cut


def test_fit_in_bytes_cuts_at_a_line_end_and_never_inside_a_character() -> None:
    text = "### r\n" + "| × | 1.2 µs | ▁▂▃▅▇ | −3% | 🐢 |\n" * 5_000
    assert fit(text, len(text), "[cut]") == text  # in characters it fits
    for limit in range(1_000, 1_050):  # the limit lands on every byte of the characters
        cut = fit(text, limit, "[cut]", unit="bytes")
        assert len(cut.encode()) <= limit and cut.endswith("\n\n[cut]")
        kept = cut.removesuffix("\n\n[cut]")
        assert text.startswith(kept + "\n") and len(kept.encode()) > limit - 60
    # a tail too long for the limit is cut too, between characters
    assert fit("x" * 10 + "\n", 5, "ééééé", unit="bytes") == "\n\né"


def details_balance(text: str) -> int:
    """Open minus closed <details> blocks, counting the tags as markdown renders them: at a
    line's start, outside code blocks (md_code_block's fences)."""
    depth, fence = 0, ""
    for line in text.splitlines():
        if fence:
            fence = "" if line == fence else fence
        elif line.startswith("```"):
            fence = line.removesuffix("text")
        elif line.startswith("<details"):
            depth += 1
        elif line.startswith("</details>"):
            depth -= 1
            assert depth >= 0, "a </details> with none open"
    return depth


HOSTILE = md_inline("<details><summary>pwned</summary> </details> <details>")
LOG = md_code_block("</details>\n</details>\n<details>\n" * 300)  # a build log's tail


@pytest.mark.parametrize("case", ["before the details", "inside the details", "inside a log"])
@pytest.mark.parametrize("unit", ["characters", "bytes"])
def test_escaped_or_quoted_details_tags_never_steer_the_cut(case: str, unit: str) -> None:
    rows = "".join(f"| `w{i}` | {HOSTILE} | × |\n" for i in range(400))
    report = (f"### benchbot\n\n{rows}\n{LOG}\n\n<details><summary>The runs</summary>\n\n"
              f"{rows}\n</details>\n")
    assert "\\<details" in HOSTILE and details_balance(report) == 0
    mark = {"before the details": "| `w200` |", "inside the details": "<summary>The runs",
            "inside a log": "```text\n</details>"}[case]
    at = report.index(mark) + len(mark) + 2_000 * (case == "inside the details")
    limit = len(report[:at].encode()) if unit == "bytes" else at
    cut = fit(report, limit, "[cut]", unit=unit)  # type: ignore[arg-type]
    assert cut.endswith("\n\n[cut]") and cut != report
    assert details_balance(cut) == 0  # no stray </details>, none left open
    if case == "inside a log":
        assert cut.endswith("\n```\n\n[cut]")  # the log's code block is closed




def test_headline_and_status_description() -> None:
    summary = Summary(slower=2, level=3, inconclusive=1)
    assert headline(summary) == "2 slower · 3 level · 1 inconclusive"
    assert status_description(summary, "failure") == "2 slower, 3 level, 1 inconclusive (failure)"
    assert len(status_description(Summary(slower=10**200), "failure")) <= 140
