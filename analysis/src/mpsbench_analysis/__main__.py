"""Allows ``python -m mpsbench_analysis`` where the console script is not on PATH."""

import sys

from .cli import main

sys.exit(main())
