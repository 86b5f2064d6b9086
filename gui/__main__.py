"""Entry point for `tightfit` and `python -m gui`. Qt and llama.cpp load only when needed."""

from __future__ import annotations

import sys

from gui.cli import main

if __name__ == "__main__":
    sys.exit(main())
