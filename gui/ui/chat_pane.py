"""The chat pane: transcript, input, Send/Stop, sampling, chat format, context meter and per-reply speed figures."""

from __future__ import annotations

import html
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QGuiApplication, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QHBoxLayout,
    QInputDialog,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from gui.core import protocol as p
from gui.core.chat import Conversation, Turn, format_stats
from gui.core.chat_formats import FORMATS, MODEL_FORMAT, format_label
from gui.core.load_state import LoadState, Phase
from gui.core.markdown_render import plain_blocks, render_markdown, render_markdown_blocks, settled_length
from gui.core.presets import BUILTIN_PRESETS, DEFAULT_PRESET, sampling_to_dict
from gui.core.specs import FloatSpec, IntSpec, specs_of
from gui.core.theme import Palette
from gui.services.engine_client import EngineUnavailable
from gui.ui.background import Background
from gui.ui.engine_bridge import ACK_S, FINISH_S, EngineBridge
from gui.ui.i18n import Tr, error_text, sentence_text
from gui.ui.load_session import LoadSession
from gui.ui.plain import open_link, plain_label, plain_tip
from gui.ui.spec_widgets import float_box, int_box
from gui.ui.theme import current_palette, follow_theme, themed_style
from gui.ui.transcript import Transcript, TurnView

tr = Tr("chat_pane")
ROLE_NAMES = {"user": tr.mark("You"), "assistant": tr.mark("Model"), "system": tr.mark("System")}
FRAME_S = 1 / 60  # at most one transcript update per frame
CUSTOM_PRESET = "Custom"
# The names of the built-in presets (gui/core/presets.py) and of Custom, as the window shows them.
PRESET_WORDS = (
    tr.mark("Balanced"),
    tr.mark("Precise"),
    tr.mark("Creative"),
    tr.mark("Deterministic"),
    tr.mark("Custom"),
)


class PresetBox(QComboBox):
    """Sampling presets, each shown in the window's language (a user's own by its name), while
    ``currentText()`` and ``setCurrentText()`` speak the names the settings keep."""

    def set_names(self, names: list[str]) -> None:
        self.clear()
        for name in names:
            self.addItem(tr(name) if name in PRESET_WORDS else name, name)

    def currentText(self) -> str:
        data = self.currentData()
        return str(data) if data is not None else super().currentText()

    def setCurrentText(self, text: str) -> None:
        index = self.findData(text)
        if index >= 0:
            self.setCurrentIndex(index)


class SamplingPanel(QWidget):
    """Preset, the sampler settings it stands for, and max tokens. Editing a value makes it 'Custom'."""

    changed = Signal()
    preset_saved = Signal(str, object)  # name, Sampling: the window stores user presets

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.presets: dict[str, p.Sampling] = dict(BUILTIN_PRESETS)
        self.preset = PresetBox(self)
        self.preset.setAccessibleName(tr("Sampling preset"))
        self.save_preset_button = QToolButton(self)
        self.save_preset_button.setText(tr("Save as…"))
        self.save_preset_button.setAccessibleName(tr("Save sampling preset"))
        # A box per declared sampler setting (gui.core.protocol.Sampling), in declaration order.
        self.boxes: dict[str, QSpinBox | QDoubleSpinBox] = {}
        for spec in specs_of(p.Sampling):
            if spec.panel and isinstance(spec, IntSpec):
                self.boxes[spec.key] = int_box(spec, self)
            elif spec.panel and isinstance(spec, FloatSpec):
                self.boxes[spec.key] = float_box(spec, self)
        self.seed = self.boxes["seed"]
        # gui/core/protocol.py writes this help with an f-string, which the .ts cannot hold: the same words here.
        self.seed.setToolTip(
            tr("Same seed, same settings, same prompt: the same reply ({random} picks one at random).").format(
                random=p.RANDOM_SEED
            )
        )
        self.random_seed = QToolButton(self)
        self.random_seed.setText(tr("random"))
        self.random_seed.setCheckable(True)
        self.random_seed.setAccessibleName(tr("Random seed"))
        self.max_tokens = int_box(p.MAX_TOKENS, self)
        form = QFormLayout(self)
        form.setContentsMargins(0, 0, 0, 0)
        preset_row = QHBoxLayout()
        preset_row.addWidget(self.preset, 1)
        preset_row.addWidget(self.save_preset_button)
        form.addRow(tr("Preset"), preset_row)
        for box in self.boxes.values():
            if box is self.seed:
                seed_row = QHBoxLayout()
                seed_row.addWidget(self.seed, 1)
                seed_row.addWidget(self.random_seed)
                form.addRow(box.accessibleName(), seed_row)
            else:
                form.addRow(box.accessibleName(), box)
        form.addRow(self.max_tokens.accessibleName(), self.max_tokens)
        self._loading = False
        self._fill_presets(DEFAULT_PRESET)
        self.preset.currentIndexChanged.connect(lambda _: self._preset_chosen(self.preset.currentText()))
        for box in self.boxes.values():
            box.valueChanged.connect(self._edited)
        self.random_seed.toggled.connect(self._edited)
        self.max_tokens.valueChanged.connect(lambda _: self.changed.emit())
        self.save_preset_button.clicked.connect(self._save_clicked)
        self._apply(self.presets[DEFAULT_PRESET])

    def _save_clicked(self) -> None:
        name, ok = QInputDialog.getText(self, tr("Save sampling preset"), tr("Name:"))
        if ok:
            self.save_preset(name)

    def save_preset(self, name: str) -> bool:
        """Keep the current settings under a name; built-in presets cannot be replaced."""
        name = name.strip()
        if not name or name in BUILTIN_PRESETS or name == CUSTOM_PRESET:
            return False
        sampling = self.sampling()
        self.presets[name] = sampling
        self._fill_presets(name)
        self.preset_saved.emit(name, sampling)
        return True

    def _fill_presets(self, current: str) -> None:
        self.preset.blockSignals(True)
        self.preset.set_names([*self.presets, CUSTOM_PRESET])
        self.preset.setCurrentText(current)
        self.preset.blockSignals(False)

    def add_presets(self, presets: dict[str, p.Sampling]) -> None:
        """User presets (from the settings store); built-in names are not overwritten."""
        for name, sampling in presets.items():
            if name not in BUILTIN_PRESETS and name != CUSTOM_PRESET:
                self.presets[name] = sampling
        self._fill_presets(self.preset.currentText())

    def _apply(self, sampling: p.Sampling) -> None:
        self._loading = True
        for key, box in self.boxes.items():
            if box is not self.seed:
                box.setValue(getattr(sampling, key))
        random = sampling.seed == p.RANDOM_SEED
        self.random_seed.setChecked(random)
        self.seed.setEnabled(not random)
        if not random:
            self.seed.setValue(sampling.seed)
        self._loading = False
        self.changed.emit()

    def _preset_chosen(self, name: str) -> None:
        if name in self.presets:
            self._apply(self.presets[name])

    def _edited(self, *_: object) -> None:
        self.seed.setEnabled(not self.random_seed.isChecked())
        if self._loading:
            return
        if self.sampling() != self.presets.get(self.preset.currentText()):
            self.preset.blockSignals(True)
            self.preset.setCurrentText(CUSTOM_PRESET)
            self.preset.blockSignals(False)
        self.changed.emit()

    def sampling(self) -> p.Sampling:
        values: dict[str, Any] = {}
        for key, box in self.boxes.items():
            # A double box holds the binary neighbour of what it shows: keep the shown decimals.
            values[key] = round(box.value(), box.decimals()) if isinstance(box, QDoubleSpinBox) else box.value()
        if self.random_seed.isChecked():
            values["seed"] = p.RANDOM_SEED
        return p.Sampling(**values)

    def set_sampling(self, sampling: p.Sampling) -> None:
        name = next((n for n, s in self.presets.items() if s == sampling), CUSTOM_PRESET)
        self.preset.blockSignals(True)
        self.preset.setCurrentText(name)
        self.preset.blockSignals(False)
        self._apply(sampling)


class ChatPane(QWidget):
    reply_finished = Signal(object)  # ReplyStats
    conversation_changed = Signal()  # a turn was added, finished, edited or removed
    new_chat_requested = Signal()
    live_rate = Signal(object)  # tokens/s as the pane receives them while streaming; 0.0 when a reply ends
    streaming_changed = Signal(bool)  # a reply was asked for (True), or it ended or was let go (False)
    chat_format_chosen = Signal(str)  # the user picked a chat format for the loaded model; "": the engine's choice

    def __init__(self, bridge: EngineBridge, session: LoadSession, parent: QWidget | None = None) -> None:
        """``session``: the load the pane follows (whether it takes messages, the context, and what each
        reply is recorded as generated with)."""
        super().__init__(parent)
        self.bridge = bridge
        self.session = session
        self.conversation = Conversation()
        self.ignore_eos = False  # benchmarks: always generate max_tokens
        self.tokens_used = 0  # prompt + reply of the last exchange: what the context holds now
        self._request: int | None = None
        self._reply: Turn | None = None
        self._last_flush = 0.0
        self._notice_action: Callable[[], None] | None = None
        self.arrivals: list[tuple[float, int]] = []  # (pane time, tokens) per update, for the benchmark
        self._renderer = Background("markdown", parent=self)
        # Its thread is started now: starting it later, at the end of a long reply, makes the UI thread
        # wait for the new thread to come up while that thread is already busy rendering.
        self._renderer.run(_warm_up_highlighting)
        self._rendering: set[tuple[str, str, str]] = set()  # long replies being rendered on the worker
        self._settled = 0  # how much of the reply being written is rendered for good
        self._prompt_tokens = 0  # of the reply being written, once the engine has read its prompt

        self.transcript = Transcript(self)  # replies are markdown from the model: no resources, ever
        self.transcript.setAccessibleName(tr("Conversation"))
        self.transcript.anchorClicked.connect(open_link)
        follow_theme(self.transcript, lambda _palette: self.show_conversation(), now=False)  # code, headings
        # Why the engine cannot take a reply now (a sweep, an API request), shown above the box; "" when it can.
        self.engine_line = plain_label("", self, wrap=True)
        self.engine_line.setAccessibleName(tr("Who is using the engine"))
        self.engine_line.setVisible(False)
        self.notice = plain_label(parent=self)  # engine and template errors: text from the model file
        self.notice.setWordWrap(True)
        self.notice.setAccessibleName(tr("Engine notice"))
        themed_style(self.notice, _notice_style)
        self.notice_button = QPushButton(self)
        self.notice_button.setAccessibleName(tr("Notice action"))
        self.notice_dismiss = QPushButton(tr("Dismiss"), self)
        notice_row = QHBoxLayout()
        notice_row.addWidget(self.notice, 1)
        notice_row.addWidget(self.notice_button)
        notice_row.addWidget(self.notice_dismiss)
        self.notice_box = QWidget(self)
        self.notice_box.setLayout(notice_row)
        notice_row.setContentsMargins(0, 0, 0, 0)
        self.notice_box.hide()

        self.system_prompt = QPlainTextEdit(self)
        self.system_prompt.setPlaceholderText(tr("System prompt (optional): how the model should behave."))
        self.system_prompt.setAccessibleName(tr("System prompt"))
        self.system_prompt.setTabChangesFocus(True)  # Tab moves on; it never types a tab into the prompt
        self.system_prompt.setFixedHeight(54)
        self.sampling_panel = SamplingPanel(self)
        self.sampling_panel.hide()
        self.sampling_toggle = QToolButton(self)
        self.sampling_toggle.setText(tr("Sam&pling…"))
        self.sampling_toggle.setCheckable(True)
        self.sampling_toggle.setAccessibleName(tr("Show sampling settings"))
        self.new_button = QPushButton(tr("Ne&w chat"), self)
        self.new_button.setToolTip(tr("Start a new conversation (Ctrl+N)"))
        self.context_meter = QProgressBar(self)
        self.context_meter.setAccessibleName(tr("Context used"))
        self.context_meter.setFormat(tr("context: —"))
        self.context_meter.setTextVisible(True)
        # How the conversation is laid out for the loaded model: as the engine chose at load, or as picked here.
        self.format_box = QComboBox(self)
        self.format_box.setAccessibleName(tr("Chat format"))
        self.format_box.addItem(tr("From the model"), "")
        for chat_format in FORMATS.values():
            self.format_box.addItem(chat_format.label, chat_format.name)
        self.format_box.setEnabled(False)
        # Which format the engine chose and why, when it is not the model's own template as it is.
        self.format_note = plain_label(parent=self, wrap=True)  # may quote a template's error: text from the file
        self.format_note.setAccessibleName(tr("Chat format in use"))
        themed_style(self.format_note, lambda palette: f"QLabel {{ color: {palette.warn}; }}")
        self.format_note.hide()
        top = QHBoxLayout()
        top.addWidget(self.new_button)
        top.addWidget(self.sampling_toggle)
        top.addWidget(self.context_meter, 1)
        # A row of its own, under the top one: at the window's usual width the top row has no room left for
        # it, and the reason reads best beside the choice it explains.
        format_row = QHBoxLayout()
        format_row.addWidget(plain_label(tr("Chat format:"), self))
        format_row.addWidget(self.format_box)
        format_row.addWidget(self.format_note, 1)

        self.input = QPlainTextEdit(self)
        self.input.setPlaceholderText(tr("Type a message. Ctrl+Enter sends, Esc stops the reply."))
        self.input.setAccessibleName(tr("Message"))
        self.input.setTabChangesFocus(True)
        self.input.setFixedHeight(80)
        self.send_button = QPushButton(tr("&Send"), self)
        self.send_button.setAccessibleName(tr("Send message"))
        self.stop_button = QPushButton(tr("S&top"), self)
        self.stop_button.setAccessibleName(tr("Stop reply"))
        self.regenerate_button = QPushButton(tr("Re&generate"), self)
        self.regenerate_button.setToolTip(tr("Replace the last reply with a new one"))
        self.edit_button = QPushButton(tr("&Edit last"), self)
        self.edit_button.setToolTip(tr("Put your last message back in the box to change and resend it"))
        self.copy_button = QPushButton(tr("Cop&y reply"), self)
        self.stats_label = plain_label(tr("No reply yet."), self)
        self.stats_label.setAccessibleName(tr("Reply statistics"))
        self.stats_label.setWordWrap(True)
        self.stats_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        actions = QHBoxLayout()
        actions.addWidget(self.regenerate_button)
        actions.addWidget(self.edit_button)
        actions.addWidget(self.copy_button)
        actions.addStretch(1)
        buttons = QHBoxLayout()
        buttons.addWidget(self.stats_label, 1)
        buttons.addWidget(self.stop_button)
        buttons.addWidget(self.send_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(top)
        layout.addLayout(format_row)
        layout.addWidget(self.sampling_panel)
        layout.addWidget(self.system_prompt)
        layout.addWidget(self.notice_box)
        layout.addWidget(self.transcript, 1)
        layout.addLayout(actions)
        layout.addWidget(self.engine_line)
        layout.addWidget(self.input)
        layout.addLayout(buttons)

        self.send_button.clicked.connect(self.send)
        self.stop_button.clicked.connect(self.stop)
        self.regenerate_button.clicked.connect(self.regenerate)
        self.edit_button.clicked.connect(self.edit_last)
        self.copy_button.clicked.connect(self.copy_reply)
        self.new_button.clicked.connect(self.new_chat_requested)
        self.sampling_toggle.toggled.connect(self.sampling_panel.setVisible)
        self.format_box.currentIndexChanged.connect(self._format_chosen)
        self.notice_button.clicked.connect(self._run_notice_action)
        self.notice_dismiss.clicked.connect(lambda: self.show_notice(""))
        self.system_prompt.textChanged.connect(self._system_prompt_edited)
        QShortcut(QKeySequence("Ctrl+Return"), self, self.send)
        QShortcut(QKeySequence("Ctrl+Enter"), self, self.send)
        QShortcut(QKeySequence(Qt.Key.Key_Escape), self, self.stop)
        QShortcut(QKeySequence("Ctrl+N"), self, self.new_chat_requested.emit)
        self._flush_timer = QTimer(self)
        self._flush_timer.setSingleShot(True)
        self._flush_timer.timeout.connect(self._flush)
        bridge.tokens_ready.connect(self._tokens_ready)
        bridge.engine_event.connect(self._on_event)
        session.changed.connect(self._load_state_changed)
        self._update_buttons()
        self.show_conversation()

    # ---- settings the tests and the window use ------------------------------------------------

    @property
    def max_tokens(self) -> int:
        return self.sampling_panel.max_tokens.value()

    @max_tokens.setter
    def max_tokens(self, value: int) -> None:
        self.sampling_panel.max_tokens.setValue(value)

    @property
    def sampling(self) -> p.Sampling:
        return self.sampling_panel.sampling()

    @sampling.setter
    def sampling(self, value: p.Sampling) -> None:
        self.sampling_panel.set_sampling(value)

    @property
    def chat_format(self) -> str:
        """The format the next reply is asked in: a name in FORMATS, or "" for the one chosen at load."""
        return str(self.format_box.currentData() or "")

    def set_chat_format(self, name: str) -> None:
        """Show the format remembered for the loaded model ("" or a name not known: the engine's choice)."""
        self.format_box.blockSignals(True)
        self.format_box.setCurrentIndex(max(self.format_box.findData(name), 0))
        self.format_box.blockSignals(False)
        self._show_format()

    def _format_chosen(self, _index: int) -> None:
        self._show_format()
        self.chat_format_chosen.emit(self.chat_format)

    def _show_format(self) -> None:
        """Say which format replies are in when the engine chose one in place of the model's own template."""
        loaded = self.session.state.loaded if self._ready else None
        note = loaded.chat_format_reason if loaded is not None and not self.chat_format else ""
        self.format_note.setText(sentence_text(note))  # a sentence of gui/core/chat_template.py
        self.format_note.setVisible(bool(note))
        tip = tr("How the conversation is laid out for the model, remembered per model file.")
        if loaded is not None:
            own = loaded.chat_format == MODEL_FORMAT
            chosen = tr("its own chat template") if own else sentence_text(format_label(loaded.chat_format))
            tip += tr(" From the model: {format}.").format(format=chosen)
        self.format_box.setToolTip(plain_tip(tip))

    # ---- state ----------------------------------------------------------------------------

    @property
    def engine_busy(self) -> str:
        return self.engine_line.text()

    @engine_busy.setter
    def engine_busy(self, reason: str) -> None:
        self.engine_line.setText(reason)
        self.engine_line.setVisible(bool(reason))

    @property
    def streaming(self) -> bool:
        return self._request is not None

    @property
    def _ready(self) -> bool:
        """A model is loaded and takes messages: the load session's word, not a copy of it."""
        return self.session.state.ready

    @property
    def n_ctx(self) -> int:
        """The context one conversation can use in the loaded model; 0 when none is loaded."""
        loaded = self.session.state.loaded
        return loaded.n_ctx if loaded is not None and self._ready else 0

    def set_conversation(self, conversation: Conversation) -> None:
        was_streaming = self.streaming
        if was_streaming:
            self.stop()
        self.conversation = conversation
        self._request = None
        if was_streaming:
            self.streaming_changed.emit(False)
        self._reply = None
        self.tokens_used = 0
        self.system_prompt.blockSignals(True)
        self.system_prompt.setPlainText(conversation.system_prompt)
        self.system_prompt.blockSignals(False)
        self.show_notice("")
        # The line under the chat speaks of this conversation: its last reply's figures, or none yet.
        last = self.conversation.last
        if last is not None and last.role == "assistant" and last.stats is not None:
            self.stats_label.setText(_unbroken(sentence_text(format_stats(last.stats))))
        else:
            self.stats_label.setText(tr("No reply yet."))
        self._update_meter()
        self.show_conversation()
        self._update_buttons()

    def _update_buttons(self) -> None:
        idle = not self.streaming
        last = self.conversation.last
        self.send_button.setEnabled(self._ready and idle)
        self.stop_button.setEnabled(self.streaming)
        self.regenerate_button.setEnabled(self._ready and idle and last is not None and last.role == "assistant")
        self.edit_button.setEnabled(idle and any(t.role == "user" for t in self.conversation.turns))
        self.copy_button.setEnabled(any(t.role == "assistant" and t.text for t in self.conversation.turns))
        self.new_button.setEnabled(idle)

    def _update_meter(self) -> None:
        if not self.n_ctx or not self._ready:
            self.context_meter.setRange(0, 1)
            self.context_meter.setValue(0)
            self.context_meter.setFormat(tr("context: —"))
            return
        self.context_meter.setRange(0, self.n_ctx)
        self.context_meter.setValue(min(self.tokens_used, self.n_ctx))
        self.context_meter.setFormat(
            tr("context: {used} of {total} tokens").format(used=f"{self.tokens_used:,}", total=f"{self.n_ctx:,}")
        )

    def show_notice(self, text: str, action: str = "", on_action: Callable[[], None] | None = None) -> None:
        """A message above the transcript, optionally with one button that does something about it."""
        self.notice.setText(text)
        self._notice_action = on_action
        self.notice_button.setText(action)
        self.notice_button.setVisible(bool(action and on_action))
        self.notice_box.setVisible(bool(text))

    def _run_notice_action(self) -> None:
        action = self._notice_action
        self.show_notice("")
        if action is not None:
            action()

    def _system_prompt_edited(self) -> None:
        self.conversation.system_prompt = self.system_prompt.toPlainText()
        self.conversation_changed.emit()

    # ---- actions --------------------------------------------------------------------------

    def send(self) -> None:
        text = self.input.toPlainText().strip()
        if not text or not self._ready or self.streaming:
            return
        if self._engine_taken(tr("Not sent"), tr(" Your message is kept in the box.")):
            return
        self.conversation.add_user(text)
        if self._request_reply():
            self.input.clear()
        else:
            self.conversation.turns.pop()
            self.show_conversation()

    def _request_reply(self) -> bool:
        """Ask the engine for a reply to the conversation as it stands; False if it could not be sent."""
        try:
            sampling = self.sampling.validated()
        except ValueError as exc:
            self.show_notice(
                tr("Cannot send: {error}. Your message is kept in the box.").format(error=error_text(exc, "chat"))
            )
            return False
        self._reply = self.conversation.start_reply()
        loaded = self.session.state  # what was sent with the load, whatever the sliders show now
        self._reply.model_file = loaded.model_name
        self._reply.settings = loaded.settings.to_dict() if loaded.settings is not None else None
        self._reply.sampling = sampling_to_dict(sampling)
        try:
            self._request = self.bridge.client.generate(
                self.conversation.messages(), self.max_tokens, sampling, self.ignore_eos, self.chat_format
            )
        except EngineUnavailable as exc:
            self.conversation.turns.pop()
            self._reply = None
            self.show_notice(
                tr("Cannot send: {error}. Your message is kept in the box.").format(error=error_text(exc, "chat"))
            )
            return False
        self.arrivals = []
        self._prompt_tokens = 0
        self.stats_label.setText(tr("Waiting for the first token…"))
        self.show_conversation()
        self._update_buttons()
        self.conversation_changed.emit()
        self.streaming_changed.emit(True)
        return True

    def stop(self) -> None:
        rid = self._request
        if rid is None:
            return
        try:
            self.bridge.client.stop(rid)
        except EngineUnavailable:
            return

        def ended(event: Any) -> bool:
            return isinstance(event, p.Done | p.GenerateFailed) and event.request_id == rid

        def acknowledged(event: Any) -> bool:
            return ended(event) or (isinstance(event, p.Acknowledged) and event.request_id == rid)

        self.bridge.expect("acknowledge Stop", acknowledged, ACK_S)
        self.bridge.expect("end the reply after Stop", ended, FINISH_S)

    def regenerate(self) -> None:
        last = self.conversation.last
        if self.streaming or not self._ready or last is None or last.role != "assistant":
            return
        if self._engine_taken(tr("Not regenerated"), ""):
            return
        self.conversation.turns.pop()
        self._request_reply()

    def _engine_taken(self, what: str, kept: str) -> bool:
        """Another user of the one engine (a sweep, an API request) holds it: say so, and True."""
        if self.engine_busy:
            self.show_notice(tr("{what}: {busy}{kept}").format(what=what, busy=self.engine_busy, kept=kept))
        return bool(self.engine_busy)

    def edit_last(self) -> None:
        """Take the last user message back into the input box, dropping it and what came after."""
        if self.streaming:
            return
        turns = self.conversation.turns
        index = max((i for i, t in enumerate(turns) if t.role == "user"), default=None)
        if index is None:
            return
        self.input.setPlainText(turns[index].text)
        del turns[index:]
        self.show_conversation()
        self._update_buttons()
        self.conversation_changed.emit()
        self.input.setFocus()

    def copy_reply(self) -> None:
        reply = next((t for t in reversed(self.conversation.turns) if t.role == "assistant" and t.text), None)
        if reply is not None:
            QGuiApplication.clipboard().setText(reply.text)

    def drop_oldest_and_resend(self) -> None:
        """The context is full: forget the oldest exchange (the system prompt stays) and ask again."""
        turns = self.conversation.turns
        if self.streaming:
            return
        if not self._ready:
            self.show_notice(tr("Load the model again first; nothing was dropped."))
            return
        if len(turns) <= 1:
            self.show_notice(tr("Nothing older to drop: this message alone is longer than the context."))
            return
        if self._engine_taken(tr("Nothing dropped"), ""):
            return
        before = list(turns)
        cut = next((i for i in range(1, len(turns)) if turns[i].role == "user"), len(turns) - 1)
        del turns[:cut]
        if turns and turns[-1].role == "assistant" and not turns[-1].text:
            turns.pop()
        if not self._request_reply():
            turns[:] = before  # nothing was sent: keep every turn
            self.show_conversation()

    def keep_partial_reply(self, note: str) -> None:
        """Take what has streamed so far into the reply and end it here (the window is closing)."""
        self._flush()
        if self._reply is not None:
            self._reply.note = note
        self._request = None
        self._reply = None

    # ---- streaming ------------------------------------------------------------------------

    def _tokens_ready(self) -> None:
        wait = FRAME_S - (time.perf_counter() - self._last_flush)
        if wait <= 0:
            self._flush()
        elif not self._flush_timer.isActive():
            self._flush_timer.start(int(wait * 1000) + 1)

    def _flush(self) -> None:
        self._last_flush = time.perf_counter()
        tokens = [t for t, _ in self.bridge.take_tokens() if t.request_id == self._request]
        if not tokens or self._reply is None:
            return
        piece = "".join(t.text for t in tokens)
        self._reply.text += piece
        self.arrivals.append((self._last_flush, len(tokens)))
        self._show_streaming()
        received = sum(n for _, n in self.arrivals)
        if self._prompt_tokens:
            self.tokens_used = self._prompt_tokens + received  # the meter moves as the reply grows
            self._update_meter()
        elapsed = self._last_flush - self.arrivals[0][0]
        if received > 1 and elapsed > 0:
            rate = (received - 1) / elapsed
            self.stats_label.setText(_unbroken(tr("{n} tokens · {rate} tok/s").format(n=received, rate=f"{rate:.1f}")))
            self.live_rate.emit(rate)

    def _on_event(self, event: Any) -> None:
        if isinstance(event, p.PromptRead) and event.request_id == self._request:
            self._prompt_tokens = event.n_prompt
            self.tokens_used = event.n_prompt
            self._update_meter()
        elif isinstance(event, p.Done) and event.request_id == self._request:
            self._flush()
            if self._reply is not None:
                self._reply.stats = event.stats
                if event.stats.finish_reason == "cancelled":
                    self._reply.note = tr("stopped")
                elif event.stats.finish_reason == "context":
                    self._reply.note = tr("cut off: the context is full")
            self.tokens_used = event.stats.n_prompt + event.stats.n_gen
            self._update_meter()
            self.stats_label.setText(_unbroken(sentence_text(format_stats(event.stats))))
            self._end_reply()
            if event.stats.finish_reason == "context":
                self.show_notice(
                    tr(
                        "The context is full: the reply stopped there. Drop the oldest turns to go on, or start a new "
                        "chat (or load with a larger context)."
                    ),
                    tr("Drop oldest turns"),
                    self._drop_oldest_after_cut,
                )
            self.reply_finished.emit(event.stats)
        elif isinstance(event, p.GenerateFailed) and event.request_id == self._request:
            self._flush()
            reply = self._reply
            self._end_reply()
            self.stats_label.setText(tr("No reply: see the note above."))
            if event.kind == "context_full":
                if reply is not None and not reply.text:
                    self.conversation.turns.remove(reply)
                self.show_conversation()
                self.show_notice(
                    tr(
                        "The conversation ({n_prompt} tokens) no longer fits the context ({n_ctx}). "
                        "Drop the oldest turns and send again, or stop here."
                    ).format(n_prompt=f"{event.n_prompt:,}", n_ctx=f"{event.n_ctx:,}"),
                    tr("Drop oldest turns and resend"),
                    self.drop_oldest_and_resend,
                )
            else:
                if reply is not None:
                    reply.note = tr("failed: {error}").format(error=sentence_text(event.error))
                self.show_conversation()
                self.show_notice(tr("The reply failed: {error}").format(error=sentence_text(event.error)))
        elif isinstance(event, p.Notice) and event.request_id == self._request:
            self.show_notice(sentence_text(event.text))

    def _load_state_changed(self, state: LoadState, before: LoadState) -> None:
        if state.phase is Phase.ENGINE_DEAD and self.streaming:
            self._flush()
            if self._reply is not None:
                self._reply.note = tr("interrupted: the engine stopped")
            self._end_reply()
            self.stats_label.setText(tr("The reply was cut short: the engine stopped."))
        if state.ready and state.loaded is not before.loaded:
            self.tokens_used = 0  # a fresh context
            self.show_notice("")
        if state.ready != before.ready and not self.conversation.turns:
            self.show_conversation()  # the hint under an empty chat follows whether a model is loaded
        self.format_box.setEnabled(state.ready)  # a choice is remembered for the model it was made on
        self._show_format()
        self._update_meter()
        self._update_buttons()

    def _drop_oldest_after_cut(self) -> None:
        last = self.conversation.last
        if last is not None and last.role == "assistant":
            self.conversation.turns.pop()  # the cut-off reply goes; the question is asked again
        self.drop_oldest_and_resend()

    def _end_reply(self) -> None:
        ended = self._request is not None
        if ended:
            self.live_rate.emit(0.0)
        self._request = None
        self._reply = None
        if ended:
            self.streaming_changed.emit(False)
        self.show_conversation()
        self._update_buttons()
        self.conversation_changed.emit()

    # ---- rendering ------------------------------------------------------------------------

    def show_conversation(self) -> None:
        """Show the conversation (on turn boundaries, not per token): the transcript lays out only what
        changed, a few blocks at a time."""
        turns = self.conversation.turns
        streaming = self._reply is not None and self._reply is self.conversation.last
        palette = current_palette()  # a turn shown in another theme is shown again
        views: list[TurnView] = []
        for turn in turns[:-1] if streaming else turns:
            body, rendered = self._body(turn, palette)
            extra = []
            if turn.note:
                extra.append(f'<i style="color:{palette.warn}">[{html.escape(turn.note)}]</i>')
            if turn.stats is not None:
                figures = html.escape(_unbroken(sentence_text(format_stats(turn.stats))))
                extra.append(f'<span style="color:{palette.muted}; font-size:small">{figures}</span>')
            footer = (f'<p style="margin-top:0">{"<br>".join(extra)}</p>',) if extra else ()
            key = (turn.role, turn.text, turn.note, turn.stats, rendered, palette.name)
            views.append(TurnView(key, (_heading(turn.role, palette), *body, *footer)))
        if streaming and self._reply is not None:
            # The reply being streamed is written as it arrives after its heading (_show_streaming).
            views.append(TurnView(("streaming", id(self._reply), palette.name), (_heading("assistant", palette),)))
        hint = tr("Type a message below.") if self._ready else tr("Load a model, then type a message below.")
        self.transcript.show_turns(views, f'<p style="color:{palette.muted}">{hint}</p>')
        if streaming:
            self._settled = 0
            self._show_streaming()

    def _show_streaming(self) -> None:
        """The reply so far, looking as it will when finished: settled blocks are rendered once, the block
        still being written again each frame (as plain text once it is too long to render that often)."""
        if self._reply is None:
            return
        text = self._reply.text
        end = settled_length(text, self._settled)
        palette = current_palette()
        settled = render_markdown_blocks(text[self._settled : end], palette=palette) if end > self._settled else ()
        self._settled = end
        tail = text[end:]
        shown = (
            render_markdown_blocks(tail, palette=palette) if len(tail) <= TAIL_MARKDOWN_CHARS else plain_blocks(tail)
        )
        self.transcript.stream(settled, shown)

    def _body(self, turn: Turn, palette: Palette) -> tuple[tuple[str, ...], bool]:
        """A turn's text as HTML blocks, and whether that is its final form.

        A long reply's markdown takes tens of milliseconds to render: it is laid out as plain paragraphs
        at once and rendered on a worker thread, then shown again."""
        key = (turn.role, turn.text, palette.name)
        pieces = _PIECES.get(key)
        if pieces is not None:
            _PIECES.move_to_end(key)
            return pieces, True
        if turn.role != "assistant" or len(turn.text) <= RENDER_INLINE_CHARS:
            return _remember(key, _render_pieces(turn.role, turn.text, palette)), True
        if key not in self._rendering:
            self._rendering.add(key)
            text = turn.text
            self._renderer.run(
                lambda: _render_pieces("assistant", text, palette), lambda pieces: self._rendered(key, pieces)
            )
        return plain_blocks(turn.text), False

    def _rendered(self, key: tuple[str, str, str], pieces: tuple[str, ...]) -> None:
        self._rendering.discard(key)
        _remember(key, pieces)
        self.show_conversation()


# Replies up to this long are rendered on the UI thread (a few milliseconds); longer ones on a worker.
RENDER_INLINE_CHARS = 8_000
# The block still being written is rendered as markdown each frame up to this long (an open code block
# can grow large); past it, as plain text until it closes.
TAIL_MARKDOWN_CHARS = 6_000
_PIECES: OrderedDict[tuple[str, str, str], tuple[str, ...]] = OrderedDict()  # (role, text, palette) -> HTML
_PIECES_KEPT = 512


def _remember(key: tuple[str, str, str], pieces: tuple[str, ...]) -> tuple[str, ...]:
    """Rendered turns are kept: the transcript is shown again at every turn boundary, old turns unchanged."""
    _PIECES[key] = pieces
    while len(_PIECES) > _PIECES_KEPT:
        _PIECES.popitem(last=False)
    return pieces


def _unbroken(text: str) -> str:
    """Figures as the eye reads them: a line never breaks inside "tok/s"."""
    return text.replace("tok/s", "tok\u2060/\u2060s")


def _heading(role: str, palette: Palette) -> str:
    who = tr(ROLE_NAMES[role]) if role in ROLE_NAMES else role
    colour = palette.accent if role == "user" else palette.assistant
    return f'<p style="margin-top:10px; margin-bottom:2px"><b style="color:{colour}">{who}</b></p>'


def _notice_style(palette: Palette) -> str:
    banner = palette.banners["warning"]
    return (
        f"QLabel {{ background: {banner.background}; color: {banner.text}; border: 1px solid {banner.border};"
        " padding: 6px; }"
    )


def _render_pieces(role: str, text: str, palette: Palette) -> tuple[str, ...]:
    """The model's replies are markdown (code blocks highlighted); what the user typed is shown as typed."""
    if role == "assistant":
        return render_markdown_blocks(text, palette=palette) or ("<p></p>",)
    return plain_blocks(text)


def _warm_up_highlighting() -> None:
    """Load the highlighter and common lexers once, off the UI thread, so the first reply does not stall."""
    sample = "".join(f"```{lang}\nx = 1\n```\n" for lang in ("python", "bash", "json", "javascript", "cpp", "c"))
    render_markdown(sample)
