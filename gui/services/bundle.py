"""Everything the window talks to outside itself, in one object the composition root (gui/app.py)
builds and hands to the widgets; tests build it with their own parts (a fake engine, fake NVML)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from gui.core.cards import Card
from gui.services.engine_client import EngineClient
from gui.services.hub import HubClient
from gui.services.history import HistoryStore
from gui.services.library import Library
from gui.services.nvml import GpuQuery, Nvml
from gui.services.power_limit import PowerLimiter
from gui.services.settings_store import SettingsStore
from gui.services.system import measure_ram_bandwidth_gbs
from gui.services.telemetry import GpuSource

__all__ = ["Services"]


@dataclass
class Services:
    models_dir: Path  # the default models folder (the library may scan more)
    engine: EngineClient
    nvml: Nvml
    gpu_source: GpuSource  # NVML, or the simulated card the monitor reads
    limiter: PowerLimiter
    library: Library
    history: HistoryStore
    settings: SettingsStore
    hub: HubClient
    simulated: Card | None = None  # --simulate: planned for and watched, always labelled
    measure_ram: Callable[[], float | None] = measure_ram_bandwidth_gbs

    def query_gpus(self) -> GpuQuery:
        """The GPUs the plan can be for (blocking: NVML may be slow; call it off the UI thread)."""
        try:
            return self.nvml.query_gpus()
        except Exception as exc:  # a binding error NVML itself does not map: no GPU, said in words
            return GpuQuery((), f"NVML failed: {exc}")
