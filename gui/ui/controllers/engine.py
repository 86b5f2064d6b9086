"""The engine process: what the status bar says of it, what happens when it ends (the cause in words, a safer
reload offered when memory ran out, a fresh worker started unless it cannot start at all), its log one click
away, and pinning it to a NUMA node."""

from __future__ import annotations

import shutil
import time

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QPushButton

from gui.core.llama_log import Failure
from gui.core.load_state import LoadState, Phase
from gui.core.preferences import NUMA_PINS
from gui.core.recovery import safer_settings
from gui.services.engine_client import WorkerExited
from gui.services.numa import NumaPin, describe_cpus, machine_id, node_cpus, pin_running
from gui.ui.chat_pane import ChatPane
from gui.ui.controllers.load import LoadController
from gui.ui.controllers.planning import planning
from gui.ui.controllers.shared import Feature, Shared
from gui.ui.i18n import Tr, core_text, sentence_text
from gui.ui.load_bar import LoadBar
from gui.ui.plain import plain_tip

tr = Tr("engine")
RESTART_WINDOW_S = 60  # a worker that dies before its hello this often within this long cannot start


class EngineController(Feature):
    engine_ready = Signal()  # the worker said hello
    engine_died = Signal(object)  # WorkerExited, once the window said what happened

    def __init__(
        self,
        shared: Shared,
        *,
        load: LoadController,
        label: QPushButton,
        bar: LoadBar,
        chat: ChatPane,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(shared, parent)
        self.load = load
        self.label = label
        self.bar = bar
        self.chat = chat
        self._restarts: list[float] = []
        self.cannot_start = False
        pin = self.store.read(NUMA_PINS).get(machine_id())
        if pin is not None and (cpus := node_cpus(pin)):
            self.bridge.client.numa = NumaPin(pin, cpus)  # before the engine starts
        self.session.changed.connect(self._load_state_changed)
        self.session.engine_died.connect(self._engine_died)

    def start(self) -> None:
        self.bridge.client.start()

    def _load_state_changed(self, state: LoadState, before: LoadState) -> None:
        if state.build is not None and state.build is not before.build:
            self.cannot_start = False
            self.label.setText(tr("Engine: {build}").format(build=sentence_text(state.build.describe())))
            self.label.setToolTip(plain_tip(state.build.system_info + "\n\n" + tr("Click to open the Doctor.")))
            self.engine_ready.emit()
        elif state.phase is Phase.ENGINE_DEAD and not self.cannot_start:
            self.label.setText(tr("Engine: restarting…"))

    def _engine_died(self, event: WorkerExited, before: LoadState) -> None:
        failure = event.failure
        cause = f" {core_text('engine', failure.summary)}" if failure else ""
        had_model = before.model is not None and (before.busy or before.ready)
        safer = None
        # A load that needs less memory is worth offering only when memory is what ran out, and only of the
        # memory that ran out: a GPU's when this build offloads and the log does not point at the host.
        memory = failure is None or failure.about_memory
        offload = before.build is not None and before.build.gpu_offload
        header, sent = before.header, before.settings
        context = self.planning.context()
        if memory and had_model and header is not None and sent is not None:
            gpu = _gpu_ran_out(failure, offload and bool(context.devices))
            safer, _ = planning(
                lambda: safer_settings(header, sent, context.devices, context.margin_mib, gpu_ran_out=gpu)
            )
        text = f"{core_text('engine', event.reason)}{cause} " + tr("Your conversation is kept.")
        if safer is not None:
            text += " " + tr("Reload with {change}?").format(change=sentence_text(safer.change))
            model, settings = before.model, safer.settings
            self.chat.show_notice(text, tr("Reload safer"), lambda: self.load.reload(model, settings))
        else:
            self.chat.show_notice(text + (" " + tr("Press Load to start the model again.") if had_model else ""))
        stopped = (
            tr("The engine stopped while loading; no model loaded.")
            if before.busy
            else tr("The engine stopped; no model loaded.")
        )
        offer = (
            " " + tr("The notice above offers a reload with {change}.").format(change=sentence_text(safer.change))
            if safer is not None
            else ""
        )
        self.bar.say(f"{stopped}{cause}{offer}")
        self.bar.show_log(event.log_path)
        self.engine_died.emit(event)
        # A fresh worker, so Load works at once; the conversation stays in the pane. A worker that died
        # before it was even ready would only die again: say so instead of starting one after another.
        now = time.monotonic()
        self._restarts = [t for t in self._restarts if now - t < RESTART_WINDOW_S] + [now]
        if not event.said_hello and len(self._restarts) > 2:
            self.cannot_start = True
            self.label.setText(tr("Engine: cannot start"))
            self.bar.say(
                tr("The engine cannot start: {reason}").format(
                    reason=sentence_text(failure.summary if failure else event.reason)
                )
                + " "
                + tr("Check the llama-cpp-python install (see the README), then restart Tightfit.")
            )
            return
        self.bridge.client.start()

    def pin_numa(self, node: int) -> str:
        """Pin the engine to ``node``, remembered for this machine. The running worker's threads move now;
        with numactl its memory is bound too, from the engine's next start."""
        cpus = node_cpus(node)
        if not cpus:
            return tr("NUMA node {node} lists no CPUs here; the engine was not pinned.").format(node=node)
        pins: dict[str, int] = self.store.read(NUMA_PINS)
        pins = {**pins, machine_id(): node}
        self.store.write(NUMA_PINS, pins)
        client = self.bridge.client
        client.numa = NumaPin(node, cpus)
        moved = pin_running(client.pid, cpus) if client.pid is not None else 0
        where = tr("NUMA node {node} (CPUs {cpus})").format(node=node, cpus=describe_cpus(cpus))
        now = tr("; {moved} of its threads moved now").format(moved=moved) if moved else ""
        bound = (
            tr("Its CPUs and its memory are bound there from every engine start.")
            if shutil.which("numactl")
            else tr("Its CPUs are bound there from every engine start.")
        )
        return tr("The engine is pinned to {where}{now}.").format(where=where, now=now) + " " + bound


def _gpu_ran_out(failure: Failure | None, could_offload: bool) -> bool:
    """Whether a GPU's memory is what ran out: the log names a GPU buffer; or it names none and this load
    put layers on a GPU. A kill by the OOM killer, or a host buffer ("CPU", "CUDA_Host"), is host memory."""
    if failure is not None and failure.kind == "killed":
        return False
    device = failure.device if failure is not None else None
    if device is None:
        return could_offload
    return not (device.startswith("CPU") or device.endswith("_Host"))
