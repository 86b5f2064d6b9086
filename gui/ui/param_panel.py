"""The load settings panel: a widget for every setting declared in gui.core.params."""

from __future__ import annotations

import math

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QGridLayout,
    QLabel,
    QSlider,
    QSpinBox,
    QToolButton,
    QWidget,
)

from gui.core.params import CONTEXT, GPU_LAYERS, LOAD_SPECS, LoadSettings
from gui.core.specs import BoolSpec, ChoiceSpec, IntSpec
from gui.ui.spec_widgets import check_box, choice_box


class ParamRow:
    """A slider and a spin box kept in step. Log-scale specs slide through powers of two."""

    def __init__(self, spec: IntSpec, parent: QWidget) -> None:
        self.spec = spec
        self.maximum = spec.maximum
        self.label = QLabel(spec.label, parent)
        self.slider = QSlider(Qt.Orientation.Horizontal, parent)
        self.spin = QSpinBox(parent)
        self.spin.setSingleStep(spec.step)
        for widget in (self.label, self.slider, self.spin):
            widget.setToolTip(spec.help)
        self.slider.setAccessibleName(f"{spec.label} slider")
        self.spin.setAccessibleName(spec.label)
        self.pin = QToolButton(parent)
        self.pin.setText("pin")
        self.pin.setCheckable(True)
        self.pin.setToolTip(f"Pinned: auto-fit leaves {spec.label.lower()} as it is.")
        self.pin.setAccessibleName(f"Pin {spec.label}")
        self.slider.valueChanged.connect(self._slider_moved)
        self.spin.valueChanged.connect(self._spin_changed)
        self.set_maximum(spec.maximum)

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
        grid = QGridLayout(self)
        grid.setContentsMargins(0, 0, 0, 0)
        self.rows: dict[str, ParamRow] = {}
        self.choices: dict[str, QComboBox] = {}
        self.switches: dict[str, QCheckBox] = {}
        # Numbers get a slider row each; choices and switches sit two to a row beneath them, so the
        # memory plan below stays in view.
        pairs = QGridLayout()
        pairs.setContentsMargins(0, 0, 0, 0)
        pairs.setColumnStretch(1, 1)
        pairs.setColumnStretch(3, 1)
        n_rows = n_pairs = 0
        for spec in (s for s in LOAD_SPECS if s.panel):
            if isinstance(spec, IntSpec):
                row = ParamRow(spec, self)
                grid.addWidget(row.label, n_rows, 0)
                grid.addWidget(row.slider, n_rows, 1)
                grid.addWidget(row.spin, n_rows, 2)
                grid.addWidget(row.pin, n_rows, 3)
                row.spin.valueChanged.connect(self._emit)
                self.rows[spec.key] = row
                n_rows += 1
                continue
            line, column = divmod(n_pairs, 2)
            n_pairs += 1
            if isinstance(spec, ChoiceSpec):
                combo = choice_box(spec, self)
                label = QLabel(spec.label, self)
                label.setToolTip(spec.help)
                pairs.addWidget(label, line, 2 * column)
                pairs.addWidget(combo, line, 2 * column + 1)
                combo.currentTextChanged.connect(self._emit)
                self.choices[spec.key] = combo
            elif isinstance(spec, BoolSpec):
                box = check_box(spec, self)
                pairs.addWidget(box, line, 2 * column, 1, 2)
                box.toggled.connect(self._emit)
                self.switches[spec.key] = box
        grid.addLayout(pairs, n_rows, 0, 1, 4)
        self.set_settings(settings)

    def set_model_limits(self, n_layer: int | None, context_length: int | None) -> None:
        """Narrow the ranges to the selected model: layers + output layer, trained context."""
        layers = self.rows[GPU_LAYERS.key]
        if n_layer:
            was_all = layers.value() >= layers.maximum
            layers.set_maximum(n_layer + 1)
            layers.spin.setSuffix(f" of {n_layer + 1}")
            if was_all:
                layers.set_value(n_layer + 1)
        if context_length:
            self.rows[CONTEXT.key].set_maximum(context_length)

    def set_settings(self, settings: LoadSettings) -> None:
        self._base = settings  # keeps the fields this panel has no widget for
        self._applying = True  # one change signal for the whole set, not one per widget
        for key, row in self.rows.items():
            row.set_value(getattr(settings, key))
        for key, combo in self.choices.items():
            combo.setCurrentText(getattr(settings, key))
        for key, box in self.switches.items():
            box.setChecked(getattr(settings, key))
        self._applying = False
        self._emit()

    def settings(self) -> LoadSettings:
        values: dict[str, object] = {key: row.value() for key, row in self.rows.items()}
        values.update({key: combo.currentText() for key, combo in self.choices.items()})
        values.update({key: box.isChecked() for key, box in self.switches.items()})
        return self._base.with_values(**values)

    def pinned(self) -> frozenset[str]:
        return frozenset(key for key, row in self.rows.items() if row.pin.isChecked())

    def _emit(self, *_: object) -> None:
        if not self._applying:
            self.changed.emit(self.settings())
