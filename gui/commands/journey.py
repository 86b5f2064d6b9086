"""`tightfit journey [--md | --csv | --json] [--file PATH]`: the staged table of every configuration run so
far — stage, model, what changed from the stage before, typical and best decode tok/s, %% of the ceiling,
prompt tok/s, runs, note — from the journey the window and `tightfit bench` record.

Plain text by default; ``--md`` the Markdown table, ``--csv`` one row per stage with a column per speed
setting, ``--json`` a list of objects. A journey file that cannot be used (damaged, from a newer Tightfit)
is left as it is and named in one line on stderr, exit status 1. No file yet is an empty journey, and
nothing is created for it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from gui.core.journey import JourneyData, stages, to_csv, to_json, to_markdown, to_text
from gui.core.words import english

__all__ = ["add_journey_parser", "run_journey"]

NOTHING_YET = (
    "Nothing recorded yet: load a model in the window and send a message, or run `tightfit bench`; each "
    "configuration you run becomes a stage here."
)


def add_journey_parser(sub: Any) -> None:
    parser = sub.add_parser(
        "journey",
        help="the staged table of every configuration you ran: what changed, tok/s, %% of the ceiling, your notes",
    )
    output = parser.add_mutually_exclusive_group()
    output.add_argument("--md", action="store_true", help="print the table as Markdown")
    output.add_argument("--csv", action="store_true", help="print one CSV row per stage")
    output.add_argument("--json", action="store_true", help="print a JSON list, one object per stage")
    parser.add_argument(
        "--file", type=Path, default=None, metavar="PATH", help="the journey file (default: beside the chat history)"
    )


def run_journey(args: argparse.Namespace) -> int:
    from gui.services.journey import JourneyStore, default_journey_path

    path: Path = args.file or default_journey_path()
    if path.exists():
        with JourneyStore(path) as store:
            if not store.persistent:
                print(f"tightfit journey: error: {english(store.warning or '')}", file=sys.stderr)
                return 1
            data = store.snapshot()
    else:
        data = JourneyData()
    staged = stages(data)
    if args.json:
        sys.stdout.write(to_json(staged))
    elif args.csv:
        sys.stdout.write(to_csv(staged))
    elif args.md:
        sys.stdout.write(to_markdown(staged))
    elif staged:
        sys.stdout.write(to_text(staged))
    else:
        print(NOTHING_YET)
    return 0
