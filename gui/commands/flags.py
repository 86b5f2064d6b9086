"""Command-line flags generated from the setting declarations (gui.core.params, gui.core.protocol).

Every command that takes load settings or sampling settings gets the same flags, with the same names,
ranges and help as the window's widgets.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable
from typing import Any

from gui.core.cards import CARDS, Card, UnknownCardError, find_card
from gui.core.params import LOAD_SPECS, MAX_DEVICES, LoadSettings, default_settings
from gui.core.protocol import Sampling
from gui.core.specs import BoolSpec, ChoiceSpec, FloatSpec, IntSpec, Spec, parse_value_list, specs_of
from gui.core.words import english, english_error


def add_spec_flags(group: Any, specs: Iterable[Spec[Any]]) -> None:
    """One flag per declared setting; every default is None, so only what was given overrides."""
    for spec in specs:
        if not spec.flag:
            continue
        if isinstance(spec, IntSpec):
            help_text = f"{english(spec.help)} [{spec.minimum}-{spec.maximum}]"
            group.add_argument(spec.flag, dest=spec.key, type=int, default=None, metavar="N", help=help_text)
        elif isinstance(spec, FloatSpec):
            help_text = f"{english(spec.help)} [{spec.minimum:g}-{spec.maximum:g}]"
            group.add_argument(spec.flag, dest=spec.key, type=float, default=None, metavar="X", help=help_text)
        elif isinstance(spec, ChoiceSpec):
            group.add_argument(spec.flag, dest=spec.key, choices=spec.choices, default=None, help=spec.help)
        elif isinstance(spec, BoolSpec):
            group.add_argument(
                spec.flag, dest=spec.key, action=argparse.BooleanOptionalAction, default=None, help=spec.help
            )
        else:  # text in the form its declaration checks (a tensor split "3,1")
            group.add_argument(spec.flag, dest=spec.key, default=None, metavar="TEXT", help=spec.help)


def given_values(args: argparse.Namespace, specs: Iterable[Spec[Any]]) -> dict[str, Any]:
    return {s.key: getattr(args, s.key) for s in specs if getattr(args, s.key, None) is not None}


def add_sizing_flags(parser: argparse.ArgumentParser) -> None:
    add_spec_flags(parser.add_argument_group("load settings"), LOAD_SPECS)


def settings_from_args(args: argparse.Namespace) -> LoadSettings:
    from gui.services.system import physical_cores

    return default_settings(physical_cores()).with_values(**given_values(args, LOAD_SPECS)).validated()


def add_sampling_flags(parser: argparse.ArgumentParser) -> None:
    add_spec_flags(parser.add_argument_group("sampling"), specs_of(Sampling))


def sampling_from_args(args: argparse.Namespace) -> Sampling:
    return Sampling(**given_values(args, specs_of(Sampling))).validated()


def add_simulate_flag(parser: Any, purpose: str, *, several: bool = False) -> None:
    """`--simulate CARD`, the same for every command: ``purpose`` says what the card is for there; with
    ``several`` it may be given more than once, one simulated card each (GPU 0, 1, ... in that order)."""
    if several:
        parser.add_argument(
            "--simulate",
            action="append",
            default=None,
            metavar="CARD",
            help=f"{purpose}; give it again for several cards, e.g. --simulate p40 --simulate p40 ({', '.join(CARDS)})",
        )
    else:
        parser.add_argument("--simulate", default=None, metavar="CARD", help=f"{purpose} ({', '.join(CARDS)})")


def simulated_cards(args: argparse.Namespace) -> tuple[Card, ...]:
    """The cards a repeatable `--simulate` named, in order (at most MAX_DEVICES); an unknown one is a
    ValueError with the known cards."""
    names = args.simulate or []
    if len(names) > MAX_DEVICES:
        raise ValueError(f"--simulate: at most {MAX_DEVICES} cards (got {len(names)})")
    try:
        return tuple(find_card(name) for name in names)
    except UnknownCardError as exc:
        raise ValueError(english_error(exc)) from exc


def simulated_card(args: argparse.Namespace) -> Card | None:
    """The card `--simulate` named; an unknown one is a ValueError with the known cards."""
    try:
        return find_card(args.simulate) if args.simulate else None
    except UnknownCardError as exc:
        raise ValueError(english_error(exc)) from exc


# ---- list-valued sizing flags (benchmark sweeps) ------------------------------------------------


# Settings a sweep does not vary: RPC servers are a comma list already, and a benchmark measures this machine.
NOT_SWEPT = frozenset({"rpc_servers"})


def add_sizing_list_flags(parser: argparse.ArgumentParser) -> None:
    """The sizing flags of add_sizing_flags, each taking a comma-separated list (``--ngl 40,48,999
    --flash-attn on,off --mmap on,off``); a BoolSpec's ``--no-FLAG`` stays as a shorthand for ``FLAG off``.
    Values are read as text and checked by :func:`sizing_lists_from_args`, so a bad one is one line."""
    group = parser.add_argument_group("load settings (each a comma-separated list: every combination is run)")
    for spec in LOAD_SPECS:
        if not spec.flag or spec.key in NOT_SWEPT:
            continue
        if isinstance(spec, IntSpec):
            metavar, help_text = "N[,N...]", f"{english(spec.help)} [{spec.minimum}-{spec.maximum}]"
        elif isinstance(spec, FloatSpec):
            metavar, help_text = "X[,X...]", f"{english(spec.help)} [{spec.minimum:g}-{spec.maximum:g}]"
        elif isinstance(spec, ChoiceSpec):
            metavar, help_text = "T[,T...]", f"{english(spec.help)} [{', '.join(spec.choices)}]"
        elif isinstance(spec, BoolSpec):
            metavar, help_text = "on|off[,...]", f"{english(spec.help)} [on, off]"
        else:  # text (a tensor split): its own commas would split the list, so "/" separates within one value
            metavar, help_text = "A/B[,A/B...]", f"{english(spec.help)} In a list, write one split as 3/1."
        group.add_argument(spec.flag, dest=spec.key, default=None, metavar=metavar, help=help_text)
        if isinstance(spec, BoolSpec):
            group.add_argument(
                "--no-" + spec.flag.removeprefix("--"), dest=spec.key, action="store_const", const="off",
                help=argparse.SUPPRESS,
            )  # fmt: skip


def sizing_lists_from_args(args: argparse.Namespace) -> dict[str, list[Any]]:
    """The value lists given on the command line, by setting key (settings not given are absent)."""
    return {s.key: parse_value_list(s, text) for s in LOAD_SPECS if (text := getattr(args, s.key, None)) is not None}
