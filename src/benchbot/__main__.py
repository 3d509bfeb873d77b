from __future__ import annotations

from benchbot.cli import run

run()
