"""Every key of benchbot.yml, declared once: ``TOP``, ``SETTINGS``, ``WORKLOAD``, ``SUITE``,
``AA``, ``STATUS``, ``GITHUB`` and ``SANDBOX``, each key with its kind of value (``kinds``),
the dataclass field it fills (``config``) and its help. The reader (``load``), the
unknown-key check with its suggestions and the JSON Schema (``schemagen``) all come from
these tables; a new key is one line here and a field there.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from yaml.nodes import MappingNode, Node, ScalarNode

from benchbot.config.config import (
    BASES,
    BETTERS,
    ENV_NAME,
    MAX_SEED,
    MAX_WARMUP,
    MAX_WEIGHT,
    METRICS,
    ORDERS,
    SANDBOX_MODES,
    STDOUTS,
    AAConfig,
    Config,
    GithubConfig,
    SandboxConfig,
    StatusConfig,
    SuiteConfig,
    WorkloadConfig,
)
from benchbot.config.kinds import (
    COUNTS_KIND,
    PROFILES,
    REGEX,
    RUNS,
    STRING,
    SWITCH,
    Kind,
    choice,
    duration,
    fraction,
    integer,
    list_of,
    optional,
    pair_count,
    read_argv,
    read_branch_pattern,
    read_budget,
    read_build,
    read_cwd,
    read_env,
    read_floor_ns,
    read_glob,
    read_name,
    read_outcomes,
    read_parity,
    read_pass_env,
    read_paths,
    read_pin,
    read_profile_mode,
    read_sandbox_mode,
    read_shown_path,
    read_timeout,
    read_unit,
    read_weight,
    ref,
)
from benchbot.config.settings import (
    DURATION_SYNTAX,
    MAX_CPU,
    SWITCH_WORDS,
    UNIT_LABEL,
    WORKLOAD_NAME,
    check_max_runs,
)
from benchbot.config.yamlnode import Doc, join, line, suggest
from benchbot.core.model import OUTCOMES

# --- the tables ------------------------------------------------------------------------------


FROM_FIELD: Any = object()  # a Key's default is its dataclass field's


@dataclass(frozen=True, slots=True)
class Key:
    """One key of benchbot.yml: its name, kind, help and the dataclass field it fills."""

    name: str
    kind: Kind
    help: str
    field: str = ""  # the dataclass field, when it is not named as the key
    default: Any = FROM_FIELD  # the schema's default, when not the field's

    @property
    def attr(self) -> str:
        return self.field or self.name


@dataclass(frozen=True, slots=True)
class Section:
    """The keys of one mapping of the file, and the dataclass they fill."""

    keys: tuple[Key, ...]
    cls: type[Any]

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(k.name for k in self.keys)

    def key(self, name: str) -> Key:
        return next(k for k in self.keys if k.name == name)

    def read(self, doc: Doc, node: Node, key: str) -> dict[str, Any]:
        """The dataclass's fields from a mapping node, each read by its key's kind."""
        return {self.key(name).attr: self.key(name).kind.read(doc, vnode, join(key, name))
                for name, (_, vnode) in doc.pairs(node, key, self.names).items()}


SETTINGS = Section((
    Key("runs", RUNS,
        "A fixed number of pairs of runs (one of each revision) per phase, 10 to 1000: the "
        "fixed design (A/A, A/B and confirmation phases). Left out, benchbot measures "
        "sequentially, until each workload is settled or the budget is spent."),
    Key("warmup", integer(0, MAX_WARMUP),
        "Runs made and discarded before measuring, per revision."),
    Key("parity", Kind(read_parity, {"type": "number", "exclusiveMinimum": 0,
                                 "exclusiveMaximum": 1}),
        "The smallest change that matters, as a fraction (0.02 is 2%): a smaller difference "
        "is reported as level."),
    Key("floor", optional(Kind(read_floor_ns, ref("duration"))),
        "Floor of timing: a duration below which differences are not trusted. Default 25us "
        "for metric wall, 1us for metric reported.", field="floor_ns"),
    Key("timeout", duration(read_timeout),
        "Time limit of one run, e.g. 60s; a run that exceeds it makes the workload invalid.",
        field="timeout_s"),
    Key("order", choice(ORDERS),
        "Order of the two revisions within each pair: alternate (AB, BA, ...) or random "
        "(seeded)."),
    Key("metric", choice(METRICS),
        "What is compared: wall (process wall time, measured by benchbot), reported (a "
        "number the workload prints, read with pattern) or instructions (the user-space "
        "instructions of a few counted runs per revision, judged alone: not a time, never "
        "in the time geomean; needs counts other than off)."),
    Key("pattern", optional(REGEX),
        "With metric: reported, a regular expression with exactly one group capturing the "
        "reported value (integer ns for times), e.g. 'elapsed_ns=(\\d+)'. Not allowed with "
        "metric: wall."),
    Key("expect", optional(REGEX),
        "A regular expression with exactly one group; the captured output must be identical "
        "in every run of both revisions, e.g. 'checksum=(\\S+)'."),
    Key("env", Kind(read_env, {"type": "object", "propertyNames": {"pattern": "^[^=\\u0000]+$"},
                           "additionalProperties": {"type": ["string", "number", "boolean"]}},
                    dict),
        "Environment variables set for the workload's runs. Values are passed as written."),
    Key("cwd", optional(Kind(read_cwd, {"type": "string", "minLength": 1})),
        "Directory the workload runs in, relative to the repository root (default: the root)."),
    Key("pin", optional(Kind(read_pin, {"oneOf": [
            {"type": "integer", "minimum": 0, "maximum": MAX_CPU},
            {"type": "string",
             "pattern": "^\\s*[0-9]+(?:-[0-9]+)?(?:\\s*,\\s*[0-9]+(?:-[0-9]+)?)*\\s*$"},
            {"type": "array", "minItems": 1,
             "items": {"type": "integer", "minimum": 0, "maximum": MAX_CPU}}]})),
        "CPUs to pin the workload's runs to: a list such as \"0,2-3\", [0, 2] or a single CPU "
        "number."),
    Key("better", choice(BETTERS),
        "Which direction is better: lower (times, the default) or higher (a reported "
        "throughput, judged as its reciprocal). higher needs metric: reported."),
    Key("max_runs", pair_count(check_max_runs),
        "Sequential measuring: the most pairs (triplets of base, base again and head) a "
        "workload is measured with."),
    Key("stdout", choice(STDOUTS),
        "capture: keep a run's stdout when a pattern or expect must be read from it (else it "
        "goes to /dev/null); discard: never keep it (the patterns are then looked for in "
        "stderr only)."),
    Key("unit", optional(Kind(read_unit, {"type": "string",
                                       "pattern": f"^{UNIT_LABEL.pattern}$"})),
        "With better: higher, what the reported figure counts, shown beside it (e.g. MB/s, "
        "ops/s): up to 16 letters, digits, spaces and / % . µ."),
    Key("counts", COUNTS_KIND,
        "How instructions are counted, as a second signal beside time: perf (the CPU's "
        "counters, around every run), valgrind (cachegrind, a few runs of each revision "
        "apart from the timed ones), auto (perf where the counters work, else valgrind where "
        "it is installed and a run takes at most 1s, else off) or off (on: auto). Asked for and "
        "impossible here: the workload is compared on time, and the report says why."),
    Key("memory_parity", Kind(read_parity, {"type": "number", "exclusiveMinimum": 0,
                                        "exclusiveMaximum": 1}),
        "The smallest change of peak memory (max RSS) that matters, as a fraction: the "
        "memory verdict's parity."),
    Key("paths", optional(Kind(read_paths, {"type": "array", "minItems": 1,
                                         "items": {"type": "string", "minLength": 1}}, list)),
        "Globs of the files that can affect the workload, relative to the repository root "
        "(gitignore-like: * within a path segment, ** across segments, a glob without / "
        "matches that name at any depth, a trailing / a directory and everything below it). "
        "When a change touches none of them the workload is skipped as not affected (shown "
        "in the report); left out, it is always measured. --all and /bench all measure it "
        "anyway."),
), WorkloadConfig)

WORKLOAD = Section((
    Key("name", Kind(read_name, {"type": "string", "pattern": f"^{WORKLOAD_NAME.pattern}$"}),
        "Short name shown in reports and used by `/bench only=`: letters, digits, '_', '.' "
        "and '-'."),
    Key("run", Kind(read_argv, ref("argv")),
        "The command to time: an argv list, or a string split like a shell would (no shell "
        "is used). Paths are relative to the repository root."),
    *SETTINGS.keys,
    Key("weight", Kind(read_weight, {"type": "number", "exclusiveMinimum": 0,
                                 "maximum": MAX_WEIGHT}),
        "Expected cost relative to the other workloads (a positive number), used to split "
        "the workloads over shards (--shard K/N); a cost measured in an earlier results file "
        "(--shard-costs) wins over it."),
), WorkloadConfig)

# The settings a suite's benchmarks take from SETTINGS: what each is and how it is read come
# from the harness's report (metric, pattern, better, unit); its counts come from counted
# runs of each benchmark (benchbot.suites.fixedwork), its memory from what the harness reports.
SUITE_SETTINGS = tuple(k for k in SETTINGS.keys if k.name not in (
    "metric", "pattern", "expect", "better", "unit", "stdout"))


def read_format(doc: Doc, node: Node, key: str) -> str:
    from benchbot.harness.formats import FORMATS

    value = doc.text(node, key)
    if value not in FORMATS:
        doc.fail(node, key, f"{value!r} is not a format benchbot reads; one of "
                            f"{', '.join(FORMATS)}{suggest(value, FORMATS)}")
    return value


def read_filter(doc: Doc, node: Node, key: str) -> tuple[str, ...]:
    argv = read_argv(doc, node, key)
    if not any("{regex}" in arg or "{name}" in arg for arg in argv):
        doc.fail(node, key, "holds neither {regex} nor {name}: give the harness's own option "
                            "with a placeholder, e.g. ['--benchmark_filter={regex}']")
    return argv


SUITE = Section((
    Key("name", Kind(read_name, {"type": "string", "pattern": f"^{WORKLOAD_NAME.pattern}$"}),
        "Short name of the suite: its benchmarks are shown as <name>/<benchmark>, and "
        "`/bench only=<name>` measures them all. Letters, digits, '_', '.' and '-'."),
    Key("run", Kind(read_argv, ref("argv")),
        "The harness command, run once per revision per round: an argv list, or a string split "
        "like a shell would (no shell). {output} in an argument is replaced by a fresh file the "
        "harness writes its report to (e.g. --benchmark-json={output}); without it the report "
        "is read from stdout."),
    Key("format", Kind(read_format, {"enum": ["google-benchmark", "go", "bencher",
                                          "pytest-benchmark", "pyperf", "jsonl"]}),
        "What the harness reports: google-benchmark (JSON), go (go test -bench text), bencher "
        "(cargo bench / Criterion --output-format bencher lines), pytest-benchmark "
        "(--benchmark-json), pyperf (JSON) or jsonl (one JSON object a line: name, value, unit, "
        "better; docs/suites.md)."),
    Key("filter", optional(Kind(read_filter, ref("argv"))),
        "Arguments added to run when only some benchmarks are still unsettled, so later "
        "rounds run those only: {regex} is replaced by a regular expression matching exactly "
        "their names (in the harness's dialect), and an argument holding {name} is repeated "
        "once per benchmark, e.g. ['--benchmark_filter={regex}']. Left out, every round runs "
        "the whole suite."),
    *SUITE_SETTINGS,
    Key("weight", Kind(read_weight, {"type": "number", "exclusiveMinimum": 0,
                                 "maximum": MAX_WEIGHT}),
        "Expected cost relative to the workloads, for splitting them over shards."),
), SuiteConfig)

AA = Section((
    Key("enabled", SWITCH, "Whether the A/A check runs."),
    Key("runs", optional(RUNS),
        "Pairs of runs of the A/A check; default: as many as the A/B phase."),
    Key("abort_fraction", fraction(low_open=False, high_open=False),
        "Conclude nothing when more than this fraction of workloads fail the A/A check."),
), AAConfig)

STATUS = Section((
    Key("fail_on", Kind(read_outcomes, {"oneOf": [ref("outcome"), {"type": "array",
                                                                 "items": ref("outcome")}]},
                        list),
        "Outcomes that make the check fail: a list or a single outcome."),
    Key("name", STRING, "Name of the check run."),
), StatusConfig)

GITHUB = Section((
    Key("forks", SWITCH, "Run pull requests from forks without being asked. Off: a "
                          "maintainer must ask with /bench (or add fork_label)."),
    Key("fork_label", optional(STRING),
        "A label that allows running a pull request from a fork (its head, when the "
        "labeller's review names it)."),
    Key("fork_bases", list_of(read_branch_pattern, {"type": "string", "minLength": 1}),
        "The base branches (names or shell patterns such as release/*) whose config may "
        "judge a fork's code; default: the repository's default branch. A fork chooses its "
        "base, and an older branch may hold older settings (the workflow refuses other "
        "bases too, before any of benchbot's code runs)."),
    Key("comment", SWITCH,
        "Post (and update) one sticky comment with the report on the pull request."),
), GithubConfig)

MODE_SCHEMA = {"enum": [*SANDBOX_MODES, True, False]}
PATHS_KIND = list_of(read_shown_path, {"type": "string", "minLength": 1})
SANDBOX = Section((
    Key("mode", Kind(read_sandbox_mode, MODE_SCHEMA), "auto, on or off, as above."),
    Key("read_only", PATHS_KIND,
        "Directories the sandbox shows besides the system, the toolchains on PATH and "
        "benchbot itself (e.g. ~/.pyenv), read-only: absolute paths or ~/…"),
    Key("writable", PATHS_KIND, "Directories besides the worktrees that the build and the runs "
                            "may write: absolute paths or ~/…"),
    Key("build_network", SWITCH,
        "on: the build reaches the host's network (for a project that fetches its "
        "dependencies while it builds); off: the build gets its own network namespace, "
        "loopback only, so a pull request's build cannot reach the runner's network or a "
        "cloud metadata endpoint. The runs never reach the network."),
    Key("build_only", list_of(read_glob, {"type": "string", "minLength": 1}),
        "Globs of the worktree's files that only the build reads, relative to the "
        "repository root (as paths: takes them, e.g. [\"*.c\", \"*.h\", \"docs/**\", "
        "\"*.md\"]). In bubblewrap the measured runs cannot open them (nor the "
        "repository's .git, which holds them too), and benchbot bisect and history skip a "
        "commit whose built worktree differs from its neighbour's in their bytes alone (a "
        "comment-only change). Without the sandbox nothing is hidden and nothing is left "
        "out."),
), SandboxConfig)


def read_aa(doc: Doc, node: Node, key: str) -> AAConfig:
    if doc.is_switch(node):
        return AAConfig(enabled=doc.switch(node, key))
    if not isinstance(node, MappingNode):
        doc.fail(node, key, "must be on, off or a mapping (runs, abort_fraction), got "
                            + doc.describe(node))
    return AAConfig(**AA.read(doc, node, key))


def read_sandbox(doc: Doc, node: Node, key: str) -> SandboxConfig:
    if isinstance(node, ScalarNode):
        return SandboxConfig(mode=read_sandbox_mode(doc, node, key))
    fields = SANDBOX.read(doc, node, key)
    writable = doc.pairs(node, key, SANDBOX.names).get("writable")
    return SandboxConfig(**fields, writable_line=line(writable[0]) if writable else 0)



def object_of(section: Section) -> Kind:
    return Kind(lambda d, n, k: section.cls(**section.read(d, n, k)), {"section": section})


def read_unread(doc: Doc, node: Node, key: str) -> Any:
    raise AssertionError(f"{key} is read by _read_config")


TOP = Section((
    Key("version", Kind(read_unread, {"const": 1}), "Version of this file's format; must be 1.",
        default=None),
    Key("build", Kind(read_build, {"oneOf": [{"type": "string", "minLength": 1}, ref("argv_list"),
                                         {"type": "null"}]}),
        "Build command, run once in each revision's worktree. A string is run by /bin/sh -c; "
        "a list is an argv. Absent or null: no build."),
    Key("defaults", Kind(read_unread, {"section": SETTINGS}),
        "Settings applied to every workload unless the workload gives its own."),
    Key("workloads", Kind(read_unread, {"type": "array", "minItems": 1, "items": ref("workload")}),
        "The programs to time (workloads, suites or both: at least one of them).",
        default=None),
    Key("suites", Kind(read_unread, {"type": "array", "minItems": 1, "items": ref("suite")}),
        "Benchmark harnesses that report many benchmarks from one command (google-benchmark, "
        "go test -bench, cargo bench, pytest-benchmark, pyperf, or JSON lines): each "
        "benchmark is judged as a workload of its own.", default=None),
    Key("aa", Kind(read_aa, {"oneOf": [ref("switch"), {"section": AA}]}),
        "The A/A check (base against itself) that measures what the method invents: on, off, "
        "or a mapping.", default=True),
    Key("confirm", SWITCH, "Re-run slower/faster standouts in an independent confirmation "
                            "phase before reporting them."),
    Key("alpha", fraction(low_open=True, high_open=True),
        "Significance level per workload (Bonferroni-corrected over workloads when confirm is "
        "off)."),
    Key("base", choice(BASES),
        "What a pull request is compared against: merge-base (the fork point) or tip (the "
        "base branch's latest commit)."),
    Key("status", object_of(STATUS), "The check run benchbot reports to."),
    Key("github", object_of(GITHUB), "What benchbot may do on GitHub."),
    Key("seed", optional(integer(0, MAX_SEED)),
        "Seed of run order and bootstrap; default: chosen at run time and recorded in the "
        "results."),
    Key("sandbox", Kind(read_sandbox, {"oneOf": [MODE_SCHEMA, {"section": SANDBOX}]}),
        "How the code under test (the build and every run) is confined. auto: in bubblewrap "
        "when it works here, else with a clean environment only; on: refuse to run without "
        "bubblewrap; off: a clean environment only.", default="auto"),
    Key("pass_env", Kind(read_pass_env, {"type": "array", "items": {
            "type": "string", "pattern": ENV_NAME.pattern}}, list),
        "Names of environment variables passed from benchbot's environment to the build and "
        "the runs, besides PATH, HOME, the locale, TMPDIR and the usual compiler variables. "
        "Tokens, credentials and ACTIONS_*, INPUT_*, GITHUB_*, RUNNER_*, GIT_CONFIG* are "
        "refused."),
    Key("budget", duration(read_budget),
        "Sequential measuring: the wall time the whole comparison may take, builds included, "
        "e.g. 10m or 1h30m; from 1s to 24h.", field="budget_s"),
    Key("parallel_builds", SWITCH,
        "Build base and head at once, each in its own worktree; off builds them one after "
        "the other (where two builds at once would not fit in memory, or share a directory "
        "outside the worktrees)."),
    Key("counts", COUNTS_KIND,
        "counts for every workload (as under defaults, which wins over it)."),
    Key("memory_parity", Kind(read_parity, {"type": "number", "exclusiveMinimum": 0,
                                        "exclusiveMaximum": 1}),
        "memory_parity for every workload (as under defaults, which wins over it)."),
    Key("profile", Kind(read_profile_mode, {"enum": [*PROFILES, True, False]}),
        "Which workloads are profiled under callgrind after the verdicts, their notes naming "
        "the functions that carry the change: called (those called slower or faster, where "
        "valgrind is installed), all, or off (--profile, /bench profile and the Action's "
        "input profile win over it).", default="called"),
), Config)

# Keys accepted in each mapping, in the order messages list them.
SETTING_KEYS = SETTINGS.names
WORKLOAD_KEYS = WORKLOAD.names
SUITE_KEYS = SUITE.names
TOP_KEYS = TOP.names
AA_KEYS = AA.names
STATUS_KEYS = STATUS.names
GITHUB_KEYS = GITHUB.names
# The JSON Schema's shared definitions (benchbot.config.schemagen writes the rest from the tables).
SHARED_SCHEMAS: dict[str, dict[str, Any]] = {
    "switch": {"description": "A boolean; on/off/yes/no are accepted too.", "oneOf": [
        # YAML 1.1 reads these words unquoted as booleans; quoted, the parser takes them too
        # (settings.SWITCH_WORDS, any case), and editors are offered the usual spellings.
        {"type": "boolean"},
        {"enum": [w for word in sorted(SWITCH_WORDS - {"true", "false"}, reverse=True)
                  for w in (word, word.capitalize(), word.upper())]}]},
    "duration": {
        "description": "A duration: a number and a unit (ns, us, µs, ms, s, m, h), e.g. 500ms, "
                       "60s, 1m30s; a bare number is seconds.",
        "oneOf": [{"type": "number", "minimum": 0},
                  {"type": "string", "pattern": f"^\\s*(?:{DURATION_SYNTAX})\\s*$"}]},
    "argv_list": {"description": "An argv: the program, then its arguments.", "type": "array",
                  "minItems": 1, "items": {"type": ["string", "number", "boolean"]}},
    "argv": {"description": "An argv list, or a string split like a shell would (no shell).",
             "oneOf": [{"type": "string", "minLength": 1}, ref("argv_list")]},
    "outcome": {"description": "A verdict's outcome.", "enum": list(OUTCOMES)},
}


