"""`tightfit doctor [MODEL.gguf] [--simulate CARD] [--json] [sizing flags]`: what is wrong with this machine
for running big models on an old card, each finding with its numbers, why it matters, and the fix.

Exit status: 0 when every check is ok (or could not be made here), 1 with warnings, 2 with failures, so a
script can gate on it. The installed engine is asked what it was built for by starting it once, as a chat
does; the load settings are the flags' (the defaults otherwise), checked as given, so a combination the
engine would refuse is reported rather than rejected.
"""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

from gui.commands.flags import add_simulate_flag, given_values, simulated_card
from gui.core.cards import Card
from gui.core.doctor import STATUS_WORDS, Check, DoctorFacts, Status, by_severity, exit_code, run_checks, summary, worst
from gui.core.params import LOAD_SPECS, LoadSettings, default_settings
from gui.core.protocol import EngineBuild
from gui.core.words import Text, english, english_error

__all__ = ["add_doctor_parser", "format_checks", "run_doctor"]

HELLO_TIMEOUT_S = 120.0


class _OneLineErrors(argparse.ArgumentParser):
    """A mistyped flag is one line on stderr, like every other mistake the command reports, so a script or
    the window can show it as it is. (Unknown flags are caught here, not left to the top-level parser,
    which would print its whole usage.)"""

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        parsed, extras = super().parse_known_args(args, namespace)
        if extras:
            self.error(f"unrecognized arguments: {' '.join(extras)}")
        return parsed, extras

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"tightfit doctor: error: {message}\n")


def add_doctor_parser(sub: Any, add_sizing_flags: Any) -> None:
    parser = sub.add_parser(
        "doctor",
        help="check this machine for big models on an old card: each finding with its evidence, why, and the fix",
    )
    parser.__class__ = _OneLineErrors  # subparsers are made by the top-level parser's class
    parser.add_argument(
        "model",
        nargs="?",
        type=Path,
        default=None,
        metavar="MODEL.gguf",
        help="also check the settings against this model: its trained context, head sizes, weights left in RAM",
    )
    add_simulate_flag(parser, "check as if this card were in the machine, with a plausible driver")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    add_sizing_flags(parser)


def fail(message: str) -> SystemExit:
    return SystemExit(f"tightfit doctor: error: {message}")


def run_doctor(args: argparse.Namespace) -> int:
    settings = settings_as_given(args)
    try:
        card = simulated_card(args)
    except ValueError as exc:
        raise fail(english_error(exc)) from exc
    if args.model is not None and not Path(args.model).is_file():
        raise fail(f"no such model file: {args.model}")
    checks = run_checks(collect(settings, card, args.model))
    if args.json:
        data = {
            "status": str(worst(checks)),
            "simulated": card.name if card is not None else None,
            "checks": [check.as_json() for check in checks],
        }
        json.dump(data, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        print(format_checks(checks, card))
    return exit_code(checks)


def settings_as_given(args: argparse.Namespace) -> LoadSettings:
    """The flags over the defaults, each checked against its range, but not against each other: a micro-batch
    above the batch is a finding to report, not a mistake to refuse."""
    from gui.services.system import physical_cores

    settings = default_settings(physical_cores()).with_values(**given_values(args, LOAD_SPECS))
    try:
        for spec in LOAD_SPECS:
            spec.check(getattr(settings, spec.key))
    except ValueError as exc:
        raise fail(english_error(exc)) from exc
    return settings


def collect(settings: LoadSettings, card: Card | None, model: Path | None) -> DoctorFacts:
    """Every fact, from this machine (or the simulated card), the installed engine and the model."""
    from gui.services.doctor_facts import gather_facts, rebuild_route

    build, build_error = installed_engine()
    route_command, route_help = rebuild_route(card)
    n_ctx_train = host_weights = heads = None
    if model is not None:
        n_ctx_train, heads, host_weights = model_facts(model, settings, card, build)
    return gather_facts(
        settings,
        n_ctx_train=n_ctx_train,
        host_weights_mib=host_weights,
        attn_heads=heads,
        build=build,
        build_error=build_error,
        route_command=route_command,
        route_help=route_help,
        simulate=card.key if card is not None else None,
    )


def installed_engine() -> tuple[EngineBuild | None, str]:
    """What the installed llama.cpp was built for, from one started engine worker; or why it would not start."""
    from gui.services.engine_client import EngineUnavailable
    from gui.services.engine_facts import installed_build

    try:
        return installed_build(HELLO_TIMEOUT_S), ""
    except (EngineUnavailable, OSError) as exc:
        return None, f"the engine would not start: {english_error(exc)}"


def model_facts(
    model: Path, settings: LoadSettings, card: Card | None, build: EngineBuild | None
) -> tuple[int | None, frozenset[tuple[int, int, int]] | None, float | None]:
    """(trained context, attention head sizes, MiB of weights left in host memory) from the header alone."""
    from gui.core.gguf_reader import GGUFError, read_model
    from gui.core.planner import model_shape, plan
    from gui.services.devices import device_from_card, device_from_gpu
    from gui.services.nvml import Nvml

    try:
        header = read_model(model)
        shape = model_shape(header)
    except (GGUFError, ValueError) as exc:
        raise fail(english_error(exc)) from exc
    if build is not None and not build.gpu_offload:
        devices = []  # this engine ignores GPU layers: every weight stays in host memory
    elif card is not None:
        devices = [device_from_card(card)]
    else:
        devices = [device_from_gpu(g) for g in Nvml().query_gpus().gpus]
    try:
        host = plan(header, settings, devices, suggest=False).host.weights_mib
    except ValueError:
        host = None  # settings the planner refuses are reported by their own checks
    return header.context_length, shape.attn_heads, host


def format_checks(checks: Sequence[Check], card: Card | None = None) -> str:
    """One block per check, worst first, then the count of each status."""
    blocks = []
    if card is not None:
        blocks.append(f"SIMULATED {card.name}: the GPU and driver facts are made up; the rest is this machine.\n")
    for check in by_severity(tuple(checks)):
        lines = [f"{STATUS_WORDS[check.status]:<4}  {check.title}  [{check.id}]"]
        lines += _wrapped(check.evidence)
        if check.status in (Status.WARN, Status.FAIL):
            lines += _wrapped(f"Why: {english(check.why)}")
            fix = check.fix
            if fix is not None:
                lines += _wrapped(f"Fix: {english(fix.words)}")
                if fix.command:
                    lines += [f"      $ {line}" for line in fix.command.splitlines()]
                if fix.action:
                    lines.append("      (The window's Doctor tab does this with one click.)")
        blocks.append("\n".join(lines))
    return "\n".join([*blocks, summary(tuple(checks))])


def _wrapped(text: Text) -> list[str]:
    """Words wrapped to the terminal's usual width; indented lines (commands to copy) kept whole."""
    lines: list[str] = []
    for paragraph in text.splitlines() or [""]:
        if paragraph[:1].isspace():
            lines.append("      " + paragraph)
            continue
        wrapped = textwrap.wrap(
            paragraph, width=100, initial_indent="      ", subsequent_indent="      ", break_on_hyphens=False
        )
        lines += wrapped or [""]
    return lines
