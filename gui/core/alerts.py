"""Alert rules for the GPU monitor: which readings deserve the user's attention, said once per event.

Pure Python (no Qt), so the rules can be tested tick by tick. `AlertRules.check(sample)` is called with
every sample of every GPU and returns only the alerts that are *new*: a condition that persists for an
hour raises one alert, not 3,600. An event re-arms only after its condition has cleared:
- temperature: fires when the reading reaches the threshold; re-arms once it has dropped below
  threshold - hysteresis, so a card hovering around the line does not flap;
- throttle: each clock-event reason word that holds the clocks back fires when it appears and re-arms
  when it goes (an unknown reading, None, is not "cleared"); the power cap, often the user's own, is said once
  per GPU (until ``reset``): a capped card hits it on every busy spell;
- ecc: fires whenever a volatile ECC counter goes up (each increase is new errors); the first reading is
  the baseline, and a counter that goes down (driver reload) just resets it;
- lost: fires when the GPU falls off the bus; re-arms when it answers again.
A missing reading (None) never fires and never re-arms: "no value" says nothing about the condition.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from gui.core import gpu_sample as reasons
from gui.core.gpu_sample import GpuSample
from gui.core.words import mark

__all__ = ["KINDS", "THROTTLE_SEVERITY", "Alert", "AlertKind", "AlertRules", "Severity"]

AlertKind = Literal["temperature", "throttle", "ecc", "lost"]
Severity = Literal["info", "warning", "critical"]
KINDS: tuple[AlertKind, ...] = ("temperature", "throttle", "ecc", "lost")

# Reasons that mean the card is held back against its will. "idle", "application clocks", "sync boost" and
# "display clocks" are normal operation, so they never alert. A power cap is often the user's own choice
# (the 200 W cap), hence only "info"; slowing down for heat or a hardware signal is what wears cards out.
THROTTLE_SEVERITY: dict[str, Severity] = {
    reasons.POWER_CAP: "info",
    reasons.THERMAL_SLOWDOWN: "warning",
    reasons.HW_SLOWDOWN: "warning",
    reasons.HW_POWER_BRAKE: "warning",
    reasons.HW_THERMAL_SLOWDOWN: "critical",
}


@dataclass(frozen=True)
class Alert:
    kind: AlertKind
    gpu_index: int
    message: str  # in English, as the log and the tests read it
    severity: Severity
    # The message as a template and its figures ({gpu}, {temp} ...), so that the window can show it in the
    # user's language; ``reasons`` (throttling) are reason words, which the window translates one by one.
    template: str = field(default="", compare=False)
    fields: Mapping[str, str] = field(default_factory=dict, compare=False)
    reasons: tuple[str, ...] = field(default=(), compare=False)


def _alert(
    kind: AlertKind, gpu: int, template: str, severity: Severity, reasons: tuple[str, ...] = (), **fields: str
) -> Alert:
    values = {"gpu": str(gpu), **fields}
    english = template.format(**values, reasons=", ".join(reasons))
    return Alert(kind, gpu, english, severity, template, values, reasons)


# The alerts' words, one template each (the window translates them; bench/i18n_extract.py collects them).
LOST = mark("GPU {gpu} fell off the bus: no readings", "alerts")
LOST_NAMED = mark("GPU {gpu} ({name}) fell off the bus: no readings", "alerts")
HOT = mark("GPU {gpu} is at {temp} °C (alert threshold {threshold} °C)", "alerts")
THROTTLING = mark("GPU {gpu} is throttling: {reasons}", "alerts")
ECC_UNCORRECTED_ONE = mark(
    "GPU {gpu}: {added} new uncorrected ECC memory error ({count} since the driver loaded)", "alerts"
)
ECC_UNCORRECTED = mark(
    "GPU {gpu}: {added} new uncorrected ECC memory errors ({count} since the driver loaded)", "alerts"
)
ECC_CORRECTED_ONE = mark(
    "GPU {gpu}: {added} new corrected ECC memory error ({count} since the driver loaded)", "alerts"
)
ECC_CORRECTED = mark("GPU {gpu}: {added} new corrected ECC memory errors ({count} since the driver loaded)", "alerts")


@dataclass
class _GpuState:
    hot: bool = False  # the temperature alert fired and has not re-armed yet
    throttling: frozenset[str] = frozenset()  # reason words already alerted on
    cap_said: bool = False  # the power cap was said once: it is expected from then on
    ecc: dict[str, int] = field(default_factory=dict)  # counter name -> last known value
    lost: bool = False


class AlertRules:
    def __init__(self, temp_threshold_c: float, hysteresis_c: float = 3.0) -> None:
        self.temp_threshold_c = temp_threshold_c
        self.hysteresis_c = hysteresis_c
        self._state: dict[int, _GpuState] = {}

    @property
    def temp_threshold_c(self) -> float:
        return self._threshold

    @temp_threshold_c.setter
    def temp_threshold_c(self, value: float) -> None:
        # Changing it mid-run keeps the armed/fired state: the next sample re-arms if it is now far below.
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            raise ValueError(f"temperature threshold must be a number of °C (got {value!r})")
        self._threshold = float(value)

    @property
    def hysteresis_c(self) -> float:
        return self._hysteresis

    @hysteresis_c.setter
    def hysteresis_c(self, value: float) -> None:
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
            raise ValueError(f"hysteresis must be a non-negative number of °C (got {value!r})")
        self._hysteresis = float(value)

    def reset(self, gpu_index: int | None = None) -> None:
        """Forget what was alerted (one GPU, or all): the next sample is judged afresh."""
        if gpu_index is None:
            self._state.clear()
        else:
            self._state.pop(gpu_index, None)

    def check(self, sample: GpuSample) -> list[Alert]:
        """The alerts this sample starts, in a fixed order (lost, temperature, throttle, ecc)."""
        state = self._state.setdefault(sample.index, _GpuState())
        alerts: list[Alert] = []
        if sample.lost:
            if not state.lost:
                state.lost = True
                if sample.name:
                    lost = _alert("lost", sample.index, LOST_NAMED, "critical", name=sample.name)
                else:
                    lost = _alert("lost", sample.index, LOST, "critical")
                alerts.append(lost)
            return alerts  # a lost card has no other readings to judge
        state.lost = False
        alerts += self._temperature(sample, state)
        alerts += self._throttle(sample, state)
        alerts += self._ecc(sample, state)
        return alerts

    def _temperature(self, sample: GpuSample, state: _GpuState) -> list[Alert]:
        temp = sample.temperature_c
        if temp is None or not math.isfinite(temp):
            return []
        if state.hot:
            if temp < self._threshold - self._hysteresis:
                state.hot = False
            return []
        if temp < self._threshold:
            return []
        state.hot = True
        severity: Severity = "warning"
        if sample.slowdown_c is not None and temp >= sample.slowdown_c:
            severity = "critical"
        return [_alert("temperature", sample.index, HOT, severity, temp=f"{temp:g}", threshold=f"{self._threshold:g}")]

    def _throttle(self, sample: GpuSample, state: _GpuState) -> list[Alert]:
        if sample.throttle_reasons is None:
            return []  # unknown: neither a new event nor a clear
        active = frozenset(w for w in sample.throttle_reasons if w in THROTTLE_SEVERITY)
        new = [w for w in sample.throttle_reasons if w in active - state.throttling]  # in the sample's order
        state.throttling = active
        if state.cap_said:
            new = [w for w in new if w != reasons.POWER_CAP]
        elif reasons.POWER_CAP in new:
            state.cap_said = True
        if not new:
            return []
        worst = max((THROTTLE_SEVERITY[w] for w in new), key=_SEVERITY_ORDER.index)
        return [_alert("throttle", sample.index, THROTTLING, worst, reasons=tuple(new))]

    def _ecc(self, sample: GpuSample, state: _GpuState) -> list[Alert]:
        alerts = []
        counters: tuple[tuple[str, int | None, Severity], ...] = (
            ("uncorrected", sample.ecc_uncorrected, "critical"),  # data was damaged
            ("corrected", sample.ecc_corrected, "warning"),  # repaired, but a sign of heat or wear
        )
        for name, count, severity in counters:
            if count is None:
                continue
            before = state.ecc.get(name)
            state.ecc[name] = count
            if before is None or count <= before:
                continue  # baseline, unchanged, or reset by a driver reload
            added = count - before
            template = {
                ("uncorrected", True): ECC_UNCORRECTED_ONE,
                ("uncorrected", False): ECC_UNCORRECTED,
                ("corrected", True): ECC_CORRECTED_ONE,
                ("corrected", False): ECC_CORRECTED,
            }[name, added == 1]
            alerts.append(_alert("ecc", sample.index, template, severity, added=str(added), count=str(count)))
        return alerts


_SEVERITY_ORDER: list[Severity] = ["info", "warning", "critical"]
