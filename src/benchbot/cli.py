"""The command line: argparse, wiring, exit codes. The only module that prints to the user.

Exit status (README, "Command line"): 0 when the comparison ran, whatever the verdicts;
1 when it could not run (one line on stderr naming what is at fault); 2 for usage
errors; 3 when ``--fail-on`` names an outcome that occurred.
"""

from __future__ import annotations

import argparse
import atexit
import os
import signal
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any, NoReturn, TextIO

from benchbot import __version__
from benchbot.config.settings import Overrides, argparse_type
from benchbot.core import files, logsafe
from benchbot.core.errors import BenchbotError, OutputError, UsageError
from benchbot.sandbox import secret

if TYPE_CHECKING:
    from benchbot.core.model import Results
    from benchbot.measure.progress import TerminalReporter
    from benchbot.results.merging import ShardFile
    from benchbot.results.shards import Split

# Each command imports what it uses: `compare` starts its builds before the statistics
# and the report stack are imported (engine._Ahead imports them while git and the builds run).

EXIT_OK, EXIT_ERROR, EXIT_USAGE, EXIT_VERDICT = 0, 1, 2, 3


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:  # argparse would print and exit itself
        raise UsageError(f"{self.prog}: {message} (see --help)")


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="benchbot",
        description="Tells whether a change made code faster or slower, or says it cannot tell.",
        formatter_class=_FORMAT,
    )
    parser.add_argument("--version", action="version", version=f"benchbot {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    _compare_parser(sub.add_parser("compare", help="compare two revisions of a git repository",
                                   formatter_class=_FORMAT))
    _demo_parser(sub.add_parser("demo", help="compare two builds of the bundled C kernels",
                                formatter_class=_FORMAT))
    _bisect_parser(sub.add_parser("bisect", formatter_class=_FORMAT,
                                  help="find the commit(s) between good and bad that carry "
                                  "a workload's change"))
    _history_parser(sub.add_parser("history", formatter_class=_FORMAT,
                                    help="watch a branch: record every commit against its "
                                    "parent, and report the trend, its steps and drifts"))
    r = sub.add_parser("report", help="render a results file again", formatter_class=_FORMAT)
    r.add_argument("file", type=Path, help="a results file, or a bisect's document")
    r.add_argument("--format", choices=("markdown", "html"), default="markdown")
    r.add_argument("-o", "--output", type=Path, default=None, help="write here instead of stdout")
    m = sub.add_parser("merge", help="combine results files of shards of one comparison",
                       formatter_class=_FORMAT)
    m.add_argument("files", type=Path, nargs="+", metavar="FILE.json",
                   help="the results files of `compare --shard K/N`, one per shard")
    m.add_argument("-o", "--output", type=Path, default=None, help="write here instead of stdout")
    m.add_argument("--allow-missing", action="store_true",
                   help="merge the shards that reported even when some did not; the document "
                   "names the missing shards and its check is neutral")
    _merge_parser(m)
    sub.add_parser("doctor", help="inspect this machine as a benchmark runner", formatter_class=_FORMAT)
    _github_parser(sub.add_parser("github", formatter_class=_FORMAT,
                                  help="the GitHub Action's entry point (reads the Actions environment)"))
    return parser


class _FORMAT(argparse.ArgumentDefaultsHelpFormatter):
    """Shows a default where there is one to show and the help does not say it already."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        if "(default" in text or action.required or action.default in (None, False, (), []):
            return text
        return super()._get_help_string(action)


def _outputs(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", type=Path, metavar="FILE", help="write the results file here")
    p.add_argument("--markdown", type=Path, metavar="FILE", help="also write the markdown report here")
    p.add_argument("--html", type=Path, metavar="FILE", help="also write an HTML report here")
    p.add_argument("--fail-on", type=argparse_type("fail_on"), default=(), metavar="OUTCOMES",
                   help="these outcomes make the conclusion `failure` and the exit status 3, "
                   "e.g. slower,inconclusive (the config's status.fail_on is the GitHub check's)")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")


def _merge_parser(m: argparse.ArgumentParser) -> None:
    m.description = ("Each shard's file states the split of the workloads, every benchmark "
                     "its suites discovered (which must be the same in all files) and the "
                     "family of the error control; with --repo, merge computes both again from the "
                     "config at the files' base commit (give the compare's own --config, "
                     "--shard-costs and settings) and refuses a file that differs, naming "
                     "what it claims.")
    m.add_argument("--repo", type=Path, default=None,
                   help="the git repository compared: check each file against the split its "
                   "config makes (default: the files checked only against each other)")
    m.add_argument("--shard-costs", dest="shard_costs", type=Path, default=None,
                   metavar="FILE.json", help="with --repo: the --shard-costs the shards were "
                   "split by")
    _config_options(m)


def _compare_parser(c: argparse.ArgumentParser) -> None:
    c.add_argument("--base", required=True, help="the reference revision (branch, tag, SHA)")
    c.add_argument("--head", required=True,
                   help="the candidate revision, or WORKTREE (or .) for the working tree with "
                   "its uncommitted changes")
    c.add_argument("--repo", type=Path, default=Path("."), help="the git repository")
    _config_options(c)
    c.add_argument("--seed", type=argparse_type("seed"), default=None,
                   help="order and bootstrap seed (default: random, recorded)")
    c.add_argument("--shard", type=argparse_type("shard"), default=None, metavar="K/N",
                   help="measure only share K of N of the workloads (after --only), split by "
                   "expected cost the same way on every machine, and of each suite's "
                   "benchmarks, which every shard discovers and deals out in turn by name; "
                   "`benchbot merge` combines the shards' results files (default: all workloads)")
    c.add_argument("--shard-costs", dest="shard_costs", type=Path, default=None,
                   metavar="FILE.json", help="with --shard: split by the cost each workload "
                   "took in this earlier results file (default: the config's weights)")
    _outputs(c)


def _config_options(c: argparse.ArgumentParser) -> None:
    """The config and the settings over it (compare's, and merge's to split as it did)."""
    c.add_argument("--config", type=Path, default=None,
                   help="config file (default: .github/benchbot.yml or benchbot.yml at the base revision)")
    c.add_argument("--runs", type=argparse_type("runs"), default=None,
                   help="a fixed number of pairs per phase, 10 to 1000 (default: measure "
                   "sequentially, until each workload is settled or the budget is spent)")
    c.add_argument("--budget", type=argparse_type("budget"), default=None, metavar="DURATION",
                   help="sequential measuring: wall time for the whole comparison, e.g. 20m "
                   "(default: the config's budget, else 10m)")
    c.add_argument("--max-runs", dest="max_runs", type=argparse_type("max_runs"), default=None,
                   metavar="N", help="sequential measuring: the most pairs a workload gets "
                   "(default: the config's max_runs, else 1000)")
    c.add_argument("--only", type=argparse_type("only"), default=None, metavar="A,B",
                   help="only these workloads")
    c.add_argument("--all", dest="all", action="store_const", const=True, default=None,
                   help="measure every workload, also those whose paths: the change does not "
                   "touch (default: skip them as not affected)")
    c.add_argument("--profile", dest="profile", action="store_const", const="all",
                   default=None, help="profile every workload under callgrind after the "
                   "verdicts (default: those called slower or faster, where valgrind is "
                   "installed): the functions whose instructions moved")
    c.add_argument("--no-profile", dest="profile", action="store_const", const="off",
                   help="profile nothing, not even the workloads called slower or faster")
    c.add_argument("--parity", type=argparse_type("parity"), default=None,
                   help="differences below this fraction are level (0.01 or 1%%)")
    c.add_argument("--no-confirm", dest="confirm", action="store_const", const=False, default=None,
                   help="with --runs: skip the confirmation of standouts (Bonferroni instead)")
    c.add_argument("--no-aa", dest="aa", action="store_const", const=False, default=None,
                   help="skip the A/A check (not recommended)")


def _demo_parser(d: argparse.ArgumentParser) -> None:
    d.add_argument("--runs", type=argparse_type("runs"), default=None,
                   help="a fixed number of pairs per phase (default: sequential, in 90s)")
    d.add_argument("--budget", type=argparse_type("budget"), default=None, metavar="DURATION",
                   help="sequential measuring: wall time for the demo (default: 90s)")
    d.add_argument("--keep", type=Path, default=None, metavar="DIR",
                   help="make the demo repository here and keep it")
    d.add_argument("--seed", type=argparse_type("seed"), default=None, help="order and bootstrap seed")
    _outputs(d)


def _bisect_parser(b: argparse.ArgumentParser) -> None:
    b.description = ("Searches the first-parent commits after --good up to --bad for the "
                     "commit(s) carrying the change --only's workload shows between them; "
                     "every step is a whole comparison under the same rule, and the chance "
                     "that any step made a false call is at most the config's alpha.")
    b.add_argument("--good", required=True, help="the revision before the change")
    b.add_argument("--bad", required=True, help="the revision with the change")
    b.add_argument("--only", required=True, type=argparse_type("only"), metavar="WORKLOAD",
                   help="the one workload to follow")
    b.add_argument("--budget", type=argparse_type("budget"), default=None, metavar="DURATION",
                   help="wall time for the whole bisect, builds included, e.g. 45m (default: "
                   "three times the config's budget, 30m without one)")
    b.add_argument("--repo", type=Path, default=Path("."), help="the git repository")
    b.add_argument("--config", type=Path, default=None,
                   help="config file (default: .github/benchbot.yml or benchbot.yml at --good)")
    b.add_argument("--seed", type=argparse_type("seed"), default=None,
                   help="order and bootstrap seed (default: random, recorded)")
    b.add_argument("--json", type=Path, metavar="FILE", help="write the bisect document here")
    b.add_argument("--markdown", type=Path, metavar="FILE", help="also write the markdown report here")
    b.add_argument("--html", type=Path, metavar="FILE", help="also write an HTML report here")
    b.add_argument("--quiet", action="store_true", help="no progress on stderr")


def _history_parser(h: argparse.ArgumentParser) -> None:
    verbs = h.add_subparsers(dest="verb", required=True, parser_class=_Parser)
    r = verbs.add_parser("record", formatter_class=_FORMAT,
                         help="compare every first-parent commit of A..B the store lacks "
                         "with its parent, and store it")
    r.description = ("Compares each first-parent commit after A up to B with its parent "
                     "under the config's rule (a commit whose worktree after the build "
                     "equals its parent's is stored as identical, not measured) and writes "
                     "one file per commit into the store. A second call measures only what the "
                     "store lacks; an interruption keeps every commit written.")
    r.add_argument("--range", required=True, metavar="A..B",
                   help="the first-parent commits after A up to B")
    r.add_argument("--store", required=True, type=Path, metavar="DIR",
                   help="the history store: a directory of one file per commit")
    r.add_argument("--repo", type=Path, default=Path("."), help="the git repository")
    r.add_argument("--budget", type=argparse_type("budget"), default=None, metavar="DURATION",
                   help="wall time for the whole range, builds included; what is left "
                   "unmeasured is recorded by the next call (default: the config's budget "
                   "for each commit)")
    r.add_argument("--config", type=Path, default=None,
                   help="config file (default: .github/benchbot.yml or benchbot.yml at A)")
    r.add_argument("--seed", type=argparse_type("seed"), default=None,
                   help="order and bootstrap seed (default: random, recorded)")
    r.add_argument("--precision", type=argparse_type("parity"), default=None, metavar="FRACTION",
                   help="measure a settled step on until its estimate is within this "
                   "fraction each way (default: 0.005)")
    r.add_argument("--quiet", action="store_true", help="no progress on stderr")
    t = verbs.add_parser("report", formatter_class=_FORMAT,
                         help="the trend of every workload, its steps and its drifts")
    t.add_argument("--store", required=True, type=Path, metavar="DIR", help="the history store")
    t.add_argument("--json", type=Path, metavar="FILE", help="write the report's document here")
    t.add_argument("--markdown", type=Path, metavar="FILE", help="also write the markdown report here")
    t.add_argument("--html", type=Path, metavar="FILE", help="also write the HTML page here")
    t.add_argument("--confirm", action="store_true",
                   help="confirm each drift by comparing its two ends directly (needs --repo)")
    t.add_argument("--repo", type=Path, default=Path("."), help="the git repository (--confirm)")
    t.add_argument("--config", type=Path, default=None,
                   help="config file for --confirm (default: the one at the drift's start)")
    t.add_argument("--url", default=None, metavar="URL",
                   help="the repository's web address, for links to each commit "
                   "(e.g. https://github.com/OWNER/REPO)")
    t.add_argument("--quiet", action="store_true", help="no progress on stderr")


def _run_history(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """benchbot history record | report."""
    from benchbot.history import walk

    if args.verb == "record":
        request = walk.Request(repo=args.repo, range=args.range, store=args.store,
                                  budget_s=args.budget, config_path=args.config, seed=args.seed,
                                  precision=args.precision or walk.PRECISION)
        try:
            done = walk.record(request, reporter=_reporter(args, err))
        except KeyboardInterrupt:
            err.write("benchbot: interrupted; the commits recorded so far are in the store, "
                      "and the next record measures the rest\n")
            return 130
        out.write(f"recorded {len(done.written)} commits into {args.store} "
                  f"({done.present} there already"
                  + (f", {len(done.left)} left for the next record: the budget was spent"
                     if done.left else "") + f") in {done.wall_s:.0f} s\n")
        return EXIT_OK
    return _history_report(args, out, err)


def _history_report(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from benchbot.history import composed
    from benchbot.report import history as page

    report = composed.build(args.store, url=args.url)
    if args.confirm:
        report = composed.confirm(report, repo=args.repo, config_path=args.config,
                                       reporter=_reporter(args, err))
    for problem in report.problems:
        err.write(f"benchbot: skipped {problem}\n")
    failed = _write_all([
        (args.json, lambda: composed.dumps(report)),
        (args.markdown, lambda: page.render(report, "markdown")),
        (args.html, lambda: page.render(report, "html",
                                        results_base=_relative(args.store, args.html)))])
    out.write(page.render(report, "markdown"))
    out.flush()
    if failed:
        raise failed[0]
    return EXIT_OK


def _write_all(outputs: Sequence[tuple[Path | None, Callable[[], str]]]) -> list[OutputError]:
    """Write each file asked for (a path given); the ones that could not be written."""
    failed: list[OutputError] = []
    for path, render in outputs:
        if path is not None:
            try:
                files.write_text(path, render())
            except OutputError as exc:
                failed.append(exc)
    return failed


def _relative(store: Path, page: Path | None) -> str:
    """The store's folder as the page links its files: relative to the page's folder."""
    if page is None:
        return ""
    where = os.path.relpath(store.resolve(), page.resolve().parent)
    return "" if where == "." else where.replace(os.sep, "/") + "/"


def _run_bisect(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """benchbot bisect: the search, then its document and reports (exit 0 whatever it found)."""
    from benchbot.bisect import bisectdoc, search
    from benchbot.report import bisect as report

    if len(args.only) != 1:
        raise UsageError("benchbot bisect: --only names one workload (see --help)")
    request = search.Request(repo=args.repo, good=args.good, bad=args.bad, workload=args.only[0],
                             budget_s=args.budget, config_path=args.config, seed=args.seed)
    doc = search.bisect(request, reporter=_reporter(args, err))
    failed = _write_all([
        (args.json, lambda: bisectdoc.dumps(doc)),
        (args.markdown, lambda: report.render(doc, "markdown")),
        (args.html, lambda: report.render(doc, "html"))])
    out.write(report.render(doc, "markdown"))
    out.flush()
    if failed:
        raise failed[0]
    return EXIT_OK


def _github_parser(g: argparse.ArgumentParser) -> None:
    g.description = (
        "Reads GITHUB_EVENT_NAME, GITHUB_EVENT_PATH, GITHUB_REPOSITORY, GITHUB_TOKEN, "
        "GITHUB_API_URL, GITHUB_SERVER_URL, GITHUB_RUN_ID, GITHUB_WORKSPACE, GITHUB_STEP_SUMMARY "
        "and GITHUB_OUTPUT, and the action's inputs as BENCHBOT_CONFIG, BENCHBOT_RUNS, "
        "BENCHBOT_BUDGET, BENCHBOT_PROFILE, BENCHBOT_SHARDS, BENCHBOT_FAIL_ON, BENCHBOT_COMMENT,"
        " BENCHBOT_CHECK_NAME, BENCHBOT_WORKING_DIRECTORY, "
        "BENCHBOT_RESULTS_DIR, BENCHBOT_BOT_LOGIN, BENCHBOT_ARTIFACT, BENCHBOT_MODE, BENCHBOT_JOB "
        "and BENCHBOT_MEASURE_RESULT (see action.yml)."
    )
    g.add_argument("--mode", choices=("all", "gate", "measure", "publish"), default=None,
                   help="which part of the job to do (default: BENCHBOT_MODE, else all)")


def _run_merge(args: argparse.Namespace, out: TextIO) -> int:
    from benchbot.results import merging, resultsdir

    files = [merging.ShardFile(str(f), resultsdir.load(f)) for f in args.files]
    split = None
    if args.repo is not None:
        split = _split_again(args, files)
    elif args.shard_costs is not None:
        raise UsageError("benchbot merge: --shard-costs checks the split with --repo; give "
                         "--repo too (see --help)")
    merged = merging.merge(files, allow_missing=args.allow_missing, split=split)
    _write(resultsdir.dumps(merged), args.output, out)
    return EXIT_OK


def _split_again(args: argparse.Namespace, files: Sequence[ShardFile]) -> Split | None:
    """The split of the files' comparison in as many shards as they say, computed from the
    config at their base commit (or --config) with the command line's settings, as
    ``compare --shard`` computed it; None when no file is a shard's (merge says so)."""
    from benchbot.git import gitops
    from benchbot.measure import engine
    from benchbot.results import resultsdir, shards

    first = next((f.doc for f in files if f.doc.shard is not None), None)
    if first is None or first.shard is None:
        return None
    repo = gitops.toplevel(args.repo)
    request = engine.Request(repo=repo, base=first.base.sha, head=first.head.sha,
                             config_path=args.config, overrides=overrides(args))
    config = engine.read_request_config(request, repo, first.base.sha)
    costs = shards.costs_from(resultsdir.load(args.shard_costs)) if args.shard_costs else None
    return engine.split_of(repo, config, first.base.sha, first.head.sha, first.shard.count, costs)


def overrides(args: argparse.Namespace) -> Overrides:
    """The command line's settings over the config's (--fail-on: none unless given)."""
    from benchbot.config.settings import SettingError, check_design

    try:
        check_design(getattr(args, "runs", None), getattr(args, "budget", None),
                     getattr(args, "max_runs", None),
                     spell=lambda key: "--" + key.replace("_", "-"))
    except SettingError as exc:
        raise UsageError(str(exc)) from None
    return Overrides(
        runs=getattr(args, "runs", None), only=getattr(args, "only", None),
        parity=getattr(args, "parity", None), confirm=getattr(args, "confirm", None),
        aa=getattr(args, "aa", None), seed=getattr(args, "seed", None),
        fail_on=getattr(args, "fail_on", ()),
        budget=getattr(args, "budget", None), max_runs=getattr(args, "max_runs", None),
        all=getattr(args, "all", None),
        profile=getattr(args, "profile", None),
    )


def main(argv: Sequence[str] | None = None, *, out: TextIO | None = None,
         err: TextIO | None = None) -> int:
    """Run benchbot with ``argv``; return the exit status.

    Called with ``argv`` None (as the ``benchbot`` program), ``benchbot github`` first
    moves the token out of its environment (``secret.hide_token``), and everything
    benchbot prints inside a GitHub Actions job passes through ``logsafe.Stream`` so
    that text from the code under test cannot be read by the runner as a workflow
    command.
    """
    out = out or sys.stdout
    err = err or sys.stderr
    if os.environ.get("GITHUB_ACTIONS") == "true":
        out, err = logsafe.wrap(out), logsafe.wrap(err)
    previous = _sigterm_as_interrupt()
    try:
        args = _parser().parse_args(argv)
        if argv is None and args.command == "github":
            secret.hide_token()  # re-executes this program when the token is in its environment
        return _dispatch(args, out, err)
    except BenchbotError as exc:
        lines = str(exc).splitlines() or [type(exc).__name__]
        err.write(f"benchbot: error: {lines[0]}\n")
        for line in lines[1:]:
            err.write(f"  {line}\n")
        return exc.exit_code
    except KeyboardInterrupt:
        err.write("benchbot: interrupted; worktrees removed, no results file written\n")
        return 130
    finally:
        signal.signal(signal.SIGTERM, previous)


def run() -> NoReturn:
    """The ``benchbot`` program (and ``python -m benchbot``): ``main``, then ``leave``."""
    leave(main())


def leave(status: int) -> NoReturn:
    """Exit with ``status`` once benchbot's own work is done, without the interpreter's
    teardown, which frees every module and object one by one: 75-85 ms after every
    ``compare`` (numpy, jinja2 and benchbot's own), 5% of a 180-run compare of 8 ms
    programs. Every file benchbot writes is closed by now; the exit handlers still run and
    the standard streams are flushed. With a thread still running, or where the exit
    handlers cannot be run by hand, it is the interpreter's usual exit."""
    run_exit_handlers = getattr(atexit, "_run_exitfuncs", None)
    if threading.active_count() > 1 or run_exit_handlers is None:
        sys.exit(status)
    run_exit_handlers()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):  # a closed pipe: let the usual exit report it
        sys.exit(status)
    os._exit(status)


def _sigterm_as_interrupt() -> Any:
    """Let SIGTERM (a cancelled CI job) unwind like Ctrl-C, so cleanup runs."""

    def handler(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    try:
        return signal.signal(signal.SIGTERM, handler)
    except ValueError:  # not the main thread
        return signal.getsignal(signal.SIGTERM)


def _dispatch(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    if args.command == "compare":
        from benchbot.measure import engine

        costs = None
        if args.shard_costs is not None:
            if args.shard is None:
                raise UsageError("benchbot compare: --shard-costs splits the workloads for "
                                 "--shard K/N; give --shard too (see --help)")
            from benchbot.results import resultsdir, shards

            costs = shards.costs_from(resultsdir.load(args.shard_costs))
        request = engine.Request(repo=args.repo, base=args.base, head=args.head,
                                 config_path=args.config, overrides=overrides(args),
                                 shard=args.shard, shard_costs=costs)
        doc = engine.compare(request, reporter=_reporter(args, err),
                             prepare=lambda: prepare_reports(args))
        return _emit(doc, args, out, err)
    if args.command == "bisect":
        return _run_bisect(args, out, err)
    if args.command == "history":
        return _run_history(args, out, err)
    if args.command == "demo":
        from benchbot import demo

        doc = demo.run(overrides=overrides(args), keep=args.keep, reporter=_reporter(args, err),
                       prepare=lambda: prepare_reports(args))
        status = _emit(doc, args, out, err)
        out.write(f"\n{demo.EXPECTATION}\n")
        return status
    if args.command == "report":
        from benchbot.bisect import bisectdoc
        from benchbot.report import render_results
        from benchbot.results import resultsdir

        if bisectdoc.is_bisect_file(args.file):  # a bisect's document: its own report
            from benchbot.report import bisect as bisect_report

            _write(bisect_report.render(bisectdoc.load(args.file), args.format), args.output, out)
            return EXIT_OK
        _write(render_results(resultsdir.load(args.file), args.format), args.output, out)
        return EXIT_OK
    if args.command == "merge":
        return _run_merge(args, out)
    if args.command == "doctor":
        from benchbot import doctor

        out.write(doctor.format_findings(doctor.inspect()))
        return EXIT_OK
    if args.command == "github":
        from benchbot.github import action

        env = {**os.environ, **({"BENCHBOT_MODE": args.mode} if args.mode else {})}
        return action.main(env, err=err, token=secret.token())
    raise UsageError(f"unknown command {args.command!r}")  # pragma: no cover


def prepare_reports(args: argparse.Namespace) -> None:
    """Import the report modules and compile the templates the command will render (done
    while the builds run: about 0.1 s that no longer comes before them)."""
    from benchbot import report

    report.prepare("markdown", *(("html",) if args.html else ()))


def _reporter(args: argparse.Namespace, err: TextIO) -> TerminalReporter | None:
    from benchbot.measure.progress import TerminalReporter

    return None if args.quiet else TerminalReporter(err)


def _emit(doc: Results, args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Write the files asked for, print the report, and turn --fail-on into the exit status.

    The results file is written first (it is what was measured); the markdown report is
    printed whatever happened to the files; a file that could not be written is then one
    line on stderr and exit status 1.
    """
    from benchbot.results import resultsdir

    failed: list[OutputError] = []

    def attempt(path: Path | None, render: Callable[[], str]) -> None:
        if path is None:
            return
        try:
            files.write_text(path, render())
        except OutputError as exc:
            failed.append(exc)

    attempt(args.json, lambda: resultsdir.dumps(doc))
    if args.json and not failed:
        err.write(f"benchbot: results written to {args.json}\n")
    from benchbot.report import render_results

    markdown = render_results(doc, "markdown")
    attempt(args.markdown, lambda: markdown)
    attempt(args.html, lambda: render_results(doc, "html"))
    out.write(markdown)
    out.flush()
    if failed:
        raise failed[0]
    if doc.summary.conclusion == "failure":
        hit = ", ".join(f"{doc.summary.count(o)} {o}" for o in doc.status.fail_on
                        if doc.summary.count(o))
        err.write(f"benchbot: --fail-on: {hit}\n")
        return EXIT_VERDICT
    return EXIT_OK


def _write(text: str, path: Path | None, out: TextIO) -> None:
    if path is None:
        out.write(text)
    else:
        files.write_text(path, text)
