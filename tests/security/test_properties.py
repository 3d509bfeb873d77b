"""Property tests: random input to every parser of outside text gives a result or our own
one-line error, never a traceback, and never reaches a shell; escaped text never renders
as markup."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchbot.config.config import Config
from benchbot.config.load import parse_config
from benchbot.config.settings import Overrides
from benchbot.core.errors import ConfigError, UsageError
from benchbot.github.command import OPTIONS, BenchCommand, CommandError, parse
from benchbot.github.job import Job
from benchbot.report.escape import Markdown, md_code_block, md_code_span, md_inline
from benchbot.results.resultsdir import validation_error

cmarkgfm = pytest.importorskip("cmarkgfm", reason="cmarkgfm (GitHub's renderer) is a test dependency")


@contextmanager
def no_processes() -> Iterator[None]:
    """Fail if anything tries to start a process (a shell) meanwhile."""

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"a process was started: {args[:2]!r}")

    saved = (subprocess.Popen.__init__, os.system, os.posix_spawn, os.execv, os.execve)
    subprocess.Popen.__init__ = refuse  # type: ignore[method-assign]
    os.system, os.posix_spawn, os.execv, os.execve = refuse, refuse, refuse, refuse  # type: ignore[assignment]
    try:
        yield
    finally:
        subprocess.Popen.__init__, os.system, os.posix_spawn, os.execv, os.execve = saved  # type: ignore[method-assign]


shell_bits = st.sampled_from(["; touch /tmp/x", "$(id)", "`id`", "&&", "|", ">", "\n", "\\", "'", '"',
                              "${IFS}", "\0", "\u202e", "=", ",", " "])
option = st.builds(lambda k, v: f"{k}={v}", st.sampled_from([*OPTIONS, "help", "run", "ONLY"]),
                   st.text(max_size=12) | st.integers(-5, 5000).map(str))
bench_text = st.one_of(
    st.text(max_size=200),
    st.lists(st.one_of(option, shell_bits, st.text(max_size=8)), max_size=8).map(
        lambda parts: "/bench " + " ".join(parts)),
)


@given(bench_text)
@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
def test_any_comment_parses_or_is_refused_and_starts_nothing(body: str) -> None:
    with no_processes():
        try:
            command = parse(body)
        except CommandError as exc:
            assert exc.problems and all("\n" not in p for p in exc.problems)
            return
    assert isinstance(command, BenchCommand)
    if not command.help:
        assert parse(f"/bench {command.describe()}".strip()) == command  # round trip


@given(
    runs=st.none() | st.integers(10, 1000),
    only=st.none() | st.lists(st.from_regex(r"[A-Za-z0-9_.-]{1,10}", fullmatch=True), min_size=1,
                              max_size=3, unique=True).map(tuple),
    parity=st.none() | st.sampled_from([0.005, 0.01, 0.02, 0.05]),
    confirm=st.none() | st.booleans(),
    aa=st.none() | st.booleans(),
    sha=st.none() | st.from_regex(r"[0-9a-f]{7,40}", fullmatch=True),
)
def test_every_valid_command_round_trips(runs, only, parity, confirm, aa, sha) -> None:
    overrides = Overrides(runs=runs, only=only, parity=parity, confirm=confirm, aa=aa)
    command = BenchCommand(overrides=overrides, sha=sha)
    assert parse(f"/bench {command.describe()}") == command


KEYS = ["version", "build", "defaults", "workloads", "aa", "confirm", "alpha", "base", "status",
        "github", "seed", "sandbox", "pass_env", "runs", "warmup", "parity", "floor", "timeout",
        "order", "metric", "pattern", "expect", "env", "cwd", "pin", "better", "name", "run",
        "mode", "writable", "read_only", "fail_on", "forks", "fork_label", "comment"]
scalar = st.one_of(st.none(), st.booleans(), st.integers(-2**70, 2**70),
                   st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=20),
                   st.sampled_from(["on", "off", "auto", "60s", "1m30s", "1e400", "0-3", "(x)", "(\\d+)",
                                    "reported", "higher", "~/x", "/tmp", "..", "\0", "*&anchor"]))
yaml_value = st.recursive(
    scalar,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.sampled_from(KEYS), inner, max_size=5),
    max_leaves=20,
)


@given(st.dictionaries(st.sampled_from(KEYS), yaml_value, max_size=8))
@settings(max_examples=100, suppress_health_check=[HealthCheck.too_slow])  # 10 ms each
def test_any_config_document_loads_or_names_file_line_and_key(doc: dict) -> None:
    import yaml

    doc.setdefault("version", 1)
    try:
        text = yaml.safe_dump(doc, allow_unicode=True)
    except yaml.YAMLError:
        return
    with no_processes():
        try:
            config = parse_config(text)
        except ConfigError as exc:
            message = str(exc)
            assert message.startswith("benchbot.yml:") and "\n" not in message, message
            return
    assert isinstance(config, Config) and config.workloads


@given(st.text(max_size=300))
@settings(max_examples=150)
def test_any_text_as_a_config_is_a_config_error_at_worst(text: str) -> None:
    with no_processes():
        try:
            parse_config(text)
        except ConfigError as exc:
            assert str(exc).startswith("benchbot.yml:")


json_value = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) |
                          st.text(max_size=10),
                          lambda inner: st.lists(inner, max_size=4) |
                          st.dictionaries(st.text(max_size=10), inner, max_size=4), max_leaves=15)


@given(st.dictionaries(st.sampled_from(["version", "number", "base", "head", "config_sha", "command",
                                        "check", "fail_on", "trigger"]), json_value) | json_value)
def test_any_job_hand_over_is_a_job_or_one_usage_error(data: object) -> None:
    try:
        Job.from_json(json.dumps(data))
    except UsageError as exc:
        assert "\n" not in str(exc) and str(exc).startswith("BENCHBOT_JOB")


@given(json_value)
def test_any_json_is_judged_by_the_schema_in_one_line(data: object) -> None:
    problem = validation_error(data)
    assert problem is not None and "\n" not in problem and len(problem) < 400


def _html(markdown: str) -> str:
    from cmarkgfm.cmark import Options

    return str(cmarkgfm.github_flavored_markdown_to_html(markdown, options=Options.CMARK_OPT_UNSAFE))


hostile = st.text(alphabet=st.sampled_from(list("<>&@#[]()!`*_~|\\:/. aZ1\n\t$=\"'")) |
                  st.characters(), max_size=80)


@given(hostile)
@settings(max_examples=250)
def test_escaped_inline_text_renders_as_text_only(text: str) -> None:
    html = _html(f"| cell |\n|---|\n| {md_inline(text)} |\n")
    body = html.split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    tags = {t for t in __import__("re").findall(r"</?([a-zA-Z][\w-]*)", body)}
    assert tags <= {"tr", "td"}, (text, body)  # no link, image, code, emphasis, HTML …
    assert body.count("<td") == 1  # the cell was not broken open


@given(hostile)
@settings(max_examples=150)
def test_a_code_block_cannot_be_closed_from_inside(text: str) -> None:
    html = _html(md_code_block(text) + Markdown("\n\nafter\n"))
    assert html.count("<pre") == 1 and html.rstrip().endswith("<p>after</p>")


@given(hostile)
@settings(max_examples=150)
def test_a_code_span_cannot_be_closed_from_inside(text: str) -> None:
    if not text.strip():
        return
    html = _html(f"a {md_code_span(text)} b\n")
    assert html.count("<code>") == 1 and html.rstrip().endswith(" b</p>")
