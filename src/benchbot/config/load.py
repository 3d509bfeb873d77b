"""Reading benchbot.yml into a ``Config``: the YAML nodes (``yamlnode``) walked through the
key tables (``keys``), the settings' defaults given to every workload and suite, and the
checks that need more than one key (the design, the metric). Every mistake is a
ConfigError naming the file, the line and the key.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from yaml.nodes import Node

from benchbot.config.config import DEFAULT_PATHS, TOP_SETTINGS, Config, SuiteConfig, WorkloadConfig
from benchbot.config.keys import (
    SETTING_KEYS,
    SETTINGS,
    SUITE_KEYS,
    SUITE_SETTINGS,
    TOP,
    TOP_KEYS,
    WORKLOAD_KEYS,
    read_filter,
    read_format,
)
from benchbot.config.kinds import read_argv, read_name, read_weight
from benchbot.config.settings import (
    designs,
)
from benchbot.config.yamlnode import Doc, compose, join, line
from benchbot.core.errors import ConfigError

# --- reading a file --------------------------------------------------------------------------


def find_config(root: Path) -> Path | None:
    """The first of DEFAULT_PATHS that exists under root, or None."""
    for name in DEFAULT_PATHS:
        candidate = Path(root) / name
        if candidate.is_file():
            return candidate
    return None


def load_config(path: str | os.PathLike[str]) -> Config:
    """Read and validate a config file."""
    shown = os.fspath(path)
    try:
        data = Path(path).read_bytes()
    except FileNotFoundError:
        raise ConfigError(
            f"{shown}: no such file; benchbot looks for {' then '.join(DEFAULT_PATHS)} "
            "in the repository, or give --config FILE"
        ) from None
    except OSError as exc:
        raise ConfigError(f"{shown}: cannot read: {exc.strerror or exc}") from None
    return parse_config_bytes(data, path=shown)


def parse_config_bytes(data: bytes, path: str = "benchbot.yml") -> Config:
    """Validate a config file's bytes: UTF-8 text, then ``parse_config``."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        where = data.count(b"\n", 0, exc.start) + 1
        raise ConfigError(
            f"{path}:{where}: not UTF-8 text (byte {exc.start}); save it as UTF-8"
        ) from None
    return parse_config(text, path=path)


def parse_config(text: str, path: str = "benchbot.yml") -> Config:
    """Validate the text of a config file; path is only used in messages."""
    return _read_config(Doc(path), compose(text, path))


@dataclass(frozen=True, slots=True)
class _Setting:
    """A setting's value and where it was written."""

    value: Any
    node: Node
    key: str


def _read_config(doc: Doc, root: Node) -> Config:
    top = doc.pairs(root, "", None)  # version first: a newer file has other keys
    if "version" not in top:
        doc.fail(root, "version", "missing; start the file with 'version: 1'")
    vnode = top["version"][1]
    if type(doc.scalar(vnode)) is not int or doc.scalar(vnode) != 1:
        doc.fail(vnode, "version", f"this benchbot reads version 1, got {doc.describe(vnode)}")
    top = doc.pairs(root, "", TOP_KEYS)
    defaults: dict[str, _Setting] = {
        name: _Setting(SETTINGS.key(name).kind.read(doc, top[name][1], name), top[name][1], name)
        for name in TOP_SETTINGS if name in top}
    if "defaults" in top:
        dnode = top["defaults"][1]
        defaults |= _settings(doc, doc.pairs(dnode, "defaults", SETTING_KEYS), "defaults")
    if "workloads" not in top and "suites" not in top:
        doc.fail(root, "workloads", "missing; list the programs to time under workloads: (or "
                                    "the benchmark harnesses under suites:)")
    fields: dict[str, Any] = {"path": doc.path}
    first_line: dict[str, int] = {}
    if "workloads" in top:
        wnode = top["workloads"][1]
        if doc.scalar(wnode) is None or not doc.items(wnode, "workloads"):
            doc.fail(wnode, "workloads", "is empty; list at least one workload with name: and "
                                         "run:")
        fields["workloads"] = _workloads(doc, wnode.value, defaults, first_line)
    if "suites" in top:
        snode = top["suites"][1]
        if doc.scalar(snode) is None or not doc.items(snode, "suites"):
            doc.fail(snode, "suites", "is empty; list at least one suite with name:, run: and "
                                      "format:")
        fields["suites"] = tuple(_suite(doc, node, f"suites[{i}]", defaults, first_line)
                                 for i, node in enumerate(snode.value))
    for name, (_, node) in top.items():
        if name not in ("version", "defaults", "workloads", "suites"):
            key = TOP.key(name)
            fields[key.attr] = key.kind.read(doc, node, name)
    return Config(**fields)


def _settings(doc: Doc, pairs: dict[str, tuple[Node, Node]], key: str) -> dict[str, _Setting]:
    return {name: _Setting(SETTINGS.key(name).kind.read(doc, vnode, join(key, name)), vnode,
                           join(key, name))
            for name, (_, vnode) in pairs.items() if name in SETTING_KEYS}


def _workloads(doc: Doc, nodes: list[Node], defaults: dict[str, _Setting],
               first_line: dict[str, int]) -> tuple[WorkloadConfig, ...]:
    return tuple(_workload(doc, node, f"workloads[{i}]", defaults, first_line)
                 for i, node in enumerate(nodes))


def _workload(doc: Doc, node: Node, key: str, defaults: dict[str, _Setting],
              first_line: dict[str, int]) -> WorkloadConfig:
    pairs = doc.pairs(node, key, WORKLOAD_KEYS)
    name, run = _name_and_run(doc, node, key, pairs, first_line, "workload")
    settings = {**defaults, **_settings(doc, pairs, key)}
    _check_metric(doc, settings)
    _check_design(doc, settings)
    fields = {SETTINGS.key(k).attr: s.value for k, s in settings.items()}
    if "weight" in pairs:
        fields["weight"] = read_weight(doc, pairs["weight"][1], join(key, "weight"))
    return WorkloadConfig(name=name, run=run, line=line(node), **fields)


def _suite(doc: Doc, node: Node, key: str, defaults: dict[str, _Setting],
           first_line: dict[str, int]) -> SuiteConfig:
    pairs = doc.pairs(node, key, SUITE_KEYS)
    if "format" not in pairs:
        doc.fail(node, join(key, "format"), "missing; give the harness's format, one of "
                                            "google-benchmark, go, bencher, pytest-benchmark, "
                                            "pyperf, jsonl")
    name, run = _name_and_run(doc, node, key, pairs, first_line, "suite")
    own = {k.name for k in SUITE_SETTINGS}
    settings = {**{k: s for k, s in defaults.items() if k in own}, **_settings(doc, pairs, key)}
    _check_design(doc, settings)
    fields = {SETTINGS.key(k).attr: s.value for k, s in settings.items()}
    if "weight" in pairs:
        fields["weight"] = read_weight(doc, pairs["weight"][1], join(key, "weight"))
    return SuiteConfig(
        name=name, run=run, format=read_format(doc, pairs["format"][1], join(key, "format")),
        filter=read_filter(doc, pairs["filter"][1], join(key, "filter"))
        if "filter" in pairs and doc.scalar(pairs["filter"][1]) is not None else None,
        settings=WorkloadConfig(name=name, run=run, line=line(node), metric="reported",
                                **fields),
        line=line(node))


def _name_and_run(doc: Doc, node: Node, key: str, pairs: dict[str, tuple[Node, Node]],
                  first_line: dict[str, int], what: str) -> tuple[str, tuple[str, ...]]:
    """A workload's or suite's name (unique among both) and its argv."""
    for required, hint in (("name", "a short name such as sort"), ("run", "the command to time")):
        if required not in pairs:
            doc.fail(node, join(key, required), f"missing; give {hint}")
    name_node = pairs["name"][1]
    name = read_name(doc, name_node, join(key, "name"))
    if name in first_line:
        doc.fail(name_node, join(key, "name"),
                 f"duplicate {what} name {name!r} (first on line {first_line[name]}, "
                 f"again on line {line(name_node)})")
    first_line[name] = line(name_node)
    return name, read_argv(doc, pairs["run"][1], join(key, "run"))


def _check_design(doc: Doc, settings: dict[str, _Setting]) -> None:
    """``runs`` (a fixed count) and ``max_runs`` (the cap of measuring until settled) for
    one workload: max_runs would be silently unused, so name both. A workload's own ``runs``
    under a ``max_runs`` in ``defaults`` is fine: that one is fixed, the others are capped."""
    if "runs" in settings and "max_runs" in settings:
        runs, most = settings["runs"], settings["max_runs"]
        if most.key.startswith("defaults.") and not runs.key.startswith("defaults."):
            return
        later = max((runs, most), key=lambda s: line(s.node))
        other = most if later is runs else runs
        doc.fail(later.node, later.key,
                 f"cannot be set with {other.key} (line {line(other.node)}): "
                 f"{designs('runs', 'max_runs')}; keep one of them")


def _check_metric(doc: Doc, settings: dict[str, _Setting]) -> None:
    """The rules tying metric, pattern and better together, blamed on the most specific key."""
    metric, pattern, better = (settings.get(k) for k in ("metric", "pattern", "better"))
    reported = metric is not None and metric.value == "reported"
    counts = settings.get("counts")
    if metric is not None and metric.value == "instructions" and counts is not None \
            and counts.value == "off":
        blame = _blame(counts, metric)
        doc.fail(blame.node, blame.key,
                 "metric: instructions judges the counts alone, and counts is off "
                 f"({counts.key}, line {line(counts.node)}); set counts: auto, perf or valgrind")
    if reported and (pattern is None or pattern.value is None):
        blame = _blame(pattern, metric)
        doc.fail(blame.node, blame.key,
                 "metric: reported needs a pattern, a regex with one group that captures the "
                 "time in ns, e.g. 'elapsed_ns=(\\d+)'")
    if not reported and pattern is not None and pattern.value is not None:
        blame = _blame(pattern, metric)
        doc.fail(blame.node, blame.key,
                 "a pattern is only read with metric: reported, and this workload's metric is "
                 f"{metric.value if metric else 'wall'}; add metric: reported or remove the "
                 "pattern")
    unit = settings.get("unit")
    if unit is not None and unit.value is not None and (better is None
                                                        or better.value != "higher"):
        doc.fail(unit.node, unit.key, "a unit is only for a figure the workload reports with "
                                      "better: higher (a throughput); a time is shown in ns, "
                                      "µs, ms or s")
    if better is not None and better.value == "higher" and not reported:
        blame = _blame(better, metric)
        doc.fail(blame.node, blame.key,
                 "better: higher is only for a value the workload reports (metric: reported); "
                 "wall time is always better lower")


def _blame(*candidates: _Setting | None) -> _Setting:
    """The first candidate written on the workload itself, else the first written anywhere."""
    present = [c for c in candidates if c is not None]
    for candidate in present:
        if candidate.key.startswith("workloads["):
            return candidate
    return present[0]

