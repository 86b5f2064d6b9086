"""`tightfit export MODEL [sizing flags] --format llama-server|llama-cli|preset|kcpps|card [--output FILE]`.

Writes the load settings for another program: a llama-server or llama-cli command line, a section of
llama-server's ``--models-preset`` file, a koboldcpp ``.kcpps`` file, or a Tightfit tuning card (the
settings with the model's SHA-256). ``--card FILE`` starts from a tuning card's settings instead of the
defaults, after checking the card is for MODEL (``--apply-anyway`` uses it for another file); sizing flags
given on the command line override it. The NUMA pin the Doctor set for this machine, or ``--numa-node N``,
becomes a ``numactl`` prefix.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from gui.commands.flags import given_values
from gui.core.export import FORMATS, Export, export
from gui.core.params import LOAD_SPECS, LoadSettings, default_settings
from gui.core.tuning_card import CardError, CardFacts, CardMismatch, card_to_json
from gui.core.words import english, english_error

CARD = "card"


def add_export_parser(sub: Any, add_sizing_flags: Any) -> None:
    parser = sub.add_parser(
        "export", help="the load settings as a llama-server/llama-cli command, a preset, a .kcpps file or a tuning card"
    )
    parser.add_argument("model", type=Path, metavar="MODEL.gguf")
    parser.add_argument("--format", required=True, choices=(*FORMATS, CARD), help="what to write")
    parser.add_argument("--output", "-o", type=Path, default=None, metavar="FILE", help="write here (default: print)")
    pin = parser.add_mutually_exclusive_group()
    pin.add_argument("--numa-node", type=int, default=None, metavar="N",
                     help="start under numactl bound to this NUMA node (default: the Doctor's pin here)")  # fmt: skip
    pin.add_argument("--no-numa", action="store_true", help="no numactl prefix, whatever the Doctor pinned")
    parser.add_argument("--card", type=Path, default=None, metavar="CARD.json",
                        help="start from this tuning card's settings (checked against MODEL's SHA-256)")  # fmt: skip
    parser.add_argument("--apply-anyway", action="store_true",
                        help="use --card's settings even though it is for another model file")  # fmt: skip
    add_sizing_flags(parser)


def run_export(args: argparse.Namespace) -> int:
    model: Path = args.model
    if not model.is_file():
        raise ValueError(f"{model}: no such file")
    settings, message = _settings(args)
    if message:
        print(message, file=sys.stderr)
    if args.format == CARD:
        result = Export(_card_text(model, settings))
    else:
        result = export(args.format, model.resolve(), settings, _numa_node(args))
    for note in result.notes:
        print(f"note: {english(note)}", file=sys.stderr)
    if args.output is None:
        sys.stdout.write(result.text if result.text.endswith("\n") else result.text + "\n")
    else:
        try:
            args.output.write_text(result.text, encoding="utf-8")
        except OSError as exc:
            raise ValueError(f"{args.output}: cannot be written ({exc.strerror or english_error(exc)})") from None
        print(f"wrote {args.output}", file=sys.stderr)
    return 0


def _settings(args: argparse.Namespace) -> tuple[LoadSettings, str]:
    from gui.services.system import physical_cores

    base, message = default_settings(physical_cores()), ""
    if args.card is not None:
        from gui.services.tuning_card import open_card

        try:
            opened = open_card(args.card, args.model, apply_anyway=args.apply_anyway)
        except CardError as exc:
            hint = " (--apply-anyway uses it all the same)" if isinstance(exc, CardMismatch) else ""
            raise ValueError(f"{english_error(exc)}{hint}") from None
        base, message = opened.settings, english(opened.message)
    elif args.apply_anyway:
        raise ValueError("--apply-anyway goes with --card")
    return base.with_values(**given_values(args, LOAD_SPECS)).validated(), message


def _numa_node(args: argparse.Namespace) -> int | None:
    if args.no_numa:
        return None
    if args.numa_node is not None:
        return int(args.numa_node)
    from gui.core.preferences import NUMA_PINS
    from gui.services.numa import machine_id
    from gui.services.settings_store import SettingsStore

    return SettingsStore().read(NUMA_PINS).get(machine_id())


def _card_text(model: Path, settings: LoadSettings) -> str:
    from gui.services.tuning_card import make_card

    card_name, driver = _gpu_facts()
    try:
        card = make_card(model, settings, CardFacts(card_name, driver, engine_build()))
    except OSError as exc:
        raise ValueError(f"{model}: cannot be read ({exc.strerror or english_error(exc)})") from None
    return card_to_json(card)


def engine_build() -> str | None:
    """The installed engine, from its package's metadata (starting the engine would take seconds)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return f"llama-cpp-python {version('llama_cpp_python')}"
    except PackageNotFoundError:
        return None


def _gpu_facts() -> tuple[str | None, str | None]:
    """The first GPU's name and the driver's version, where NVML answers."""
    from gui.services.nvml import Nvml

    nvml = Nvml()
    try:
        gpus = nvml.query_gpus().gpus
        driver = nvml.driver_info().driver_version
    except Exception:  # no pynvml, a broken driver: the card is written without them
        return None, None
    finally:
        nvml.shutdown()
    return (gpus[0].name if gpus else None), driver
