"""Every numeric reading of a GPU, declared once: what it is, how NVML gives it, how the monitor shows it and how
the simulated card models it.

A `Reading`'s name is its GpuSample attribute (or key of `GpuSample.readings`), its series in the telemetry
history and its CSV column (``gpu0_fan_pct``). Everything else follows the declarations:

- gui/services/nvml.py reads each reading with its `NvmlCall`; NotSupported, NoPermission or a function the
  driver lacks leaves it without a value (None, drawn as a gap), the reason in words in `GpuSample.errors`;
- gui/core/gpu_sample.py gives the series in declaration order (`SERIES_FIELDS`), gui/core/telemetry_csv.py the
  CSV's GPU columns: the `FIRST_READINGS` and the throttle, lost and simulated columns where they always were,
  then the `ADDED_READINGS` after every older column, so a log's old columns keep their places;
- gui/ui/monitor.py shows a `Readout` as a row of its own, gui/ui/charts.py a `Curve` in its `ChartGroup`, whose
  `YRange` it follows; gui/core/telemetry_history.py keeps minute envelopes of the charted readings;
- gui/core/simulated_gpu.py reports `Reading.simulated` of its state (None: the card has no such reading);
- tests/fake_nvml.py answers a declared function from a fake GPU's readings, checked against pynvml's signature.

The pynvml functions and constants are named as pynvml names them, so this module needs no pynvml. Titles and
labels are English here and translated where the window shows them: ``mark(text, "monitor")`` marks the monitor's,
``mark(text, "charts")`` the charts' (gui/core/words.py); bench/i18n_extract.py collects both.

A new reading is one `Reading` at the end of `ADDED_READINGS`, and the translation of its words.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gui.core.words import mark

if TYPE_CHECKING:
    from gui.core.simulated_gpu import SimulatedGpu

__all__ = [
    "ADDED_READINGS",
    "CHARTED",
    "CHART_GROUPS",
    "FIRST_READINGS",
    "READINGS",
    "ChartGroup",
    "Curve",
    "NvmlCall",
    "Reading",
    "Readout",
    "YRange",
    "reading",
]

_MIB = float(1 << 20)


@dataclass(frozen=True)
class NvmlCall:
    """How NVML gives a reading: ``function(handle, *args)``, with `args` pynvml constants named as pynvml names
    them. One call can give several readings (an item or attribute each): it is made once per sample."""

    function: str
    args: tuple[str, ...] = ()
    part: int | str | None = None  # an item (int) or attribute (str) of the answer; None: the answer itself
    per: float = 1.0  # NVML's units per the reading's unit: 1000 (mW per W), 2**20 (bytes per MiB)
    fallbacks: tuple[str, ...] = ()  # functions with the same arguments, tried in turn where one is missing
    unknown: str | None = None  # a pynvml constant NVML answers for "no value" (NVML_PSTATE_UNKNOWN)

    @property
    def functions(self) -> tuple[str, ...]:
        return (self.function, *self.fallbacks)


@dataclass(frozen=True)
class Readout:
    """A row of the monitor's readout: ``MonitorView.readout[key]``. Readings declared with the same readout share
    its row, their values one after the other ("12% / 0%")."""

    key: str
    title: str  # mark(..., "monitor")
    pattern: str  # the value's format: "{:.0f} °C"; a missing value reads "n/a"


@dataclass(frozen=True)
class YRange:
    """A chart's Y range, from known scales so the charts do not jump about: from `low` to a fixed `top`
    (percentages), or to the larger of `least` and the highest value drawn, times `headroom`, plus `margin`."""

    low: float = 0.0
    top: float | None = None
    least: float = 1.0  # in the chart's unit
    headroom: float = 1.0
    margin: float = 0.0

    def high(self, drawn: float) -> float:
        """The top for `drawn`, the highest value drawn in view (or marked on the chart, like a threshold)."""
        if self.top is not None:
            return self.top
        return max(self.least, drawn) * self.headroom + self.margin


@dataclass(frozen=True)
class ChartGroup:
    """One of the GPU charts: the readings whose `Curve` names it are its lines, in declaration order."""

    key: str
    title: str  # mark(..., "charts")
    unit: str  # as the chart shows its values (a curve's scale turns the reading's unit into it)
    y_range: YRange


@dataclass(frozen=True)
class Curve:
    """A reading's line in a GPU chart."""

    chart: str  # its ChartGroup's key
    label: str  # mark(..., "charts")
    level: bool = False  # a rarely changing limit: drawn dashed, as steps through its change points
    scale: float = 1.0  # reading × scale = plotted value (MiB → GiB)
    shared: bool = False  # drawn for every GPU when several share the charts (the main lines only)
    # (light, dark) for a reading the palettes of gui/core/theme.py have no colour for.
    colours: tuple[str, str] | None = None


@dataclass(frozen=True)
class Reading:
    name: str
    unit: str
    nvml: NvmlCall
    integer: bool = False  # a count or a number NVML gives whole (P-state, PCIe link); else a float
    readout: Readout | None = None  # a row of its own (rows that put several readings together are the monitor's)
    curve: Curve | None = None
    # What the simulated card reports, from its state; None (or no model) where such a card has no such reading.
    simulated: Callable[[SimulatedGpu], float | int | None] | None = None


# --- the GPU charts ------------------------------------------------------------------------------------------

CHART_GROUPS: tuple[ChartGroup, ...] = (
    # The alert and slowdown lines count as drawn: the chart always has room for them.
    ChartGroup("temperature", mark("Temperature", "charts"), "°C", YRange(low=20.0, least=90.0, margin=5.0)),
    ChartGroup("power", mark("Power", "charts"), "W", YRange(least=100.0, headroom=1.08)),
    ChartGroup("utilisation", mark("Utilisation", "charts"), "%", YRange(top=103.0)),
    ChartGroup("vram", mark("VRAM", "charts"), "GiB", YRange(least=1.0, headroom=1.08)),
    ChartGroup("clocks", mark("Clocks", "charts"), "MHz", YRange(least=500.0, headroom=1.1)),
)

_GIB = 1.0 / 1024.0


def _milliwatts(function: str, part: int | None = None) -> NvmlCall:
    return NvmlCall(function, part=part, per=1000.0)


def _memory(part: str) -> NvmlCall:
    return NvmlCall("nvmlDeviceGetMemoryInfo", part=part, per=_MIB)


def _ecc(kind: str) -> NvmlCall:
    return NvmlCall("nvmlDeviceGetTotalEccErrors", (f"NVML_MEMORY_ERROR_TYPE_{kind}", "NVML_VOLATILE_ECC"))


# --- the readings --------------------------------------------------------------------------------------------

# The readings of the CSV's first layout, in its column order. Never add here: a new reading goes at the end of
# ADDED_READINGS, so that every column a log already has keeps its place.
FIRST_READINGS: tuple[Reading, ...] = (
    Reading(
        "temperature_c",
        "°C",
        # The older call first: it works on every driver old cards run; the V form only on newer ones.
        NvmlCall("nvmlDeviceGetTemperature", ("NVML_TEMPERATURE_GPU",), fallbacks=("nvmlDeviceGetTemperatureV",)),
        readout=Readout("temperature", mark("Temp", "monitor"), "{:.0f} °C"),
        curve=Curve("temperature", mark("GPU", "charts"), shared=True),
        simulated=lambda gpu: round(gpu.temperature_c, 1),
    ),
    Reading(  # the driver starts cutting clocks here
        "slowdown_c",
        "°C",
        NvmlCall("nvmlDeviceGetTemperatureThreshold", ("NVML_TEMPERATURE_THRESHOLD_SLOWDOWN",)),
        simulated=lambda gpu: gpu.profile.slowdown_c,
    ),
    Reading(  # the card turns itself off here
        "shutdown_c",
        "°C",
        NvmlCall("nvmlDeviceGetTemperatureThreshold", ("NVML_TEMPERATURE_THRESHOLD_SHUTDOWN",)),
        simulated=lambda gpu: gpu.profile.shutdown_c,
    ),
    Reading(
        "power_w",
        "W",
        _milliwatts("nvmlDeviceGetPowerUsage"),
        readout=Readout("power", mark("Power", "monitor"), "{:.0f} W"),
        curve=Curve("power", mark("draw", "charts"), shared=True),
        simulated=lambda gpu: round(gpu.power_w, 2),
    ),
    Reading(  # enforced: what the driver holds the card to right now
        "power_limit_w",
        "W",
        _milliwatts("nvmlDeviceGetEnforcedPowerLimit"),
        readout=Readout("limit", mark("Limit", "monitor"), "{:.0f} W"),
        curve=Curve("power", mark("enforced limit", "charts"), level=True, shared=True),
        simulated=lambda gpu: gpu.power_limit_w,
    ),
    Reading(  # the constraints a power cap must respect
        "power_min_w",
        "W",
        _milliwatts("nvmlDeviceGetPowerManagementLimitConstraints", 0),
        simulated=lambda gpu: gpu.min_limit_w,
    ),
    Reading(
        "power_max_w",
        "W",
        _milliwatts("nvmlDeviceGetPowerManagementLimitConstraints", 1),
        simulated=lambda gpu: gpu.max_limit_w,
    ),
    Reading(
        "power_default_w",
        "W",
        _milliwatts("nvmlDeviceGetPowerManagementDefaultLimit"),
        simulated=lambda gpu: gpu.default_limit_w,
    ),
    Reading(
        "gpu_util_pct",
        "%",
        NvmlCall("nvmlDeviceGetUtilizationRates", part="gpu"),
        curve=Curve("utilisation", mark("GPU", "charts"), shared=True),
        simulated=lambda gpu: round(100.0 * gpu.load, 1),
    ),
    Reading(  # memory controller busy time, not capacity
        "mem_util_pct",
        "%",
        NvmlCall("nvmlDeviceGetUtilizationRates", part="memory"),
        curve=Curve("utilisation", mark("memory", "charts")),
        simulated=lambda gpu: round(90.0 * gpu.load, 1),  # decode keeps the memory controller nearly as busy
    ),
    Reading(
        "memory_used_mib",
        "MiB",
        _memory("used"),
        curve=Curve("vram", mark("used", "charts"), scale=_GIB, shared=True),
        simulated=lambda gpu: gpu.memory_used_mib,
    ),
    Reading("memory_free_mib", "MiB", _memory("free"), simulated=lambda gpu: gpu.total_mib - gpu.memory_used_mib),
    Reading(
        "memory_total_mib",
        "MiB",
        _memory("total"),
        curve=Curve("vram", mark("total", "charts"), level=True, scale=_GIB, shared=True),
        simulated=lambda gpu: gpu.total_mib,
    ),
    Reading(
        "sm_clock_mhz",
        "MHz",
        NvmlCall("nvmlDeviceGetClockInfo", ("NVML_CLOCK_SM",)),
        curve=Curve("clocks", mark("SM", "charts"), shared=True),
        simulated=lambda gpu: round(gpu.sm_clock_mhz()),
    ),
    Reading(
        "mem_clock_mhz",
        "MHz",
        NvmlCall("nvmlDeviceGetClockInfo", ("NVML_CLOCK_MEM",)),
        curve=Curve("clocks", mark("memory", "charts")),
        simulated=lambda gpu: gpu.profile.mem_mhz if gpu.in_use else gpu.profile.idle_mem_mhz,
    ),
    Reading(
        "fan_pct",
        "%",
        NvmlCall("nvmlDeviceGetFanSpeed"),
        readout=Readout("fan", mark("Fan", "monitor"), "{:.0f}%"),
        simulated=lambda gpu: gpu.fan_pct(),
    ),
    Reading(  # 0 (max performance) .. 15 (min)
        "pstate",
        "",
        NvmlCall("nvmlDeviceGetPerformanceState", unknown="NVML_PSTATE_UNKNOWN"),
        integer=True,
        readout=Readout("pstate", mark("P-state", "monitor"), "P{}"),
        simulated=lambda gpu: 0 if gpu.in_use else 8,
    ),
    Reading(  # volatile: since the driver loaded
        "ecc_corrected", "errors", _ecc("CORRECTED"), integer=True, simulated=lambda gpu: gpu.ecc_corrected()
    ),
    Reading(
        "ecc_uncorrected",
        "errors",
        _ecc("UNCORRECTED"),
        integer=True,
        simulated=lambda gpu: 0 if gpu.profile.has_ecc else None,
    ),
    Reading(
        "pcie_gen",
        "",
        NvmlCall("nvmlDeviceGetCurrPcieLinkGeneration"),
        integer=True,
        simulated=lambda gpu: gpu.profile.pcie_gen_max if gpu.busy else 1,  # links train down when idle
    ),
    Reading("pcie_width", "lanes", NvmlCall("nvmlDeviceGetCurrPcieLinkWidth"), integer=True, simulated=lambda _: 16),
    Reading(
        "pcie_gen_max",
        "",
        NvmlCall("nvmlDeviceGetMaxPcieLinkGeneration"),
        integer=True,
        simulated=lambda gpu: gpu.profile.pcie_gen_max,
    ),
    Reading("pcie_width_max", "lanes", NvmlCall("nvmlDeviceGetMaxPcieLinkWidth"), integer=True, simulated=lambda _: 16),
)

_VIDEO_ENGINES = Readout("codec", mark("Enc/dec", "monitor"), "{:.0f}%")

# Readings added since the CSV's first layout, oldest first: a new one goes at the end.
ADDED_READINGS: tuple[Reading, ...] = (
    # The video engines (NVENC, NVDEC), as nvidia-smi and nvitop show them: busy with a stream or a desktop
    # recorder beside the model, never with llama.cpp's own work. NVML answers [utilisation, sampling period µs];
    # a MIG-enabled GPU answers NotSupported.
    Reading(
        "encoder_util_pct",
        "%",
        NvmlCall("nvmlDeviceGetEncoderUtilization", part=0),
        readout=_VIDEO_ENGINES,
        curve=Curve("utilisation", mark("encoder", "charts"), colours=("#ad1457", "#f06292")),
        simulated=lambda _: 0.0,
    ),
    Reading(
        "decoder_util_pct",
        "%",
        NvmlCall("nvmlDeviceGetDecoderUtilization", part=0),
        readout=_VIDEO_ENGINES,
        curve=Curve("utilisation", mark("decoder", "charts"), colours=("#b35900", "#ffb74d")),
        simulated=lambda _: 0.0,
    ),
)

READINGS: tuple[Reading, ...] = FIRST_READINGS + ADDED_READINGS
_BY_NAME = {r.name: r for r in READINGS}
# The readings drawn in a chart: the history keeps minute envelopes of these (a zoomed-out day draws from them).
CHARTED: tuple[str, ...] = tuple(r.name for r in READINGS if r.curve is not None)


def reading(name: str) -> Reading:
    """The declaration of the reading called `name` (KeyError for a name nothing declares)."""
    return _BY_NAME[name]
