"""One reading of one GPU, the type both the NVML service and the simulated card produce.

It lives in core (not next to NVML) because the simulator is core and must not import services. Every
reading is optional: None means "no value" (the chart draws a gap, text shows "n/a"), and `errors` says
why in words, keyed by the field name. The numeric readings are declared in gui/core/telemetry_fields.py;
those declared after this class's attributes are kept in `readings`, and `value(name)` gives either kind.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from gui.core.telemetry_fields import READINGS
from gui.core.words import Text

# Clock-event ("throttle") reasons in words. The NVML service decodes NVML's bitmask into these, the
# simulator reports them directly, and the UI can match on them without knowing NVML's bits.
IDLE = "idle"
APPLICATION_CLOCKS = "application clocks"
POWER_CAP = "power cap"
HW_SLOWDOWN = "HW slowdown"
SYNC_BOOST = "sync boost"
THERMAL_SLOWDOWN = "thermal slowdown"
HW_THERMAL_SLOWDOWN = "HW thermal slowdown"
HW_POWER_BRAKE = "HW power brake"
DISPLAY_CLOCKS = "display clocks"


@dataclass(frozen=True)
class GpuProcess:
    pid: int
    name: str | None  # None where the OS or NVML would not tell us
    used_mib: float | None  # None where the driver does not account per process (e.g. WDDM)


@dataclass(frozen=True)
class GpuSample:
    index: int
    timestamp: float  # time.monotonic() seconds when the sample was taken
    name: str | None = None
    temperature_c: float | None = None
    slowdown_c: float | None = None  # the driver starts cutting clocks here
    shutdown_c: float | None = None  # the card turns itself off here
    power_w: float | None = None
    power_limit_w: float | None = None  # enforced: what the driver holds the card to right now
    power_min_w: float | None = None  # constraints a power cap must respect
    power_max_w: float | None = None
    power_default_w: float | None = None
    gpu_util_pct: float | None = None
    mem_util_pct: float | None = None  # memory controller busy time, not capacity
    memory_used_mib: float | None = None
    memory_free_mib: float | None = None
    memory_total_mib: float | None = None
    sm_clock_mhz: float | None = None
    mem_clock_mhz: float | None = None
    fan_pct: float | None = None
    pstate: int | None = None  # 0 (max performance) .. 15 (min)
    throttle_reasons: tuple[str, ...] | None = None  # () = running free; None = unknown
    ecc_corrected: int | None = None  # volatile: since the driver loaded
    ecc_uncorrected: int | None = None
    pcie_gen: int | None = None
    pcie_width: int | None = None
    pcie_gen_max: int | None = None
    pcie_width_max: int | None = None
    processes: tuple[GpuProcess, ...] | None = None
    lost: bool = False  # the GPU fell off the bus during this sample
    simulated: bool = False  # from the simulated card, to be labelled SIMULATED
    # A GPU of another machine, read from its Prometheus exporter (gui/services/gpu_exporter.py): that machine's
    # name and the GPU's number there ("0", or "0:1" for a MIG slice). None for this machine's GPUs. Such a GPU
    # is only watched: its power cap is that machine's business.
    host: str | None = None
    host_gpu: str | None = None
    errors: Mapping[str, Text] = field(default_factory=dict)  # field name -> why it has no value
    # The declared readings without an attribute of their own, by name (absent or None: no value).
    readings: dict[str, float | int | None] = field(default_factory=dict)

    @classmethod
    def of(cls, values: Mapping[str, float | int | None], **identity: Any) -> GpuSample:
        """A sample from declared readings by name (each to its attribute, or else to `readings`) and the
        other fields (index, timestamp, name, flags, errors...)."""
        own: dict[str, Any] = {name: value for name, value in values.items() if name in _ATTRIBUTES}
        rest = {name: value for name, value in values.items() if name not in _ATTRIBUTES}
        return cls(**own, **identity, readings=rest)

    @property
    def remote(self) -> bool:
        return self.host is not None

    def value(self, name: str) -> float | int | None:
        """A declared reading (gui/core/telemetry_fields.py), attribute or not; None: no value."""
        value: float | int | None = getattr(self, name) if name in _ATTRIBUTES else self.readings.get(name)
        return value

    def series(self) -> dict[str, float]:
        """The numeric readings a chart or CSV row plots, with NaN for "no value" (a gap)."""
        return {name: _nan_if_none(self.value(name)) for name in SERIES_FIELDS}


def _nan_if_none(value: float | int | None) -> float:
    return math.nan if value is None else float(value)


# The numeric readings in declaration order: the columns of ring buffers and of the CSV log.
SERIES_FIELDS: tuple[str, ...] = tuple(r.name for r in READINGS)
_ATTRIBUTES = frozenset(f.name for f in fields(GpuSample)) & frozenset(SERIES_FIELDS)
