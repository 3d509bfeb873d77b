"""Each mode of `benchbot github` goes straight down the layers of docs/architecture.md:
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
ALLOWED_CLIMBS = {("benchbot.config.config", "benchbot.config.settings"), ("benchbot.config.yamlnode", "benchbot.config.settings")}


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
