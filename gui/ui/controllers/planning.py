"""The one place the window's PlanningContext is built: the selected model, the sliders' settings, the plan
panel's devices (the RPC workers' first, each measured card with its learned correction), its margin, the
measured RAM bandwidth and the stated network link to the workers."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TypeVar

from gui.core.load_state import LoadState
from gui.core.planning_context import PlanningContext
from gui.ui.i18n import Tr, error_text
from gui.ui.model_picker import ModelPicker
from gui.ui.param_panel import ParamPanel
from gui.ui.plan_panel import PlanPanel

tr = Tr("planning")
log = logging.getLogger(__name__)
T = TypeVar("T")


class Planning:
    """Reads what the window shows into one PlanningContext; every plan of the window starts here."""

    def __init__(self, picker: ModelPicker, params: ParamPanel, plan_panel: PlanPanel) -> None:
        self.picker = picker
        self.params = params
        self.plan_panel = plan_panel
        self.ram_bandwidth_gbs: float | None = None  # measured once at start (gui/ui/controllers/machine.py)

    def context(self) -> PlanningContext:
        """For the selected model (if any) with the sliders' settings on the plan panel's target."""
        entry = self.picker.current()
        target = self.plan_panel.current_target()
        return PlanningContext(
            settings=self.params.settings(),
            devices=target.devices,
            margin_mib=self.plan_panel.margin_mib(),
            ram_bandwidth_gbs=self.ram_bandwidth_gbs,
            link=self.params.rpc.network_link(),
            header=entry.header if entry is not None else None,
            model=entry.path if entry is not None else None,
            here=target.here,
        )

    def here(self) -> PlanningContext:
        """The same, on what a load on this machine runs, whatever "what if" card the plan panel shows: a sweep
        runs here."""
        context = self.context()
        if context.here:
            return context
        panel = self.plan_panel
        devices = panel.remote  # a load here uses the workers whatever card the panel shows
        for candidate in panel.targets:
            if candidate.measured or candidate.simulated:
                devices = panel.remote + (() if panel.engine_unusable(candidate) else candidate.devices)
                break
        return context.with_devices(devices, here=True)

    def loaded(self, state: LoadState) -> PlanningContext | None:
        """For the load ``state`` holds (the settings that were sent, not the sliders'), on the devices it runs
        on: this machine's when the plan panel shows them and the engine offloads, else the CPU alone."""
        if state.header is None or state.settings is None:
            return None
        build = state.build
        offload = build is not None and build.gpu_offload
        context = self.context().for_model(state.header, state.model).with_settings(state.settings)
        return context if offload and context.here else context.with_devices((), here=context.here)


def planning(work: Callable[[], T]) -> tuple[T | None, str]:
    """Run a planner call; any failure (a file the planner cannot make sense of, a bug) becomes a line for the
    plan panel and the log, never an error dialog."""
    try:
        return work(), ""
    except Exception as exc:
        if not isinstance(exc, ValueError):  # a ValueError is the planner's own "this cannot be planned"
            log.exception("planning failed")
        return None, tr("Cannot plan this file: {error}").format(error=error_text(exc, "planner"))
