"""Sliders and numeric fields for the load parameters, built from the specs in gui.core.params."""

from __future__ import annotations

import math

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QSlider,
    QSpinBox,
    QToolButton,
    QWidget,
)

from gui.core.params import CACHE_TYPES, GPU_LAYERS, SIZING_PARAMS, LoadSettings, ParamSpec


class ParamRow:
    """A slider and a spin box kept in step. Log-scale specs slide through powers of two."""

    def __init__(self, spec: ParamSpec, parent: QWidget) -> None:
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
    changed = Signal(object)  # LoadSettings

    def __init__(self, settings: LoadSettings, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._base = settings
        self._applying = False
        grid = QGridLayout(self)
        grid.setContentsMargins(0, 0, 0, 0)
        self.rows: dict[str, ParamRow] = {}
        for i, spec in enumerate(SIZING_PARAMS):
            row = ParamRow(spec, self)
            grid.addWidget(row.label, i, 0)
            grid.addWidget(row.slider, i, 1)
            grid.addWidget(row.spin, i, 2)
            grid.addWidget(row.pin, i, 3)
            row.spin.valueChanged.connect(self._emit)
            self.rows[spec.key] = row
        n = len(SIZING_PARAMS)
        self.flash_attn = QComboBox(self)
        self.flash_attn.addItems(["auto", "on", "off"])
        self.flash_attn.setAccessibleName("Flash attention")
        self.flash_attn.setToolTip("Flash attention shrinks the compute buffer; auto lets llama.cpp decide.")
        self.mmap = QCheckBox("Memory-map the file", self)
        self.mmap.setToolTip("Off reads the whole file into RAM: steadier when memory is tight.")
        grid.addWidget(QLabel("Flash attention", self), n, 0)
        grid.addWidget(self.flash_attn, n, 1, 1, 2)
        self.cache_k = QComboBox(self)
        self.cache_v = QComboBox(self)
        for combo, which in ((self.cache_k, "K"), (self.cache_v, "V")):
            combo.addItems(list(CACHE_TYPES))
            combo.setAccessibleName(f"{which} cache type")
            combo.setToolTip(f"Element type of the {which} cache: q8_0 halves it at little cost in quality.")
            combo.currentTextChanged.connect(self._emit)
        cache_row = QHBoxLayout()
        cache_row.addWidget(QLabel("K", self))
        cache_row.addWidget(self.cache_k)
        cache_row.addWidget(QLabel("V", self))
        cache_row.addWidget(self.cache_v)
        grid.addWidget(QLabel("KV cache type", self), n + 1, 0)
        grid.addLayout(cache_row, n + 1, 1, 1, 2)
        grid.addWidget(self.mmap, n + 2, 0, 1, 3)
        self.flash_attn.currentTextChanged.connect(self._emit)
        self.mmap.toggled.connect(self._emit)
        self.set_settings(settings)
        self.rows[GPU_LAYERS.key].spin.setSpecialValueText("")

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
            self.rows["n_ctx"].set_maximum(context_length)

    def set_settings(self, settings: LoadSettings) -> None:
        self._base = settings  # keeps the fields this panel has no widget for
        self._applying = True  # one change signal for the whole set, not one per widget
        for key, row in self.rows.items():
            row.set_value(getattr(settings, key))
        self.flash_attn.setCurrentText(settings.flash_attn)
        self.cache_k.setCurrentText(settings.cache_type_k)
        self.cache_v.setCurrentText(settings.cache_type_v)
        self.mmap.setChecked(settings.use_mmap)
        self._applying = False
        self._emit()

    def settings(self) -> LoadSettings:
        values: dict[str, object] = {key: row.value() for key, row in self.rows.items()}
        values.update(
            flash_attn=self.flash_attn.currentText(),
            use_mmap=self.mmap.isChecked(),
            cache_type_k=self.cache_k.currentText(),
            cache_type_v=self.cache_v.currentText(),
        )
        return self._base.with_values(**values)

    def pinned(self) -> frozenset[str]:
        return frozenset(key for key, row in self.rows.items() if row.pin.isChecked())

    def _emit(self, *_: object) -> None:
        if not self._applying:
            self.changed.emit(self.settings())
