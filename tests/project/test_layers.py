"""The packages import only downwards (a static check of every import edge), and each mode
of `benchbot github` goes straight down the layers of docs/architecture.md:
traced in-process (tools/trace_layers.py), no call climbs back to a higher layer and the
config is read once."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tests.ghenv import CONFIG

TOOL = Path(__file__).resolve().parents[2] / "tools" / "trace_layers.py"
# config (and its YAML-node layer) parses values with the parsers it shares with the
# command line and the Action's inputs (settings, a leaf module).
ALLOWED_CLIMBS = {("benchbot.config.config", "benchbot.config.settings"),
                  ("benchbot.config.yamlnode", "benchbot.config.settings")}


def _tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location("trace_layers", TOOL)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow  # a profiler on every call of four modes: about 9 s
def test_each_mode_goes_straight_down_and_reads_the_config_once() -> None:
    traces = _tool().run_modes(publish_is_step=True, config=CONFIG + "sandbox: off\n")
    assert list(traces) == ["gate", "measure", "publish", "all"]
    for mode, trace in traces.items():
        assert "benchbot.github.action" in trace.modules, mode
        assert set(trace.climbs) <= ALLOWED_CLIMBS, (mode, dict(trace.climbs))
        assert not trace.reentries, (mode, dict(trace.reentries))
        assert trace.config_reads == (0 if mode == "publish" else 1), mode
    assert {"benchbot.measure.engine", "benchbot.github.measure"} <= traces["measure"].modules
    assert "benchbot.github.post" in traces["publish"].modules


def test_no_import_climbs_a_package_and_none_goes_round() -> None:
    """Every import edge of src/benchbot (top of a module, inside a function, under
    TYPE_CHECKING) goes to the module's own package or one below it (``PACKAGES``, bottom
    first, as docs/architecture.md draws them), no modules import each other round a
    circle, and every module sits in a listed package."""
    found = _tool().static_check()
    assert len(found.edges) > 80  # the whole package was read
    assert found.climbs == []
    assert found.circles == []
    assert found.unplaced == []


@pytest.mark.parametrize(("where", "line", "what"), [
    ("verdict/stats.py", "from benchbot.measure import engine", "climbs"),
    ("core/model.py", "    from benchbot.report import render", "climbs"),  # in a function
    ("github/env.py", "from benchbot.github import watch", "circles"),
    ("newstage.py", "from benchbot.core import model", "unplaced"),
])
def test_a_module_in_the_wrong_place_is_caught(tmp_path: Path, where: str, line: str,
                                               what: str) -> None:
    """The check fails for each kind of mistake, planted in a copy of the source."""
    import shutil

    tool = _tool()
    src = tmp_path / "benchbot"
    shutil.copytree(tool.SRC, src, ignore=shutil.ignore_patterns("__pycache__"))
    target = src / where
    text = target.read_text() if target.exists() else '"""A module nobody placed."""\n'
    if line.startswith("    "):
        text += f"\n\ndef _planted() -> None:\n{line}\n"
    else:
        text += f"\n{line}\n"
    target.write_text(text)
    found = tool.static_check(src)
    assert getattr(found, what), what
    others = {"climbs", "circles", "unplaced"} - {what}
    if what != "circles":  # a planted edge up may close a circle too
        assert not any(getattr(found, o) for o in others - {"circles"}), others


def test_every_package_is_shipped() -> None:
    """A `pip install .` (not editable, as the Action and the quick start install it) carries
    every package of src/benchbot: pyproject.toml lists them one by one."""
    import re

    root = Path(__file__).resolve().parents[2]
    text = (root / "pyproject.toml").read_text()
    block = re.search(r"^packages = \[(.*?)\]", text, re.M | re.S)
    assert block is not None
    listed = set(re.findall(r'"([\w.]+)"', block.group(1)))
    found = {".".join(p.parent.relative_to(root / "src").parts)
             for p in (root / "src" / "benchbot").rglob("__init__.py")}
    assert found <= listed, sorted(found - listed)
