"""This machine's facts for planning: its GPUs (NVML, or the simulated cards), their driver, the RAM bandwidth;
and planned against measured memory: after a load on its GPUs, what the driver says the engine holds, recorded
per card, driver and engine build, and each card's overhead corrected by what earlier loads measured."""

from __future__ import annotations

import dataclasses

from PySide6.QtCore import QObject, Signal

from gui.core import protocol as p
from gui.core.load_state import LoadState
from gui.core.memory_check import MemoryCheck, correction_for, correction_key, recorded
from gui.core.planner import Plan
from gui.core.preferences import MEMORY_CHECKS
from gui.services.nvml import DriverInfo, GpuInfo, GpuQuery, engine_memory_mib
from gui.services.telemetry import SimulatedSource
from gui.ui.background import Background
from gui.ui.controllers.planning import planning
from gui.ui.controllers.shared import Feature, Shared
from gui.ui.i18n import sentence_text
from gui.ui.plan_panel import PlanPanel


class MachineController(Feature):
    gpus_found = Signal(object)  # GpuQuery, once detection finished
    ram_measured = Signal(object)  # float GB/s or None, once measured
    memory_measured = Signal(object)  # list[MemoryCheck], after a load on this machine's GPUs was measured

    def __init__(
        self,
        shared: Shared,
        *,
        plan_panel: PlanPanel,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(shared, parent)
        self.plan_panel = plan_panel
        self.store = self.services.settings
        self.background = Background("gpu-detect", parent=self)
        self.gpus: list[GpuInfo] = []  # NVML's, once detection finished
        self.driver_version: str | None = None
        self.session.changed.connect(self._load_state_changed)

    def start(self) -> None:
        # NVML can take a while to answer (or time out on a sick driver): never on the UI thread.
        self.background.run(self.services.query_gpus, self._gpus_found)
        # A failed measurement leaves the ceiling "n/a" for host-resident weights.
        self.background.run(self.services.measure_ram, self._ram_measured, lambda _: self._ram_measured(None))

    def shutdown(self) -> None:
        self.background.shutdown()  # a hung driver call must not hang the close

    def _ram_measured(self, gbs: float | None) -> None:
        self.planning.ram_bandwidth_gbs = gbs
        self.ram_measured.emit(gbs)

    def _gpus_found(self, query: GpuQuery) -> None:
        self.gpus = list(query.gpus)
        self.plan_panel.set_targets(list(query.gpus), query.error)
        if query.gpus:  # the driver's version keys what loads on these cards measured
            self.background.run(self.services.gpu.nvml.driver_info, self._driver_found)
        self.gpus_found.emit(query)

    def _driver_found(self, info: DriverInfo) -> None:
        self.driver_version = info.driver_version
        self.apply_corrections()

    def _load_state_changed(self, state: LoadState, before: LoadState) -> None:
        if state.build is not None and state.build is not before.build:
            self.plan_panel.set_engine_offload(state.build.gpu_offload)
            self.apply_corrections()  # they are kept per engine build
        if before.ready and not state.ready:
            self._release_simulated()

    # ---- planned against measured memory --------------------------------------------------

    def _memory_key(self, device: str) -> str | None:
        build = self.session.state.build
        driver = "simulated" if self.services.simulated else self.driver_version
        return correction_key(device, driver, build.describe()) if build is not None else None

    def apply_corrections(self) -> None:
        """Each measured (or simulated) GPU's overhead term corrected by what earlier loads on it measured."""
        table = self.store.read(MEMORY_CHECKS)
        corrections = {}
        names = [f"GPU {gpu.index}: {gpu.name}" for gpu in self.gpus]  # as device_from_gpu names them
        names += [d.name for t in self.plan_panel.targets if t.simulated for d in t.devices]
        for name in names:
            key = self._memory_key(name)
            found = correction_for(table, key) if key is not None else None
            if found is not None:
                corrections[name] = found
        self.plan_panel.set_corrections(corrections)

    def measure(self, state: LoadState, event: p.Loaded) -> None:
        """After a load on this machine's GPUs: what the driver says the engine holds on each, off the UI
        thread, set beside the plan for the settings that were sent (before any correction)."""
        self.plan_panel.show_measured("")
        target = self.plan_panel.current_target()
        build, pid = state.build, self.services.engine.pid
        context = self.planning.loaded(state)
        if context is None or pid is None or not target.devices:
            return
        devices = tuple(dataclasses.replace(d, overhead_correction_mib=0.0) for d in target.devices)
        context = context.with_devices(devices)
        n_remote = sum(1 for d in devices if d.remote)  # the RPC workers' come first; the driver sees this machine's
        simulated = self.services.gpu.simulated
        if target.simulated and simulated is not None:
            planned, _ = planning(lambda: context.plan(suggest=False))
            if planned is not None:
                self._measure_simulated(
                    dataclasses.replace(planned, devices=planned.devices[n_remote:]), simulated, pid
                )
            return
        if not (target.measured and build is not None and build.gpu_offload):
            return
        planned, _ = planning(lambda: context.plan(suggest=False))
        if planned is None:
            return
        indices = [gpu.index for gpu in self.gpus]
        nvml = self.services.gpu.nvml
        measured_plan = planned

        def measure() -> list[MemoryCheck]:
            checks = []
            for index, device in zip(indices, measured_plan.devices[n_remote:], strict=False):
                used = engine_memory_mib(nvml.sample(index), pid)
                if used is not None:
                    llama = event.buffers_mib.get(f"CUDA{index}")
                    checks.append(MemoryCheck(device.name, device.needed_mib, used, llama))
            return checks

        self.background.run(measure, self._memory_measured)

    def _measure_simulated(self, planned: Plan, simulated: SimulatedSource, pid: int) -> None:
        """A simulated card holds what the plan puts on it (llama.cpp's buffers) plus its own CUDA context, and
        its driver reports that for the engine: the same check, record and correction as on a real card."""
        checks = []  # arithmetic on the simulated card, no driver call: here, on the UI thread
        for gpu, device in zip(simulated.gpus, planned.devices, strict=False):
            gpu.engine_loaded(device.needed_mib - device.overhead_mib, pid, "tightfit-engine")
            used = engine_memory_mib(simulated.sample(gpu.index), pid)
            if used is not None:
                checks.append(MemoryCheck(device.name, device.needed_mib, used, None, simulated=True))
        self._memory_measured(checks)

    def _release_simulated(self) -> None:
        """The engine let go of its model: a simulated card's memory is free again."""
        simulated = self.services.gpu.simulated
        for gpu in simulated.gpus if simulated is not None else ():
            gpu.set_memory_used(0.0)

    def _memory_measured(self, checks: list[MemoryCheck]) -> None:
        if not checks:
            return
        table = self.store.read(MEMORY_CHECKS)
        for check in checks:
            key = self._memory_key(check.device)
            if key is not None:
                table = recorded(table, key, check.difference_mib)
        self.store.write(MEMORY_CHECKS, table)
        self.plan_panel.show_measured(" ".join(sentence_text(check.describe()) for check in checks))
        self.apply_corrections()
        self.memory_measured.emit(checks)
