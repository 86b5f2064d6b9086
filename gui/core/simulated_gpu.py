"""A simulated GPU for `--simulate CARD`: plausible power, heat and clocks driven by the engine's real load.

The app calls `step(dt, load)` with the engine's activity (e.g. 1.0 while tokens stream, 0.0 when idle)
and reads `sample()`, which has the same shape as an NVML reading, with `simulated=True`: each declared reading
(gui/core/telemetry_fields.py) says how it follows from the state modelled here.

The model, kept simple on purpose and deterministic (no noise):
- Power demand rises linearly with load from the card's idle draw to its board power. The draw is the
  demand, held down to the power limit (and to the thermal ceiling while slowing down).
- Temperature is first order: it approaches ambient + k·power with time constant `tau_s` (30 s by default),
  stepped exactly (exponential), so any dt is stable. k is the cooler's °C per W: for V100s it is fitted to
  a blower-cooled V100 that settles at 82 °C at 250 W and at 70 °C at 200 W, with 22 °C intake air; for other
  cards the cooler is taken to hold full board power at 82 °C.
- When the cap binds the SM clock drops as (allowed / demand)^(1/3): dynamic power goes roughly as f·V² and
  voltage tracks frequency, so power ∝ f³. A 250→200 W cap costs ~7% clock, and decode, being
  memory-bound, loses less than that (about 5% fewer tokens/s on a V100 capped that way):
  `decode_speed_factor()` is the card's decode rate against its unthrottled rate, (f / f_free)^0.69, the
  exponent fitted to those two figures. A power-cap sweep on a simulated card scales the engine's measured
  rate by it.
- At the slowdown threshold the card cuts power to what would settle 1 °C under it, until it has cooled
  2 °C below the threshold (hysteresis, so the draw does not flicker every tick).
- Illustrative ECC wear: one corrected error per 30 minutes spent above 80 °C, on cards with ECC.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from gui.core import gpu_sample as reasons
from gui.core.cards import find_card
from gui.core.gpu_sample import GpuProcess, GpuSample
from gui.core.telemetry_fields import READINGS

__all__ = ["DECODE_CLOCK_EXPONENT", "PROFILES", "SimProfile", "SimulatedGpu"]

NOT_SUPPORTED = "not supported by this GPU"  # the same words the NVML path uses
HOT_C = 80.0
SECONDS_PER_ECC_ERROR = 30 * 60
IDLE_LOAD = 0.05  # below this the card counts as idle (clock-event reason "idle", low P-state)
SETTLE_AT_FULL_POWER_C = 82.0
# Decode tokens/s go as (SM clock ratio)^this: a 250→200 W cap, (200/250)^(1/3) of the clock, costs 5%.
DECODE_CLOCK_EXPONENT = math.log(0.95) / math.log((200.0 / 250.0) ** (1.0 / 3.0))


@dataclass(frozen=True)
class SimProfile:
    name: str  # as nvidia-smi prints it
    idle_w: float
    min_limit_w: float
    slowdown_c: float
    shutdown_c: float
    max_sm_mhz: float
    idle_sm_mhz: float
    mem_mhz: float
    idle_mem_mhz: float
    pcie_gen_max: int
    has_fan: bool  # passive data-centre cards report no fan
    has_ecc: bool
    c_per_w: float | None = None  # None: sized so full board power settles at SETTLE_AT_FULL_POWER_C


# What a process's CUDA context and runtime hold on the card beyond llama.cpp's own buffers: the middle of the
# 0.3-0.5 GB per process reported for V100-class cards. One figure for every simulated card, on purpose: the
# planner's own term scales with the SM count (gui/core/planner.py cuda_overhead_mib), so a simulated card shows
# the planned-versus-measured difference and the correction learned from it, as a real card would.
CONTEXT_MIB = 400.0

_V100_K = (82.0 - 70.0) / (250.0 - 200.0)  # 0.24 °C/W: 82 °C at 250 W and 70 °C at 200 W, 22 °C intake

PROFILES: dict[str, SimProfile] = {
    # name, idle W, min limit W, slowdown/shutdown °C, max/idle SM MHz, busy/idle memory MHz, PCIe gen, fan, ECC
    "v100-16gb": SimProfile("Tesla V100-SXM2-16GB", 40, 150, 87, 90, 1530, 135, 877, 877, 3, False, True, _V100_K),
    "v100-pcie-16gb": SimProfile("Tesla V100-PCIE-16GB", 26, 100, 87, 90, 1380, 135, 877, 877, 3, False, True, _V100_K),
    "v100-32gb": SimProfile("Tesla V100-SXM2-32GB", 42, 150, 87, 90, 1530, 135, 877, 877, 3, False, True, _V100_K),
    "p40": SimProfile("Tesla P40", 50, 125, 92, 95, 1531, 544, 3615, 3615, 3, False, True),
    "p100": SimProfile("Tesla P100-PCIE-16GB", 30, 125, 85, 88, 1328, 405, 715, 715, 3, False, True),
    "t4": SimProfile("Tesla T4", 25, 60, 93, 96, 1590, 300, 5001, 5001, 3, False, True),
    "3090": SimProfile("NVIDIA GeForce RTX 3090", 30, 100, 93, 98, 1695, 210, 9751, 405, 4, True, False),
}


def _fallback_profile(name: str, board_power_w: float) -> SimProfile:
    # A catalog card without a hand-written profile: proportions of a typical data-centre card.
    return SimProfile(name, 0.12 * board_power_w, 0.4 * board_power_w, 88, 92, 1500, 210, 1215, 1215, 4, False, True)


class SimulatedGpu:
    def __init__(self, card_key: str, *, index: int = 0, ambient_c: float = 22.0, tau_s: float = 30.0) -> None:
        card = find_card(card_key)
        if card.board_power_w <= 0:
            raise ValueError(f"{card.name} has no board power in the catalog; it cannot be simulated")
        if tau_s <= 0:
            raise ValueError(f"the thermal time constant must be positive (got {tau_s} s)")
        self.key = card.key
        self.index = index
        self.profile: SimProfile = PROFILES.get(card.key) or _fallback_profile(card.name, card.board_power_w)
        self.board_power_w = float(card.board_power_w)
        self.total_mib: float = float(card.vram_mib)
        self.tau_s = float(tau_s)
        self.ambient_c = float(ambient_c)
        self.c_per_w = self.profile.c_per_w or (SETTLE_AT_FULL_POWER_C - ambient_c) / self.board_power_w
        self.power_limit_w: float = self.board_power_w
        self.time_s = 0.0
        self.load: float = 0.0
        self.power_w: float = self.profile.idle_w
        self.temperature_c: float = self.ambient_c + self.c_per_w * self.power_w
        self.thermal_slowdown = False
        self.hot_s = 0.0  # time spent above HOT_C, for the ECC wear model
        self.memory_used_mib: float = 0.0
        self.lost = False
        self._process: tuple[int, str | None] | None = None

    # --- what the app controls --------------------------------------------------------------------

    @property
    def min_limit_w(self) -> float:
        return float(self.profile.min_limit_w)

    @property
    def max_limit_w(self) -> float:
        return self.board_power_w

    @property
    def default_limit_w(self) -> float:
        return self.board_power_w

    def set_power_limit(self, watts: float) -> float:
        """Apply a cap, clamped to the card's constraints (no privileges needed); returns what applied."""
        if not math.isfinite(watts):
            raise ValueError(f"power limit must be a number of watts (got {watts})")
        self.power_limit_w = min(max(float(watts), self.min_limit_w), self.max_limit_w)
        self._settle_power()
        return self.power_limit_w

    def restore_default(self) -> float:
        return self.set_power_limit(self.default_limit_w)

    def engine_loaded(self, buffers_mib: float, pid: int | None, process_name: str | None = None) -> float:
        """An engine process put ``buffers_mib`` of llama.cpp buffers on this card: the driver lists it
        holding those plus its CUDA context (CONTEXT_MIB). Returns what the card now reports for it."""
        self.set_memory_used(max(float(buffers_mib), 0.0) + CONTEXT_MIB, pid, process_name)
        return self.memory_used_mib

    def set_memory_used(self, used_mib: float, pid: int | None = None, process_name: str | None = None) -> None:
        """What the app has loaded (from its plan or the engine), optionally with the owning process."""
        self.memory_used_mib = min(max(float(used_mib), 0.0), self.total_mib)
        self._process = (pid, process_name) if pid is not None and self.memory_used_mib > 0 else None

    def set_lost(self, lost: bool) -> None:
        """Make the card fall off the bus (or come back), to exercise that path without hardware."""
        self.lost = lost

    # --- physics ----------------------------------------------------------------------------------

    def demand_w(self, load: float | None = None) -> float:
        """What the card would draw at this load with no cap."""
        level = self.load if load is None else load
        return self.profile.idle_w + level * (self.board_power_w - self.profile.idle_w)

    def ceiling_w(self) -> float:
        """The most the card may draw now: the power limit, lowered further while slowing down for heat."""
        if not self.thermal_slowdown:
            return self.power_limit_w
        cool_enough = (self.profile.slowdown_c - 1.0 - self.ambient_c) / self.c_per_w
        return min(self.power_limit_w, max(cool_enough, self.profile.idle_w))

    def settled_temperature_c(self, power_w: float) -> float:
        return self.ambient_c + self.c_per_w * power_w

    def step(self, dt: float, load: float) -> None:
        """Advance by dt seconds at this load (0 idle .. 1 fully busy)."""
        if not math.isfinite(dt) or dt < 0:
            raise ValueError(f"dt must be a non-negative number of seconds (got {dt})")
        if not math.isfinite(load):
            raise ValueError(f"load must be a number in [0, 1] (got {load})")
        self.load = min(max(float(load), 0.0), 1.0)
        remaining = float(dt)
        while remaining > 0:  # sub-steps of at most 1 s so slowdown switches near the right moment
            h = min(remaining, 1.0)
            self._settle_power()
            target = self.settled_temperature_c(self.power_w)
            self.temperature_c = target + (self.temperature_c - target) * math.exp(-h / self.tau_s)
            if self.temperature_c > HOT_C:
                self.hot_s += h
            self._update_thermal_slowdown()
            self.time_s += h
            remaining -= h
        self._settle_power()

    def _update_thermal_slowdown(self) -> None:
        if self.temperature_c >= self.profile.slowdown_c:
            self.thermal_slowdown = True
        elif self.temperature_c < self.profile.slowdown_c - 2.0:
            self.thermal_slowdown = False

    def _settle_power(self) -> None:
        # Electrical response is milliseconds: at the 1 s scale the draw follows demand and cap at once.
        self.power_w = min(self.demand_w(), self.ceiling_w())

    def sm_clock_mhz(self) -> float:
        p = self.profile
        busy = min(self.load / 0.2, 1.0)  # a card at even light load boosts fully
        clock = p.idle_sm_mhz + busy * (p.max_sm_mhz - p.idle_sm_mhz)
        demand = self.demand_w()
        if demand > self.power_w > 0:
            clock *= (self.power_w / demand) ** (1.0 / 3.0)
        return clock

    def decode_speed_factor(self) -> float:
        """Decode speed now against the same load with nothing held down (1.0 when neither the power limit
        nor a thermal slowdown binds)."""
        demand = self.demand_w()
        if demand <= self.power_w or self.power_w <= 0:
            return 1.0
        clock_ratio = (self.power_w / demand) ** (1.0 / 3.0)
        return float(clock_ratio**DECODE_CLOCK_EXPONENT)

    @property
    def busy(self) -> bool:
        """Working rather than idle (below IDLE_LOAD the clock-event reason is "idle")."""
        return self.load >= IDLE_LOAD

    @property
    def in_use(self) -> bool:
        """Busy, or holding a model: the memory clock and the P-state stay up while anything is loaded."""
        return self.busy or self.memory_used_mib > 0

    def fan_pct(self) -> float | None:
        """The fan follows the temperature from 30 % at 40 °C; None on a passive card."""
        if not self.profile.has_fan:
            return None
        return min(max(30.0 + 1.6 * (self.temperature_c - 40.0), 30.0), 100.0)

    def ecc_corrected(self) -> int | None:
        """Illustrative wear: one corrected error per SECONDS_PER_ECC_ERROR above HOT_C; None without ECC."""
        return int(self.hot_s // SECONDS_PER_ECC_ERROR) if self.profile.has_ecc else None

    def throttle_reasons(self) -> tuple[str, ...]:
        words = []
        if not self.busy:
            words.append(reasons.IDLE)
        if self.demand_w() > self.power_limit_w:
            words.append(reasons.POWER_CAP)
        if self.thermal_slowdown:
            words.append(reasons.THERMAL_SLOWDOWN)
        return tuple(words)

    # --- reading ----------------------------------------------------------------------------------

    def sample(self, timestamp: float | None = None) -> GpuSample:
        """The card's state as a GpuSample; `timestamp` defaults to the simulation's own clock. Each declared
        reading (gui/core/telemetry_fields.py) is its model of this state; one the card has not is not supported."""
        when = self.time_s if timestamp is None else timestamp
        if self.lost:
            return GpuSample(
                index=self.index, timestamp=when, lost=True, simulated=True, errors={"gpu": "the GPU fell off the bus"}
            )
        values = {r.name: r.simulated(self) if r.simulated is not None else None for r in READINGS}
        processes: tuple[GpuProcess, ...] = ()
        if self._process is not None:
            processes = (GpuProcess(pid=self._process[0], name=self._process[1], used_mib=self.memory_used_mib),)
        return GpuSample.of(
            values,
            index=self.index,
            timestamp=when,
            name=self.profile.name,
            throttle_reasons=self.throttle_reasons(),
            processes=processes,
            simulated=True,
            errors={name: NOT_SUPPORTED for name, value in values.items() if value is None},
        )
