"""One telemetry tick: every sampled GPU and the host at one moment, as the telemetry service delivers it.

These types live in core so that the chart history and the CSV format, both pure, can take ticks whole.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from gui.core.gpu_sample import GpuSample
from gui.core.words import Text

__all__ = ["HostSample", "Tick"]


@dataclass(frozen=True)
class HostSample:
    timestamp: float
    cpu_pct: tuple[float, ...]  # one per logical core
    ram_used_mib: float
    ram_total_mib: float
    swap_used_mib: float
    swap_total_mib: float


@dataclass(frozen=True)
class Tick:
    gpus: tuple[GpuSample, ...]
    host: HostSample
    status: Text = ""  # why there are no GPU readings (no driver, ...), in words; '' when there are
    engine_tok_s: float = math.nan  # the engine's generation rate when the tick was taken; NaN: never reported
