"""`tightfit power-sweep MODEL [--caps LIST] [--loss PCT] [--simulate CARD] [--tokens N] [--json]`: decode speed,
power, heat and clocks at a list of power caps, and the lowest cap within a chosen loss of the best speed.

Caps are checked against the card's constraints before anything starts; a real card is capped through the
privileged helper (as the window's Cap button does), a simulated one by its own physics while the real
engine decodes. The card is put back at the limit it had when the sweep ends, is stopped (Ctrl+C keeps
the caps measured so far) or fails, and by a watchdog process if this one is killed.

Exit status: 0 when every cap was measured and the limit restored, 1 otherwise (partial, or not restored).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import signal
import sys
from collections.abc import Iterator
from pathlib import Path
from types import FrameType
from typing import Any

from gui.commands.flags import add_simulate_flag, simulated_card
from gui.core import protocol as p
from gui.core.params import LoadSettings
from gui.core.power_sweep import (
    DEFAULT_LOSS_PCT,
    LIST_EXAMPLE,
    SIMULATED_NOTE,
    CapLimits,
    SweepResult,
    SweepRow,
    check_loss,
    default_caps,
    parse_caps,
    row_cells,
    table_header,
)
from gui.core.words import english, english_error
from gui.services.engine_client import EngineUnavailable, SyncEngine
from gui.services.models import describe_file
from gui.services.power_limit import HELPER_PATH, PowerLimiter
from gui.services.power_sweep import (
    DEFAULT_MEASURE_S,
    REAL_CARD_WARMUP_S,
    EngineDecoder,
    EngineFeed,
    PowerSweep,
    SweepError,
    SweepProgress,
    Workload,
    default_warmup_s,
)
from gui.services.telemetry import GpuSource

__all__ = ["add_power_sweep_parser", "format_table", "run_power_sweep"]

LOAD_TIMEOUT_S = 600


def add_power_sweep_parser(sub: Any, add_sizing_flags: Any) -> None:
    parser = sub.add_parser(
        "power-sweep",
        help="measure decode speed, power, heat and clocks at a list of power caps, and recommend one",
        description="At each cap (highest first) decode a fixed workload, discard the warm-up, measure; print a "
        "row per cap and the lowest cap within --loss of the best speed. The card's limit is restored at the end.",
    )
    parser.add_argument("model", type=Path, metavar="MODEL.gguf")
    parser.add_argument(
        "--caps",
        default=None,
        metavar="LIST",
        help=f"caps in whole watts, e.g. {english(LIST_EXAMPLE)} "
        "(default: 5 steps from the card's minimum to its default)",
    )
    parser.add_argument(
        "--loss",
        type=float,
        default=DEFAULT_LOSS_PCT,
        metavar="PCT",
        help=f"speed the recommended cap may cost against the best, in percent (default {DEFAULT_LOSS_PCT:g})",
    )
    add_simulate_flag(parser, "sweep a simulated card: its physics, with the engine decoding for real")
    parser.add_argument("--gpu", type=int, default=0, metavar="N", help="the GPU to sweep, as NVML numbers them")
    parser.add_argument(
        "--tokens",
        type=int,
        default=None,
        metavar="N",
        help="tokens measured at each cap after the warm-up (default: measure --seconds)",
    )
    parser.add_argument(
        "--seconds",
        type=float,
        default=DEFAULT_MEASURE_S,
        metavar="S",
        help=f"seconds measured at each cap after the warm-up (default {DEFAULT_MEASURE_S:g})",
    )
    parser.add_argument(
        "--warmup",
        type=float,
        default=None,
        metavar="S",
        help=f"seconds decoded and discarded at each cap while power, clocks and heat settle (default "
        f"{REAL_CARD_WARMUP_S:g}; three thermal time constants on a simulated card)",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    add_sizing_flags(parser)


def run_power_sweep(args: argparse.Namespace, settings: LoadSettings) -> int:
    """Bad input is a ValueError (one line, exit 2, from gui.cli); what fails once running exits 1."""
    model: Path = args.model
    if not model.is_file():
        raise ValueError(f"no such model file: {model}")
    entry = describe_file(model)
    if entry.error:
        raise ValueError(entry.error)
    loss = check_loss(args.loss)
    if args.gpu < 0:
        raise ValueError(f"--gpu must be 0 or more (got {args.gpu})")
    card = simulated_card(args)
    source, limiter, name = _card(args.gpu, card.key if card is not None else None)
    warmup = args.warmup if args.warmup is not None else default_warmup_s(source, 0 if card else args.gpu)
    workload = Workload(warmup, args.seconds, args.tokens).validated()
    index = 0 if card is not None else args.gpu
    try:
        limits = CapLimits.from_sample(source.sample(index))
    except ValueError as exc:
        raise SystemExit(f"tightfit: error: GPU {index} ({name}): {english_error(exc)}") from exc
    caps = parse_caps(args.caps, limits) if args.caps is not None else default_caps(limits)
    not_ready = limiter.readiness()  # after the caps: a mistyped list is said first, whatever the machine
    if not_ready:
        raise SystemExit(f"tightfit: error: {english(not_ready)}")
    order = ", ".join(map(str, sorted(caps, reverse=True)))
    _say(f"{name}: caps {order} W ({english(limits.describe())}); {english(workload.describe())}")

    try:
        with SyncEngine() as engine:
            engine.client.load(model, settings)
            engine.expect(p.Loaded, LOAD_TIMEOUT_S)
            decoder = EngineDecoder(engine.client, EngineFeed(engine.events))
            sweep = PowerSweep(source=source, limiter=limiter, decoder=decoder, index=index, workload=workload)
            with _stop_on_signals(sweep):
                result = sweep.run(caps, on_row=_say_row, on_progress=_PhaseLines(), loss_pct=loss)
    except SweepError as exc:
        raise SystemExit(f"tightfit: error: {english_error(exc)}") from exc
    except EngineUnavailable as exc:
        raise SystemExit(f"tightfit: error: {english_error(exc)}") from exc

    if args.json:
        document = {
            "model": str(model),
            "gpu": index,
            "card": name,
            "limits": {"min_w": limits.min_w, "max_w": limits.max_w, "default_w": limits.default_w},
            "workload": {"warmup_s": workload.warmup_s, "measure_s": workload.measure_s, "tokens": workload.tokens},
            "settings": settings.to_dict(),
            **result.to_dict(),
        }
        json.dump(document, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        print(format_table(result, name, index, limiter.helper))
    return 0 if not result.partial and result.restored else 1


def _card(gpu: int, simulate: str | None) -> tuple[GpuSource, PowerLimiter, str]:
    """Where samples come from and how caps are applied: the simulated card, or NVML and the helper."""
    if simulate is not None:
        from gui.core.simulated_gpu import SimulatedGpu
        from gui.services.telemetry import SimulatedSource

        simulated = SimulatedGpu(simulate)
        limiter = PowerLimiter(simulators={0: simulated})
        return SimulatedSource([simulated]), limiter, f"{simulated.profile.name} (SIMULATED)"
    from gui.services.nvml import Nvml

    nvml = Nvml()
    count, why = nvml.device_count()
    if not count:
        why = why or "NVML found none"
        raise SystemExit(
            f"tightfit: error: no NVIDIA GPU to sweep ({english(why)}); --simulate CARD sweeps a simulated one"
        )
    if gpu >= count:
        raise ValueError(f"--gpu {gpu}: this machine has {count} GPU{'s' if count > 1 else ''} (0-{count - 1})")
    limiter = PowerLimiter(nvml=nvml)
    sample = nvml.sample(gpu)
    return nvml, limiter, f"GPU {gpu} {sample.name or ''}".strip()


@contextlib.contextmanager
def _stop_on_signals(sweep: PowerSweep) -> Iterator[None]:
    """Ctrl+C (or SIGTERM) stops the sweep in order: rows kept, limit restored, table printed. A second one
    interrupts at once (the limit is still restored, by the sweep's own clean-up)."""

    def stop(signum: int, _frame: FrameType | None) -> None:
        _say("stopping: the cap under way is dropped, the limit restored (again to interrupt at once)")
        sweep.stop()
        signal.signal(signum, previous[signal.Signals(signum)])

    previous = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    for sig in previous:
        signal.signal(sig, stop)
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


class _PhaseLines:
    """One stderr line per cap and phase (the sweep reports progress about once a second)."""

    def __init__(self) -> None:
        self.last: tuple[int, str] | None = None

    def __call__(self, progress: SweepProgress) -> None:
        if self.last == (progress.position, progress.phase):
            return
        self.last = (progress.position, progress.phase)
        words = {"capping": "applying the cap", "warm-up": "warming up", "measuring": "measuring"}[progress.phase]
        _say(f"{progress.cap_w} W ({progress.position + 1}/{progress.count}): {words}")


def _say_row(row: SweepRow) -> None:
    power = f"{row.mean_power_w:.1f} W" if row.mean_power_w is not None else "power n/a"
    _say(f"{row.cap_w} W: {row.tok_s:.1f} tok/s, {power}")


def format_table(result: SweepResult, name: str, index: int, helper: Path = HELPER_PATH) -> str:
    best = max((row.tok_s for row in result.rows), default=0.0)
    header = [english(word) for word in table_header(result.simulated)]
    lines = [header, *([english(cell) for cell in row_cells(row, best, result.simulated)] for row in result.rows)]
    widths = [max(len(line[i]) for line in lines) for i in range(len(header) - 1)]
    text = [
        "  ".join([*(cell.rjust(width) for cell, width in zip(line[:-1], widths, strict=True)), line[-1]])
        for line in lines
    ]
    out = [f"Power-cap sweep of {name}", *text, ""]
    if result.simulated:
        out.append(english(SIMULATED_NOTE))
    if result.partial:
        out.append(
            f"Partial: {len(result.rows)} of {len(result.caps)} caps measured ({english(result.reason or 'stopped')})."
        )
    if result.recommendation is not None:
        out.append(f"Recommended cap: {english(result.recommendation.message)}.")
    else:
        out.append("No recommendation: no cap was measured.")
    out.append(english(result.restore_message) + ".")
    if result.recommendation is not None and not result.simulated:
        out.append(
            f"To keep it: the Cap button in the window's Monitor tab, or "
            f"`pkexec {helper} {index} {result.recommendation.cap_w}`; packaging/README.md keeps it across reboots."
        )
    return "\n".join(out)
