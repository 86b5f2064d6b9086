"""What every plan in the window is made from, as one value: the model, the settings, the devices (the RPC
workers' first, each measured card with what earlier loads taught about it), the safety margin, the host's
measured memory bandwidth and the network link to the workers.

The window builds it in one place (gui/ui/planning.py) and the plan panel, the speed hint, the quant table,
Auto-fit, the Tune grid and the export all read it, so no two of them plan the same load differently.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from gui.core.gguf_reader import GGUFHeader
from gui.core.params import MARGIN, LoadSettings, NetworkLink
from gui.core.planner import Device, Plan, auto_fit, plan

__all__ = ["PlanningContext"]


@dataclass(frozen=True)
class PlanningContext:
    settings: LoadSettings
    devices: tuple[Device, ...] = ()  # empty: a CPU-only load
    margin_mib: float = MARGIN.default
    ram_bandwidth_gbs: float | None = None  # measured once at start, for the ceiling of host-resident weights
    link: NetworkLink | None = None  # the network to the RPC workers' devices (Device.remote)
    header: GGUFHeader | None = None  # the model's, when one is selected (or loaded)
    model: Path | None = None
    here: bool = True  # the devices are what a load on this machine uses, not a "what if" card

    @property
    def plannable(self) -> bool:
        return self.header is not None

    def plan(self, *, suggest: bool = True) -> Plan:
        """Where every MiB goes; ValueError when there is no model or the planner cannot read it."""
        return plan(
            self._header(),
            self.settings,
            self.devices,
            margin_mib=self.margin_mib,
            ram_bandwidth_gbs=self.ram_bandwidth_gbs,
            suggest=suggest,
            link=self.link,
        )

    def auto_fit(self, *, pinned: frozenset[str] = frozenset(), max_ctx: int | None = None) -> LoadSettings:
        """The most of the model on these devices, then the largest context, that keep the margin."""
        return auto_fit(
            self._header(), self.settings, self.devices, pinned=pinned, margin_mib=self.margin_mib, max_ctx=max_ctx
        )

    def with_settings(self, settings: LoadSettings) -> PlanningContext:
        return replace(self, settings=settings)

    def with_devices(self, devices: tuple[Device, ...], *, here: bool | None = None) -> PlanningContext:
        return replace(self, devices=devices, here=self.here if here is None else here)

    def for_model(self, header: GGUFHeader | None, model: Path | None) -> PlanningContext:
        return replace(self, header=header, model=model)

    def cpu_only(self) -> PlanningContext:
        """The same load with nothing offloaded (what a build without GPU offload does whatever the card)."""
        return replace(self, devices=(), margin_mib=0.0, here=True)

    def _header(self) -> GGUFHeader:
        if self.header is None:
            raise ValueError("no model to plan")
        return self.header
