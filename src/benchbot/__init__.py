"""benchbot: tells whether a change made code faster or slower, or says it cannot tell."""

from __future__ import annotations

__version__ = "0.1.0"
