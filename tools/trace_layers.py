"""Follow `benchbot github` through its modules, mode by mode, and count the climbs.

Each mode (gate, measure, publish, all) runs in-process against the fake GitHub server
on a throwaway repository (``tests/ghenv.py``), with a profiler on the main thread that
records every call from one benchbot module into another. Each module has a layer
(``LAYERS``, drawn in docs/architecture.md); the figures per mode are:

- modules: the benchbot modules entered;
- climbs: calls from a module into one of a *higher* layer (a callback, or a helper
  that reaches back up), as calls and as distinct caller -> callee pairs;
- re-entries: calls into a module of another layer that is already on the stack further
  down (A calls B, which calls back into A), as calls and as distinct pairs;
- config reads: how often a config file is parsed (``config.parse_config``).

Modules of plain data (``model``, ``errors``, ``codec``) belong to no layer, and a call
into a dataclass's own methods (its generated ``__init__``, a property, any method of a
``Config`` or a ``Job``) is reading data, not a step in the flow: neither is counted. Threads (the engine's look-ahead imports) are not followed.

    python tools/trace_layers.py            # the table
    python tools/trace_layers.py --edges    # and each climbing pair
    python tools/trace_layers.py --static   # every import edge between packages

The static check reads every ``import`` in ``src/benchbot`` (at the top of a module, inside
a function, under ``TYPE_CHECKING``: a type is a dependency too) and puts each module in
its package; ``PACKAGES`` orders the packages from the bottom up (docs/architecture.md).
An edge from a package to one above it is a climb; a circle of modules (inside a package
or across) is a circle; a module in no listed package is unplaced. All three must be 0.
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import inspect
import io
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

# Layer of each module, top (0) to bottom. The names before issue 19's renames are listed
# too, so that the same table measures both: `github.common` (a mix of output, config and
# publisher helpers) is put with the output it mostly is.
ENTRY, STEP, EVENT, SETTINGS, CONFIG, WORK, OUTPUT = range(7)
LAYER_NAMES = ("entry", "step", "event", "settings", "config", "engine/publisher", "output")
DATA = ("benchbot.core.model", "benchbot.core.errors", "benchbot.core.codec")
DATA_HOLDERS = ("benchbot.config.config", "benchbot.github.job")  # their dataclasses' methods: data
LAYERS = {
    "benchbot.cli": ENTRY, "benchbot.github.action": ENTRY,
    "benchbot.github.gate": STEP, "benchbot.github.measure": STEP,
    "benchbot.github.conclude": STEP,  # before: the publish step
    "benchbot.github.env": EVENT, "benchbot.github.event": EVENT,
    "benchbot.github.command": EVENT, "benchbot.github.job": EVENT,
    "benchbot.config.settings": SETTINGS,
    "benchbot.config.config": CONFIG, "benchbot.config.load": CONFIG, "benchbot.config.keys": CONFIG,
    "benchbot.config.kinds": CONFIG, "benchbot.config.find": CONFIG, "benchbot.github.fetch": CONFIG,
    "benchbot.config.yamlnode": CONFIG, "benchbot.config.schemagen": CONFIG,
    "benchbot.measure.engine": WORK, "benchbot.github.post": WORK, "benchbot.github.api": WORK,
    "benchbot.github.output": OUTPUT, "benchbot.github.limits": OUTPUT,
    "benchbot.github.common": OUTPUT,  # before: Log, outputs, summary (and more, see above)
    "benchbot.github.rescue": OUTPUT, "benchbot.core.files": OUTPUT, "benchbot.results.resultsdir": OUTPUT,
    "benchbot.measure.progress": OUTPUT, "benchbot.core.logsafe": OUTPUT,
    "benchbot.results.schemacheck": OUTPUT,  # the fast validity check results (and the history) use
    "benchbot.verdict.figures": OUTPUT,  # the words of a verdict's figure, which the report reads
}
# Everything the engine runs below it (git, sandbox, measuring, statistics, the report)
# is the engine's layer; the report is the output's.
PREFIX_LAYERS = (("benchbot.report", OUTPUT), ("benchbot.", WORK))


# --- the static check: packages and their import edges -------------------------------------

SRC = ROOT / "src" / "benchbot"
# Bottom first: a package may import itself and any package before it, never one after.
PACKAGES = ("core", "harness", "sandbox", "git", "config", "verdict", "results", "run",
            "suites", "profiles", "measure", "bisect", "history", "report", "github")
# The top: the command line and the commands that are one module each. ``benchbot``
# itself holds the version only (imported by anyone, importing nothing).
TOP = ("benchbot.cli", "benchbot.demo", "benchbot.doctor", "benchbot.__main__")
ROOT_MODULE = "benchbot"


def module_names(src: Path = SRC) -> dict[str, Path]:
    """Every module of the package by dotted name (a package by its ``__init__``)."""
    out = {}
    for path in sorted(src.rglob("*.py")):
        parts = path.relative_to(src.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def import_edges(modules: dict[str, Path]) -> dict[str, set[str]]:
    """module -> the benchbot modules it imports anywhere in its source."""
    import ast

    edges: dict[str, set[str]] = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found |= {a.name for a in node.names}
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package.split(".")[:len(package.split(".")) - node.level + 1]
                    base = ".".join([*up, *([base] if base else [])])
                for alias in node.names:  # ``from p import m``: the module m where it is one
                    found.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base)
        edges[name] = {m for m in found if m in modules and m != name}
    return edges


def package_of(module: str) -> str | None:
    """The package a module belongs to (``top`` for the command line's, ``root`` for
    ``benchbot`` itself), or None: unplaced."""
    if module == ROOT_MODULE:
        return "root"
    if module in TOP:
        return "top"
    parts = module.split(".")
    return parts[1] if len(parts) > 2 and parts[1] in PACKAGES else (
        parts[1] if len(parts) == 2 and parts[1] in PACKAGES else None)


def _rank(package: str) -> int:
    return {"root": -1, "top": len(PACKAGES)}.get(package, PACKAGES.index(package)
                                                   if package in PACKAGES else -2)


@dataclass
class Static:
    edges: dict[str, set[str]]
    climbs: list[tuple[str, str]] = field(default_factory=list)
    circles: list[list[str]] = field(default_factory=list)
    unplaced: list[str] = field(default_factory=list)


def static_check(src: Path = SRC) -> Static:
    """Every import edge of the package at ``src`` against ``PACKAGES``: the climbs,
    circles and unplaced modules (each should be none)."""
    modules = module_names(src)
    edges = import_edges(modules)
    result = Static(edges)
    result.unplaced = [m for m in modules if package_of(m) is None]
    for source, targets in edges.items():
        for target in sorted(targets):
            a, b = package_of(source), package_of(target)
            if a is None or b is None:
                continue
            if b != "root" and (a == "root" or _rank(b) > _rank(a)):
                result.climbs.append((source, target))
    result.circles = _circles(edges)
    return result


def _circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                out.append(sorted(group))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def package_edges(edges: dict[str, set[str]]) -> dict[str, set[str]]:
    """package -> the packages it imports (for the table in docs/architecture.md)."""
    out: dict[str, set[str]] = collections.defaultdict(set)
    for source, targets in edges.items():
        for target in targets:
            a, b = package_of(source), package_of(target)
            if a and b and a != b and b != "root":
                out[a].add(b)
    return dict(out)


def layer_of(module: str, *, publish_is_step: bool) -> int | None:
    """The layer of a benchbot module (None: plain data, no layer)."""
    if module in DATA:
        return None
    if module == "benchbot.github.publish":  # the step after the renames, the poster before
        return STEP if publish_is_step else WORK
    if module in LAYERS:
        return LAYERS[module]
    return next(layer for prefix, layer in PREFIX_LAYERS if module.startswith(prefix))


@dataclass
class Trace:
    """The calls between benchbot modules seen in one mode."""

    publish_is_step: bool
    modules: set[str] = field(default_factory=set)
    climbs: collections.Counter[tuple[str, str]] = field(default_factory=collections.Counter)
    reentries: collections.Counter[tuple[str, str]] = field(default_factory=collections.Counter)
    config_reads: int = 0

    def profile(self, frame: FrameType, event: str, arg: Any) -> None:
        if event != "call" or not _is_step(frame):
            return
        callee = frame.f_globals.get("__name__", "")
        self.modules.add(callee)
        self.config_reads += callee == "benchbot.config.load" and frame.f_code.co_name == "parse_config"
        below = _benchbot_frames(frame.f_back)
        caller = next(below, None)
        if caller is None or caller == callee:
            return
        layers = (layer_of(caller, publish_is_step=self.publish_is_step),
                  layer_of(callee, publish_is_step=self.publish_is_step))
        if None in layers or layers[0] == layers[1]:
            return
        if layers[1] < layers[0]:  # type: ignore[operator]
            self.climbs[(caller, callee)] += 1
        if callee in below:
            self.reentries[(caller, callee)] += 1


def _benchbot_frames(frame: FrameType | None) -> Iterator[str]:
    """The benchbot modules on the stack from ``frame`` down, skipping the data modules."""
    while frame is not None:
        if _is_step(frame) and frame.f_globals["__name__"] not in DATA:
            yield frame.f_globals["__name__"]
        frame = frame.f_back


def _is_step(frame: FrameType) -> bool:
    """Whether a frame is a benchbot function at work: not an import, not a data access."""
    name, code = frame.f_globals.get("__name__", ""), frame.f_code
    if not name.startswith("benchbot") or code.co_name == "<module>":
        return False
    if not code.co_argcount:
        return True
    first = frame.f_locals.get(code.co_varnames[0])
    if not dataclasses.is_dataclass(first):
        return True
    owner = first if isinstance(first, type) else type(first)
    is_property = isinstance(inspect.getattr_static(owner, code.co_name, None), property)
    return not (is_property or code.co_name.startswith("__") or owner.__module__ in DATA_HOLDERS)


@contextmanager
def profiled(trace: Trace) -> Iterator[None]:
    sys.setprofile(trace.profile)
    try:
        yield
    finally:
        sys.setprofile(None)


def run_modes(publish_is_step: bool, config: str | None = None) -> dict[str, Trace]:
    """Each mode once, traced: gate, measure and publish in turn, then all (``config``:
    the repository's benchbot.yml, else tests/ghenv.py's)."""
    from benchbot.github import action
    from tests.fakegithub import FakeGitHub
    from tests.ghenv import CONFIG, OWNER, REPO, Env, make_workspace

    traces: dict[str, Trace] = {}

    def run(mode: str, env: Env, payload: dict[str, Any], **extra: str) -> dict[str, str]:
        environ = env.environ("pull_request", payload, BENCHBOT_MODE=mode, **extra)
        if mode == "measure":
            del environ["GITHUB_TOKEN"]
        trace = traces[mode] = Trace(publish_is_step)
        with profiled(trace):
            code = action.main(environ, err=io.StringIO())
        if code != 0:
            raise SystemExit(f"mode {mode}: exit status {code}")
        return environ

    with tempfile.TemporaryDirectory() as tmp, FakeGitHub(
            owner=OWNER, repo=REPO, owner_type="User", default_branch="main") as fake:
        env = Env(Path(tmp), fake, make_workspace(Path(tmp), config=config or CONFIG))
        payload = env.pull_request_event()
        gated = run("gate", env, payload)
        job = _outputs(Path(gated["GITHUB_OUTPUT"]))["job"]
        measured = run("measure", env, payload, BENCHBOT_JOB=job)
        run("publish", env, payload, BENCHBOT_JOB=job, BENCHBOT_MEASURE_RESULT="success",
            BENCHBOT_RESULTS_DIR=measured["BENCHBOT_RESULTS_DIR"])
        run("all", env, env.pull_request_event("synchronize"))
    return traces


def _outputs(path: Path) -> dict[str, str]:
    from tests.ghenv import parse_outputs

    return parse_outputs(path.read_text())


def report(traces: dict[str, Trace], show_edges: bool, write: Callable[[str], None]) -> None:
    write(f"{'mode':8} {'modules':>7} {'climbs':>7} {'(pairs)':>7} {'re-entries':>10} "
          f"{'(pairs)':>7} {'config reads':>12}")
    for mode, t in traces.items():
        write(f"{mode:8} {len(t.modules):7} {sum(t.climbs.values()):7} {len(t.climbs):7} "
              f"{sum(t.reentries.values()):10} {len(t.reentries):7} {t.config_reads:12}")
    if show_edges:
        for mode, t in traces.items():
            for (a, b), n in sorted(t.climbs.items()):
                write(f"  {mode}: climb {a} -> {b} ({n})")
            for (a, b), n in sorted(t.reentries.items()):
                write(f"  {mode}: re-entry {a} -> {b} ({n})")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--edges", action="store_true", help="list each climbing pair")
    parser.add_argument("--static", action="store_true",
                        help="check every import edge between packages instead of tracing")
    args = parser.parse_args()
    if args.static:
        found = static_check()
        for package, imported in sorted(package_edges(found.edges).items(),
                                        key=lambda kv: _rank(kv[0])):
            print(f"{package:8} -> {', '.join(sorted(imported, key=_rank))}")
        print(f"modules {len(found.edges)}, edges {sum(map(len, found.edges.values()))}, "
              f"climbs {len(found.climbs)}, circles {len(found.circles)}, "
              f"unplaced {len(found.unplaced)}")
        for source, target in found.climbs:
            print(f"climb: {source} -> {target}")
        for group in found.circles:
            print(f"circle: {' <-> '.join(group)}")
        for module in found.unplaced:
            print(f"unplaced: {module}")
        return 1 if found.climbs or found.circles or found.unplaced else 0
    import importlib.util

    publish_is_step = importlib.util.find_spec("benchbot.github.conclude") is None
    report(run_modes(publish_is_step), args.edges, print)
    return 0


if __name__ == "__main__":
    sys.exit(main())
