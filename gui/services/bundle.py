"""Everything the window talks to outside itself, in one object the composition root (gui/app.py)
builds and hands to the widgets; tests build it with their own parts (a fake engine, fake NVML)."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gui.core.cards import Card
from gui.core.doctor import Check
from gui.core.gguf_reader import GGUFHeader
from gui.core.gpu_sample import GpuSample
from gui.core.params import LoadSettings
from gui.core.planner import Plan, model_shape
from gui.core.protocol import EngineBuild
from gui.core.words import english_error
from gui.services.engine_client import EngineClient
from gui.services.history import HistoryStore
from gui.services.hub import HubClient
from gui.services.journey import JourneyStore
from gui.services.library import Library
from gui.services.nvml import GpuQuery, Nvml
from gui.services.power_limit import PowerLimiter
from gui.services.settings_store import SettingsStore
from gui.services.system import measure_ram_bandwidth_gbs
from gui.services.telemetry import DEFAULT_INTERVAL_S, GpuSource, SimulatedSource, TelemetryService

__all__ = ["DoctorRequest", "GpuServices", "Services"]


@dataclass
class GpuServices:
    """What the monitor reads and acts on: NVML or a simulated card, the telemetry thread that samples
    it, and the power limiter (a privileged helper, or the simulator's own knob)."""

    nvml: Nvml  # queries and read-back of the enforced limit
    telemetry: TelemetryService
    limiter: PowerLimiter
    clock: Callable[[], float] = time.monotonic  # the telemetry clock; tests step a fake one

    @property
    def source(self) -> GpuSource:
        return self.telemetry.source

    @property
    def simulated(self) -> SimulatedSource | None:
        source = self.telemetry.source
        return source if isinstance(source, SimulatedSource) else None

    @classmethod
    def create(
        cls,
        source: GpuSource | None = None,
        *,
        nvml: Nvml | None = None,
        interval_s: float = DEFAULT_INTERVAL_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> GpuServices:
        """For ``source`` (default: NVML). A simulated card is capped through the simulator, no privileges."""
        nvml = nvml or (source if isinstance(source, Nvml) else Nvml())
        source = source if source is not None else nvml
        if isinstance(source, SimulatedSource):
            limiter = PowerLimiter(simulators=dict(enumerate(source.gpus)))
        else:
            limiter = PowerLimiter(nvml=nvml)
        telemetry = TelemetryService(source=source, interval_s=interval_s, clock=clock)
        return cls(nvml, telemetry, limiter, clock)


@dataclass(frozen=True)
class DoctorRequest:
    """What only the window knows when the Doctor runs, as it stands: the settings of the load (or the sliders),
    the loaded (or selected) model's header, the plan, the running engine's build and process, and the
    monitor's latest readings. ``known_facts`` derives the Doctor's facts from them: a check that needs
    another fact of the window adds its line there."""

    settings: LoadSettings
    header: GGUFHeader | None = None
    plan: Plan | None = None
    build: EngineBuild | None = None
    engine_pid: int | None = None
    recent: Mapping[int, Sequence[GpuSample]] = field(default_factory=dict)  # the monitor's latest readings

    def known_facts(self) -> dict[str, Any]:
        """The DoctorFacts fields the window supplies (gather_facts reads the rest from the machine)."""
        header = self.header
        heads = None
        if header is not None:
            with contextlib.suppress(ValueError):  # a header the planner cannot read has no heads to check
                heads = model_shape(header).attn_heads
        return {
            "settings": self.settings,
            "n_ctx_train": header.context_length if header is not None else None,
            "host_weights_mib": self.plan.host.weights_mib if self.plan is not None else None,
            "attn_heads": heads,
        }


def _no_doctor(_request: DoctorRequest) -> tuple[Check, ...]:
    return ()


def doctor_checks(request: DoctorRequest, simulated: Card | None = None, nvml: Nvml | None = None) -> tuple[Check, ...]:
    """Every check of the Doctor for what the window knows, from this machine (or the simulated card):
    the set-up's own plan for the rebuild command, NVML, sysfs, the power helper. Blocking."""
    from gui.core.doctor import run_checks
    from gui.core.words import words
    from gui.services.doctor_facts import gather_facts, rebuild_route

    route_command, route_help = rebuild_route(simulated)
    facts = gather_facts(
        known=request.known_facts(),
        build=request.build,
        build_error="" if request.build is not None else words("the engine has not started"),
        route_command=route_command,
        route_help=route_help,
        engine_pid=request.engine_pid,
        recent=request.recent,
        simulate=simulated.key if simulated is not None else None,
        nvml=nvml,
    )
    return run_checks(facts)


@dataclass
class Services:
    models_dir: Path  # the default models folder (the library may scan more)
    engine: EngineClient
    gpu: GpuServices
    library: Library
    history: HistoryStore
    settings: SettingsStore
    hub: HubClient
    journey: JourneyStore  # every load, reply speed and benchmark row, for the Journey tab
    simulated: tuple[Card, ...] = ()  # --simulate (once per card): planned for and watched, always labelled
    measure_ram: Callable[[], float | None] = measure_ram_bandwidth_gbs
    # Every check of the Doctor for a request (blocking: NVML, sysfs, nvcc, pkexec; off the UI thread).
    doctor: Callable[[DoctorRequest], tuple[Check, ...]] = _no_doctor

    def query_gpus(self) -> GpuQuery:
        """The GPUs the plan can be for (blocking: NVML may be slow; call it off the UI thread)."""
        try:
            return self.gpu.nvml.query_gpus()
        except Exception as exc:  # a binding error NVML itself does not map: no GPU, said in words
            return GpuQuery((), f"NVML failed: {english_error(exc)}")
