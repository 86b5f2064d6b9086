"""The chat: the conversation kept in the history as it changes, a new chat, sampling presets and the chat
format remembered, the chat's live rate on the Monitor's chart, a hint when a reply decodes far below the plan's
ceiling, and the speeds of the last reply (for the Tune estimate and tuning cards). The pane waits, and says why,
while something else holds the engine."""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtCore import QObject

from gui.core import protocol as p
from gui.core.chat import Conversation
from gui.core.engine_use import Use
from gui.core.load_state import LoadState
from gui.core.params import LoadSettings
from gui.core.preferences import CHAT_FORMATS, SAMPLING_PRESET, SAMPLING_PRESETS
from gui.core.speed_hint import SpeedFacts, speed_hint
from gui.services.system import physical_cores
from gui.ui.chat_pane import ChatPane
from gui.ui.controllers.planning import planning
from gui.ui.controllers.shared import Feature, Shared
from gui.ui.controllers.uses import engine_use_words
from gui.ui.history_panel import HistoryPanel
from gui.ui.i18n import Tr
from gui.ui.monitor import MonitorView
from gui.ui.plan_panel import planner_text

tr = Tr("chat_controller")


class ChatController(Feature):
    def __init__(
        self,
        shared: Shared,
        *,
        chat: ChatPane,
        history: HistoryPanel,
        monitor: MonitorView,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(shared, parent)
        self.chat = chat
        self.history = history
        self.monitor = monitor
        self.last_speeds: tuple[float, float] | None = None  # decode, prompt tok/s of the last reply
        self.speeds_of: tuple[Path | None, LoadSettings | None] = (None, None)  # ... with this model and settings
        self._hinted: LoadState | None = None  # the load a speed hint was given for: once is enough

        chat.new_chat_requested.connect(self.new_chat)
        chat.conversation_changed.connect(lambda: history.save(chat.conversation))
        history.opened.connect(lambda _id, conversation: chat.set_conversation(conversation))
        history.can_switch = lambda: not chat.streaming
        chat.sampling_panel.preset_saved.connect(self._preset_saved)
        chat.chat_format_chosen.connect(self._chat_format_chosen)
        chat.live_rate.connect(monitor.set_engine_rate)
        chat.reply_finished.connect(self._hint_speed)
        chat.reply_finished.connect(self._note_speeds)
        chat.streaming_changed.connect(lambda streaming: self.engine_use.set(Use.CHAT, streaming))
        self.engine_use.subscribe(self._engine_use_changed)
        self._restore()

    def start(self) -> None:
        self.chat.input.setFocus()  # what a user does first is type
        self.history.restore_last()

    def shutdown(self) -> None:
        if self.chat.streaming:
            self.chat.stop()
            self.chat.keep_partial_reply("stopped: the window closed")
        self.history.save(self.chat.conversation)
        self.history.shutdown()
        self.store.write(SAMPLING_PRESET, self.chat.sampling_panel.preset.currentText())

    def _restore(self) -> None:
        """The sampling presets the user saved, and the one chosen last time."""
        panel = self.chat.sampling_panel
        panel.add_presets(self.store.read(SAMPLING_PRESETS))
        preset = self.store.read(SAMPLING_PRESET)
        if preset in panel.presets:
            panel.preset.setCurrentText(preset)

    def _engine_use_changed(self) -> None:
        blocker = self.engine_use.blocker(Use.CHAT)
        busy = engine_use_words(blocker) if blocker is not None else ""
        self.chat.engine_busy = tr("{busy}: send when it ends, or stop it there.").format(busy=busy) if busy else ""

    def new_chat(self) -> None:
        """A fresh conversation that keeps the system prompt the user set."""
        if self.chat.streaming:
            return
        self.history.start_new()
        self.chat.set_conversation(Conversation(system_prompt=self.chat.conversation.system_prompt))
        self.chat.input.setFocus()

    def find_chats(self) -> None:
        self.tabs.setCurrentIndex(0)
        self.history.search.setFocus()
        self.history.search.selectAll()

    def _preset_saved(self, name: str, sampling: p.Sampling) -> None:
        self.store.write(SAMPLING_PRESETS, self.store.read(SAMPLING_PRESETS) | {name: sampling})

    def _chat_format_chosen(self, name: str) -> None:
        """Remember the format picked for the loaded model's file; the engine's own choice needs no entry."""
        model = self.session.state.model if self.session.state.ready else None
        if model is None:
            return
        formats = self.store.read(CHAT_FORMATS)
        if name:
            formats[model.name] = name
        else:
            formats.pop(model.name, None)
        self.store.write(CHAT_FORMATS, formats)

    def _note_speeds(self, stats: p.ReplyStats) -> None:
        if stats.engine_decode_tok_s and stats.prompt_tok_s:
            self.last_speeds = (stats.engine_decode_tok_s, stats.prompt_tok_s)
            self.speeds_of = (self.session.state.model, self.session.state.settings)

    def _hint_speed(self, stats: p.ReplyStats) -> None:
        """Decoding far below the plan's ceiling: say the likely reason and what to try, once per load."""
        state = self.session.state
        if not state.ready or self._hinted is state:
            return
        context = self.planning.loaded(state)
        if context is None:
            return
        planned, _ = planning(context.plan)
        if planned is None:
            return
        build = state.build
        offload = build is not None and build.gpu_offload
        tick = self.monitor.last_tick
        selected = self.monitor.selected_gpu
        sample = self.monitor.samples.get(selected) if selected is not None else None
        hint = speed_hint(
            SpeedFacts(
                decode_tok_s=stats.engine_decode_tok_s,
                n_gen=stats.n_gen,
                ceiling_tok_s=planned.predicted_tg_tok_s,
                threads=context.settings.n_threads,
                logical_cores=os.cpu_count(),
                physical_cores=physical_cores(),
                cpu_busy_pct=tick.host.cpu_pct if tick is not None else (),
                layers_on_gpu=planned.layers_on_gpu,
                n_layers=planned.n_layer + 1,
                gpu_offload=offload,
                throttle_reasons=(sample.throttle_reasons or ()) if sample is not None else (),
            )
        )
        if hint:
            self._hinted = state
            self.chat.show_notice(tr("Slower than it could be: {hint}").format(hint=planner_text(hint)))
