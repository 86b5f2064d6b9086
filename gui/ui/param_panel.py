"""The load settings panel: a widget for every setting declared in gui.core.params."""

from __future__ import annotations

import itertools
import math
import os
from typing import Any, cast

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QGridLayout,
    QLabel,
    QScrollArea,
    QSlider,
    QToolButton,
    QToolTip,
    QWidget,
)

from gui.core.params import CONTEXT, CPU_MOE_LAYERS, GPU_LAYERS, LOAD_SPECS, SPECS_BY_KEY, THREADS, LoadSettings
from gui.core.specs import BoolSpec, ChoiceSpec, IntSpec, Spec
from gui.ui.i18n import Tr
from gui.ui.plain import plain_label, plain_tip
from gui.ui.rpc_panel import RpcPanel
from gui.ui.spec_widgets import ClampSpinBox, TextBox, check_box, choice_box, help_text, int_box, label, text_box
from gui.ui.theme import current_palette, follow_theme, themed_style

tr = Tr("param_panel")
# The settings of a load on several devices (declared panel=False): shown only while the plan has more than one.
SPLIT_KEYS = ("split_mode", "tensor_split", "main_gpu")
MAIN_GPU = cast(IntSpec, SPECS_BY_KEY["main_gpu"])


def in_sentence(name: str) -> str:
    """A setting's name inside a sentence: "Context" -> "context", but "GPU layers" keeps its capitals."""
    return name if name[1:2].isupper() else name[:1].lower() + name[1:]


class ParamRow:
    """A slider and a spin box kept in step. Log-scale specs slide through powers of two."""

    def __init__(self, spec: IntSpec, parent: QWidget) -> None:
        self.spec = spec
        self.maximum = spec.maximum
        self.name = label(spec)
        self.label = QLabel(self.name, parent)
        self.label.setWordWrap(True)  # a narrow window wraps a long name onto two lines
        self.slider = QSlider(Qt.Orientation.Horizontal, parent)
        self.spin = ClampSpinBox(parent)
        self.spin.setSingleStep(spec.step)
        # What bounds the setting now, for the line that says a typed value was brought into range.
        self.limit = tr("the most {setting} allows").format(setting=in_sentence(self.name))
        for widget in (self.label, self.slider, self.spin):
            widget.setToolTip(help_text(spec))
        self.slider.setAccessibleName(tr("{setting} slider").format(setting=self.name))
        self.spin.setAccessibleName(self.name)
        self.pin = QToolButton(parent)
        self.pin.setCheckable(True)
        self.pin.setAccessibleName(tr("Pin {setting}").format(setting=self.name))
        self.pin.toggled.connect(self._pin_toggled)
        self._pin_toggled(True)
        self.pin.setMinimumWidth(self.pin.sizeHint().width())  # as wide pinned as not: nothing moves
        self._pin_toggled(False)
        follow_theme(self.pin, lambda _palette: self._pin_toggled(self.pin.isChecked()), now=False)
        self.slider.setMinimumWidth(48)
        self.slider.valueChanged.connect(self._slider_moved)
        self.spin.valueChanged.connect(self._spin_changed)
        self.set_maximum(spec.maximum)

    def _pin_toggled(self, pinned: bool) -> None:
        what = in_sentence(self.name)
        self.pin.setText(tr("pinned") if pinned else tr("pin"))
        self.pin.setStyleSheet(f"font-weight: bold; color: {current_palette().accent}" if pinned else "")
        self.pin.setToolTip(
            tr("Pinned: auto-fit leaves {setting} as it is. Click to let auto-fit change it.").format(setting=what)
            if pinned
            else tr("Click to pin {setting}: auto-fit will leave it as it is.").format(setting=what)
        )

    def clamped_words(self, typed: int, value: int) -> str:
        """Why a typed value was changed, in words."""
        if typed > value:
            if self.spec.key == GPU_LAYERS.key:
                return tr("{setting}: {typed} is more than there are, so all {value} are used.").format(
                    setting=self.name, typed=f"{typed:,}", value=f"{value:,}"
                )
            return tr("{setting}: {typed} is more than {limit} ({value}), so {value} is used.").format(
                setting=self.name, typed=f"{typed:,}", limit=self.limit, value=f"{value:,}"
            )
        return tr("{setting}: {typed} is less than the least allowed ({value}), so {value} is used.").format(
            setting=self.name, typed=f"{typed:,}", value=f"{value:,}"
        )

    def _to_slider(self, value: int) -> int:
        if self.spec.log_scale:
            return round(math.log2(max(value, 1)))
        return value

    def _from_slider(self, position: int) -> int:
        return 1 << position if self.spec.log_scale else position

    def set_maximum(self, maximum: int) -> None:
        value = self.spin.value()
        self.maximum = max(self.spec.minimum, min(maximum, self.spec.maximum))
        self.spin.setRange(self.spec.minimum, self.maximum)
        self.slider.setRange(self._to_slider(self.spec.minimum), self._to_slider(self.maximum))
        self.set_value(min(value, self.maximum) if value else self.spec.default)
        self._spin_changed(self.spin.value())  # a clamped value emits nothing; place the handle anyway

    def set_value(self, value: int) -> None:
        self.spin.setValue(self.spec.clamp(value, self.maximum))

    def value(self) -> int:
        return self.spin.value()

    def _slider_moved(self, position: int) -> None:
        value = self._from_slider(position)
        if self._to_slider(self.spin.value()) != position:
            self.spin.setValue(self.spec.clamp(value, self.maximum))

    def _spin_changed(self, value: int) -> None:
        self.slider.blockSignals(True)
        self.slider.setValue(self._to_slider(value))
        self.slider.blockSignals(False)


class ParamPanel(QWidget):
    """A widget for every declared load setting (gui.core.params): slider rows for numbers, a list for
    choices, a check box for switches."""

    changed = Signal(object)  # LoadSettings

    def __init__(self, settings: LoadSettings, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._base = settings
        self._applying = False
        # The machine's logical cores: more threads than these is taken, but said (it slows decoding).
        self.logical_cores = os.cpu_count()
        self._threads_said = ""
        grid = QGridLayout(self)
        grid.setContentsMargins(0, 0, 0, 0)
        self.rows: dict[str, ParamRow] = {}
        self.choices: dict[str, QComboBox] = {}
        self.switches: dict[str, QCheckBox] = {}
        self.numbers: dict[str, ClampSpinBox] = {}  # a plain box for a number no slider suits (the main GPU)
        self.texts: dict[str, TextBox] = {}
        self.split_widgets: list[QWidget] = []  # the several-devices rows, shown with more than one device
        self.n_devices = 1
        # A row per setting: a slider row for a number, a list for a choice, a box for a switch, a text box for
        # text; the several-devices settings in a plain row each.
        n_rows = 0
        for spec in (s for s in LOAD_SPECS if s.panel or s.key in SPLIT_KEYS):
            if spec.key in SPLIT_KEYS:
                self.split_widgets += self._split_row(spec, grid, n_rows)
            elif isinstance(spec, IntSpec):
                row = ParamRow(spec, self)
                grid.addWidget(row.label, n_rows, 0)
                grid.addWidget(row.slider, n_rows, 1)
                grid.addWidget(row.spin, n_rows, 2)
                grid.addWidget(row.pin, n_rows, 3)
                row.spin.valueChanged.connect(self._emit)
                row.spin.clamped.connect(
                    lambda typed, value, row=row: self.say(row.clamped_words(typed, value), near=row.spin)
                )
                if spec.key == THREADS.key:
                    row.spin.valueChanged.connect(self._threads_changed)
                self.rows[spec.key] = row
            elif isinstance(spec, ChoiceSpec):
                combo = choice_box(spec, self)
                name = QLabel(label(spec), self)
                name.setToolTip(help_text(spec))
                name.setWordWrap(True)
                grid.addWidget(name, n_rows, 0)
                grid.addWidget(combo, n_rows, 1, 1, 3)
                combo.currentTextChanged.connect(self._emit)
                self.choices[spec.key] = combo
            elif isinstance(spec, BoolSpec):
                box = check_box(spec, self)
                grid.addWidget(box, n_rows, 0, 1, 4)
                box.toggled.connect(self._emit)
                self.switches[spec.key] = box
            n_rows += 1
        # Other machines' devices (llama.cpp's RPC): the load setting rpc_servers, and the link for the plan.
        self.rpc = RpcPanel(self)
        grid.addWidget(self.rpc, n_rows, 0, 1, 4)
        self.rpc.servers_changed.connect(self._emit)
        n_rows += 1
        # A typed value brought into range is said here, not changed silently.
        self.note = plain_label(parent=self)
        self.note.setWordWrap(True)
        themed_style(self.note, lambda palette: f"color: {palette.warn}")
        self.note.setAccessibleName(tr("Load settings note"))
        self.note.hide()
        grid.addWidget(self.note, n_rows, 0, 1, 4)
        first = next(iter(self.rows.values()))
        reach = tr("Ctrl+Shift+L comes here from anywhere in the window.")
        for named in (first.label, first.slider, first.spin):
            named.setToolTip(f"{help_text(first.spec)}\n\n{reach}")
        # Tab goes down the settings in the order they are shown: each slider, its box, its pin, then the next.
        chain = list(
            dict.fromkeys(  # a widget spanning columns is found once
                shown
                for r in range(grid.rowCount())
                for c in range(grid.columnCount())
                if (item := grid.itemAtPosition(r, c)) is not None
                and (shown := item.widget()) is not None
                and shown.focusPolicy() & Qt.FocusPolicy.TabFocus
            )
        )
        for before, after in itertools.pairwise(chain):
            QWidget.setTabOrder(before, after)
        self.set_settings(settings)
        self.set_device_count(1)

    def _split_row(self, spec: Spec[Any], grid: QGridLayout, row: int) -> list[QWidget]:
        """A several-devices setting's name and box, from its declaration."""
        widget: QWidget
        if isinstance(spec, IntSpec):
            number = int_box(spec, self)
            number.valueChanged.connect(self._emit)
            self.numbers[spec.key] = number
            widget = number
        elif isinstance(spec, ChoiceSpec):
            combo = choice_box(spec, self)
            combo.currentTextChanged.connect(self._emit)
            self.choices[spec.key] = combo
            widget = combo
        else:  # a setting written as text (the tensor split)
            box = text_box(spec, self)
            box.committed.connect(self._emit)
            box.refused.connect(lambda line, box=box: self.say(line, near=box))
            self.texts[spec.key] = box
            widget = box
        name = QLabel(label(spec), self)
        name.setToolTip(help_text(spec))
        name.setWordWrap(True)
        grid.addWidget(name, row, 0)
        grid.addWidget(widget, row, 1, 1, 3)
        return [name, widget]

    def set_device_count(self, n_devices: int) -> None:
        """The plan's devices (remote and local): the several-devices rows show with more than one, the main GPU
        counted among them. With one or none their values stay as they are (llama.cpp ignores them)."""
        self.n_devices = n_devices
        several = n_devices > 1
        for widget in self.split_widgets:
            widget.setVisible(several)
        main = self.numbers["main_gpu"]
        applying, self._applying = self._applying, True  # the plan that asked reads the value: no second signal
        main.setMaximum(n_devices - 1 if several else MAIN_GPU.maximum)
        self._applying = applying

    def set_model_limits(self, n_layer: int | None, context_length: int | None, n_expert: int | None = None) -> None:
        """Narrow the ranges to the selected model: layers + output layer, trained context, and its blocks
        for the experts setting. The experts settings show only for a mixture-of-experts model
        (``n_expert`` > 0); None (not known) leaves them shown."""
        layers = self.rows[GPU_LAYERS.key]
        if n_layer:
            was_all = layers.value() >= layers.maximum
            layers.set_maximum(n_layer + 1)
            layers.spin.setSuffix(tr(" of {total}").format(total=n_layer + 1))
            if was_all:
                layers.set_value(n_layer + 1)
            self.rows[CPU_MOE_LAYERS.key].set_maximum(n_layer)
        if n_expert is not None:
            experts = self.rows[CPU_MOE_LAYERS.key]
            for widget in (experts.label, experts.slider, experts.spin, experts.pin, self.switches["cpu_moe"]):
                widget.setVisible(n_expert > 0)
        if context_length:
            context = self.rows[CONTEXT.key]
            context.set_maximum(context_length)
            context.limit = tr("the context this model was trained for")

    def set_settings(self, settings: LoadSettings) -> None:
        self._base = settings  # keeps the fields this panel has no widget for
        self._applying = True  # one change signal for the whole set, not one per widget
        for key, row in self.rows.items():
            row.set_value(getattr(settings, key))
        for key, combo in self.choices.items():
            combo.setCurrentText(getattr(settings, key))
        for key, box in self.switches.items():
            box.setChecked(getattr(settings, key))
        for key, number in self.numbers.items():
            number.setValue(getattr(settings, key))
        for key, text in self.texts.items():
            text.set_value(getattr(settings, key))
        self.rpc.set_servers(settings.rpc_servers)
        self._applying = False
        self._emit()

    def settings(self) -> LoadSettings:
        values: dict[str, object] = {key: row.value() for key, row in self.rows.items()}
        values.update({key: combo.currentText() for key, combo in self.choices.items()})
        values.update({key: box.isChecked() for key, box in self.switches.items()})
        values.update({key: box.value() for key, box in self.numbers.items()})
        values.update({key: box.value() for key, box in self.texts.items()})
        values["rpc_servers"] = self.rpc.servers()
        return self._base.with_values(**values)

    def set_value(self, key: str, text: str) -> str:
        """Set one declared setting from its text form ("8", "false", "q8_0"), checked against its spec as
        a stored value is; return what changed, in words. A bad key or value is a ValueError."""
        spec = SPECS_BY_KEY.get(key)
        if spec is None:
            raise ValueError(tr("no load setting called {key}").format(key=repr(key)))
        value: object = text
        if isinstance(spec, IntSpec):
            value = int(text)
        elif isinstance(spec, BoolSpec):
            if text.lower() not in ("true", "false", "on", "off", "1", "0"):
                raise ValueError(tr("{setting}: {text} is not on or off").format(setting=label(spec), text=repr(text)))
            value = text.lower() in ("true", "on", "1")
        settings = LoadSettings.from_dict({**self.settings().to_dict(), key: value})
        self.set_settings(settings)
        shown = (tr("on") if value else tr("off")) if isinstance(value, bool) else str(value)
        return tr("{setting} set to {value}").format(setting=label(spec), value=shown)

    def say(self, text: str, near: QWidget | None = None) -> None:
        """A line under the settings: what just changed them, or why a typed value was not taken. With
        ``near``, also shown beside that box: on a short screen the line may be scrolled out of view."""
        self.note.setText(text)
        self.note.setVisible(bool(text))
        if near is not None and text:
            QToolTip.showText(near.mapToGlobal(near.rect().bottomLeft()), plain_tip(text), near)

    def _threads_changed(self, threads: int) -> None:
        """More threads than logical cores is allowed (settings move between machines) but not silent:
        llama.cpp's threads then wait on each other and decoding slows to a fraction."""
        cores = self.logical_cores
        if cores and threads > cores:
            sentence = (
                tr("{setting}: this machine has 1 logical core; more threads than cores slows decoding.")
                if cores == 1
                else tr("{setting}: this machine has {cores} logical cores; more threads than cores slows decoding.")
            )
            self._threads_said = sentence.format(setting=label(THREADS), cores=cores)
            # Beside the box when the user set it; in the line alone when stored settings brought it.
            self.say(self._threads_said, near=None if self._applying else self.rows[THREADS.key].spin)
        elif self._threads_said and self.note.text() == self._threads_said:
            self.say("")
            self._threads_said = ""

    def focus_first(self) -> None:
        """Put the keyboard on the first setting (Ctrl+Shift+L), scrolled into view."""
        first = next((row.slider for row in self.rows.values() if row.slider.isVisibleTo(self)), None)
        if first is None:
            return
        first.setFocus(Qt.FocusReason.ShortcutFocusReason)
        area = self.parentWidget()
        while area is not None and not isinstance(area, QScrollArea):
            area = area.parentWidget()
        if area is not None:
            area.ensureWidgetVisible(first)

    def pinned(self) -> frozenset[str]:
        return frozenset(key for key, row in self.rows.items() if row.pin.isChecked())

    def _emit(self, *_: object) -> None:
        if not self._applying:
            self.changed.emit(self.settings())
