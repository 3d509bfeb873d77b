"""One escaper for every value shown in markdown (``benchbot.report.escape``), tables
included: every markdown template (the comparison's report and comment, the bisect's, the
history's), every reply and comment body benchbot builds, and the job summaries, rendered
with a name that holds a ``|``, ``<img>``, a bare link, a markdown link and an @mention,
through cmark-gfm (GitHub's renderer, raw HTML allowed): each table row keeps its columns,
and nothing is live (no tag, no link but benchbot's own to the workflow run, no mention
but of the one who asked)."""

from __future__ import annotations

import dataclasses
import inspect
import math
import re
from collections.abc import Callable, Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import jinja2
import pytest

from benchbot.config.load import parse_config
from benchbot.config.settings import Overrides
from benchbot.core.model import Results
from benchbot.github import gate, post
from benchbot.github.command import BenchCommand, CommandError, parse
from benchbot.github.event import Side
from benchbot.github.job import Job
from benchbot.history import composed, historydoc
from benchbot.history.historydoc import CommitRef, StepSettings, WorkloadStep
from benchbot.report import bisect as bisect_report
from benchbot.report import escape, render_comment, render_results
from benchbot.report import history as history_page
from benchbot.verdict.trend import StepEstimate
from tests.bisect.test_bisectdoc import make_doc
from tests.fakegithub import FakeGitHub
from tests.ghenv import BOT, CONFIG, Env, make_workspace
from tests.golden.scenarios import mixed, suite

cmarkgfm = pytest.importorskip("cmarkgfm", reason="cmarkgfm (GitHub's renderer) is a test dependency")

NAME = "x|y <img src=x> https://evil.example/x [t](https://evil.example) @mallory"
NAMES = (NAME, "a|b|c", "<img src=x onerror=alert(1)>", "https://evil.example/x",
         "[t](https://evil.example)", "@mallory", "`x|y`")
RUN_URL = "https://github.com/octo-org/octo-repo/actions/runs/42"
TEMPLATES = Path(escape.__file__).parent / "templates"
SHA = "0123456789abcdef0123456789abcdef01234567"
BASE = "fedcba9876543210fedcba9876543210fedcba98"


def html_of(markdown: str) -> str:
    return str(cmarkgfm.github_flavored_markdown_to_html(
        markdown, options=cmarkgfm.cmark.Options.CMARK_OPT_UNSAFE))


class Tables(HTMLParser):
    """Each table's rows, as the number of cells in each."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: list[list[int]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self.tables[-1].append(0)
        elif tag in ("td", "th"):
            self.tables[-1][-1] += 1


def assert_inert(markdown: str, where: str, *, asker: str | None = None) -> str:
    """The rendered HTML of ``markdown``, after checking that nothing in it is live."""
    html = html_of(markdown)
    assert "<img" not in html and "<script" not in html, where
    hrefs = re.findall(r'href="([^"]*)"', html)
    assert all(h == RUN_URL for h in hrefs), (where, hrefs)
    text = re.sub(r"<code>.*?</code>", "", html, flags=re.S)  # GitHub mentions no one in code
    mentions = set(re.findall(r"(?<![\w\u2060])@([A-Za-z0-9-]+)", text))
    assert mentions <= {asker}, (where, mentions)
    parser = Tables()
    parser.feed(html)
    for rows in parser.tables:
        assert len(set(rows)) == 1, (where, f"a row broken open: cells per row {rows}")
    return html


# --- the templates --------------------------------------------------------------------------


def renamed(doc: Results) -> Results:
    """``doc`` with the hostile names given to its workloads, every outcome among them."""
    new = iter(NAMES)
    benchmarks = tuple(dataclasses.replace(b, name=next(new, b.name)) for b in doc.benchmarks)
    return dataclasses.replace(doc, benchmarks=benchmarks)


def hostile_history(path: Path) -> composed.HistoryReport:
    """A history store of three commits whose workloads have the hostile names, one step
    called (slower) at the second commit, the subjects hostile too."""
    store = historydoc.Store(path)
    shas = [f"{i:040x}" for i in range(1, 5)]
    for i in range(1, 4):
        steps = []
        for k, name in enumerate(NAMES):
            ratio = 1.5 if (i, k % 2) == (2, 0) else 1.0
            centre = math.log(ratio)
            steps.append(WorkloadStep(
                name=name, outcome="slower" if ratio > 1 else "level", ratio=ratio,
                ci=(ratio * 0.99, ratio * 1.01), pairs=120, stopped="settled",
                step=StepEstimate(n=120, centre=centre, se=0.001)))
        store.write(historydoc.record(
            commit=CommitRef(sha=shas[i], subject=f"{NAME} {i}"),
            against=CommitRef(sha=shas[i - 1], subject=NAME), state="measured",
            workloads=tuple(steps), settings=StepSettings(alpha=0.05, seed=i, budget_s=60.0)))
    return composed.build(path, url="https://github.com/octo-org/octo-repo")


@pytest.fixture
def rendered_templates(monkeypatch: pytest.MonkeyPatch) -> Iterator[set[str]]:
    """The names of the markdown templates rendered while the test runs."""
    names: set[str] = set()
    real = escape._MarkdownTemplate.render

    def recording(self: Any, *args: Any, **kwargs: Any) -> escape.Markdown:
        names.add(str(self.name))
        return real(self, *args, **kwargs)

    monkeypatch.setattr(escape._MarkdownTemplate, "render", recording)
    yield names


def test_every_markdown_template_keeps_its_rows_and_shows_nothing_live(
        tmp_path: Path, rendered_templates: set[str]) -> None:
    shown: dict[str, str] = {}
    for which, doc in (("short", renamed(mixed())), ("suite", renamed(suite(150)))):
        comment = render_comment(doc, post.REPORT_ROOM, run_url=RUN_URL, artifact="benchbot-results")
        shown[f"{which} comment"] = post.final_body(comment, artifact="benchbot-results",
                                                   run_url=RUN_URL)
        shown[f"{which} report"] = render_results(doc, "markdown", run_url=RUN_URL)
    bisect = dataclasses.replace(make_doc(changes={6: 1.08}, broken=frozenset({3})), workload=NAME)
    shown["bisect"] = post.bisect_final_body(bisect_report.render(bisect, "markdown"),
                                             artifact="benchbot-results", run_url=RUN_URL)
    shown["history"] = history_page.render(hostile_history(tmp_path / "store"), "markdown")
    for where, markdown in shown.items():
        html = assert_inert(markdown, where)
        assert "evil.example" in html, where  # the names are there, as text
    history_tables = Tables()
    history_tables.feed(html_of(shown["history"]))
    assert [rows[0] for rows in history_tables.tables] == [6, 5], "steps and workloads tables"
    assert len(history_tables.tables[1]) == 1 + len(NAMES)  # one row a name, none split
    assert rendered_templates == {p.name for p in TEMPLATES.glob("*.md.j2")}


def test_a_code_span_escapes_its_pipe_in_a_table_row_only() -> None:
    env = escape.markdown_environment(
        jinja2.DictLoader({"t": "{{ n | code }}\n\n| a |\n|---|\n| {{ n | code }} |\n"}), {})
    text = env.get_template("t").render(n="a|b")
    assert text == "`a|b`\n\n| a |\n|---|\n| `a\\|b` |\n"
    assert isinstance(text, escape.Markdown)


def test_the_templates_trust_no_value_but_their_own_macros() -> None:
    """``markdown`` (a value taken as markdown as it is) follows only a call of a macro the
    template defines: its output is the template's own text, each value in it escaped."""
    for path in TEMPLATES.glob("*.md.j2"):
        text = path.read_text()
        macros = set(re.findall(r"{%-?\s*macro\s+(\w+)\(", text))
        for used in re.findall(r"{{-?\s*([^{}]*?)\s*\|\s*markdown\s*-?}}", text):
            assert re.fullmatch(r"(\w+)\([^()]*\)", used) and used.split("(")[0] in macros, (
                path.name, used)


def test_a_value_no_filter_made_is_escaped_in_a_template() -> None:
    env = escape.markdown_environment(
        jinja2.DictLoader({"t": "| {{ n }} | {{ k | made }} |"}), {"made": str})
    html = html_of("| a | b |\n|---|---|\n" + env.get_template("t").render(n=NAME, k="**k**"))
    assert "<img" not in html and "<a " not in html and "<strong>k</strong>" in html


# --- what benchbot posts: replies, comment bodies, summaries ------------------------------------


def job(**kw: Any) -> Job:
    return Job(number=2, base=Side(ref=NAME, sha=BASE, repo=None), head=Side(ref=NAME, sha=SHA, repo=None),
               config_sha=BASE, requested_by="alice", **kw)


def problems(body: str) -> list[str]:
    with pytest.raises(CommandError) as exc:
        parse(body)
    return list(exc.value.problems)


BISECT = BenchCommand(overrides=Overrides(only=(NAME,)), bisect=True, sha=SHA)
BUILDERS: dict[str, Callable[[], str]] = {
    "help_reply": lambda: post.help_reply("alice"),
    "refusal_reply": lambda: post.refusal_reply("alice", [
        *problems("/bench only=x/https://evil.example/login,a|b <img> [t](https://evil.example) @mallory"),
        f"only: no workload named {NAME!r} in benchbot.yml (known: nap)"]),
    "fork_needs_sha_reply": lambda: post.fork_needs_sha_reply(
        "alice", SHA, BenchCommand(overrides=Overrides(only=(NAME,)), sha="0123456")),
    "sha_mismatch_reply": lambda: post.sha_mismatch_reply(
        "alice", "abcdef1", SHA, BenchCommand(overrides=Overrides(only=(NAME,)))),
    "fork_refused_reply": lambda: post.fork_refused_reply(
        "alice", gate.fork_trust_refusal(parse_config(CONFIG),
                                         NAME, "main") or ""),
    "bisect_range_reply": lambda: post.bisect_range_reply(
        "alice", [(BASE, "t", NAME), (SHA, "t", NAME), (SHA, "t", "")], SHA, BISECT),
    "permission_reply": lambda: post.permission_reply("mallory-reader", "read"),
    "final_body": lambda: post.final_body(escape.Markdown("### r\n"), artifact=NAME, run_url=RUN_URL),
    "running_body": lambda: post.running_body(base_sha=BASE, head_sha=SHA, base_ref=NAME,
                                              head_ref=NAME, phase="starting", run_url=RUN_URL),
    "error_body": lambda: post.error_body(f"{NAME}\n```\n</details>", run_url=RUN_URL, title=NAME,
                                          measured=NAME),
    "bisect_final_body": lambda: post.bisect_final_body(escape.Markdown("r\n"), artifact=NAME,
                                                        run_url=RUN_URL),
    "bisect_running_body": lambda: post.bisect_running_body(job(command=BISECT), NAME, RUN_URL),
    "job_running_body": lambda: post.job_running_body(
        job(command=BenchCommand(overrides=Overrides(only=(NAME,)))), NAME, RUN_URL),
    "refused_note": lambda: post.refused_note(NAME, NAME, RUN_URL, comment=True),
    "requested_by": lambda: post.requested_by(job(command=BenchCommand(
        overrides=Overrides(only=(NAME,))))) or "",
    "error_text": lambda: post.error_text(f"{NAME}\n````\n"),
    "link_target": lambda: escape.Markdown("[workflow run]({})").format(post.link_target(RUN_URL)),
}


def test_every_reply_and_body_benchbot_builds_shows_nothing_live() -> None:
    """Each public function of post.py that makes ``Markdown`` is here, so a new one is
    checked too."""
    built = {name for name, f in inspect.getmembers(post, inspect.isfunction)
             if f.__module__ == post.__name__ and not name.startswith("_")
             and "Markdown" in str(inspect.signature(f).return_annotation)}
    assert built == set(BUILDERS)
    for name, build in BUILDERS.items():
        markdown = build()
        assert isinstance(markdown, escape.Markdown), name
        assert_inert(markdown, name, asker="alice" if name != "permission_reply" else "mallory-reader")


def test_only_markdown_is_posted() -> None:
    pub = post.Publisher(None, number=2, head_sha=SHA, check_name="benchbot",  # type: ignore[arg-type]
                         run_url=None)
    for call in (lambda: pub.reply(NAME), lambda: pub.show(NAME),  # type: ignore[arg-type]
                 lambda: pub.start_check("t", NAME)):  # type: ignore[arg-type]
        with pytest.raises(TypeError, match="not benchbot's Markdown"):
            call()


# --- through the gate, against the fake GitHub ----------------------------------------------------


def test_a_name_in_only_is_text_in_the_refusal(env: Env, fake: FakeGitHub) -> None:
    """Finding 4: the config's error quoted ``only=`` with ``!r``, unescaped, and the
    reply made it a live link (``/bench only=x/https://evil.example/login``)."""
    run = env.run_in_process("issue_comment",
                             env.comment_event("/bench only=x/https://evil.example/login"))
    assert run.returncode == 0 and run.outputs == {"run": "false"}, run.stderr
    (reply,) = [c["body"] for c in fake.comments_on(2) if c["user"]["login"] == BOT]
    html = assert_inert(reply, "the refusal", asker="alice")
    assert "no workload named" in html and "evil.example/login" in html


def test_a_label_s_name_is_text_in_the_job_summary(tmp_path: Path, fake: FakeGitHub) -> None:
    """A label's name ends a code span with its own backtick: the skipped fork's notice
    and job summary show it as text."""
    env = Env(tmp_path, fake, make_workspace(tmp_path, config=CONFIG + "github:\n  forks: true\n"))
    label = f"x` {NAME} `y"
    payload = env.pull_request_event("labeled", fork="mallory/Hello-World", labels=(label,))
    payload["label"] = {"name": label}
    run = env.run_in_process("pull_request_target", payload, BENCHBOT_MODE="gate")
    assert run.returncode == 0 and run.outputs["conclusion"] == "skipped", run.stderr
    assert "label adds no commit" in run.summary
    assert_inert(run.summary, "the job summary")
