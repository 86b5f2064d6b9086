"""Load and plan: the plan that follows every slider, Auto-fit, llama.cpp's dry run beside the plan, the load
itself (stopped first when the plan says it will not fit), going back to the last load that worked when one
fails, and what the load row says and enables. It owns the one plan of the window; the load state itself is the
LoadSession's."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from pathlib import Path

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtWidgets import QMessageBox

from gui.core import protocol as p
from gui.core.chat_formats import format_label
from gui.core.engine_use import Use
from gui.core.load_state import LoadState, Phase
from gui.core.params import LoadSettings, changes, describe, llama_gpu_layers
from gui.core.planner import Plan, Verdict
from gui.core.preferences import CHAT_FORMATS, LAST_SETTINGS
from gui.services.engine_client import EngineUnavailable
from gui.services.models import ModelEntry
from gui.ui.chat_pane import ChatPane
from gui.ui.controllers.planning import planning
from gui.ui.controllers.shared import Feature, Shared
from gui.ui.controllers.uses import engine_use_words
from gui.ui.i18n import Tr, core_text, error_text, sentence_text
from gui.ui.load_bar import LoadBar, overcommit_dialog
from gui.ui.model_picker import ModelPicker
from gui.ui.param_panel import ParamPanel
from gui.ui.plan_panel import PlanPanel

tr = Tr("load")
log = logging.getLogger(__name__)


class LoadController(Feature):
    model_loaded = Signal(object)  # p.Loaded
    load_finished = Signal(object)  # after every load attempt: True loaded, False failed
    planned = Signal(object)  # Plan or None, after every re-plan
    verified = Signal(object)  # p.DryRunResult

    def __init__(
        self,
        shared: Shared,
        *,
        picker: ModelPicker,
        params: ParamPanel,
        plan_panel: PlanPanel,
        bar: LoadBar,
        chat: ChatPane,
        settings: LoadSettings,
        given: Iterable[str] = (),
        parent: QObject | None = None,
    ) -> None:
        """``given``: the settings named on the command line; they win over what the model selected at start
        remembers from its last load (once: the models chosen after it load as they last did)."""
        super().__init__(shared, parent)
        self.picker = picker
        self.params = params
        self.plan_panel = plan_panel
        self.bar = bar
        self.chat = chat
        self._given = {key: getattr(settings, key) for key in given}
        self._given_settings = settings
        self.plan: Plan | None = None
        self.overcommit_dialog: QMessageBox | None = None
        self._verify_request: int | None = None
        self._last_good: LoadState | None = None  # the last load that worked, to go back to if one fails
        self._after_failure = ""  # why the load now under way goes back to the last good one
        self._selected_path: Path | None = None
        self.last_load_s = 10.0
        # What re-planning also refreshes, not on every step (the quant table re-plans every quant).
        self.after_replan = QTimer(self)
        self.after_replan.setSingleShot(True)
        self.after_replan.setInterval(150)

        bar.load_button.clicked.connect(lambda: self.load_selected())
        bar.unload_button.clicked.connect(self.unload)
        self.bridge.engine_event.connect(self._on_event)
        self.session.changed.connect(self._load_state_changed)
        self.session.changed.connect(lambda state, _before: self.engine_use.set(Use.LOAD, state.busy))
        self.session.engine_died.connect(self._engine_died)
        self.engine_use.subscribe(self.update_buttons)
        picker.selected.connect(self._model_selected)
        params.changed.connect(self.replan)
        params.changed.connect(lambda _settings: self.update_buttons())
        plan_panel.target_changed.connect(self.replan)
        plan_panel.auto_fit_requested.connect(self.auto_fit)
        plan_panel.verify_requested.connect(self.verify)
        self.update_buttons()

    # ---- the plan -------------------------------------------------------------------------

    def replan(self, *_: object) -> None:
        """Re-plan from the header already read: arithmetic bounded by the header's checked sizes, a
        fraction of a frame (bench/planner_speed.py)."""
        self.params.set_device_count(len(self.plan_panel.devices()))  # the split settings show for several
        context = self.planning.context()
        if not context.plannable:
            self.plan = None
            self.plan_panel.show_plan(None)
        else:
            self.plan, problem = planning(context.plan)
            self.plan_panel.show_plan(self.plan, problem)
        self.after_replan.start()
        self.planned.emit(self.plan)

    def auto_fit(self) -> None:
        entry = self.picker.current()
        context = self.planning.context()
        if entry is None or not context.plannable:
            return
        fitted, problem = planning(lambda: context.auto_fit(pinned=self.params.pinned(), max_ctx=entry.context_length))
        if fitted is None:
            self.plan_panel.show_plan(self.plan, tr("Auto-fit failed: {problem}").format(problem=problem))
            return
        before = self.params.settings()
        self.params.set_settings(fitted)
        self.params.say(
            tr("Auto-fit: {changes}.").format(changes=core_text("params", changes(before, self.params.settings())))
        )

    def verify(self) -> None:
        entry = self.picker.current()
        if entry is None:
            return
        try:
            if not self.bridge.client.alive:
                self.bridge.client.start()
            self._verify_request = self.bridge.client.dry_run(entry.path, self.params.settings())
        except (ValueError, EngineUnavailable) as exc:
            self.plan_panel.say_verify(tr("Cannot verify: {error}").format(error=error_text(exc, "engine")))
            return
        self.plan_panel.show_verify(None, pending=True)

    def _show_verify(self, result: p.DryRunResult) -> None:
        """Compare llama.cpp's dry run with the plan for the devices it actually planned for.

        A build without GPU offload puts everything on the CPU whatever card the plan is for, so its
        figures are set beside the CPU-only plan, and the window says so.
        """
        compared, note = self.plan, ""
        build = self.session.state.build
        offload = build.gpu_offload if build is not None else False
        context = self.planning.context()
        if context.plannable and not offload and context.devices:
            compared, _ = planning(context.cpu_only().plan)
            note = tr("This engine build has no GPU offload, so both are for a CPU-only load.") if compared else ""
        self.plan_panel.show_verify(result, compared=compared, note=note)

    # ---- the load -------------------------------------------------------------------------

    def load_selected(self, *, anyway: bool = False) -> None:
        entry = self.picker.current()
        if entry is None or self.session.state.busy:
            return
        if (blocker := self.engine_use.blocker(Use.LOAD)) is not None:
            busy = engine_use_words(blocker)
            self.bar.say(tr("{busy}: load when it ends, or stop it there.").format(busy=busy))
            return
        if entry.not_loadable:
            self.bar.say(
                tr("Cannot load {model}: {reason}.").format(
                    model=entry.path.name, reason=sentence_text(entry.not_loadable)
                )
            )
            self.load_finished.emit(False)
            return
        if refusal := self.params.rpc.refusal():  # llama.cpp's client would abort on a worker it cannot reach
            self.bar.say(tr("Cannot load: {error}").format(error=refusal))
            self.load_finished.emit(False)
            return
        # A plan for a card the machine does not have is a "what if": it never stops a load here.
        here = self.plan_panel.current_target().here
        if not anyway and here and self.plan is not None and self.plan.verdict is Verdict.WONT_FIT:
            self.overcommit_dialog = overcommit_dialog(self.dialog_parent, self.plan, self._overcommit_answered)
            return
        settings = self.params.settings()
        try:
            self.session.load(entry.path, settings, entry.header, self.plan)
        except (ValueError, EngineUnavailable) as exc:
            self.bar.say(tr("Cannot load: {error}").format(error=error_text(exc, "engine")))
            self.load_finished.emit(False)
            return
        # llama.cpp's own dry run goes first (tens of ms): its figures appear beside the estimate.
        self._verify_request = self.session.state.dry_run_id
        self.plan_panel.show_verify(None, pending=True)
        self.bar.say(
            tr("Loading {model} ({settings})…").format(
                model=entry.path.name, settings=core_text("params", describe(settings))
            )
        )

    def _overcommit_answered(self, anyway: bool) -> None:
        self.overcommit_dialog = None
        if anyway:
            self.load_selected(anyway=True)

    def unload(self) -> None:
        if self.engine_use.blocker(Use.LOAD) is None:
            self.session.unload()

    def reload(self, model: Path | None, settings: LoadSettings) -> None:
        """The model that was loaded, with the settings recovery chose."""
        if model is not None and not self.picker.select_path(model):
            self.bar.say(tr("Cannot reload: {model} is no longer in the library.").format(model=model.name))
            return
        self.params.set_settings(settings)
        self.load_selected()

    def update_buttons(self) -> None:
        state = self.session.state
        entry = self.picker.current()
        sweeping = self.engine_use.blocker(Use.LOAD) is not None  # a sweep loads what it measures
        # The loaded model with settings moved since: the engine still runs the old ones until a reload.
        same_model = state.ready and entry is not None and entry.path == state.model
        stale = same_model and self.params.settings() != state.settings
        self.bar.show_ready(entry is not None and not state.busy and not sweeping, state.ready and not sweeping, stale)
        self.picker.mark_loaded(state.model if state.ready else None)

    # ---- engine events and the load state -----------------------------------------------

    def _on_event(self, event: p.Event) -> None:
        """What the load state does not cover: dry-run figures and refused commands."""
        if isinstance(event, p.DryRunResult) and event.request_id == self._verify_request:
            self._show_verify(event)
            self.verified.emit(event)
        elif isinstance(event, p.CommandRejected) and not self.session.state.busy:
            self.bar.say(tr("The engine refused a command: {error}").format(error=sentence_text(event.error)))

    def _load_state_changed(self, state: LoadState, before: LoadState) -> None:
        """The load row follows the one state: status line, progress, buttons."""
        self.bar.progress.setValue(round(state.progress * 100))
        self.update_buttons()
        if state.phase is before.phase and state.loaded is before.loaded:
            return
        if state.phase is Phase.LOADED and state.loaded is not None and state.model is not None:
            self._loaded(state, state.loaded)
        elif state.phase is Phase.FAILED and before.busy:
            self.bar.say(tr("Load failed: {error}").format(error=sentence_text(state.error)))
            self.bar.show_log(self.bridge.client.log_path)
            self.load_finished.emit(False)
            self._back_to_last_good(state)
        elif state.phase is Phase.IDLE and before.phase is not Phase.IDLE:
            self.bar.say(tr("No model loaded."))

    def _engine_died(self, _event: object, before: LoadState) -> None:
        if before.busy:
            self.load_finished.emit(False)

    def _back_to_last_good(self, failed: LoadState) -> None:
        """A failed load loses nothing: the model that was loaded before is loaded again, as it was."""
        good = self._last_good
        if good is None or (good.model, good.settings) == (failed.model, failed.settings):
            return
        assert good.model is not None and good.settings is not None
        try:
            self.session.load(good.model, good.settings, good.header, good.plan)
        except (ValueError, EngineUnavailable):
            return
        why = tr("{model} did not load: {error}").format(model=failed.model_name, error=sentence_text(failed.error))
        self._after_failure = why
        self.bar.say(why + " " + tr("Loading {model} again, as it was before.").format(model=good.model.name))

    def _loaded(self, state: LoadState, event: p.Loaded) -> None:
        assert state.model is not None and state.settings is not None
        self._last_good = state
        offload = ""
        if self._after_failure:
            offload += f" ({self._after_failure})"
            self._after_failure = ""
        picked = self.store.read(CHAT_FORMATS).get(state.model.name, "")
        self.chat.set_chat_format(picked)
        chat_format = (
            tr("{format} (your choice)").format(format=sentence_text(format_label(picked)))
            if picked
            else sentence_text(format_label(event.chat_format))
        )
        self.bar.say(
            tr("Loaded {model} in {seconds} s: context {context}, {layers}, chat format: {format}.").format(
                model=state.model.name,
                seconds=f"{event.load_ms / 1000:.1f}",
                context=f"{event.n_ctx:,}",
                layers=_layers_words(state, event),
                format=chat_format,
            )
            + offload
        )
        # What was sent with the load, not what the sliders show now: they may have moved since.
        self.store.write(LAST_SETTINGS, self.store.read(LAST_SETTINGS) | {state.model.name: state.settings})
        self.last_load_s = event.load_ms / 1000
        self.chat.input.setFocus()  # loaded: the next thing is a message
        self.model_loaded.emit(event)
        self.load_finished.emit(True)

    # ---- the model chosen -----------------------------------------------------------------

    def _model_selected(self, entry: ModelEntry | None) -> None:
        changed = entry is not None and entry.path != self._selected_path
        self._selected_path = entry.path if entry is not None else None
        if entry is not None:
            n_expert = entry.header.n_expert if entry.header is not None else None
            self.params.set_model_limits(entry.n_layer, entry.context_length, n_expert)
            remembered = self.store.read(LAST_SETTINGS).get(entry.path.name) if changed else None
            if remembered is not None:  # the settings this model last loaded with
                self.params.set_settings(self._with_given(remembered))
            self._given = {}
        self.plan_panel.show_verify(None)
        self.replan()
        self.update_buttons()

    def _with_given(self, remembered: LoadSettings) -> LoadSettings:
        """A model's remembered settings with those named on the command line; the command line's alone when
        the two do not go together (a micro-batch past the remembered batch)."""
        try:
            return remembered.with_values(**self._given).validated()
        except ValueError:
            return self._given_settings


def _layers_words(state: LoadState, event: p.Loaded) -> str:
    """Where the layers run, counted as the GPU-layers slider counts them (blocks + the output layer)."""
    total = event.n_layer + 1
    remote = _remote_devices(state)
    if remote:  # other machines' devices take layers whatever this machine's build offloads
        on_gpu = total if llama_gpu_layers(event.n_gpu_layers, event.n_layer) < 0 else min(event.n_gpu_layers, total)
        return tr(
            "{on_gpu} of {total} layers on the GPUs, which include other machines' devices over the network: {devices}"
        ).format(on_gpu=on_gpu, total=total, devices=", ".join(remote))
    if state.build is not None and not state.build.gpu_offload:
        return tr("all {total} layers on the CPU (this engine build has no GPU offload)").format(total=total)
    on_gpu = total if llama_gpu_layers(event.n_gpu_layers, event.n_layer) < 0 else min(event.n_gpu_layers, total)
    return tr("{on_gpu} of {total} layers on the GPU").format(on_gpu=on_gpu, total=total)


def _remote_devices(state: LoadState) -> list[str]:
    """Every other machine's device the load was sent with: the plan's names for them ("RPC0[host:port]"), and
    the address of any server the plan knew no device of."""
    settings = state.settings
    if settings is None or not settings.rpc_servers:
        return []
    devices = state.plan.devices if state.plan is not None else ()
    names = [d.name for d in devices if d.remote]
    covered = {d.remote for d in devices if d.remote}
    return names + [f"{host}:{port}" for host, port in settings.rpc_endpoints if f"{host}:{port}" not in covered]
