from __future__ import annotations

import sys

from benchbot.cli import main

sys.exit(main())
