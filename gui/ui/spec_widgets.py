"""Input widgets made from setting declarations (gui.core.specs): range, step, suffix, tooltip and
accessible name come from the spec, so no widget repeats a range or a default."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QCheckBox, QComboBox, QDoubleSpinBox, QSpinBox, QWidget

from gui.core.specs import BoolSpec, ChoiceSpec, FloatSpec, IntSpec, Spec

# QSpinBox holds a C int; a declared maximum past it (a 32-bit seed) is cut here.
_QT_INT_MAX = 2**31 - 1


def int_box(spec: IntSpec, parent: QWidget | None = None) -> QSpinBox:
    box = QSpinBox(parent)
    box.setRange(spec.minimum, min(spec.maximum, _QT_INT_MAX))
    box.setSingleStep(spec.step)
    box.setSuffix(spec.suffix)
    box.setValue(min(spec.default, _QT_INT_MAX))
    _describe(box, spec)
    return box


def float_box(spec: FloatSpec, parent: QWidget | None = None) -> QDoubleSpinBox:
    box = QDoubleSpinBox(parent)
    box.setDecimals(spec.decimals)
    box.setRange(spec.minimum, spec.maximum)
    box.setSingleStep(spec.step)
    box.setSuffix(spec.suffix)
    box.setValue(spec.default)
    _describe(box, spec)
    return box


def choice_box(spec: ChoiceSpec, parent: QWidget | None = None) -> QComboBox:
    box = QComboBox(parent)
    box.addItems(list(spec.choices))
    box.setCurrentText(spec.default)
    _describe(box, spec)
    return box


def check_box(spec: BoolSpec, parent: QWidget | None = None) -> QCheckBox:
    box = QCheckBox(spec.label, parent)
    box.setChecked(spec.default)
    _describe(box, spec)
    return box


def _describe(widget: QWidget, spec: Spec[Any]) -> None:
    widget.setToolTip(spec.help)
    widget.setAccessibleName(spec.label)
